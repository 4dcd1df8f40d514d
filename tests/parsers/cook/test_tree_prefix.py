"""A request that continues an earlier conversation is scored without an edit distance: the
conversation is its first messages, so the distance is the count of the rest."""
from __future__ import annotations

import random

from rapidfuzz.distance import Levenshtein

from parsers.cook import tree
from parsers.cook.tree import assign_parents

NO_TOOLS = frozenset()


def _spy(monkeypatch) -> list:
    calls = []

    def distance(a, b):
        calls.append((list(a), list(b)))
        return Levenshtein.distance(a, b)

    monkeypatch.setattr(tree, "_distance", distance)
    return calls


def test_a_continued_conversation_costs_no_distance(monkeypatch):
    calls = _spy(monkeypatch)
    conv: list[str] = ["system", "u0"]
    requests = []
    for i in range(30):
        requests.append(("m", list(conv), [f"a{i}"], NO_TOOLS))
        conv += [f"a{i}", f"r{i}", f"u{i + 1}"]
    assert assign_parents(requests) == [None, *range(29)]
    assert not [(a, b) for a, b in calls if b[:len(a)] == a]


def test_parents_are_the_best_score_with_prefixes_and_rewinds(monkeypatch):
    # Against llm-path's score over every earlier request of the model.
    _spy(monkeypatch)
    rng = random.Random(7)
    for _ in range(30):
        requests, convs = [], [[]]
        for i in range(rng.randint(2, 25)):
            base = rng.choice(convs)[:rng.randint(0, 12)] if rng.random() < 0.3 else rng.choice(convs)
            req = base + [f"u{rng.randint(0, 6)}" for _ in range(rng.randint(1, 3))]
            resp = [f"a{rng.randint(0, 6)}"]
            tools = frozenset(rng.sample("xyz", rng.randint(0, 2)))
            requests.append((rng.choice("mn"), req, resp, tools))
            convs.append(req + resp)
        expected = []
        for i, (model, req, _, tools) in enumerate(requests):
            best, best_j = None, None
            for j, (m2, r2, s2, t2) in enumerate(requests[:i]):
                if m2 == model:
                    score = -Levenshtein.distance(r2 + s2, req) - 0.5 * len(tools ^ t2)
                    if best is None or score >= best:
                        best, best_j = score, j
            expected.append(best_j if best is not None and best >= -len(req) / 2 else None)
        assert assign_parents(requests) == expected
