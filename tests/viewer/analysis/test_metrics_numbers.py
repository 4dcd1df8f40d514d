"""Metrics numbers agree with the other pages: tokens and cost are the cook's totals, tool
calls pair with their results as the timeline pairs them, and charts fit their data."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from parsers import pipeline
from viewer.analysis import metrics as md

KINDS = ("input", "output", "cache_read", "cache_write")


def cooked(path):
    doc, _ = pipeline.cook_paths([path])
    return doc, {r["id"]: r for r in doc["requests"]}, {m["id"]: m for m in doc["messages"]}


def test_tool_calls_without_ids_pair_as_the_timeline_pairs_them(realdata):
    """The ADK log's Gemini calls carry no ids. From the raw records: plan_generator is
    called twice and both results come back in later requests; transfer_to_agent is called
    once, last, and nothing answers it."""
    doc, reqs, msgs = cooked(realdata / "llm_trace_raw" / "adk-deepresearch.jsonl")
    (t,) = doc["traces"]
    tu = md.tool_usage(t, reqs, msgs).set_index("tool")
    assert tu.loc["plan_generator", ["calls", "no_result"]].tolist() == [2, 0]
    assert tu.loc["transfer_to_agent", ["calls", "no_result"]].tolist() == [1, 1]


def test_benchmark_tokens_are_the_cooked_totals_on_every_page(realdata):
    """A benchmark data point: Metrics shows the cook's totals, which hold the record's own
    token count (tokensUsed), as the Timeline header does."""
    from pathlib import Path
    path = Path(__file__).resolve().parents[3] / "sample_data" / "benchmark" / "arbiter_benchmark.jsonl"
    raw = [json.loads(line)["execution"] for line in path.read_text("utf-8").splitlines() if line.strip()]
    doc, reqs, msgs = cooked(path)
    assert len(doc["traces"]) == len(raw)
    for t, ex in zip(doc["traces"], raw):
        tot = md.totals(t, reqs, msgs)
        assert sum(tot["tokens"][k] for k in KINDS) == ex["tokensUsed"] == sum(t["totals"][k] for k in KINDS)
        assert tot["tokens"]["reasoning"] == ex["thinkingTokens"]
        assert tot["cost"] == t["totals"]["cost"]
        assert md.is_scorecard(t)


def _trace(requests, timeline=()):
    t = {"id": "t", "requests": [r["id"] for r in requests], "timeline": list(timeline)}
    sums = {k: sum((r["usage"] or {}).get(k, 0) for r in requests) for k in (*KINDS, "reasoning")}
    t["totals"] = {"requests": len(requests), **sums, "usage_requests": sum(r["usage"] is not None for r in requests),
                   "cost": None, "unpriced_requests": sum(r["usage"] is not None and r["cost"] is None
                                                          for r in requests)}
    return t, {r["id"]: r for r in requests}


def _r(n, usage=None, cost=None, error=None, model="m", ts=None):
    return {"id": f"r{n}", "usage": usage, "cost": cost, "error": error, "model": model,
            "timestamp": ts, "duration_ms": 1000, "request_messages": [], "response_messages": []}


def test_no_usage_is_unknown_and_failed_requests_are_not_unpriced():
    t, reqs = _trace([_r(1), _r(2, error="overloaded")])
    tot = md.totals(t, reqs, {})
    assert tot["tokens"] is None and tot["usage_requests"] == 0 and tot["unpriced_requests"] == 0
    df = md.per_request(t, reqs, {})
    assert list(df["cum_unpriced"]) == [0, 0] and df["input"].isna().all()
    pr = md.pricing_rows(t, reqs)
    assert pr.iloc[0]["unpriced"] == 0 and pr.iloc[0]["source"] == "no usage recorded"
    pm = md.per_model([t], reqs)
    assert pm.iloc[0]["unpriced"] == 0 and pd.isna(pm.iloc[0]["input"])
    assert pd.isna(md.per_trace([t]).iloc[0]["input"])


def test_nothing_priced_draws_no_cost_line():
    u = {"input": 5, "output": 1, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    t, reqs = _trace([_r(1, u), _r(2, u)])
    assert md.cost_figure(md.per_request(t, reqs, {})) is None
    t, reqs = _trace([_r(1, u, 0.01), _r(2, u)])
    fig = md.cost_figure(md.per_request(t, reqs, {}))
    assert fig.layout.yaxis.rangemode == "tozero"


def test_request_axes_fit_the_requests():
    u = {"input": 5, "output": 1, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    # A request a second starting as the one before it ended would leave no time between steps
    # to draw: one every two seconds (each lasts one).
    t, reqs = _trace([_r(n, u, 0.01, ts=2000 * n) for n in range(1, 8)])
    df = md.per_request(t, reqs, {})
    for fig in (md.tokens_figure(df), md.context_figure(df), md.cost_figure(df), md.latency_figure(df),
                md.gaps_figure(df)):
        assert tuple(fig.layout.xaxis.range) == (0.5, 7.5), fig.layout.title.text


def test_an_overnight_gap_does_not_flatten_the_others():
    u = {"input": 5, "output": 1, "cache_read": 0, "cache_write": 0, "reasoning": 0}
    stamps = [0, 3_000, 6_000, 6_000 + 16 * 3_600_000, 6_000 + 16 * 3_600_000 + 4_000]
    t, reqs = _trace([_r(n, u, ts=s) for n, s in enumerate(stamps, 1)])
    fig = md.gaps_figure(md.per_request(t, reqs, {}))
    assert fig.layout.yaxis.type == "log" and "log" in fig.layout.yaxis.title.text
    assert "15 h 59 min" in fig.data[0].hovertext[3]  # 16 h from the start, less the 1 s request


def test_every_tool_is_labelled():
    tu = pd.DataFrame({"tool": [f"tool_{k:02d}" for k in range(40)], "calls": range(40, 0, -1),
                       "errors": [0] * 40, "no_result": [0] * 40})
    fig = md.tools_figure(tu)
    assert sorted(fig.layout.yaxis.tickvals) == sorted(tu["tool"]) == sorted(fig.layout.yaxis.ticktext)
    assert fig.layout.height >= 40 * 20
