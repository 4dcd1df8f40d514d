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


# --- the shortcuts against the rule itself, and their cost ------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from parsers.cook import tree  # noqa: E402


def edit_distance(a, b):
    """Levenshtein distance over sequences, the textbook dynamic programme."""
    prev = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        cur = [i]
        for j, y in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (x != y)))
        prev = cur
    return prev[-1]


def exact_parents(requests):
    """The documented rule, every pair scored: among earlier requests of the same model, the
    best -(edit distance of its request + response to our request) - 0.5 per differing tool,
    ties to the latest, no parent when the best is below -len(request)/2."""
    out = []
    for i, (model, req, _, tools) in enumerate(requests):
        scored = [(-edit_distance(r2 + s2, req) - 0.5 * len(tools ^ t2), j)
                  for j, (m2, r2, s2, t2) in enumerate(requests[:i]) if m2 == model]
        best = max(scored, default=None)
        out.append(best[1] if best is not None and best[0] >= -len(req) / 2 else None)
    return out


IDS = st.sampled_from(["s", "s2", "u", "v", "w", "x", "a", "b"])
TOOLS = st.frozensets(st.sampled_from(["t1", "t2", "t3"]), max_size=2)


@st.composite
def histories(draw):
    """Request logs mixing the shapes that matter: identical retries (same request, same or
    other response and tools), continuations, rewinds, independent requests under a shared
    system prompt, and random short requests, over a small alphabet so that ties abound."""
    reqs = []
    for k in range(draw(st.integers(1, 24))):
        kind = draw(st.sampled_from(["retry", "retry", "continue", "rewind", "independent", "random"]))
        model = draw(st.sampled_from(["m", "m", "m", "n"]))
        if reqs and kind == "retry":
            prev = reqs[draw(st.integers(0, len(reqs) - 1))]
            same = draw(st.booleans())
            resp = prev[2] if same else draw(st.lists(IDS, max_size=2))
            tools = prev[3] if same or draw(st.booleans()) else draw(TOOLS)
            reqs.append((prev[0] if same else model, list(prev[1]), list(resp), tools))
            continue
        if reqs and kind in ("continue", "rewind"):
            prev = reqs[draw(st.integers(0, len(reqs) - 1))]
            conv = prev[1] + prev[2]
            cut = len(conv) if kind == "continue" else draw(st.integers(0, len(conv)))
            req = conv[:cut] + draw(st.lists(st.one_of(IDS, st.just(f"q{k}")), max_size=2))
        elif kind == "independent":
            req = ["s", f"q{k}"]
        else:
            req = draw(st.lists(IDS, max_size=6))
        reqs.append((model, req, draw(st.lists(st.one_of(IDS, st.just(f"r{k}")), max_size=2)), draw(TOOLS)))
    return reqs


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_same_parents_as_scoring_every_pair(reqs):
    want = exact_parents(reqs)
    # OUTRIGHT 0 sends every length class through the message index; the default mixes both.
    for outright in (0, 1, tree.OUTRIGHT):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(tree, "OUTRIGHT", outright)
            assert assign_parents(reqs) == want, outright


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.lists(IDS, max_size=4), st.lists(IDS, max_size=2), st.lists(TOOLS, min_size=1, max_size=3))
def test_identical_retries_match_the_rule(count, req, resp, toolsets):
    """The same request again and again, the tools cycling: the parent is the latest earlier
    request with the closest tools, or none when even that is too far (a short request)."""
    reqs = [("m", list(req), list(resp), toolsets[k % len(toolsets)]) for k in range(count)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tree, "OUTRIGHT", 0)
        assert assign_parents(reqs) == exact_parents(reqs)
    assert assign_parents(reqs) == exact_parents(reqs)


def test_ties_between_many_conversations_go_to_the_latest():
    """Forty retries with different answers all sit at distance 1: the latest wins, also
    when the candidates come from the message index."""
    reqs = [("m", ["s", "u"], [f"a{k}"], NO_TOOLS) for k in range(40)]
    reqs.append(("m", ["s", "u", "a7", "u2"], [], NO_TOOLS))  # continues the 8th exactly
    want = [None] + list(range(39)) + [7]
    assert exact_parents(reqs) == want
    for outright in (0, tree.OUTRIGHT):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(tree, "OUTRIGHT", outright)
            assert assign_parents(reqs) == want


def _chat_line(n, user, answer):
    return json.dumps({
        "id": f"r{n}", "timestamp": 1746000000000 + n,
        "request": {"model": "gpt-4o", "messages": [{"role": "system", "content": "grade this"},
                                                    {"role": "user", "content": user}]},
        "response": {"choices": [{"message": {"role": "assistant", "content": answer}}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 2}}})


@pytest.mark.parametrize("shape", ["identical", "independent"])
def test_thousands_of_requests_cook_in_bounded_work(shape, tmp_path, monkeypatch):
    """3,000 identical retries, or 3,000 independent questions under one system prompt: the
    edit distance is computed a few times per request, not once per earlier request."""
    count = 3000
    if shape == "identical":
        lines = [_chat_line(n, "question", "answer") for n in range(count)]
    else:
        lines = [_chat_line(n, f"question number {n}", f"answer {n}") for n in range(count)]
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(lines) + "\n")
    calls = 0
    real = tree._distance

    def counting(a, b):
        nonlocal calls
        calls += 1
        return real(a, b)

    monkeypatch.setattr(tree, "_distance", counting)
    doc, _ = pipeline.cook_paths([log])
    reqs = doc["requests"]
    assert len(reqs) == count
    assert calls <= 3 * count, calls
    parents = [r["parent_id"] for r in reqs]
    if shape == "identical":  # request, response: distance 1, within half of 2 messages
        assert parents == [None] + [r["id"] for r in reqs[:-1]]
    else:  # another question and its answer: distance 2, too far
        assert parents == [None] * count
