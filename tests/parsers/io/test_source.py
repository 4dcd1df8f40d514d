"""Folders and archives are bounded: caps, zip bombs and escaping paths are refused, the rest loads."""
from __future__ import annotations

import io
import os
import zipfile

import orjson
import pytest

from parsers import pipeline
from parsers.io import source
from parsers.cook.schema import cooked_errors

RECORD = {"id": "r1", "request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]},
          "response": {"choices": [{"message": {"role": "assistant", "content": "hello"}}]}}
LOG = orjson.dumps(RECORD) + b"\n"


def make_zip(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_zip_member_escaping_the_archive_is_refused(tmp_path):
    z = tmp_path / "logs.zip"
    z.write_bytes(make_zip({"ok/log.jsonl": LOG, "../evil.jsonl": LOG, "/abs/evil.jsonl": LOG}))
    doc, summaries = pipeline.cook_paths([z])
    assert cooked_errors(doc) == []
    assert [i["name"] for i in doc["inputs"] if i["traces"]] == ["logs.zip!ok/log.jsonl"]
    refused = [p for i in doc["inputs"] for p in i["problems"] if "leaves the archive" in p["message"]]
    assert {p["file"] for p in refused} == {"logs.zip!../evil.jsonl", "logs.zip!/abs/evil.jsonl"}


def test_zip_bomb_is_refused_and_the_rest_loads(tmp_path):
    bomb = b"\0" * (64 * 1024 * 1024)  # 64 MB of zeros compresses about 1000:1
    z = tmp_path / "b.zip"
    z.write_bytes(make_zip({"bomb.jsonl": bomb, "good.jsonl": LOG}))
    doc, _ = pipeline.cook_paths([z])
    names = {i["name"]: i for i in doc["inputs"]}
    assert names["b.zip!good.jsonl"]["traces"]
    bomb_problems = [p["message"] for i in doc["inputs"] for p in i["problems"] if "bomb.jsonl" in p["file"]]
    assert bomb_problems and "zip bomb" in bomb_problems[0]


def test_member_that_lies_about_its_size_is_cut_at_the_declared_size():
    reader = source._LimitedReader(io.BytesIO(LOG * 3), len(LOG))
    assert io.BufferedReader(reader).read() == LOG


def test_file_count_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(source, "MAX_FILES", 3)
    for k in range(5):
        (tmp_path / f"log{k}.jsonl").write_bytes(LOG)
    doc, _ = pipeline.cook_paths([tmp_path])
    assert len(doc["traces"]) == 3
    assert any("more than 3 files" in p["message"] for i in doc["inputs"] for p in i["problems"])


def test_total_size_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(source, "MAX_TOTAL_BYTES", len(LOG) * 2)
    for k in range(4):
        (tmp_path / f"log{k}.jsonl").write_bytes(LOG)
    doc, _ = pipeline.cook_paths([tmp_path])
    assert len(doc["traces"]) == 2
    assert any("exceed" in p["message"] for i in doc["inputs"] for p in i["problems"])


def test_sibling_cannot_leave_the_opened_folder(tmp_path):
    (tmp_path / "outside.json").write_text("[]")
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.json").write_text("[]")
    (root / "b.json").write_text("[]")
    (src,) = [s for s in source.expand([root], []) if s.name == "sub/a.json"]
    assert src.sibling("../b.json").name == "b.json"
    assert src.sibling("../../outside.json") is None
    assert src.sibling("/etc/passwd") is None
    up = source.from_bytes("sub/a.json", b"[]", {"sub/a.json": b"[]", "b.json": b"[]"})
    assert up.sibling("../b.json") is not None and up.sibling("../../x") is None


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links on this system")
def test_a_sibling_linked_to_a_file_outside_is_not_read(tmp_path):
    (tmp_path / "outside.json").write_text('{"secret": 1}')
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.json").write_text("[]")
    (root / "inside.json").write_text("{}")
    (root / "results.json").symlink_to(tmp_path / "outside.json")
    (root / "near.json").symlink_to(root / "inside.json")
    (src,) = [s for s in source.expand([root], []) if s.name == "a.json"]
    assert src.sibling("results.json") is None
    assert src.sibling("near.json").read_bytes() == b"{}"  # a link that stays inside is read
    assert src.sibling("missing.json") is None


@pytest.mark.parametrize("name", ["../../etc/passwd.jsonl", "/abs/log.jsonl", "a/../../b.jsonl"])
def test_upload_names_cannot_escape(name):
    problems: list = []
    (src,) = list(source.expand_uploads([(name, LOG)], problems))
    assert not src.name.startswith(("/", ".."))


def test_folder_walk_is_sorted_and_skips_hidden(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x.jsonl").write_bytes(LOG)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "2.jsonl").write_bytes(LOG)
    (tmp_path / "a.jsonl").write_bytes(LOG)
    names = [s.name for s in source.expand([tmp_path], [])]
    assert names == ["a.jsonl", "b/2.jsonl"]
