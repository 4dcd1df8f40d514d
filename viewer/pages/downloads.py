"""Download buttons: the run being read (a page to read offline, the cooked document, a Markdown
transcript), two runs side by side (a page), and every run the runs table's filters keep (the
runs table as CSV; runs, requests and messages as Parquet tables in a zip).

A file is made only when its button is pressed: Streamlit calls the button's `data` then, in a
thread of its own, so reading a page pays for no export. What a file holds is what
`viewer.library.export` writes for the same runs from the command line.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable

import streamlit as st

from viewer.library import export, tables
from viewer.library.library import COUNT_CAP, Library, RunsQuery, Scope
from viewer.pages import state

PAGE = 500  # runs read from the library at a time for a runs download


@dataclass
class File:
    label: str
    name: str
    mime: str
    build: Callable[[], bytes]
    help: str = ""


def _run(lib: Library, scope: Scope, trace_id: str) -> tuple[dict, dict]:
    """(runs row, family document) of a run, read when the file is made."""
    found = lib.run_and_family(trace_id, scope)
    if found is None:
        raise LookupError(f"run {trace_id} is no longer in the library")
    return found


def run_files(lib: Library, scope: Scope, trace_id: str) -> list[File]:
    """The files of one run."""
    def run():
        return _run(lib, scope, trace_id)
    return [File("HTML", f"{trace_id}.html", "text/html", lambda: export.html_bytes(*run()),
                 "the whole run as one page that reads offline in any browser"),
            File("JSON", f"{trace_id}.json", "application/json", lambda: export.json_bytes([run()]),
                 "the cooked document of the run and its sub-agent runs"),
            File("Markdown", f"{trace_id}.md", "text/markdown", lambda: export.md_bytes([run()]),
                 "a transcript to paste into an issue or a paper")]


def compare_files(lib: Library, scope: Scope, a_id: str, b_id: str) -> list[File]:
    """The page of two runs side by side."""
    return [File("HTML", f"compare-{a_id}-{b_id}.html", "text/html",
                 lambda: export.compare_html_bytes(_run(lib, scope, a_id), _run(lib, scope, b_id)),
                 "both runs aligned, as one page that reads offline in any browser")]


def matching_rows(lib: Library, query: RunsQuery, scope: Scope) -> list[dict]:
    """Every run the query keeps (not only the page shown), in the table's order."""
    rows: list[dict] = []
    while True:
        page = lib.runs(dataclasses.replace(query, limit=PAGE, offset=len(rows)), scope).rows
        rows += page
        if len(page) < PAGE:
            return rows


def runs_files(lib: Library, query: RunsQuery, scope: Scope) -> list[File]:
    """The runs table of every run the filters keep (CSV), and its tables (Parquet, zipped)."""
    return [File("CSV", "runs.csv", "text/csv", lambda: tables.csv_bytes(matching_rows(lib, query, scope)),
                 "the runs table of every run the filters keep, scores included"),
            File("Parquet", "runs-parquet.zip", "application/zip",
                 lambda: tables.parquet_zip_bytes(export.library_runs(
                     lib, [r["id"] for r in matching_rows(lib, query, scope)], scope)),
                 "runs.parquet, requests.parquet and messages.parquet of every run the filters keep")]


def _buttons(files: list[File], key: str, what: str) -> None:
    """A "Download" popover holding a button per file (one line of the page, whatever the files)."""
    with st.popover("Download", icon=":material/download:", help=what, key=key):
        st.caption(what)
        for f in files:
            st.download_button(f.label, data=f.build, file_name=f.name, mime=f.mime, help=f.help,
                               key=f"{key}_{f.label.lower()}", on_click="ignore", icon=":material/download:",
                               width="stretch")


def timeline(trace_id: str) -> None:
    """Download the run being read: html, json, md."""
    _buttons(run_files(state.library(), state.reachable(), trace_id), "tv_dl_run", "Download this run")


def compare(a_id: str, b_id: str) -> None:
    """Download the two runs side by side: html."""
    _buttons(compare_files(state.library(), state.reachable(), a_id, b_id), "tv_dl_compare",
             "Download the comparison")


def runs(query: RunsQuery, scope: Scope) -> None:
    """Download every run the runs table's filters keep: csv, parquet."""
    n = state.library().count_runs(query, scope)
    _buttons(runs_files(state.library(), dataclasses.replace(query), scope), "tv_dl_runs",
             f"Download the {min(n, COUNT_CAP):,}{'+' * (n > COUNT_CAP)} run{'s' * (n != 1)} these filters keep")
