"""Runs exported: as tables for analysis elsewhere (`viewer.library.tables`: Parquet, CSV), as
the cooked document, as pages to read offline and as Markdown transcripts.

`write(runs, to, output)` is the one entry point of the `traceview export` command; the
`*_bytes` helpers give the same files in memory for the app's download buttons.

- `parquet`: `runs.parquet`, `requests.parquet` and `messages.parquet` in a folder.
- `csv`: the runs table (the columns of `runs.parquet`, scores included) in one file.
- `json`: one cooked document holding the runs (with their sub-agent runs), as `cook` writes it.
- `md`: each run as a Markdown transcript (`viewer.analysis.transcript`).
- `html`: a run as a page that stands alone (`viewer.render.export`), the runs it started
  nested under the calls that started them: one page in a file; several in a folder, with
  `index.html` listing them.

Runs come with the cooked document holding them, from a library (`library_runs`) or cooked
from files the way the library cooks them (`cooked_runs`), so both give the same rows. Pure:
no Streamlit.
"""
from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import orjson

from parsers import pipeline
from parsers.model import Problem
from viewer.analysis import transcript
from viewer.analysis.transcript import trace_in
from viewer.library import families, ingest
from viewer.library.db import TRACE_COLUMNS
from viewer.library.library import RUN_FIELDS, Library, RunsQuery, Scope
from viewer.render import export as export_pages

FORMATS = ("html", "json", "md", "csv", "parquet")
ONE_FILE = ("json", "md", "csv")  # always one file; html is one file for one page, a folder for more
SUFFIX = {"html": ".html", "json": ".json", "md": ".md", "csv": ".csv"}
PAGE = 500          # runs read from a library at a time

# -- where runs come from ----------------------------------------------------------------------

def library_runs(lib: Library, ids: Iterable[str] = (), scope: Scope | None = None) -> Iterator[tuple[dict, dict]]:
    """(runs row, cooked family document) of the runs `ids` within `scope` (the whole library
    by default), or of every run in the library (by source file, then place in it). Ids not
    there are left out."""
    ids = list(ids)
    if ids:
        rows: Iterable[dict] = (r for r in (lib.run(i, scope) for i in ids) if r is not None)
    else:
        rows = every_run(lib)
    family, doc = None, None
    for row in rows:
        if row["family"] != family:  # a family's runs come together: read its document once
            family = row["family"]
            raw = lib.family_stored(row)
            doc = None if raw is None else families.unpack(raw)
        if doc is not None:
            yield row, doc


def every_run(lib: Library) -> Iterator[dict]:
    offset = 0
    while True:
        page = lib.runs(RunsQuery(sort="source", limit=PAGE, offset=offset), Scope(everything=True)).rows
        yield from page
        if len(page) < PAGE:
            return
        offset += PAGE


# A row as `ingest.cook_batch` shapes it: the library's trace columns, without the input's id.
_COOKED_ROW = ("id",) + tuple(c for c in TRACE_COLUMNS if c != "input_id")


def cooked_runs(paths) -> tuple[list[tuple[dict, dict]], list[Problem]]:
    """Cook files and folders the way the library does (no library involved): (runs row,
    family document) of every run, and the problems met."""
    problems: list[Problem] = []
    files = pipeline.list_files(paths, problems)
    runs = []
    # No search texts (nothing searches them) and the documents as they are (nothing stores them).
    for item in ingest.cook_batch(files, texts=False, stored=False)["inputs"]:
        problems.extend(Problem(**p) for p in item["entry"].get("problems") or ())
        docs = item["docs"]
        for cooked in item["rows"]:
            row = dict(zip(_COOKED_ROW, cooked), path=item["file"].path, name=item["entry"]["name"])
            row["scores"] = orjson.loads(row["scores"]) if row["scores"] else {}
            runs.append(({k: row.get(k) for k in RUN_FIELDS}, docs[row["family"]]))
    return runs, problems


# -- every format -------------------------------------------------------------------------------

@dataclass
class Written:
    """What an export wrote."""
    runs: int = 0
    requests: int = 0
    messages: int = 0
    # Runs whose cooked document did not hold them: their row is written, their requests and
    # messages could not be.
    without_document: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)  # what was written


