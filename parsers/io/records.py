"""Reading JSON records out of JSONL files and JSON arrays, line by line, never failing whole."""
from __future__ import annotations

import functools
from typing import BinaryIO, Iterator

import orjson

from parsers.model import Problem, json_kind
from parsers.io.source import Source


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


@functools.lru_cache(maxsize=8)
def loads_once(loads, raw: bytes):
    """`loads(raw)`, kept for the last few files read so: a run's companion file (its
    predictions, its results) serves each of its trajectories, parsed once."""
    return loads(raw)


def object_at(parent: dict, key: str, file: str, problems: list, base: str = "") -> dict:
    """`parent[key]` when it is an object; {} when it is missing, or (with a problem at
    `base`/`key`) when it is something else."""
    v = parent.get(key)
    if v is not None and not isinstance(v, dict):
        problems.append(Problem(file, f"expected an object, found {json_kind(v)}; ignored", path=f"{base}/{key}"))
    return as_dict(v)


def read_json(src, problems: list) -> tuple[object, bytes | None, Exception | None]:
    """A one-document file's JSON value: (value, None, None). An empty file: a problem and
    (None, None, None). Bytes that are not UTF-8 are replaced with U+FFFD (a problem says so)
    and the text is read again. JSON that does not parse even so: (None, the bytes, the error),
    for the format to keep what it can of a file cut off."""
    raw = src.read_bytes()
    if not raw.strip():
        problems.append(Problem(src.name, "the file is empty"))
        return None, None, None
    try:
        return orjson.loads(raw), None, None
    except orjson.JSONDecodeError as e:
        error = e
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as bad:
        raw = raw.decode("utf-8", "replace").encode("utf-8")
        problems.append(Problem(src.name, f"bytes that are not UTF-8 (the first at byte {bad.start}) were "
                                          "replaced with U+FFFD"))
        try:
            return orjson.loads(raw), None, None
        except orjson.JSONDecodeError as again:
            error = again
    return None, raw, error


def not_a_json_object(head: bytes, or_array: bool = False) -> str | None:
    """Why the first bytes cannot start a JSON object (`or_array`: nor an array), a sniff's
    reason to decline; None when they can."""
    if looks_binary(head):
        return "binary content"
    if first_char(head) not in ("{[" if or_array else "{"):
        return "does not start with a JSON object" + (" or array" if or_array else "")
    return None


def looks_binary(head: bytes) -> bool:
    """Whether the first bytes are not text: NUL bytes are, unless they sit on a few lines of
    otherwise readable UTF-8 lines (a stray NUL in a log costs that line, not the file)."""
    head = head[:8192]
    if b"\x00" not in head:
        return False
    if head.startswith(BINARY_MAGIC):
        return True
    lines = head.split(b"\n")
    if len(lines) > 1 and len(head) == 8192:
        lines.pop()  # cut off by the 8 KB: perhaps in the middle of a character
    text = sum(len(line) + 1 for line in lines if b"\x00" not in line and _is_utf8(line))
    return text < len(head) // 2


# Archives, images and databases: binary even when their bytes are mostly text (a stored zip).
BINARY_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"\x89PNG", b"GIF8", b"\xff\xd8\xff", b"%PDF",
                b"SQLite format 3\x00", b"7z\xbc\xaf")


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def iter_records(src: Source, problems: list[Problem], loads=orjson.loads) -> Iterator[tuple[int | None, int | None, object]]:
    """(line, record, value) for every JSON value of a JSONL file or element of a JSON array.

    JSONL is streamed line by line, each line parsed by `loads` (which must raise
    orjson.JSONDecodeError as orjson.loads does). A line that is not JSON becomes a Problem
    naming it; so does a line with NUL bytes (skipped) or with bytes that are not UTF-8
    (read with U+FFFD in their place)."""
    head = src.head
    if not head.strip():
        problems.append(Problem(src.name, "the file is empty"))
        return
    if looks_binary(head):
        problems.append(Problem(src.name, "not a text file (binary content)"))
        return
    if first_char(head) == "[":
        raw = src.read_bytes()
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as e:
            # Several lines that are each a JSON value (the first an array) are JSON lines,
            # read below; otherwise the document is broken.
            if not _is_json(raw.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]):
                problems.append(Problem(src.name, f"not valid JSON: {e}"))
                return
        else:
            if isinstance(data, list):
                for i, rec in enumerate(data):
                    yield None, i, rec
            else:
                yield None, 0, data
            return
        del raw
    seen_any = False
    last_line = [0]  # the number of a last line without a line end, once it is reached
    with src.open() as f:
        for n, line in iter_lines(f, unfinished=last_line):
            if n == 1 and line[:3] == BOM:
                line = line[3:]
            try:
                value = loads(line)
            except orjson.JSONDecodeError as e:
                if not bytes(line).strip():
                    continue  # a blank line
                if b"\x00" in bytes(line):
                    seen_any = True
                    problems.append(Problem(src.name, "the line holds NUL bytes (binary content); line skipped",
                                            line=n))
                    continue
                fixed = _replace_bad_utf8(bytes(line))
                if fixed is not None:
                    try:
                        value = loads(fixed)
                    except orjson.JSONDecodeError:
                        pass
                    else:
                        seen_any = True
                        problems.append(Problem(src.name, "bytes that are not UTF-8 were replaced with U+FFFD", line=n))
                        yield n, None, value
                        continue
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
                if n == last_line[0]:  # no line end after it: perhaps still being written
                    problems.append(Problem(src.name, f"not valid JSON ({e}): the last line, not finished (no line "
                                                      "end: the file may still be being written); line skipped", line=n))
                else:
                    problems.append(Problem(src.name, f"not valid JSON ({e}); line skipped", line=n))
                continue
            seen_any = True
            yield n, None, value


def _is_json(b: bytes) -> bool:
    try:
        orjson.loads(b)
    except orjson.JSONDecodeError:
        return False
    return True


def _replace_bad_utf8(line: bytes) -> bytes | None:
    """The line with bytes that are not UTF-8 replaced by U+FFFD, or None when it is UTF-8."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("utf-8", "replace").encode("utf-8")
    return None


BOM = b"\xef\xbb\xbf"
CHUNK = 1 << 24


def iter_lines(f: BinaryIO, chunk: int = CHUNK, unfinished: list | None = None) -> Iterator[tuple[int, memoryview]]:
    """(number, line without its newline) for every line of a binary file; a last line without
    a newline has its number put in `unfinished[0]` before it is given.

    Request logs have lines of megabytes; iterating a file object copies each such line
    several times and costs about as much as parsing it. Here the file is read into one
    reused buffer and each line is a view into it, so a line is copied once, by the read.
    A line is valid only until the next one is asked for."""
    buf = bytearray(chunk)
    view = memoryview(buf)
    start = end = number = 0
    while True:
        if start:  # move the unfinished line to the front
            rest = end - start
            buf[:rest] = bytes(view[start:end])
            start, end = 0, rest
        elif end == len(buf):  # one line fills the buffer: a larger one
            bigger = bytearray(2 * len(buf))
            bigger[:end] = view
            buf, view = bigger, memoryview(bigger)
        got = f.readinto(view[end:])
        if not got:
            break
        end += got
        find = buf.find
        while (nl := find(b"\n", start, end)) >= 0:
            number += 1
            yield number, view[start:nl]
            start = nl + 1
    if start < end:
        if unfinished is not None:
            unfinished[0] = number + 1
        yield number + 1, view[start:end]
