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


def records(data: bytes):
    problems: list[Problem] = []
    return list(iter_records(from_bytes("f.jsonl", data), problems)), problems


def test_json_lines_whose_first_line_is_an_array():
    got, problems = records(b'[1,2]\n{"a":1}\n')
    assert (got, problems) == ([(1, None, [1, 2]), (2, None, {"a": 1})], [])
    got, problems = records(b'\xef\xbb\xbf\n[1]\n[2, 3]\nnot json\n{"b": 2}')
    assert got == [(2, None, [1]), (3, None, [2, 3]), (5, None, {"b": 2})]
    assert [p.line for p in problems] == [4]


def test_one_json_document_is_still_read_whole():
    pretty = b'[\n  {"a": 1},\n  {"b": [1,\n 2]}\n]\n'
    assert records(pretty) == ([(None, 0, {"a": 1}), (None, 1, {"b": [1, 2]})], [])
    assert records(b'[{"a": 1}, {"b": 2}]\n') == ([(None, 0, {"a": 1}), (None, 1, {"b": 2})], [])
    got, problems = records(b'[\n  {"a": 1},\n  {"b": \n')  # a broken document: one problem
    assert got == [] and len(problems) == 1 and "not valid JSON" in problems[0].message


def test_a_last_line_still_being_written_is_named_so():
    """A file read while it is appended to may end in a line not yet finished: skipped, with
    a problem that says so; a broken line with a line end after it is a plain JSON problem."""
    data = b'{"a": 1}\n{"b": \n{"c": 3}\n{"d": [1, 2'
    problems: list[Problem] = []
    values = [v for _, _, v in iter_records(from_bytes("growing.jsonl", data), problems)]
    assert values == [{"a": 1}, {"c": 3}]
    assert [(p.line, p.message.startswith("not valid JSON"), "still be being written" in p.message)
            for p in problems] == [(2, True, False), (4, True, True)]