class ExportError(ValueError):
    """An export that cannot be made as asked (the message says why, in plain words)."""


def write(runs: Iterable[tuple[dict, dict]], to: str, output) -> Written:
    """Write `runs` ((runs row, family document) pairs) as `to` at `output`: a file for csv,
    json and md and for html of one page; a folder for parquet, and for html of several pages
    (one per run that `pages` gives, named by its id, and index.html). Runs are read once, as
    they come."""
    if to not in FORMATS:
        raise ExportError(f"unknown export format {to!r} (one of {', '.join(FORMATS)})")
    output = Path(output)
    if to == "parquet":
        from viewer.library import tables

        counts = tables.write_parquet(runs, output)
        return Written(*counts, [output / f"{name}.parquet" for name in tables.TABLES])
    written = Written()
    if to == "html":
        return _write_pages(pages(_counted(runs, written)), output, written)
    if output.is_dir():
        raise ExportError(f"{output} is a folder: {to} is written to one file (name the file)")
    if to == "csv":  # the runs rows are all it needs
        rows = [run for run, _ in runs]
        from viewer.library import tables

        written.runs, data = len(rows), tables.csv_bytes(rows)
    elif to == "json":
        data = json_bytes(_counted(runs, written))
    elif to == "md":
        data = md_bytes(_counted(runs, written))
    _replace(output, data)
    written.files.append(output)
    return written


def pages(runs: Iterable[tuple[dict, dict]]) -> Iterator[tuple[dict, dict, transcript.Family, list[dict]]]:
    """(run, document, the document read, the runs its page holds) of the runs that get a
    page of their own: every run but one exported together with the run that started it (a
    family's runs come one after another), whose page holds its transcript under the call
    that started it."""
    for _, group in itertools.groupby(transcript.with_families(runs), key=lambda each: id(each[1])):
        group = list(group)
        parent = {run["id"]: run.get("parent") for run, _, _ in group}

        def top(run_id):
            seen = set()
            while parent.get(run_id) in parent and run_id not in seen:
                seen.add(run_id)
                run_id = parent[run_id]
            return run_id
        held: dict[str, list[dict]] = {}
        for run, _, _ in group:
            if parent[run["id"]] in parent:
                held.setdefault(top(run["id"]), []).append(run)
        yield from ((run, doc, family, held.get(run["id"], [])) for run, doc, family in group
                    if parent[run["id"]] not in parent)


def page_count(rows: Iterable[dict]) -> int:
    """How many pages an html export of these runs rows writes (see `pages`)."""
    rows = list(rows)
    together = {(row.get("family"), row["id"]) for row in rows}
    return sum(1 for row in rows if (row.get("family"), row.get("parent")) not in together)


def _write_pages(found: Iterator, output: Path, written: Written) -> Written:
    """One page in the file `output`, or several in the folder `output` with index.html."""
    first = list(itertools.islice(found, 2))
    if not first:
        why = f"{written.without_document[0]} is not in the document held for it" if written.without_document else "no run"
        raise ExportError(f"nothing to write: {why}")
    if len(first) == 1:
        if output.is_dir():
            raise ExportError(f"{output} is a folder: one page is written to one file (name the file)")
        run, doc, family, _ = first[0]
        _replace(output, html_bytes(run, doc, family))
        written.files.append(output)
        return written
    if output.exists() and not output.is_dir():
        raise ExportError(f"{output} is a file: several pages go into a folder (name one)")
    listed = []
    taken: set[str] = set()
    for run, doc, family, held in itertools.chain(first, found):
        # Two files may hold runs of one id (a log written as .eval and as .json): each its page.
        name, n = f"{run['id']}.html", 1
        while name in taken:
            n += 1
            name = f"{run['id']}-{n}.html"
        taken.add(name)
        _replace(output / name, html_bytes(run, doc, family))
        written.files.append(output / name)
        listed.append((name, family.trace(run["id"])))
        listed += [(f"{name}#run-{sub['id']}", family.trace(sub["id"])) for sub in held]
    _replace(output / "index.html", export_pages.index_page(listed).encode("utf-8"))
    written.files.append(output / "index.html")
    return written


