"""BenchmarkDataPoint records: the bundled sample against its golden file, the scorecard each
record becomes, schema violations, broken lines and `traceview validate`.

Regenerate the golden file with TRACEVIEW_REGEN_GOLDEN=1.
"""
from __future__ import annotations

import copy
import os
import re
from pathlib import Path

import orjson
import pytest

from parsers import pipeline
from parsers.formats import benchmark
from parsers.model import Scorecard
from parsers.registry import detect
from parsers.io.source import from_bytes
from parsers.cook.schema import cooked_errors
from parsers.pipeline import validate_file

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "sample_data" / "benchmark" / "arbiter_benchmark.jsonl"
GOLDEN = Path(__file__).parent / "golden" / "benchmark_sample.json"
SEEDS = REPO.parent / "shared" / "seeds"


def sample_records() -> list[dict]:
    return [orjson.loads(line) for line in SAMPLE.read_bytes().splitlines() if line.strip()]


def cook(name: str, data: bytes) -> tuple[dict, list]:
    doc, summaries = pipeline.cook_uploads([(name, data)])
    assert cooked_errors(doc) == []
    return doc, summaries


def jsonl(records) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def projection(doc: dict) -> list[dict]:
    return [{"title": t["title"], "task": t["task"], "outcome": t["outcome"], "outcome_detail": t["outcome_detail"],
             "models": t["models"], "roles": [], "totals": t["totals"], "artifacts": [a["kind"] for a in t["artifacts"]],
             "requests": len(t["requests"]), "started_at": t["started_at"], "duration_ms": t["duration_ms"],
             "scorecard_parts": sorted(t["scorecard"]), "meta": t["meta"], "problems": t["problems"]}
            for t in doc["traces"]]


