"""The request forest: each request's parent is the earlier request it continues.

The score is the one of `llm-path cook` (where the cook format comes from): among earlier
requests of the same model, score = -(edit distance between the candidate's conversation,
i.e. its request messages then its response messages, and this request's messages, as
sequences of message ids) - 0.5 per tool offered by one and not the other. The best score
wins, ties go to the latest; a best score below -len(messages)/2 means no parent.

llm-path scores every pair (quadratic). We find the same best request while scoring only a
few: a trie over message ids yields the requests sharing the longest prefix with this one and
those whose whole conversation is a prefix of it; their best score B bounds the search,
since the edit distance is at least the difference in length, so only requests whose
conversation length is within -B of ours can still match or beat B; those are scored too.
"""
from __future__ import annotations

import bisect

from rapidfuzz.distance import Levenshtein


class _Node:
    __slots__ = ("children", "ends", "last")

    def __init__(self):
        self.children: dict[str, _Node] = {}
        self.ends: list[int] = []
        self.last = -1


def assign_parents(requests: list[tuple[str | None, list[str], list[str], frozenset]]) -> list[int | None]:
    """Parents of requests given in time order as (model, request ids, response ids, tool ids).

    Returns, for each request, the index of its parent or None."""
    parents: list[int | None] = []
    convs: list[list[str]] = []
    tries: dict = {}
    by_len: dict = {}  # model -> sorted [(conversation length, index)]
    latest: dict = {}  # model -> (index, trie node where its conversation ends)
    for i, (model, req, resp, tools) in enumerate(requests):
        root = tries.get(model)
        n = len(req)
        depth, reached = 0, None
        best, best_i = None, None
        scored: set[int] = set()

        def score(j):
            nonlocal best, best_i
            scored.add(j)
            s = -Levenshtein.distance(convs[j], req) - 0.5 * len(tools ^ requests[j][3])
            if best is None or s > best or (s == best and j > best_i):
                best, best_i = s, j

        if root is not None:
            # The deepest node of our messages in the trie: the requests whose conversation
            # ends there (a prefix of ours, as long as possible) and the latest one passing
            # through it (the longest shared prefix). Shallower prefixes score worse by their
            # length difference, so the length window below covers any that could tie.
            node = root
            # Usually we continue the model's latest conversation: compare it (in C) and
            # walk only the rest.
            j, end = latest[model]
            if len(convs[j]) <= n and req[:len(convs[j])] == convs[j]:
                node, depth = end, len(convs[j])
            for mid in req[depth:] if depth else req:
                nxt = node.children.get(mid)
                if nxt is None:
                    break
                node = nxt
                depth += 1
            reached = node
            for j in node.ends:
                score(j)
            if node.last >= 0 and node.last not in scored:
                score(node.last)
            # Only requests within `limit` of our length can reach the best score (or the
            # threshold for having a parent at all).
            limit = n / 2 if best is None else min(-best, n / 2)
            lens = by_len[model]
            lo = bisect.bisect_left(lens, (n - limit, -1))
            hi = bisect.bisect_right(lens, (n + limit, len(requests)))
            for _, j in lens[lo:hi]:
                if j not in scored:
                    score(j)
        parents.append(best_i if best is not None and best >= -n / 2 else None)

        conv = req + resp
        convs.append(conv)
        if root is None:
            root = tries[model] = _Node()
            by_len[model] = []
        # Insert our conversation, starting where the lookup walk stopped (the walk followed
        # our request messages, which begin the conversation).
        if reached is not None:
            node, rest = reached, conv[depth:]
        else:
            node, rest = root, conv
        node.last = i
        for mid in rest:
            nxt = node.children.get(mid)
            if nxt is None:
                nxt = node.children[mid] = _Node()
            node = nxt
            node.last = i
        node.ends.append(i)
        latest[model] = (i, node)
        bisect.insort(by_len[model], (len(conv), i))
    return parents
