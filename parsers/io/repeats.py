"""JSON lines that repeat an earlier line's array: parse only what is new.

A request log stores the whole conversation in every request, so each line repeats the
messages of the one before and adds a few; parsing every line whole parses the same history
again and again (such files grow with the square of the conversation's length).

`RepeatedArrays.loads(line)` returns what `orjson.loads(line)` returns. Along the way it
finds the array at a given path (`request.messages`, say) in the line's text and compares
those bytes with the same array of a few recent lines: the longest run of leading elements
that is byte for byte the same as in one of them (ending where an element ended there) is
cut out of the line, the rest is parsed, and the elements already parsed from that earlier
line are put back in front. So the record is equal to a whole parse, and the shared
elements are the same objects as in the earlier record, which makes comparing the two
histories later an identity check.

Only bytes are trusted: an element is reused only when its exact text was parsed before.
Anything unexpected (no such array, a key written with escapes, a repeated key, a line that
does not parse once cut) falls back to parsing the whole line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

# A JSON string, or a structural character. Numbers, literals and whitespace lie between
# matches; they never change the nesting.
_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[][{}:,]')
_QUOTE, _COMMA, _COLON = 0x22, 0x2C, 0x3A
_OBJ, _OBJ_END, _ARR, _ARR_END = 0x7B, 0x7D, 0x5B, 0x5D
_MAX_KEY = 64


@dataclass
class _Seen:
    data: bytearray      # the line's text (the buffer may be longer: see `size`)
    size: int
    start: int           # offset of the array's '['
    seps: list[int]      # offset (from '[') of the ',' or ']' after each element
    elements: list       # the parsed elements


class RepeatedArrays:
    """Parses JSON lines, reusing elements of an array repeated from recent lines.

    `path` lists, level by level, the object keys leading to the array (alternatives per
    level), e.g. (("request",), ("messages", "contents")). Lines shorter than `min_bytes`
    are parsed whole (nothing much to save)."""

    def __init__(self, path, min_bytes: int = 32 * 1024, keep: int = 4):
        self.path = tuple(frozenset(b'"' + k.encode() + b'"' for k in level) for level in path)
        self.spellings = {key: _spellings(key) for level in self.path for key in level}
        self.min_bytes = min_bytes
        self.keep = keep
        self.seen: list[_Seen] = []  # most recent first
        self.spare: list[bytearray] = []  # buffers of lines no longer kept, for reuse
        self.reused = 0  # elements taken from earlier lines (for tests and curiosity)

    def loads(self, line):
        size = len(line)
        if size < self.min_bytes or isinstance(line, str):
            return orjson.loads(line)
        # Lines are copied into reused buffers: a fresh megabyte-sized object per line
        # would be fresh memory from the system each time, and cost about as much to
        # fault in as to parse.
        data = self.spare.pop() if self.spare else bytearray()
        if len(data) < size:
            data = bytearray(size + size // 4)
        data[:size] = line
        try:
            found = _find_array(data, size, self.path)
            if found is not None:
                rec = self._splice(data, size, *found)
                if rec is not None:
                    return rec
        except (orjson.JSONDecodeError, IndexError, KeyError, TypeError):
            pass  # the line is parsed whole below; a broken line raises there, as it should
        self.spare.append(data)
        return orjson.loads(line)

    def _splice(self, data: bytearray, size: int, start: int, keys: list[bytes]):
        best, k = None, 0
        for seen in self.seen:
            n = _shared(data, size, start, seen)
            if n > k:
                best, k = seen, n
                if n == len(seen.seps):
                    break
        name = keys[-1][1:-1].decode()
        text = memoryview(data)[:size]
        if k:
            sep = start + best.seps[k - 1]
            rest = sep + 1 if data[sep] == _COMMA else sep  # at ']' nothing new follows
            rec = orjson.loads(b"".join((text[:start + 1], text[rest:])))
            holder = _holder(rec, keys)
            if type(holder[name]) is not list:
                return None
            elements = holder[name] = best.elements[:k] + holder[name]
            seps = best.seps[:k]
        else:
            rec = orjson.loads(text)
            elements = _holder(rec, keys)[name]
            if type(elements) is not list:
                return None
            seps, rest = [], start + 1
        end = _separators(data, size, rest, start)
        if end is None:
            return None  # cannot happen for a line that parsed
        more, close = end
        if k and not more and data[sep] == _COMMA:
            return None  # "[..., ]": a comma before the ']' (invalid; cut, it would parse)
        # orjson keeps the last of repeated keys, escapes decoded; any repeat comes after
        # the array (a quick search for any spelling of the keys, then a precise look).
        if (any(self.spellings[key].search(data, close, size) for key in keys)
                and _repeated_after(data, size, close + 1, keys)):
            return None
        if len(seps) + len(more) != len(elements):
            return None  # tokens and parse disagree (cannot happen either)
        self.reused += k
        # A copy of the list: a caller appending to the record's array must not change what
        # the next line reuses (records are otherwise read, not modified, by the readers).
        self.seen.insert(0, _Seen(data, size, start, seps + more, list(elements)))
        for old in self.seen[self.keep:]:
            self.spare.append(old.data)
        del self.seen[self.keep:]
        return rec


def _holder(rec, keys: list[bytes]) -> dict:
    """The object holding the array (keys are the quoted, unescaped path keys)."""
    for key in keys[:-1]:
        rec = rec[key[1:-1].decode()]
    if type(rec) is not dict:
        raise TypeError("not an object")
    return rec


def _find_array(data: bytearray, size: int, path) -> tuple[int, list[bytes]] | None:
    """(offset of the '[', the keys leading to it) of the array at `path` in the line's
    top-level object, or None. Keys are matched as written (quotes included)."""
    stack: list[bool] = []  # open containers: True for an object
    matched: list[bytes] = []  # path keys entered so far
    key = None
    prev = 0
    for m in _TOKENS.finditer(data, 0, size):
        i = m.start()
        c = data[i]
        if c == _QUOTE:
            if stack and stack[-1] and (prev == _OBJ or prev == _COMMA):
                key = bytes(data[i:m.end()]) if m.end() - i <= _MAX_KEY else None
                if key is not None and b"\\" in key and len(stack) == len(matched) + 1 and any(
                        _same_key(key, k) for k in path[len(matched)]):
                    return None  # a path key written with escapes: leave the line to orjson
        elif c == _OBJ or c == _ARR:
            if not stack and c != _OBJ:
                return None  # not a JSON object
            if prev == _COLON and len(stack) == len(matched) + 1 and key in path[len(matched)]:
                if len(matched) + 1 == len(path):
                    return (i, matched + [key]) if c == _ARR else None
                if c != _OBJ:
                    return None
                matched.append(key)
            stack.append(c == _OBJ)
        elif c == _OBJ_END or c == _ARR_END:
            if len(stack) <= len(matched) + 1:
                return None  # the object that should hold the next key ended without it
            stack.pop()
        prev = c
    return None


def _repeated_after(data: bytearray, size: int, pos: int, keys: list[bytes]) -> bool:
    """Whether a key of the path recurs in its object after `pos` (just past the array)."""
    level = len(keys) - 1  # the current object is the one holding keys[level]
    depth = 0
    prev = 0
    for m in _TOKENS.finditer(data, pos, size):
        i = m.start()
        c = data[i]
        if c == _QUOTE:
            if not depth and prev == _COMMA and _same_key(bytes(data[i:m.end()]), keys[level]):
                return True
        elif c == _OBJ or c == _ARR:
            depth += 1
        elif c == _OBJ_END or c == _ARR_END:
            if depth:
                depth -= 1
            else:
                level -= 1
                if level < 0:
                    return False
        prev = c
    return True  # unterminated: say yes, so the line is parsed whole


def _same_key(token: bytes, key: bytes) -> bool:
    """Whether a key token names `key` (quoted, written plainly), escapes decoded."""
    if token == key:
        return True
    return b"\\" in token and orjson.loads(token) == key[1:-1].decode()


def _spellings(key: bytes) -> re.Pattern:
    """Every way JSON can write a (quoted, plain) key as an object key: each character as
    itself or as a \\u escape, then the colon."""
    parts = []
    for ch in key[1:-1].decode():
        code = "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in f"{ord(ch):04x}")
        parts.append(f"(?:{re.escape(ch)}|\\\\u{code})")
    return re.compile(('"' + "".join(parts) + '"\\s*:').encode())


def _separators(data: bytearray, size: int, pos: int, start: int) -> tuple[list[int], int] | None:
    """Offsets (from `start`, the '[') of the ',' or ']' ending each element of the array
    from `pos` (the start of an element, or the closing ']') on, and the offset of that
    ']' in `data`; None if the array never ends."""
    seps: list[int] = []
    depth = 0
    last = pos
    for m in _TOKENS.finditer(data, pos, size):
        i = m.start()
        c = data[i]
        if c == _OBJ or c == _ARR:
            depth += 1
        elif c == _OBJ_END or c == _ARR_END:
            if depth:
                depth -= 1
            elif c == _ARR_END:
                if data[last:i].strip():  # an element before the ']' (not an empty array)
                    seps.append(i - start)
                return seps, i
            else:
                return None
        elif c == _COMMA and not depth:
            seps.append(i - start)
            last = i + 1
    return None


def _shared(data: bytearray, size: int, start: int, seen: _Seen) -> int:
    """How many leading elements of the array at `start` are byte for byte those of `seen`."""
    seps = seen.seps
    old = memoryview(seen.data)[seen.start:seen.size]

    def same(j: int) -> bool:  # the text of the first j elements is the same
        return data.startswith(old[:seps[j - 1]], start, size)

    n = len(seps)
    if not n:
        return 0
    if same(n):
        k = n
    else:
        lo, hi = 0, n - 1  # same(lo) holds, same(hi + 1) does not
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if same(mid):
                lo = mid
            else:
                hi = mid - 1
        k = lo
    # The k-th element must end here too (a number 12 is a prefix of 123); the separators
    # before it lie inside the compared text.
    if k and (start + seps[k - 1] >= size or data[start + seps[k - 1]] not in (_COMMA, _ARR_END)):
        k -= 1
    return k