def test_sample_matches_golden():
    doc, (summary,) = pipeline.cook_paths([SAMPLE.parent])
    assert cooked_errors(doc) == []
    assert all(t["timeline"] == [] for t in doc["traces"])
    got = projection(doc)
    if os.environ.get("TRACEVIEW_REGEN_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_bytes(orjson.dumps(got, option=orjson.OPT_INDENT_2) + b"\n")
    assert got == orjson.loads(GOLDEN.read_bytes())
    assert (summary.format, summary.records, summary.traces, summary.problems) == ("benchmark", 5, 5, [])


def test_outcomes_and_meta():
    recs = sample_records()
    doc, _ = cook("points.json", orjson.dumps(recs))  # a JSON array this time
    assert [t["outcome"] for t in doc["traces"]] == ["success", "partial", "success", "failure", "success"]
    assert doc["traces"][3]["outcome_detail"] == \
        "search tool rate-limited; overall score 0.2; a mandatory quality gate failed"
    assert doc["traces"][0]["meta"]["tokens"] == {"total": 8500, "output": 6500, "thinking": 2000}


def test_scorecard_carries_what_the_record_says():
    """Each part of the scorecard against the record it came from, read here field by field."""
    recs = sample_records()
    doc, _ = cook("points.jsonl", jsonl(recs))
    assert len(doc["traces"]) == len(recs)
    for rec, t in zip(recs, doc["traces"]):
        sc = t["scorecard"]
        ev, ex, rl, routing = rec["evaluation"], rec["execution"], rec["rlLabels"], rec["routing"]
        assert "scores" not in t  # the untyped verdicts are gone: the scorecard holds them
        assert {s["scorer"]: (s["value"], s["numeric"]) for s in sc["scores"]} == {
            "overall": (ev["overallScore"], ev["overallScore"]),
            "success": (ex["success"], 1.0 if ex["success"] else 0.0),
            "partial_success": (ex["partialSuccess"], 1.0 if ex["partialSuccess"] else 0.0)}
        assert sc["rubric"] == ev["rubricScores"]
        assert list(sc["rubric"]) == ["format", "tool", "task", "minimal", "cost", "safety"]
        assert sc["gates"] == ev["qualityGates"]  # the record's gates have exactly the five fields
        assert sc["gates_passed"] is ev["passedAllMandatory"]
        assert [(x["turn"], x["tool"], x["values"]) for x in sc["turns"]] == [
            (r["turnNumber"], r["toolCalled"],
             {"reward": r["turnReward"], "progress": r["taskProgress"], "information_gain": r["informationGain"],
              "format_correctness": r["formatCorrectness"], "safety": r["safetyScore"]}) for r in rl["turns"]]
        assert sc["rewards"] == {"total": rl["totalReward"]}
        assert sc["metrics"] == {
            "latency_ms": ex["latencyMs"], "tokens": ex["tokensUsed"], "thinking_tokens": ex["thinkingTokens"],
            "output_tokens": ex["outputTokens"], "tool_calls": ex["toolCallCount"],
            "tool_success_rate": ex["toolCallSuccessRate"], "time_to_first_action_ms": ex["timeToFirstAction"],
            "token_efficiency": ex["tokenEfficiency"]}
        assert sc["checks"] == {"CAWS compliant": ev["cawsCompliant"], "budget compliant": ev["budgetCompliant"]}
        assert sc["labels"]["complexity"] == rec["task"]["complexity"]
        assert sc["labels"]["final outcome"] == rl["finalOutcome"]
        assert sc["task_type"] == rec["task"]["type"]
        agent = routing["selectedAgent"]
        assert sc["agent"] == {"id": agent["id"], "name": agent["name"], "model_family": agent["modelFamily"]}
        hist = routing["historicalPerformance"]
        alternatives = [{"agent": a["agentId"], "score": a["score"], "reason": a["reason"]}
                        for a in routing["alternativesConsidered"]]
        assert sc["routing"] == {
            "strategy": routing["strategy"], "confidence": routing["confidence"], "rationale": routing["rationale"],
            **({"alternatives": alternatives} if alternatives else {}),  # an empty part is left out
            "history": {"success_rate": hist["agentSuccessRate"], "quality": hist["agentAvgQuality"],
                        "tasks": hist["agentTaskCount"]}}
        assert sc["tools"] == [{"name": u["toolName"], "calls": u["callCount"], "success_rate": u["successRate"],
                                "avg_latency_ms": u["avgLatency"]} for u in ex["toolsUsed"]]
        tables = sc["tables"]
        assert tables["minimal-diff metrics"] == [{"metric": k, "value": v} for k, v in ev["minimalDiffMetrics"].items()]
        assert tables["provenance"] == [{"metric": k, "value": v} for k, v in rec["provenance"].items()]
        if "caws" in rec:
            assert tables["CAWS scores"] == [{"metric": k, "value": v} for k, v in rec["caws"]["scores"].items()]
            assert tables["CAWS budget"] == [{"metric": k, "value": v}
                                             for k, v in rec["caws"]["budgetUsage"].items()]
            assert sc["labels"]["CAWS spec"] == rec["caws"]["specId"]
        else:
            assert "CAWS scores" not in tables and "CAWS spec" not in sc["labels"]
        # Typed, plain, and free of the record's own field names.
        assert Scorecard.from_dict(sc).as_dict() == sc
        text = orjson.dumps(sc).decode()
        for raw in ("rubricScores", "qualityGates", "rlLabels", "turnReward", "selectedAgent", "toolsUsed"):
            assert raw not in text
    assert "caws" not in recs[1] and "CAWS scores" not in doc["traces"][1]["scorecard"]["tables"]


def test_scorecard_of_a_sparse_record():
    rec = {"id": "3f1c2a9e-7b4d-4e8a-9c1f-00000000abcd", "task": {"id": "T-1"}, "routing": {}, "execution": {},
           "evaluation": {"qualityGates": [{"name": "tests-pass", "passed": "yes", "score": "high"}, 7],
                          "rubricScores": {"task": 0.5, "style": "good"}},
           "rlLabels": {"turns": [{"toolCalled": "ls", "turnReward": 0.2}, {"turnNumber": 5}]}}
    doc, _ = cook("one.json", orjson.dumps(rec))
    sc = doc["traces"][0]["scorecard"]
    # Values of the wrong kind are left out (the schema check reports them), not guessed.
    assert sc == {
        "rubric": {"task": 0.5},
        "gates": [{"name": "tests-pass", "passed": None, "score": None, "threshold": None, "mandatory": None}],
        "turns": [{"turn": 1, "tool": "ls", "values": {"reward": 0.2}}, {"turn": 5, "values": {}}],
    }
    bare = {"id": "3f1c2a9e-7b4d-4e8a-9c1f-00000000abce", "task": {"id": "T-2"}, "routing": {}, "execution": {}}
    doc, _ = cook("bare.json", orjson.dumps(bare))
    assert doc["traces"][0]["scorecard"] is None


def test_single_object_and_detection():
    rec = sample_records()[2]
    doc, _ = cook("one.json", orjson.dumps(rec, option=orjson.OPT_INDENT_2))
    (t,) = doc["traces"]
    assert (t["title"], t["task"], t["models"], t["outcome"]) == (
        "Compare three open-source vector databases on filtering support and summarise the trade-offs.",
        "TASK-2001", ["GPT-4"], "success")
    assert (t["started_at"], t["duration_ms"], t["ended_at"]) == (1741087800000, 30000, 1741087830000)
    assert detect(from_bytes("x.jsonl", SAMPLE.read_bytes())).name == "benchmark"
    assert benchmark.sniff(from_bytes("x.json", b'[{"task": {}, "routing": {}}]')) == \
        'the first record has no "execution"'


# -- broken input --------------------------------------------------------------------------
def test_schema_violations_are_reported_and_the_record_still_loads():
    recs = sample_records()[:3]
    bad = copy.deepcopy(recs[1])
    bad["task"]["type"] = "refactoring"
    bad["evaluation"]["rubricScores"]["safety"] = 1.5
    del bad["routing"]
    bad["id"] = "not-a-uuid"
    bad["timestamp"] = "yesterday"
    doc, (summary,) = cook("points.jsonl", jsonl([recs[0], bad, recs[2]]))
    assert [t["task"] for t in doc["traces"]] == ["TASK-1042", "TASK-1043", "TASK-2001"]
    loaded = doc["traces"][1]
    assert (loaded["outcome"], loaded["models"], loaded["started_at"]) == ("partial", [], None)
    got = [(p["line"], p["record"], p["path"], p["message"]) for p in loaded["problems"]]
    assert got == [
        (2, 1, "/evaluation/rubricScores/safety", "1.5 is greater than the maximum of 1"),
        (2, 1, "/id", "'not-a-uuid' is not a 'uuid'"),
        (2, 1, "/routing", "'routing' is a required property"),
        (2, 1, "/task/type", "'refactoring' is not one of ['code-editing', 'research', 'data-analysis', 'design', "
                             "'planning']"),
        (2, 1, "/timestamp", "'yesterday' is not a 'date-time'"),
    ]
    assert summary.problems == loaded["problems"]
    assert doc["traces"][0]["problems"] == doc["traces"][2]["problems"] == []


def test_records_without_identity_are_skipped():
    recs = sample_records()[:2]
    nameless = copy.deepcopy(recs[1])
    del nameless["id"], nameless["task"]["id"]
    doc, (summary,) = cook("points.json", orjson.dumps([recs[0], nameless, "text", recs[1]]))
    assert len(doc["traces"]) == 2 and summary.records == 4
    got = [(p["record"], p["path"], p["message"]) for p in summary.problems]
    assert got == [
        (1, "/id", "'id' is a required property"),
        (1, "/task/id", "'id' is a required property"),
        (1, "", 'expected "id" or "task.id" to name the data point; skipped'),
        (2, "", "'text' is not of type 'object'"),
        (2, "", "expected a BenchmarkDataPoint object, found a string; skipped"),
    ]


def test_truncated_line_is_skipped_and_the_rest_loads():
    data = jsonl(sample_records())
    lines = data.splitlines(keepends=True)
    broken = b"".join(lines[:2]) + lines[2][:200] + b"\n" + b"".join(lines[3:])
    doc, (summary,) = cook("points.jsonl", broken)
    assert [t["task"] for t in doc["traces"]] == ["TASK-1042", "TASK-1043", "TASK-2002", "TASK-1050"]
    (p,) = summary.problems
    assert p["line"] == 3 and p["message"].startswith("not valid JSON (") and p["message"].endswith("; line skipped")


# -- the schema and `traceview validate` ---------------------------------------------------------
def test_schema_file_is_the_formats_own():
    if not SEEDS.is_dir():
        pytest.skip(f"shared format documents not present: {SEEDS}")
    (doc,) = [p for p in SEEDS.glob("*.txt") if "interface BenchmarkDataPoint" in p.read_text("utf-8")]
    block = re.search(r"### JSON Schema for Validation\s+```json\n(.*?)```", doc.read_text("utf-8"), re.S).group(1)
    assert benchmark.schema() == orjson.loads(block)


def test_traceview_validate(tmp_path):
    good = tmp_path / "good.json"
    good.write_bytes(orjson.dumps(sample_records()))
    assert validate_file(str(good)) == ("BenchmarkDataPoint records", [])
    recs = sample_records()
    recs[2]["task"]["complexity"] = "hard"
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(recs))
    assert validate_file(str(bad)) == ("BenchmarkDataPoint records",
                                       [("/2/task/complexity", "'hard' is not one of ['trivial', 'standard', 'complex']")])
    one = tmp_path / "one.json"
    one.write_bytes(orjson.dumps(recs[2]))
    assert validate_file(str(one))[1] == [("/task/complexity", "'hard' is not one of ['trivial', 'standard', 'complex']")]
