"""The request forest: each request's parent is the earlier request it continues.

The score is the one of `llm-path cook` (where the cook format comes from): among earlier
requests of the same model, score = -(edit distance between the candidate's conversation,
i.e. its request messages then its response messages, and this request's messages, as
sequences of message ids) - 0.5 per tool offered by one and not the other. The best score
wins, ties go to the latest; a best score below -len(messages)/2 means no parent.

llm-path scores every pair (quadratic). We find the same best request while scoring only a
few, and every shortcut below only skips requests that provably cannot win:

- Identical conversations form one bucket (the trie node where they end): its edit distance
  is computed once, and within it the request whose tools differ least wins (the latest on
  a tie). So a thousand identical retries cost one distance, not a thousand.
- A trie over message ids yields the buckets sharing the longest prefix with this request
  and the one that is a prefix of it; their best score B bounds the rest.
- The edit distance is at least the difference in length, so only conversations whose length
  is within -B of ours (and within half our message count, the threshold for having a
  parent at all) can still match B; a candidate older than the best so far must beat B
  outright, which narrows its window by one more.
- Within that window, conversations of one length L are scored outright when there are few
  of them. When there are many (thousands of independent requests sharing a system prompt),
  a counting bound picks the few worth scoring: an alignment of our n messages with a
  conversation of L messages at distance d matches at least max(n, L) - d of our messages,
  so with d at most D, any D + 1 - max(L - n, 0) of our messages include a matched one. An
  index from message id to the conversations holding it, built the first
  time it is needed, gives those conversations from our rarest messages.
"""
from __future__ import annotations

import bisect
import heapq
import math

from rapidfuzz.distance import Levenshtein

# Conversations of one length in the window are scored outright up to this many; above it
# the message index chooses which to score.
OUTRIGHT = 16

_distance = Levenshtein.distance


class _Node:
    """A trie node. Where a conversation ends, the node is that conversation's bucket."""

    __slots__ = ("children", "last", "conv", "tools", "newest")

    def __init__(self):
        self.children: dict[str, _Node] = {}
        self.last = -1  # the latest request whose conversation passes through here
        self.conv: list[str] | None = None  # the conversation ending here, if any
        self.tools: dict[frozenset, int] | None = None  # tool set -> latest request ending here with it
        self.newest = -1  # the latest request ending here


class _Model:
    """The requests of one model seen so far."""

    __slots__ = ("root", "latest", "by_len", "lengths", "class_last", "index")

    def __init__(self):
        self.root = _Node()
        self.latest: tuple[int, _Node] | None = None  # (index, node where its conversation ends)
        self.by_len: dict[int, list[_Node]] = {}  # conversation length -> buckets
        self.lengths: list[int] = []  # the keys of by_len, sorted
        self.class_last: dict[int, int] = {}  # conversation length -> latest request of that length
        self.index: dict[str, list[_Node]] | None = None  # message id -> buckets holding it

    def add_to_index(self, bucket: _Node) -> None:
        index = self.index
        for mid in bucket.conv:
            held = index.get(mid)
            if held is None:
                index[mid] = [bucket]
            elif held[-1] is not bucket:  # once per conversation, however often it holds mid
                held.append(bucket)

    def build_index(self) -> dict:
        self.index = {}
        for buckets in self.by_len.values():
            for b in buckets:
                self.add_to_index(b)
        return self.index


def _rarest(req: list[str], k: int, index: dict) -> list[str]:
    """k distinct message ids of `req` held by few conversations (all of them if fewer).

    Any k ids are a correct choice; rare ones only make less to score. The newest messages
    (the end of the request) are usually the rarest, so they are looked at first, and the
    rest only when one of those is common."""
    found: dict[str, int] = {}
    for mid in reversed(req):
        if mid not in found:
            found[mid] = size = len(index.get(mid, ()))
            if size > OUTRIGHT:
                break
            if len(found) == k:
                return list(found)
    else:
        return list(found)
    ids = set(req)
    return heapq.nsmallest(k, ids, key=lambda mid: len(index.get(mid, ())))


