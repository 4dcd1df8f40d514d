"""The request forest: parents chosen by llm-path's score, found without scoring every pair."""
from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from rapidfuzz.distance import Levenshtein

from parsers import pipeline
from parsers.cook.tree import assign_parents
from parsers.cook.schema import cooked_errors

GOLDEN = Path(__file__).parent / "golden"
NO_TOOLS = frozenset()


def brute_force(requests):
    """llm-path's quadratic search, as a reference."""
    out = []
    for i, (model, req, _, tools) in enumerate(requests):
        best, best_j = None, None
        for j in range(i):
            m2, r2, s2, t2 = requests[j]
            if m2 != model:
                continue
            score = -Levenshtein.distance(r2 + s2, req) - 0.5 * len(tools ^ t2)
            if best is None or score >= best:
                best, best_j = score, j
        out.append(best_j if best is not None and best >= -len(req) / 2 else None)
    return out


def test_continuation_rewind_and_side_call():
    a = ("m", ["s", "u1"], ["a1"], NO_TOOLS)
    b = ("m", ["s", "u1", "a1", "u2"], ["a2"], NO_TOOLS)
    c = ("m", ["s", "u1", "a1", "u2", "a2", "u3"], ["a3"], NO_TOOLS)
    side = ("small", ["x", "y"], ["z"], NO_TOOLS)
    rewind = ("m", ["s", "u1", "a1", "u2b"], ["a2b"], NO_TOOLS)  # resumes after a1
    assert assign_parents([a, b, c, side, rewind]) == [None, 0, 1, None, 0]


def test_ties_go_to_the_latest():
    a = ("m", ["s"], ["x"], NO_TOOLS)
    b = ("m", ["s"], ["x"], NO_TOOLS)
    c = ("m", ["s", "x", "u"], [], NO_TOOLS)
    assert assign_parents([a, b, c]) == [None, None, 1]  # b is too far from a (1 > 0.5)


def test_tools_break_ties():
    t1, t2 = frozenset({"t1"}), frozenset({"t1", "t2"})
    a = ("m", ["s"], ["x"], t1)
    b = ("m", ["s"], ["x"], t2)
    c = ("m", ["s", "x", "u"], [], t1)
    assert assign_parents([a, b, c])[2] == 0


def test_unrelated_conversation_is_a_new_root():
    a = ("m", ["s", "u1", "u2", "u3"], ["a"], NO_TOOLS)
    b = ("m", ["p", "q", "r", "t"], ["a"], NO_TOOLS)
    assert assign_parents([a, b]) == [None, None]


def test_matches_brute_force_on_random_histories():
    rng = random.Random(7)
    for _ in range(40):
        reqs, convs = [], []
        for i in range(rng.randint(2, 30)):
            model = rng.choice(["a", "a", "a", "b"])
            if convs and rng.random() < 0.8:
                base = rng.choice(convs)
                cut = rng.randint(0, len(base))
                req = base[:cut] + [f"u{i}"]
            else:
                req = [f"s{rng.randint(0, 2)}", f"u{i}"]
            resp = [f"r{rng.randint(0, 3)}"]
            tools = frozenset(rng.sample(["t1", "t2", "t3"], rng.randint(0, 2)))
            reqs.append((model, req, resp, tools))
            convs.append(req + resp)
        assert assign_parents(reqs) == brute_force(reqs)


LLMPATH_CASES = [("gen60_claude", 60, ()), ("gen120_claude", 120, ()), ("gen60_claude_stream", 60, ("--stream",)),
                 ("gen120_claude_stream", 120, ("--stream",)), ("gen60_openai", 60, ("--format", "openai"))]


@pytest.mark.parametrize("name,n,opts", LLMPATH_CASES, ids=[c[0] for c in LLMPATH_CASES])
def test_parents_equal_llm_path_on_generated_logs(name, n, opts, gen_traces, tmp_path):
    log = gen_traces("requests", n, tmp_path / "log.jsonl", *opts)
    doc, _ = pipeline.cook_paths([log])
    assert cooked_errors(doc) == []
    golden = json.loads((GOLDEN / f"llmpath_parents_{name}.json").read_text())
    mine = {r["id"]: r["parent_id"] for r in doc["requests"]}
    assert mine == golden
    roots = [r for r in doc["requests"] if r["parent_id"] is None]
    assert len(roots) > 1  # side calls start their own trees


REAL_LOGS = ["nanobot", "adk-deepresearch", "claude-code.first25"]


def _score(req, parent):
    conv = parent["request_messages"] + parent["response_messages"]
    return -Levenshtein.distance(conv, req["request_messages"]) - 0.5 * len(set(req["tools"]) ^ set(parent["tools"]))


def _has_parent_under_the_rule(req, parent, order) -> bool:
    """llm-path's rule for a parent: an earlier request of the same model scoring at least
    -len(messages)/2."""
    return (order[parent["id"]] < order[req["id"]] and parent["model"] == req["model"]
            and _score(req, parent) >= -len(req["request_messages"]) / 2)


@pytest.mark.parametrize("stem", REAL_LOGS)
def test_parents_score_at_least_as_well_as_llm_path_on_real_logs(stem, realdata):
    """Where llm-path found a parent, ours scores at least as well; where it made a root (no
    earlier request passes its rule), ours is a root too or a parent passing the same rule."""
    doc, _ = pipeline.cook_paths([realdata / "llm_trace_raw" / f"{stem}.jsonl"])
    golden = json.loads((GOLDEN / f"llmpath_parents_{stem}.json").read_text())
    by_id = {r["id"]: r for r in doc["requests"]}
    order = {r["id"]: n for n, r in enumerate(doc["requests"])}
    parents = roots = 0
    for rid, theirs in golden.items():
        req = by_id.get(rid)
        if req is None:  # a record we skip as not a chat call (count_tokens)
            continue
        ours = by_id[req["parent_id"]] if req["parent_id"] is not None else None
        if theirs is None:
            roots += 1
            assert ours is None or _has_parent_under_the_rule(req, ours, order), (
                f"{rid}: llm-path made it a root; our parent {ours['id']} does not pass the rule")
            continue
        if theirs not in by_id or by_id[theirs]["model"] != req["model"]:
            continue
        parents += 1
        assert ours is not None, f"{rid}: llm-path found parent {theirs}, we found none"
        assert _has_parent_under_the_rule(req, ours, order)
        assert _score(req, ours) >= _score(req, by_id[theirs])
    assert parents > 0 and roots > 0
