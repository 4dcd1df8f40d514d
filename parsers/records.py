"""Reading JSON records out of JSONL files and JSON arrays, line by line, never failing whole."""
from __future__ import annotations

from typing import Iterator

import orjson

from .errors import Problem
from .source import Source


def as_dict(v) -> dict:
    """A JSON value where an object is expected: the object, or {} for anything else."""
    return v if isinstance(v, dict) else {}


def as_text(v) -> str | None:
    """A non-empty string, or None."""
    return v if isinstance(v, str) and v else None


def as_number(v) -> float | None:
    """A JSON number (booleans are not numbers here), or None."""
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def first_char(head: bytes) -> str:
    s = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    return chr(s[0]) if s else ""


def looks_binary(head: bytes) -> bool:
    return b"\x00" in head[:8192]


def iter_records(src: Source, problems: list[Problem]) -> Iterator[tuple[int | None, int | None, object]]:
    """(line, record, value) for every JSON value of a JSONL file or element of a JSON array.

    JSONL is streamed line by line. A line that is not JSON becomes a Problem naming it."""
    head = src.head
    if not head.strip():
        problems.append(Problem(src.name, "the file is empty"))
        return
    if looks_binary(head):
        problems.append(Problem(src.name, "not a text file (binary content)"))
        return
    if first_char(head) == "[":
        try:
            data = orjson.loads(src.read_bytes())
        except orjson.JSONDecodeError as e:
            problems.append(Problem(src.name, f"not valid JSON: {e}"))
            return
        if isinstance(data, list):
            for i, rec in enumerate(data):
                yield None, i, rec
            return
        yield None, 0, data
        return
    seen_any = False
    with src.open() as f:
        for n, line in enumerate(f, 1):
            if n == 1 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]
            if not line.strip():
                continue
            try:
                value = orjson.loads(line)
            except orjson.JSONDecodeError as e:
                if not seen_any:
                    # Perhaps one pretty-printed JSON document rather than JSON lines.
                    try:
                        whole = orjson.loads(src.read_bytes())
                    except orjson.JSONDecodeError:
                        pass
                    else:
                        yield None, 0, whole
                        return
                seen_any = True
                problems.append(Problem(src.name, f"not valid JSON ({e}); line skipped", line=n))
                continue
            seen_any = True
            yield n, None, value
