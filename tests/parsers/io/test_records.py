"""Reading lines and records: lines split across reads, lines longer than the buffer."""
from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.model import Problem
from parsers.io.records import iter_lines, iter_records
from parsers.io.source import from_bytes


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=12),
       st.integers(1, 16), st.booleans())
def test_iter_lines_gives_every_line_whatever_the_buffer_size(lines, chunk, trailing_newline):
    data = b"\n".join(lines) + (b"\n" if trailing_newline and lines else b"")
    got = [(n, bytes(line)) for n, line in iter_lines(io.BytesIO(data), chunk=chunk)]
    expected = data.split(b"\n")
    if data.endswith(b"\n") or not data:
        expected = expected[:-1]
    assert got == list(enumerate(expected, 1))


def test_records_across_reads_with_bom_crlf_and_blank_lines():
    data = b'\xef\xbb\xbf{"a": 1}\r\n\r\n  \n{"b": ' + b'"' + b"x" * 100 + b'"}\nnot json\n[1, 2]'
    problems: list[Problem] = []
    got = list(iter_records(from_bytes("f.jsonl", data), problems))
    assert got == [(1, None, {"a": 1}), (4, None, {"b": "x" * 100}), (6, None, [1, 2])]
    assert [(p.line, "not valid JSON" in p.message) for p in problems] == [(5, True)]
