"""The audit's bad inputs: archives, stray NUL bytes and files beside an input.

The reproducers live in the shared folder next to the repository and are read in place (or
copied into tmp_path); these tests skip when it is absent.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import orjson
import pytest

from parsers import pipeline
from parsers.cook.schema import cooked_errors
from parsers.io import source

REPO = Path(__file__).resolve().parents[3]
BAD = REPO.parent / "shared" / "badinputs"
ARCHIVES = BAD / "archives"


def bad(rel: str) -> Path:
    p = BAD / rel
    if not p.exists():
        pytest.skip(f"the audit's reproducers are not present: {p}")
    return p


def problems(doc) -> list[dict]:
    """Every problem of the document once (a reader may list one with its input and its trace)."""
    seen = {}
    for p in [p for i in doc["inputs"] for p in i["problems"]] + [p for t in doc["traces"] for p in t["problems"]]:
        seen.setdefault(tuple(p.values()), p)
    return list(seen.values())


def loaded(doc) -> list[str]:
    return [i["name"] for i in doc["inputs"] if i["traces"]]


# -- a NUL byte costs its line, not the file -------------------------------------------------
NUL_LINE = ["anthropic", "arena", "benchmark", "cursor_agent", "gemini", "openai", "sse_claude", "sse_openai"]


@pytest.mark.parametrize("kind", NUL_LINE)
def test_a_nul_byte_skips_only_its_line(kind):
    folder = bad(f"cli/{kind}__nul_line")
    doc, _ = pipeline.cook_paths([folder])
    assert cooked_errors(doc) == []
    nul = [p for p in problems(doc) if "NUL bytes" in p["message"]]
    assert len(nul) == 1 and nul[0]["line"] is not None
    (line_of_nul,) = [n for f in folder.rglob("*") if f.is_file()
                      for n, line in enumerate(f.read_bytes().split(b"\n"), 1) if b"\0" in line]
    assert nul[0]["line"] == line_of_nul
    assert doc["traces"] and not any("binary" in p["message"] and p["line"] is None for p in problems(doc))


def test_nul_bytes_in_the_first_8_kb_of_a_log_keep_the_other_lines(tmp_path):
    rec = orjson.dumps({"id": "r1", "request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]},
                        "response": {"choices": [{"message": {"role": "assistant", "content": "hello"}}]}})
    (tmp_path / "log.jsonl").write_bytes(rec + b'\n{"x": "\0\0"}\n' + rec.replace(b"r1", b"r2") + b"\n")
    doc, (s,) = pipeline.cook_paths([tmp_path / "log.jsonl"])
    assert len(doc["requests"]) == 2
    assert [(p["line"], p["message"]) for p in s.problems] == [
        (2, "the line holds NUL bytes (binary content); line skipped")]


def test_binary_files_are_still_binary(tmp_path):
    import zlib
    (tmp_path / "blob.jsonl").write_bytes(zlib.compress(bytes(range(256)) * 200, 1)[:8192] + b"\0" * 64)
    (tmp_path / "nul.jsonl").write_bytes(b"\0" * 5000)
    doc, summaries = pipeline.cook_paths([tmp_path])
    assert doc["traces"] == []
    assert all("binary content" in s.problems[0]["message"] for s in summaries)


# -- files beside an input --------------------------------------------------------------------
def test_a_messages_path_chosen_by_the_content_is_not_read(tmp_path):
    shutil.copytree(bad("folders/F04_sibling_read"), tmp_path / "in")
    doc, _ = pipeline.cook_paths([tmp_path / "in"])
    text = orjson.dumps(doc).decode()
    assert "SECRET-FROM-HIDDEN-CONFIG" not in text and "tok_live" not in text
    assert "PRIVATE NOTES" not in text
    refused = {p["path"]: p["message"] for p in problems(doc) if "not read" in p["message"]}
    assert set(refused) == {"/0/messages", "/1/messages"}
    assert ".config/tool/credentials.json" in refused["/0/messages"]
    assert "'notes.json' not read" in refused["/1/messages"]


def test_hidden_siblings_are_never_given(tmp_path):
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "x.json").write_text("[]")
    (tmp_path / ".env.json").write_text("[]")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "y.json").write_text("[]")
    (tmp_path / "a.json").write_text("[]")
    src = source.from_path(tmp_path / "a.json")
    assert src.sibling(".hidden/x.json") is None and src.sibling(".env.json") is None
    assert src.sibling("node_modules/y.json") is None and src.sibling("./.env.json") is None
    assert src.sibling("a.json").name == "a.json"
    up = source.from_bytes("d/a.json", b"[]", {"d/a.json": b"[]", "d/.env.json": b"[]"})
    assert up.sibling(".env.json") is None and up.sibling("a.json") is not None


# -- archives that lost records -----------------------------------------------------------------
def test_a_zip_over_the_file_cap_keeps_its_first_members(monkeypatch):
    monkeypatch.setattr(source, "MAX_FILES", 50)
    doc, _ = pipeline.cook_paths([bad("archives/A08_20000_members.zip")])
    assert loaded(doc) == ["A08_20000_members.zip!000_first_good.jsonl"]
    names = [i["name"] for i in doc["inputs"]]
    cap = [p for p in problems(doc) if "more than 50 files" in p["message"]]
    assert len(cap) == 1 and "the first 50 were loaded" in cap[0]["message"]
    assert len(names) == 51  # the 50 members read, and the member where the cap was reached


def test_a_zip_over_the_file_cap_stops_the_other_inputs_too(tmp_path, monkeypatch):
    monkeypatch.setattr(source, "MAX_FILES", 50)
    (tmp_path / "later.jsonl").write_bytes(b"{}\n")
    got = list(source.expand([bad("archives/A08_20000_members.zip"), tmp_path / "later.jsonl"], errs := []))
    assert len(got) == 50 and [p.message for p in errs if "more than" in p.message] == [
        "not loaded: more than 50 files; the first 50 were loaded and the rest skipped"]


def test_duplicate_member_names_are_reported():
    doc, _ = pipeline.cook_paths([bad("archives/A04_duplicate_names.zip")])
    assert loaded(doc) == ["A04_duplicate_names.zip!log.jsonl"]
    (dup,) = [p for p in problems(doc) if "second member" in p["message"]]
    assert (dup["file"], dup["message"]) == ("A04_duplicate_names.zip",
                                             "a second member named 'log.jsonl' was skipped; the first was read")


@pytest.mark.parametrize("name, member, why", [
    ("A05_bad_crc.zip", "b_crc.jsonl", "Bad CRC-32"),
    ("A06_bad_deflate.zip", "b_bad.jsonl", "decompressing"),
    ("A07_encrypted_flag.zip", "b_enc.jsonl", "encrypted"),
])
def test_a_damaged_member_is_a_problem_and_the_rest_cooks(name, member, why):
    other = REPO / "sample_data" / "api_logs" / "openai_chat.jsonl"
    doc, _ = pipeline.cook_paths([bad(f"archives/{name}"), other])
    assert cooked_errors(doc) == []
    assert loaded(doc) == [f"{name}!a_good.jsonl", "openai_chat.jsonl"]
    (p,) = [p for p in problems(doc) if p["file"] == f"{name}!{member}"]
    assert why in p["message"]


def test_a_truncated_archive_is_a_problem_and_the_rest_cooks():
    other = REPO / "sample_data" / "api_logs" / "openai_chat.jsonl"
    doc, _ = pipeline.cook_paths([bad("archives/A15_truncated.zip"), other])
    assert loaded(doc) == ["openai_chat.jsonl"]
    (p,) = [p for p in problems(doc) if p["file"] == "A15_truncated.zip"]
    assert "not a readable zip archive" in p["message"]
    doc, _ = pipeline.cook_uploads([("A15_truncated.zip", bad("archives/A15_truncated.zip").read_bytes()),
                                    ("openai_chat.jsonl", other.read_bytes())])
    assert loaded(doc) == ["openai_chat.jsonl"]
    assert any("not a readable zip archive" in p["message"] for p in problems(doc))


# -- archive amplification ------------------------------------------------------------------
def test_many_members_under_the_bomb_ratio_are_bounded_per_archive(monkeypatch):
    monkeypatch.setenv("TRACEVIEW_MAX_ARCHIVE_BYTES", str(25 * 1024**2))
    t0 = time.monotonic()
    errs: list = []
    got = list(source.expand([bad("archives/A09_sub10MB_members_x60.zip")], errs))
    assert [s.name for s in got] == ["A09_sub10MB_members_x60.zip!m000.jsonl", "A09_sub10MB_members_x60.zip!m001.jsonl"]
    (p,) = errs
    assert p.file == "A09_sub10MB_members_x60.zip!m002.jsonl"
    assert "with the 57 members after it" in p.message and "(at most 25 MB per archive)" in p.message
    assert time.monotonic() - t0 < 5


def test_by_default_a09_stops_where_its_members_inflate_over_100_times():
    errs: list = []
    got = list(source.expand([bad("archives/A09_sub10MB_members_x60.zip")], errs))
    assert len(got) == 3  # 3 x 9.9 MB read; the 4th passes 32 MB at 184 times its compressed size
    assert len(errs) == 1 and "skipped with the 56 members after it" in errs[0].message
    assert "(184 times their compressed size; past 32 MB at most 100 times)" in errs[0].message


def test_an_upload_batch_is_bounded(monkeypatch):
    monkeypatch.setenv("TRACEVIEW_MAX_UPLOAD_BYTES", "1000")
    log = (REPO / "sample_data" / "api_logs" / "openai_chat.jsonl").read_bytes()[:600]
    errs: list = []
    got = list(source.expand_uploads([("a.jsonl", log), ("b.jsonl", log), ("c.jsonl", log)], errs))
    assert [s.name for s in got] == ["a.jsonl"]
    (p,) = errs
    assert p.file == "b.jsonl" and "the upload would exceed 1000 bytes" in p.message


def test_an_upload_batch_counts_inflated_archive_members(monkeypatch):
    monkeypatch.setenv("TRACEVIEW_MAX_UPLOAD_BYTES", str(15 * 1024**2))
    errs: list = []
    data = bad("archives/A09_sub10MB_members_x60.zip").read_bytes()
    got = list(source.expand_uploads([("a.zip", data), ("b.jsonl", b"{}\n")], errs))
    assert [s.name for s in got] == ["a.zip!m000.jsonl"]
    assert [p.file for p in errs] == ["a.zip!m001.jsonl"] and "the upload would exceed 15 MB" in errs[0].message


def test_the_limits_are_read_from_the_environment(monkeypatch):
    monkeypatch.delenv("TRACEVIEW_MAX_ARCHIVE_BYTES", raising=False)
    assert source._limit("MAX_ARCHIVE_BYTES") == 1024**3
    monkeypatch.setenv("TRACEVIEW_MAX_ARCHIVE_BYTES", "12345")
    assert source._limit("MAX_ARCHIVE_BYTES") == 12345
    monkeypatch.setenv("TRACEVIEW_MAX_ARCHIVE_BYTES", "lots")
    assert source._limit("MAX_ARCHIVE_BYTES") == 1024**3
    monkeypatch.delenv("TRACEVIEW_MAX_UPLOAD_BYTES", raising=False)
    assert source._limit("MAX_UPLOAD_BYTES") == 2 * 1024**3


def test_the_readme_states_the_limits():
    readme = (REPO / "README.md").read_text("utf-8")
    assert "TRACEVIEW_MAX_ARCHIVE_BYTES" in readme and "TRACEVIEW_MAX_UPLOAD_BYTES" in readme


# -- what held keeps holding ---------------------------------------------------------------------
def test_bomb_traversal_nested_and_renamed_archives_hold():
    doc, _ = pipeline.cook_paths([bad("archives/A01_bomb_300MB_zeros.zip")])
    assert loaded(doc) == ["A01_bomb_300MB_zeros.zip!good.jsonl"]
    assert any("zip bomb" in p["message"] for p in problems(doc))
    doc, _ = pipeline.cook_paths([bad("archives/A02_traversal.zip")])
    assert loaded(doc) == ["A02_traversal.zip!ok/good.jsonl"]
    assert any("leaves the archive" in p["message"] for p in problems(doc))
    doc, _ = pipeline.cook_paths([bad("archives/A03_nested.zip")])
    assert loaded(doc) == ["A03_nested.zip!outer.jsonl"]  # the inner zip is not opened
    for name in ("A13_zip_named_jsonl.zip", "A14_zip_renamed.jsonl"):
        doc, _ = pipeline.cook_paths([bad(f"archives/{name}")])
        assert loaded(doc) == [] and all("binary" in p["message"] for p in problems(doc))


def test_hostile_names_hidden_folders_and_empty_archives_hold():
    doc, _ = pipeline.cook_paths([bad("archives/A10_hostile_names.zip")])
    assert cooked_errors(doc) == [] and len(loaded(doc)) == 4
    doc, _ = pipeline.cook_paths([bad("archives/A11_hidden_dirs.zip")])
    assert loaded(doc) == ["A11_hidden_dirs.zip!ok.jsonl"]
    hidden = [p for p in problems(doc) if "hidden" in p["message"]]
    assert len(hidden) == 3 and all(p["file"].startswith("A11_hidden_dirs.zip!") for p in hidden)
    doc, _ = pipeline.cook_paths([bad("archives/A12_empty.zip")])
    assert doc["traces"] == [] and [p["message"] for p in problems(doc)] == ["the archive is empty"]
