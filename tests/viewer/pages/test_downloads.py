"""viewer.pages.downloads: the download buttons of the Open and Compare pages (Streamlit
AppTest), made only when pressed, and the files they give."""
from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from viewer.library import export, tables
from viewer.library.library import Library, RunsQuery, Scope
from viewer.pages import downloads

from tests.viewer.pages.test_app import app, on_page, trace_id

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "sample_data" / "api_logs"


def _no_export(monkeypatch) -> list[str]:
    """Every export builder, recording a call instead of making a file."""
    calls: list[str] = []
    for module, name in ((export, "html_bytes"), (export, "json_bytes"), (export, "md_bytes"),
                         (tables, "csv_bytes"), (tables, "parquet_zip_bytes"), (export, "compare_html_bytes")):
        monkeypatch.setattr(module, name, lambda *a, _n=name, **k: calls.append(_n) or b"")
    return calls


def _buttons(at: AppTest) -> dict[str, object]:
    return {b.key: b for b in at.get("download_button")}


def test_the_runs_table_offers_csv_and_parquet_made_only_when_pressed(monkeypatch):
    calls = _no_export(monkeypatch)
    at = app([LOGS], monkeypatch).run()
    assert not at.exception
    buttons = _buttons(at)
    assert {"tv_dl_runs_csv", "tv_dl_runs_parquet"} <= set(buttons)
    assert all(b.proto.deferred_file_id for b in buttons.values())  # a callable, not bytes
    assert calls == []
    n = len(list(LOGS.iterdir()))
    assert any(f"Download the {n} runs" in c.value for c in at.caption)


def test_compare_offers_the_page_of_both_runs(monkeypatch):
    calls = _no_export(monkeypatch)
    a, b = (trace_id(LOGS / name) for name in ("anthropic_messages.jsonl", "openai_chat.jsonl"))
    at = on_page(app([LOGS], monkeypatch), "compare", a=a, b=b)
    assert not at.exception
    assert "tv_dl_compare_html" in _buttons(at) and calls == []


@pytest.fixture
def lib(tmp_path) -> Library:
    shutil.copytree(LOGS, tmp_path / "logs")
    lib = Library(str(tmp_path / "lib.sqlite"))
    lib.index([str(tmp_path / "logs")])
    yield lib
    lib.close()


def test_the_runs_files_hold_every_run_the_filters_keep_not_one_page(lib, monkeypatch):
    monkeypatch.setattr(downloads, "PAGE", 2)  # several reads of the library
    scope = Scope(everything=True)
    query = RunsQuery(limit=1, sort="title")  # the table shows one run a page
    files = {f.label: f for f in downloads.runs_files(lib, query, scope)}
    rows = list(csv.DictReader(io.StringIO(files["CSV"].build().decode())))
    assert len(rows) == len(list(LOGS.iterdir())) == lib.count(scope)
    assert [r["title"] for r in rows] == sorted(r["title"] for r in rows)  # the table's order
    import zipfile

    with zipfile.ZipFile(io.BytesIO(files["Parquet"].build())) as z:
        assert sorted(z.namelist()) == ["messages.parquet", "requests.parquet", "runs.parquet"]


def test_the_run_files_are_the_exports_of_the_run(lib):
    scope = Scope(everything=True)
    tid = lib.runs_in(scope)[0]
    files = {f.label: f for f in downloads.run_files(lib, scope, tid)}
    run = (lib.run(tid), lib.family(tid))
    assert files["HTML"].build() == export.html_bytes(*run) and files["HTML"].name == f"{tid}.html"
    assert json.loads(files["JSON"].build())["traces"][0]["id"] == tid
    assert files["Markdown"].build() == export.md_bytes([run])
    # What the run's file says is in them: its first question, as the request log has it.
    first = json.loads(Path(run[0]["path"]).read_text().splitlines()[0])
    asked = next(m["content"] for m in first["request"]["messages"] if m["role"] == "user")
    asked = asked if isinstance(asked, str) else next(p["text"] for p in asked if p.get("type") == "text")
    words = asked.split()[:4]
    page, md = files["HTML"].build().decode(), files["Markdown"].build().decode()
    assert all(w.replace("'", "&#x27;") in page or w in page for w in words)
    assert all(w in md.replace("\\", "") for w in words)
    other = next(t for t in lib.runs_in(scope) if t != tid)
    (page,) = downloads.compare_files(lib, scope, tid, other)
    assert page.build().startswith(b"<!DOCTYPE html>")
    with pytest.raises(LookupError):
        downloads.run_files(lib, scope, "0123456789abcdef")[0].build()


def _timeline_script(trace: str) -> None:
    from viewer.pages import downloads

    downloads.timeline(trace)


def test_the_run_being_read_offers_html_json_and_markdown(monkeypatch):
    from viewer.pages import state

    calls = _no_export(monkeypatch)
    state.library().index([LOGS], origin="sample")
    at = AppTest.from_function(_timeline_script, args=(trace_id(LOGS / "anthropic_messages.jsonl"),),
                               default_timeout=60).run()
    assert not at.exception
    buttons = _buttons(at)
    assert set(buttons) == {"tv_dl_run_html", "tv_dl_run_json", "tv_dl_run_markdown"}
    assert all(b.proto.deferred_file_id for b in buttons.values()) and calls == []