def _counted(runs: Iterable[tuple[dict, dict]], written: Written) -> Iterator[tuple[dict, dict]]:
    """The runs whose document holds them, counted into `written` (the others noted there);
    a run without its trace has no page or transcript to give."""
    for run, doc in runs:
        written.runs += 1
        if trace_in(doc, run["id"]):
            yield run, doc
        else:
            written.without_document.append(run["id"])


def _replace(path: Path, data: bytes) -> None:
    """Write a file whole: under its name only once complete. A name that is a link writes its
    target; one that is not a regular file (a pipe, /dev/stdout) is written to as it is."""
    path = path.resolve()
    if path.exists() and not path.is_file():
        with open(path, "wb") as f:
            f.write(data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_bytes(data)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def cooked_document(runs: Iterable[tuple[dict, dict]]) -> dict:
    """One cooked document holding the runs and the sub-agent runs below them, with what they
    point to (messages, requests, tools), their inputs (listing only these runs) and groups."""
    out: dict[str, dict] = {k: {} for k in ("messages", "tools", "requests", "traces", "inputs", "groups")}
    cooked_by = None
    for run, doc in runs:
        fam = transcript.Family(doc)
        members = _with_sub_agents(fam, run["id"])
        part = ingest.family_doc([fam.traces[t] for t in members], fam.messages, fam.requests,
                                 {x["id"]: x for x in doc.get("tools") or ()}, {}, doc.get("groups") or [])
        for key in ("messages", "tools", "requests", "traces"):
            out[key].update((x["id"], x) for x in part[key])
        for group in part.get("groups") or ():
            out["groups"].setdefault(str(group.get("id")), group)
        for entry in doc.get("inputs") or ():
            mine = [t for t in entry.get("traces") or () if t in members]
            if mine:
                held = out["inputs"].setdefault(entry["name"], dict(entry, traces=[]))
                held["traces"] = list(dict.fromkeys(held["traces"] + mine))
        cooked_by = cooked_by or doc.get("cooked_by")
    result = {k: list(v.values()) for k, v in out.items() if v or k != "groups"}
    if cooked_by:
        result["cooked_by"] = cooked_by
    return result


def _with_sub_agents(fam: transcript.Family, trace_id: str) -> list[str]:
    """The run and every run below it in its family document, in document order."""
    wanted, todo = set(), [trace_id]
    while todo:
        t = todo.pop()
        if t in fam.traces and t not in wanted:
            wanted.add(t)
            todo += [c.get("trace") for c in fam.traces[t].get("children") or ()]
    return [t for t in fam.traces if t in wanted]


def json_bytes(runs: Iterable[tuple[dict, dict]]) -> bytes:
    return orjson.dumps(cooked_document(runs), option=orjson.OPT_APPEND_NEWLINE)


def md_bytes(runs: Iterable[tuple[dict, dict]]) -> bytes:
    """Each run's Markdown transcript, one after another (a rule between them); a sub-agent
    run whose parent is among them is in the parent's transcript already."""
    runs = list(runs)
    ids = {run["id"] for run, _ in runs}
    parts = [transcript.markdown(family, family.trace(run["id"])) for run, _, family in transcript.with_families(runs)
             if family.trace(run["id"]) and run.get("parent") not in ids]
    return "\n---\n\n".join(parts).encode("utf-8")


def html_bytes(run: dict, doc: dict, family: transcript.Family | None = None) -> bytes:
    """One run as a page that stands alone (`family`: its document read already)."""
    family = family or transcript.Family(doc)
    return export_pages.trace_page(family, family.trace(run["id"])).encode("utf-8")


def compare_html_bytes(left: tuple[dict, dict], right: tuple[dict, dict]) -> bytes:
    """Two runs side by side, aligned as the Compare page aligns them."""
    (lrun, ldoc), (rrun, rdoc) = left, right
    lfam, rfam = transcript.Family(ldoc), transcript.Family(rdoc)
    return export_pages.compare_page((lfam, lfam.trace(lrun["id"])), (rfam, rfam.trace(rrun["id"]))).encode("utf-8")
