"""Nothing changes silently: other encodings are read, bad bytes and skipped files are reported."""
from __future__ import annotations

import codecs
import io
import os
import zipfile
from pathlib import Path

import orjson
import pytest

from parsers import pipeline
from parsers.io import source
from parsers.io.records import iter_records, looks_binary
from parsers.model import Problem
from parsers.providers.sse import rebuild_stream

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "sample_data"


def cooked_summary(doc) -> tuple:
    return len(doc["traces"]), len(doc["requests"]), len(doc["messages"])


def all_problems(doc) -> list[dict]:
    return [p for i in doc["inputs"] for p in i["problems"]] + [p for t in doc["traces"] for p in t["problems"]]


# -- UTF-16, UTF-32 and the UTF-8 byte order mark ------------------------------------------------
@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_wide_encoding_with_a_byte_order_mark_is_read_as_text(encoding):
    text = '{"a": "héllo ✓"}\n{"b": 2}\n'
    data = (codecs.BOM_UTF16_BE if encoding == "utf-16-be" else b"") + text.encode(encoding)
    src = source.from_bytes("f.jsonl", data)
    assert not looks_binary(src.head)
    problems: list[Problem] = []
    assert list(iter_records(src, problems)) == [(1, None, {"a": "héllo ✓"}), (2, None, {"b": 2})]
    assert problems == []


@pytest.mark.parametrize("folder", ["api_logs", "benchmark", "workflow", "trials", "arena"])
@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig"])
def test_every_sample_cooks_alike_in_utf16_and_with_a_utf8_bom(tmp_path, folder, encoding):
    plain, _ = pipeline.cook_paths([SAMPLE / folder])
    for f in (SAMPLE / folder).rglob("*"):
        if f.is_file():
            out = tmp_path / f.relative_to(SAMPLE)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(f.read_text("utf-8").encode(encoding))
    doc, _ = pipeline.cook_paths([tmp_path / folder])
    assert cooked_summary(doc) == cooked_summary(plain)
    assert all_problems(doc) == all_problems(plain)
    assert [t["title"] for t in doc["traces"]] == [t["title"] for t in plain["traces"]]


def test_a_wide_encoded_zip_member_is_read_as_text(tmp_path):
    log = (SAMPLE / "api_logs" / "openai_chat.jsonl").read_text("utf-8")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("log.jsonl", log.encode("utf-16"))
    (tmp_path / "a.zip").write_bytes(buf.getvalue())
    doc, _ = pipeline.cook_paths([tmp_path / "a.zip"])
    plain, _ = pipeline.cook_paths([SAMPLE / "api_logs" / "openai_chat.jsonl"])
    assert cooked_summary(doc) == cooked_summary(plain) and all_problems(doc) == []


# -- bytes that are not UTF-8 ----------------------------------------------------------------------
def test_invalid_utf8_in_a_line_is_replaced_and_reported():
    data = b'{"a": "ok"}\n{"a": "bad \xff\xfe byte"}\n'
    problems: list[Problem] = []
    got = list(iter_records(source.from_bytes("f.jsonl", data), problems))
    assert got == [(1, None, {"a": "ok"}), (2, None, {"a": "bad \ufffd\ufffd byte"})]
    assert [(p.line, p.message) for p in problems] == [(2, "bytes that are not UTF-8 were replaced with U+FFFD")]


def test_invalid_utf8_in_a_trials_file_is_replaced_and_reported(tmp_path):
    run = [{"instance_id": "a__b_1", "model_patch": "", "messages": [{"role": "user", "content": "x"}]}]
    raw = orjson.dumps(run).replace(b'"x"', b'"x\xff"')
    (tmp_path / "r.trials.json").write_bytes(raw)
    doc, (s,) = pipeline.cook_paths([tmp_path / "r.trials.json"])
    assert len(doc["traces"]) == 1
    msgs = [p["message"] for p in s.problems]
    assert any(m.startswith("bytes that are not UTF-8") for m in msgs)
    assert not any("truncated" in m for m in msgs)


# -- skipped members and links are reported ------------------------------------------------------
def test_hidden_zip_members_are_reported(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("ok.jsonl", b"{}\n")
        zf.writestr(".secret.jsonl", b"{}\n")
        zf.writestr(".git/config", b"x")
        zf.writestr("__MACOSX/._ok.jsonl", b"x")
    errs: list[Problem] = []
    got = list(source.expand_uploads([("a.zip", buf.getvalue())], errs))
    assert [s.name for s in got] == ["a.zip!ok.jsonl"]
    assert sorted((p.file, p.message) for p in errs) == [
        ("a.zip!.git/config", "skipped: a hidden file or folder"),
        ("a.zip!.secret.jsonl", "skipped: a hidden file or folder")]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links on this system")
def test_symbolic_links_in_a_folder_are_reported_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_bytes(b"{}\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "ok.jsonl").write_bytes(b"{}\n")
    (root / "link.jsonl").symlink_to(outside / "secret.jsonl")
    (root / "linked_dir").symlink_to(outside, target_is_directory=True)
    errs: list[Problem] = []
    got = list(source.expand([root], errs))
    assert [s.name for s in got] == ["ok.jsonl"]
    assert sorted((p.file, p.message) for p in errs) == [
        ("link.jsonl", "a symbolic link; not followed"),
        ("linked_dir", "a symbolic link to a folder; not followed")]


# -- a truncated OpenAI stream -----------------------------------------------------------------------
def test_a_truncated_openai_stream_is_reported():
    chunk = {"id": "c1", "model": "gpt-4.1", "choices": [{"index": 0, "delta": {"content": "hel"}}]}
    end = {"id": "c1", "model": "gpt-4.1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    lines = ["data: " + orjson.dumps(chunk).decode()]
    _, kind, problems = rebuild_stream(lines)
    assert kind == "openai" and problems == [(None, "stream ended without a finish_reason (truncated?)")]
    _, _, problems = rebuild_stream(lines + ["data: " + orjson.dumps(end).decode(), "data: [DONE]"])
    assert problems == []


def test_stream_bytes_that_are_not_utf8_are_reported():
    chunk = {"id": "c1", "model": "gpt-4.1", "choices": [{"index": 0, "delta": {"content": "h\u00e9"},
                                                          "finish_reason": "stop"}]}
    raw = ("data: " + orjson.dumps(chunk).decode()).encode().replace("\u00e9".encode(), b"\xe9")
    response, _, problems = rebuild_stream([raw])
    assert response["choices"][0]["message"]["content"] == "h\ufffd"
    assert problems == [(0, "bytes that are not UTF-8 were replaced with U+FFFD")]
    _, _, problems = rebuild_stream(raw)
    assert problems == [(0, "bytes that are not UTF-8 were replaced with U+FFFD")]
