"""parsers.cook.totals: the one computation of a trace's token and cost totals.

Expected sums are made here from the raw files, as each API documents its usage."""
from __future__ import annotations

import json

import pytest

from parsers import pipeline
from parsers.cook import totals

KINDS = ("input", "output", "cache_read", "cache_write", "reasoning")


def _req(usage=None, cost=None, model="m", error=None):
    return {"usage": usage, "cost": cost, "model": model, "error": error}


U = {"input": 10, "output": 5, "cache_read": 0, "cache_write": 0, "reasoning": 1}


def test_unknown_usage_is_not_zero_usage():
    t = totals.of_requests([_req(), _req(error="overloaded")])
    assert t["usage_requests"] == 0 and t["cost"] is None
    t = totals.of_requests([_req(U, 0.5), _req()])
    assert (t["usage_requests"], t["input"], t["cost"]) == (1, 10, 0.5)


def test_a_failed_request_without_usage_is_not_unpriced():
    t = totals.of_requests([_req(error="rate limited"), _req(U), _req(U, 0.25)])
    assert (t["unpriced_requests"], t["priced_requests"], t["failed_requests"]) == (1, 1, 1)
    assert not totals.is_unpriced(_req(error="rate limited"))
    assert totals.is_unpriced(_req(U))


def test_add_counts_the_usages_it_sums():
    t = totals.empty()
    for u in (U, None, U):
        totals.add(t, u)
    assert t["usage_requests"] == 2 and t["input"] == 20 and t["reasoning"] == 2


def _raw_sums(path) -> dict:
    """Token sums of a request log straight from its raw JSON (input without cached tokens)."""
    out = dict.fromkeys(KINDS, 0)
    out["records"] = 0
    for line in path.read_text("utf-8").splitlines():
        rec = json.loads(line)
        resp = rec.get("response") or {}
        out["records"] += 1
        if "usageMetadata" in resp:  # Gemini
            g = resp["usageMetadata"]
            cached = g.get("cachedContentTokenCount", 0)
            out["input"] += g.get("promptTokenCount", 0) - cached + g.get("toolUsePromptTokenCount", 0)
            out["cache_read"] += cached
            out["output"] += g.get("candidatesTokenCount", 0) + g.get("thoughtsTokenCount", 0)
            out["reasoning"] += g.get("thoughtsTokenCount", 0)
        elif "prompt_tokens" in (resp.get("usage") or {}):  # OpenAI chat completions
            u = resp["usage"]
            cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
            out["input"] += u["prompt_tokens"] - cached
            out["cache_read"] += cached
            out["output"] += u["completion_tokens"]
    return out


@pytest.mark.parametrize("stem,total", [("adk-deepresearch", 42_276), ("nanobot", None)])
def test_cooked_totals_equal_the_raw_sums(realdata, stem, total):
    path = realdata / "llm_trace_raw" / f"{stem}.jsonl"
    raw = _raw_sums(path)
    doc, _ = pipeline.cook_paths([path])
    (t,) = doc["traces"]
    tot = t["totals"]
    assert {k: tot[k] for k in KINDS} == {k: raw[k] for k in KINDS}
    assert tot["usage_requests"] == tot["requests"] == raw["records"]
    if total is not None:  # Gemini states its own total per response
        assert tot["input"] + tot["output"] + tot["cache_read"] == total
    # the same numbers as the sum over the cooked requests
    reqs = {r["id"]: r for r in doc["requests"]}
    again = totals.of_requests([reqs[r] for r in t["requests"]])
    assert {k: again[k] for k in (*KINDS, "usage_requests", "unpriced_requests")} == \
        {k: tot[k] for k in (*KINDS, "usage_requests", "unpriced_requests")}