def assign_parents(requests: list[tuple[str | None, list[str], list[str], frozenset]]) -> list[int | None]:
    """Parents of requests given in time order as (model, request ids, response ids, tool ids).

    Returns, for each request, the index of its parent or None."""
    parents: list[int | None] = []
    models: dict = {}
    bucket_of: list[_Node] = []  # request index -> its bucket
    for i, (model, req, resp, tools) in enumerate(requests):
        st = models.get(model)
        n = len(req)
        half = n / 2
        depth, reached = 0, None
        best, best_i = None, -1

        if st is not None:
            scored: set[_Node] = set()

            def score(b: _Node, d: int | None = None) -> None:
                """`d`: the edit distance, when the caller knows it."""
                nonlocal best, best_i
                scored.add(b)
                if d is None:
                    d = _distance(b.conv, req)
                j = b.tools.get(tools)
                if j is not None:  # same tools: nothing in the bucket scores better
                    s = -d
                else:
                    s, j = max((-d - 0.5 * len(t ^ tools), k) for t, k in b.tools.items())
                if best is None or s > best or (s == best and j > best_i):
                    best, best_i = s, j

            def reach(newer: bool) -> int:
                """The largest distance a candidate may have and still matter: a candidate
                newer than the best so far may tie it, an older one must beat it."""
                if best is None:
                    return math.floor(half)
                if newer:
                    return math.floor(min(-best, half))
                return min(math.ceil(-best) - 1, math.floor(half))

            # The deepest node of our messages in the trie: the bucket ending there (a prefix
            # of ours, as long as possible) and the latest request passing through it (the
            # longest shared prefix).
            node = st.root
            # Usually we continue the model's latest conversation: compare it (in C) and walk
            # only the rest.
            _, end = st.latest
            m = len(end.conv)
            if m <= n and req[:m] == end.conv:
                node, depth = end, m
            for mid in req[depth:] if depth else req:
                nxt = node.children.get(mid)
                if nxt is None:
                    break
                node = nxt
                depth += 1
            reached = node
            if node.conv is not None:
                # Our first `depth` messages: its distance from us is our messages past them.
                score(node, n - depth)
            if node.last >= 0 and bucket_of[node.last] not in scored:
                score(bucket_of[node.last])

            # The window of lengths, nearest to ours first (they can score best).
            wide = reach(True)
            lens = st.lengths
            window = lens[bisect.bisect_left(lens, n - wide):bisect.bisect_right(lens, n + wide)]
            window.sort(key=lambda length: abs(length - n))
            rare = None  # our distinct message ids, those in fewest conversations first
            for length in window:
                limit = reach(st.class_last[length] > best_i)
                gap = abs(length - n)
                if gap > limit:
                    continue
                buckets = st.by_len[length]
                # Any `need` of our messages include one the conversation matches.
                need = limit + 1 - max(length - n, 0)
                if len(buckets) > OUTRIGHT and need <= n:
                    index = st.index if st.index is not None else st.build_index()
                    if rare is None:  # `need` never exceeds wide + 1: the bound only tightens
                        rare = _rarest(req, wide + 1, index)
                    # `need` distinct ids cover at least `need` of our messages; fewer ids
                    # than that are all of our messages.
                    buckets = [b for mid in rare[:need] for b in index.get(mid, ()) if len(b.conv) == length]
                for b in buckets:
                    if b not in scored and gap <= reach(b.newest > best_i):
                        score(b)
        parents.append(best_i if best is not None and best >= -half else None)

        conv = req + resp
        if st is None:
            st = models[model] = _Model()
        # Insert our conversation, starting where the lookup walk stopped (the walk followed
        # our request messages, which begin the conversation).
        if reached is not None:
            node, rest = reached, conv[depth:]
        else:
            node, rest = st.root, conv
        node.last = i
        for mid in rest:
            nxt = node.children.get(mid)
            if nxt is None:
                nxt = node.children[mid] = _Node()
            node = nxt
            node.last = i
        length = len(conv)
        if node.conv is None:  # a new bucket
            node.conv, node.tools = conv, {}
            buckets = st.by_len.get(length)
            if buckets is None:
                buckets = st.by_len[length] = []
                bisect.insort(st.lengths, length)
            buckets.append(node)
            if st.index is not None:
                st.add_to_index(node)
        node.tools[tools] = i
        node.newest = i
        st.class_last[length] = i
        st.latest = (i, node)
        bucket_of.append(node)
    return parents
