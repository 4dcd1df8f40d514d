"""What every provider's message reader shares: a memo of converted raw messages, the
reuse of a repeated history, problems with their JSON path, tool-call arguments."""
from __future__ import annotations

import operator

import orjson

from parsers.model import Message, Problem


def shared_prefix(a: list, b: list) -> int:
    """The length of the longest common prefix of two lists of JSON values (slice
    comparisons run in C and stop at the first difference)."""
    n = min(len(a), len(b))
    if not n or a[0] != b[0]:
        return 0
    if a[:n] != b[:n]:
        lo, hi = 1, n - 1  # a[:lo] == b[:lo]; a[:hi + 1] != b[:hi + 1]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if a[:mid] == b[:mid]:
                lo = mid
            else:
                hi = mid - 1
        n = lo
    # Python's == takes 1, 1.0 and true for the same; JSON does not. Elements reused by
    # RepeatedArrays are the same objects; any other pair is checked by its JSON text.
    if not all(map(operator.is_, a[:n], b[:n])):
        for i in range(n):
            if a[i] is not b[i] and orjson.dumps(a[i]) != orjson.dumps(b[i]):
                return i
    return n


def json_text(v) -> str:
    return orjson.dumps(v).decode()


class MessageReader:
    name = ""

    def __init__(self, file: str, where: dict, problems: list[Problem], memo: dict | None = None):
        self.file, self.where, self.problems = file, where, problems
        self.memo = memo if memo is not None else {}

    def cached(self, raw, convert) -> list[Message]:
        """Converted messages of one raw message, reused when the same raw message recurs.

        Logged requests repeat the whole history, so most messages of a request were seen
        in the previous one; converting (and later hashing) each only once keeps cooking
        close to the cost of parsing the JSON. The key is the raw message's exact JSON."""
        try:
            key = orjson.dumps(raw)
        except TypeError:
            return convert()
        key = self.name.encode() + key
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = convert()
        return hit

    def convert_history(self, raws: list, convert_one) -> list[Message]:
        """Converted messages of a request's history.

        Most requests repeat an earlier request's history (usually the previous one's; a
        side call may come between) and add a little: the longest prefix shared with one of
        the last few histories is found by list comparisons (in C; identity checks when the
        lines were read by `RepeatedArrays`) and its conversion reused, flattened list
        included (so the cook can spot the shared prefix by identity); only the rest goes
        through `cached`."""
        recent = self.memo.setdefault(("recent histories", self.name), [])
        best, k = None, 0
        for h in recent:
            n = shared_prefix(raws, h[0])
            if n > k:
                best, k = h, n
                if n == len(h[0]):
                    break
        if best is not None:
            flat, ends = best[1][:best[2][k - 1]], best[2][:k]
        else:
            flat, ends = [], []
        for i in range(k, len(raws)):
            raw = raws[i]
            flat.extend(self.cached(raw, lambda: convert_one(raw, i)))
            ends.append(len(flat))
        recent.insert(0, (raws, flat, ends))
        del recent[4:]
        return list(flat)

    def problem(self, path: str, message: str):
        self.problems.append(Problem(self.file, message, path=path, **self.where))

    def parse_arguments(self, raw, path: str, name: str | None):
        """OpenAI arguments are a JSON string: parsed to an object; kept raw when unparsable."""
        if raw is None:
            return {}
        if not isinstance(raw, str):
            return raw
        if not raw.strip():
            return {}
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.problem(path, f"arguments of tool call {name!r} are not valid JSON; kept as text")
            return raw


def result_text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict):
                if b.get("type") == "text":
                    parts.append(str(b.get("text") or ""))
                elif b.get("type") in ("image", "image_url"):
                    parts.append("[image]")
                else:
                    parts.append(json_text(b))
            else:
                parts.append(str(b))
        return "\n".join(parts)
    return json_text(content)
