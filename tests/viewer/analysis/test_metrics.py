"""viewer.metrics_data: per-request frames, tool use, totals, pricing, aggregates, figures."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import orjson
import pytest

from parsers import pipeline
from parsers.cook.schema import cooked_errors
from parsers.model import Gate, Score, Scorecard
from tests.parsers.cook.test_pricing import package_price, package_rates, raw_log_costs
from viewer.analysis import metrics as md

KINDS = ("input", "output", "cache_read", "cache_write", "reasoning")
REAL = ("nanobot", "claude-code.first25", "adk-deepresearch")


def lookups(doc: dict):
    assert cooked_errors(doc) == []
    return ({r["id"]: r for r in doc["requests"]}, {m["id"]: m for m in doc["messages"]})


@pytest.fixture(scope="module")
def gen300(gen_traces, tmp_path_factory):
    path = gen_traces("requests", 300, tmp_path_factory.mktemp("gen") / "log300.jsonl")
    doc, _ = pipeline.cook_paths([path])
    (trace,) = doc["traces"]
    return (trace, *lookups(doc))


_COOKED: dict = {}


@pytest.fixture
def real_doc(realdata):
    """The three real request logs cooked together (once per test run)."""
    if "real" not in _COOKED:
        _COOKED["real"] = pipeline.cook_paths([realdata / "llm_trace_raw" / f"{s}.jsonl" for s in REAL])[0]
    return _COOKED["real"]


def by_source(doc, stem):
    return next(t for t in doc["traces"] if t["source"] == f"{stem}.jsonl")


# -- the generated 300-request log -------------------------------------------------------------
def test_per_request_numbers(gen300):
    trace, reqs, msgs = gen300
    df = md.per_request(trace, reqs, msgs)
    assert len(df) == 300 and list(df["n"]) == list(range(1, 301))
    for k in KINDS:
        assert int(df[k].sum()) == trace["totals"][k]
    # The generator's request i: input 50 + i, cache read 900 i, cache write 300, output 120,
    # duration 800 + 37 i % 4000, one request a second.
    first, second = df.iloc[0], df.iloc[1]
    assert (first["input"], first["context"], first["duration_ms"]) == (50, 350, 800)
    assert (second["context"], second["since_prev_ms"], second["idle_ms"]) == (51 + 900 + 300, 1000, 200)
    assert list(df["context"]) == [df["input"][k] + df["cache_read"][k] + df["cache_write"][k] for k in range(300)]
    assert int(df["context"].max()) == 349 + 900 * 299 + 300
    assert set(df["tool_calls"]) == {1}
    assert df["priced"].all() and df["cum_unpriced"].iloc[-1] == 0


def test_cumulative_cost_is_monotone_and_ends_at_the_total(gen300):
    trace, reqs, msgs = gen300
    df = md.per_request(trace, reqs, msgs)
    assert df["cum_cost"].is_monotonic_increasing
    assert df["cum_cost"].iloc[-1] == pytest.approx(trace["totals"]["cost"], abs=1e-9)
    # The generator's first request (2026-02-20T10:00:00Z): input 50, output 120, cache write 300.
    first = package_price("claude-sonnet-4-20250514", "anthropic", input=50, output=120, cache_write=300,
                          when=datetime(2026, 2, 20, 10, tzinfo=timezone.utc))
    assert df["cum_cost"].iloc[0] == pytest.approx(df["cost"].iloc[0]) == pytest.approx(first)


def test_tool_usage_and_totals(gen300):
    trace, reqs, msgs = gen300
    tu = md.tool_usage(trace, reqs, msgs)
    assert int(tu["calls"].sum()) == 300 and int(tu["errors"].sum()) == 0
    # Unanswered: the 11 side calls, the call abandoned by each of the 6 rewinds, the last call.
    assert int(tu["no_result"].sum()) == 11 + 6 + 1
    assert set(tu["tool"]) == {f"tool_{k}" for k in range(15)}
    tot = md.totals(trace, reqs, msgs)
    assert tot["requests"] == 300 and tot["priced_requests"] == 300 and tot["unpriced_requests"] == 0
    assert tot["cost"] == pytest.approx(trace["totals"]["cost"], abs=1e-9)
    assert tot["tokens"] == {k: trace["totals"][k] for k in KINDS}
    # The messages the timeline shows by default: every message any request sent or got back
    # (a side call shows what it was sent again, as its own conversation), more than the
    # latest branch holds.
    held = {m for r in reqs.values() for m in r["request_messages"] + r["response_messages"]}
    assert sum(tot["messages_by_role"].values()) == tot["messages"] >= len(held) > trace["totals"]["messages"]
    assert tot["time_to_first_tool_call_ms"] == 800.0
    assert (tot["tool_calls"], tot["tool_errors"], tot["error_rate"]) == (300, 0, 0.0)


def test_pricing_rows_say_which_price_was_used(gen300):
    trace, reqs, _ = gen300
    pr = md.pricing_rows(trace, reqs).set_index("model")
    assert list(pr.index) == ["claude-sonnet-4-20250514", "claude-3-5-haiku-20241022"]
    assert list(pr["requests"]) == [289, 11] and list(pr["unpriced"]) == [0, 0]
    rates = package_rates("claude-sonnet-4-20250514", "anthropic", datetime(2026, 2, 20, tzinfo=timezone.utc))
    assert pr.at["claude-sonnet-4-20250514", "input $/Mtok"] == rates["input_mtok"]
    assert pr.at["claude-sonnet-4-20250514", "cache read $/Mtok"] == rates["cache_read_mtok"]
    assert pr.at["claude-sonnet-4-20250514", "priced as"] == "anthropic/claude-sonnet-4-0"
    assert pr.at["claude-sonnet-4-20250514", "source"].startswith("genai-prices")
    assert pr["cost"].sum() == pytest.approx(trace["totals"]["cost"], abs=1e-9)


def test_figures_carry_request_ids(gen300):
    trace, reqs, msgs = gen300
    df = md.per_request(trace, reqs, msgs)
    ids = list(df["id"])
    for make in (md.tokens_figure, md.context_figure, md.cost_figure, md.latency_figure, md.gaps_figure):
        fig = make(df)
        got = sorted(i for tr in fig.data for i in tr.customdata)
        assert got == sorted(ids * (4 if make is md.tokens_figure else 1)), make.__name__
    tokens = md.tokens_figure(df)
    assert [tr.name for tr in tokens.data] == ["input", "output", "cache read", "cache write"]
    assert tokens.layout.barmode == "stack"
    assert [tr.name for tr in md.latency_figure(df).data] == ["claude-sonnet-4-20250514", "claude-3-5-haiku-20241022"]


def test_selected_request_reads_streamlit_selections():
    assert md.selected_request({"points": [{"x": 3, "customdata": ["r-3"]}]}) == "r-3"
    assert md.selected_request({"points": [{"x": 3, "customdata": "r-4"}]}) == "r-4"
    assert md.selected_request({"points": [{"x": 3}]}) is None
    assert md.selected_request({"points": []}) is None
    assert md.selected_request(None) is None


# -- real request logs -----------------------------------------------------------------------
@pytest.mark.parametrize("stem", REAL)
def test_real_sums_equal_trace_totals(real_doc, stem):
    reqs, msgs = lookups(real_doc)
    trace = by_source(real_doc, stem)
    df = md.per_request(trace, reqs, msgs)
    tot = md.totals(trace, reqs, msgs)
    assert len(df) == trace["totals"]["requests"]
    for k in KINDS:
        assert int(df[k].sum()) == trace["totals"][k] == tot["tokens"][k]
    assert tot["unpriced_requests"] == trace["totals"]["unpriced_requests"]
    if trace["totals"]["cost"] is None:
        assert tot["cost"] is None and df["cum_cost"].iloc[-1] == 0
    else:
        assert df["cum_cost"].iloc[-1] == pytest.approx(trace["totals"]["cost"], abs=1e-9)
    assert df["cum_cost"].is_monotonic_increasing


def test_unpriced_models_are_counted_not_hidden(real_doc, realdata):
    reqs, msgs = lookups(real_doc)
    trace = by_source(real_doc, "claude-code.first25")
    tot = md.totals(trace, reqs, msgs)
    assert (tot["priced_requests"], tot["unpriced_requests"]) == (6, 18)
    raw = raw_log_costs(realdata / "llm_trace_raw" / "claude-code.first25.jsonl")
    assert tot["cost"] == pytest.approx(sum(c for c in raw.values() if c is not None))
    pr = md.pricing_rows(trace, reqs).set_index("model")
    assert pr.at["ark-code-latest", "source"] == "no price" and pr.at["ark-code-latest", "unpriced"] == 18
    assert pr.at["claude-haiku-4-5-20251001", "input $/Mtok"] == package_rates("claude-haiku-4-5-20251001",
                                                                                "anthropic")["input_mtok"]
    df = md.per_request(trace, reqs, msgs)
    fig = md.cost_figure(df)
    assert [tr.name for tr in fig.data] == ["cumulative cost", "unpriced request"]
    assert len(fig.data[1].x) == 18
    assert list(df["cum_unpriced"])[-1] == 18


def test_real_tool_errors_pair_by_call_id(real_doc):
    reqs, msgs = lookups(real_doc)
    tu = md.tool_usage(by_source(real_doc, "claude-code.first25"), reqs, msgs).set_index("tool")
    assert (tu.at["Read", "calls"], tu.at["Read", "errors"]) == (9, 1)
    assert int(tu["errors"].sum()) == 1
    # OpenAI-shaped calls live on assistant messages: they count too.
    nano = md.tool_usage(by_source(real_doc, "nanobot"), reqs, msgs).set_index("tool")
    # nanobot numbers call ids per turn: "web_search:0" names two calls of two different turns.
    assert (nano.at["web_search", "calls"], nano.at["web_fetch", "calls"]) == (9, 7)
    assert int(nano["no_result"].sum()) == 0


# -- across traces ---------------------------------------------------------------------------
def test_aggregates(real_doc, realdata):
    reqs, _ = lookups(real_doc)
    traces = real_doc["traces"]
    pt = md.per_trace(traces)
    assert len(pt) == 3 and list(pt["requests"]) == [t["totals"]["requests"] for t in traces]
    pm = md.per_model(traces, reqs).set_index("model")
    assert int(pm["requests"].sum()) == len(real_doc["requests"]) == 25 + 24 + 11
    assert pm.at["ark-code-latest", "requests"] == 25 + 18 and pm.at["ark-code-latest", "traces"] == 2
    assert pm["cost"].isna()["ark-code-latest"] and pm.at["ark-code-latest", "unpriced"] == 43
    gemini = raw_log_costs(realdata / "llm_trace_raw" / "adk-deepresearch.jsonl")  # its only Gemini log
    assert pm.at["gemini-3-pro-preview", "cost"] == pytest.approx(sum(gemini.values()))
    for k in ("input", "output", "cache_read", "cache_write"):
        assert int(pm[k].sum()) == sum(t["totals"][k] for t in traces)
    assert md.outcomes(traces) == {"unknown": 3}


def test_resolved_rate_per_model():
    traces = [{"id": str(k), "models": [m], "outcome": o} for k, (m, o) in enumerate(
        [("a", "success"), ("a", "failure"), ("a", "success"), ("a", "unknown"), ("b", "failure"), ("c", "unknown")])]
    df = md.resolved_by_model(traces).set_index("model")
    assert df.at["a", "traces"] == 4 and df.at["a", "resolved_rate"] == pytest.approx(2 / 3)
    assert df.at["b", "resolved_rate"] == 0.0
    assert df["resolved_rate"].isna()["c"]
    assert md.outcomes(traces) == {"success": 2, "failure": 2, "unknown": 2}


def test_aggregate_figures(real_doc, realdata):
    reqs, _ = lookups(real_doc)
    traces = real_doc["traces"]
    fig = md.trace_tokens_figure(md.per_trace(traces))
    assert [tr.name for tr in fig.data] == ["input", "output", "cache read", "cache write"]
    assert len(fig.data[0].y) == 3 and sorted(fig.data[0].customdata) == sorted(t["id"] for t in traces)
    cost = md.model_cost_figure(md.per_model(traces, reqs))
    texts = dict(zip(cost.data[0].y, cost.data[0].text))
    assert texts["ark-code-latest"] == "unpriced (43 requests)"
    gemini = sum(raw_log_costs(realdata / "llm_trace_raw" / "adk-deepresearch.jsonl").values())
    assert texts["gemini-3-pro-preview"] == f"${gemini:,.4f}"


# -- scorecards -------------------------------------------------------------------------------
BENCHMARK = Path(__file__).resolve().parents[3] / "sample_data" / "benchmark"


def benchmark_records() -> list[dict]:
    return [orjson.loads(line) for line in (BENCHMARK / "arbiter_benchmark.jsonl").read_bytes().splitlines()
            if line.strip()]


@pytest.fixture(scope="module")
def benchmark():
    doc, _ = pipeline.cook_paths([BENCHMARK])
    assert cooked_errors(doc) == []
    return doc["traces"]


def test_scorecard_of_a_data_point(benchmark):
    partial = next(t for t in benchmark if t["outcome"] == "partial")
    assert md.is_scorecard(partial) and md.has_scorecard(partial)
    sc = md.scorecard(partial)
    h = sc["headline"]
    assert (h["task"], h["type"], h["overall_score"], h["passed_all_mandatory"], h["total_reward"]) == \
        ("TASK-1043", "code-editing", 0.6, False, 0.45)
    assert (h["latency_ms"], h["tokens"], h["tool_calls"]) == (41200, 21000, 15)
    assert list(sc["rubric"]["criterion"]) == ["format", "tool", "task", "minimal", "cost", "safety"]
    assert sc["rubric"].set_index("criterion").at["task", "score"] == 0.55
    gates = sc["gates"].set_index("name")
    assert (gates.at["tests-pass", "passed"], gates.at["tests-pass", "score"], gates.at["tests-pass", "threshold"]) \
        == (False, 0.86, 1.0)
    assert list(sc["turns"].columns[:4]) == ["turn", "tool", "reward", "progress"]
    assert list(sc["turns"]["reward"]) == [0.6, 0.4] and list(sc["turns"]["tool"]) == ["read_file", "run_tests"]
    assert sc["tables"]["minimal-diff metrics"].set_index("metric").at["fileTouchCount", "value"] == 3
    assert sc["labels"]["complexity"] == "complex" and sc["checks"] == {"CAWS compliant": True,
                                                                        "budget compliant": True}
    alts = sc["alternatives"]
    assert list(alts["agent"]) == ["agent-ast-coder", "agent-researcher"] and list(alts["chosen"]) == [True, False]
    assert list(alts["score"]) == [0.72, 0.55]
    assert sc["routing"]["strategy"] == "capability-match" and sc["routing"]["history_tasks"] == 128
    assert list(sc["tools_used"]["calls"]) == [6, 6, 3]
    scores = sc["scores"].set_index("scorer")
    assert scores.at["overall", "numeric"] == 0.6 and scores.at["success", "numeric"] == 0.0
    # Figures: the radar closes its loop, each gate gets a threshold line, reward and progress
    # are drawn and the other turn series wait in the legend.
    assert len(md.rubric_figure(sc["rubric"]).data[0].r) == 7
    assert len(md.gates_figure(sc["gates"]).layout.shapes) == 2
    turns = md.turns_figure(sc["turns"])
    assert [(tr.name, tr.visible) for tr in turns.data] == [
        ("reward", True), ("progress", True), ("information gain", "legendonly"),
        ("format correctness", "legendonly"), ("safety", "legendonly")]
    assert list(md.alternatives_figure(alts).data[0].x) == [0.72, 0.55]


def test_scorecard_tolerates_missing_parts():
    sc = md.scorecard({"id": "x", "scorecard": {"scores": [{"scorer": "success", "value": True}]},
                       "requests": [], "timeline": []})
    assert sc["rubric"].empty and sc["gates"].empty and sc["turns"].empty and sc["alternatives"].empty
    assert sc["tables"] == {} and sc["votes"] == {}
    assert sc["headline"]["overall_score"] is None and sc["headline"]["passed_all_mandatory"] is None
    assert list(sc["scores"]["numeric"]) == [1.0]
    assert not md.is_scorecard({"id": "y", "scorecard": None, "requests": ["r"], "timeline": []})
    assert not md.has_scorecard({"id": "z", "requests": [], "timeline": []})
    assert md.scorecard({"id": "z"})["scores"].empty


def test_eval_scores_per_epoch_and_a_single_reward():
    """An eval's letter grades per epoch and a verifier's one reward, as a format would write them."""
    card = Scorecard(
        scores=[Score("match", "C", epoch=1, answer="No"), Score("match", "I", epoch=2, answer="Yes",
                                                                  explanation="expected No"),
                Score("resolved", False)],
        gates=[Gate("build", True, mandatory=True), Gate("tests", False, 0.5, 1.0, mandatory=False)],
        rewards={"reward": 0.25})
    trace = {"id": "e", "outcome": "failure", "scorecard": card.as_dict(), "timeline": ["m"], "requests": ["r"]}
    assert md.has_scorecard(trace) and not md.is_scorecard(trace)
    sc = md.scorecard(trace)
    rows = sc["scores"][["scorer", "epoch", "numeric", "label", "answer"]].astype(object)
    rows = rows.where(rows.notna(), None).values.tolist()
    assert rows == [["match", 1, 1.0, "correct", "No"], ["match", 2, 0.0, "incorrect", "Yes"],
                    ["resolved", None, 0.0, None, None]]
    assert list(sc["scores"]["value"]) == ["C", "I", "False"]  # a column of mixed kinds shows as text
    h = sc["headline"]
    assert h["total_reward"] == 0.25  # the only reward stands for the total
    assert h["passed_all_mandatory"] is True  # the one mandatory gate passed (none stated)


def test_arena_votes_are_a_scorecard_beside_the_conversation():
    doc, _ = pipeline.cook_paths([Path(__file__).resolve().parents[3] / "sample_data" / "arena"])
    with_votes = [t for t in doc["traces"] if md.has_scorecard(t)]
    assert with_votes and not any(md.is_scorecard(t) for t in with_votes)
    direct = next(t for t in with_votes if t["meta"]["chat_mode"] == "direct")
    assert md.scorecard(direct)["feedback"] == {"upvote": 1, "downvote": 0, "flag": 0}
    battles = [md.scorecard(t)["votes"] for t in with_votes if t["meta"]["side"]]
    assert battles and all(sum(v.values()) >= 1 and set(v) == {"won", "lost", "tie", "bothbad"} for v in battles)
    assert md.agent_stats(doc["traces"]).empty  # no agent named: no statistics


def expected_agent_stats(records: list[dict]) -> list[dict]:
    """The agent statistics table, computed straight from raw BenchmarkDataPoint records."""
    groups: dict = {}
    for r in records:
        agent = r["routing"]["selectedAgent"]
        g = groups.setdefault((agent["id"], r["task"]["type"]), {"name": agent["name"], "n": 0, "ok": 0,
                                                                 "quality": [], "latency": [], "tokens": []})
        g["n"] += 1
        g["ok"] += r["execution"]["success"] is True
        for key, v in (("quality", r["evaluation"].get("overallScore")),
                       ("latency", r["execution"].get("latencyMs")), ("tokens", r["execution"].get("tokensUsed"))):
            if v is not None:
                g[key].append(v)

    def mean(vs, places):
        return round(sum(vs) / len(vs), places) if vs else None

    return [{"agent_id": aid, "agent_name": g["name"], "task_type": ttype, "total_tasks": g["n"],
             "successful_tasks": g["ok"], "success_rate": round(g["ok"] / g["n"], 4),
             "avg_quality": mean(g["quality"], 2), "avg_latency": mean(g["latency"], None),
             "avg_tokens": mean(g["tokens"], None)}
            for (aid, ttype), g in sorted(groups.items())]


def rows(stats) -> list[dict]:
    return stats.astype(object).where(stats.notna(), None).to_dict("records")


def test_agent_statistics_over_loaded_traces(benchmark, real_doc):
    stats = md.agent_stats(benchmark + real_doc["traces"])  # request logs are skipped
    assert rows(stats) == expected_agent_stats(benchmark_records())
    # Hand-checked from the sample: AST Coder did two code edits (one success; quality 0.9
    # and 0.6; latency 12500 and 41200; tokens 8500 and 21000). Researcher did two research
    # tasks (0.85 and 0.2; 30000 and 8000; 12000 and 2000) and one code edit (0.97; 4100; 1500).
    assert rows(stats) == [
        {"agent_id": "agent-ast-coder", "agent_name": "AST Coder", "task_type": "code-editing", "total_tasks": 2,
         "successful_tasks": 1, "success_rate": 0.5, "avg_quality": 0.75, "avg_latency": 26850, "avg_tokens": 14750},
        {"agent_id": "agent-researcher", "agent_name": "Researcher", "task_type": "code-editing", "total_tasks": 1,
         "successful_tasks": 1, "success_rate": 1.0, "avg_quality": 0.97, "avg_latency": 4100, "avg_tokens": 1500},
        {"agent_id": "agent-researcher", "agent_name": "Researcher", "task_type": "research", "total_tasks": 2,
         "successful_tasks": 1, "success_rate": 0.5, "avg_quality": 0.53, "avg_latency": 19000, "avg_tokens": 7000},
    ]
    assert md.resolved_by_model(benchmark).set_index("model").at["GPT-4", "resolved_rate"] == pytest.approx(2 / 3)


def test_agent_statistics_skip_missing_values():
    recs = benchmark_records()
    recs[4]["execution"].pop("latencyMs")
    recs[3]["evaluation"].pop("overallScore")
    doc, _ = pipeline.cook_uploads([("points.jsonl", b"".join(orjson.dumps(r) + b"\n" for r in recs))])
    got = rows(md.agent_stats(doc["traces"]))
    assert got == expected_agent_stats(recs)
    by = {(r["agent_id"], r["task_type"]): r for r in got}
    assert by["agent-researcher", "code-editing"]["avg_latency"] is None
    assert by["agent-researcher", "research"]["avg_quality"] == 0.85
    assert rows(md.agent_stats([])) == []


def test_metrics_views_read_no_format_module():
    root = Path(__file__).resolve().parents[3] / "viewer"
    for path in (root / "analysis" / "metrics.py", root / "pages" / "metrics.py"):
        assert "parsers.formats" not in path.read_text("utf-8"), path
