"""Runs exported: as tables for analysis elsewhere (DuckDB, Polars, pandas, Spark), as the
cooked document, as pages to read offline and as Markdown transcripts.

`write(runs, to, output)` is the one entry point of the `traceview export` command; the
`*_bytes` helpers give the same files in memory for the app's download buttons.

- `parquet`: `runs.parquet`, `requests.parquet` and `messages.parquet` in a folder (below).
- `csv`: the runs table (the columns of `runs.parquet`, scores included) in one file.
- `json`: one cooked document holding the runs (with their sub-agent runs), as `cook` writes it.
- `md`: each run as a Markdown transcript (`viewer.analysis.transcript`).
- `html`: one run as a page that stands alone (`viewer.render.export`); several runs as one
  page each in a folder, with `index.html` listing them.

The tables:

- `runs.parquet`: one row per run, the runs table's columns (as the library holds them), its
  headline `score` and one `score: NAME` column per scorer met.
- `requests.parquet`: one row per API request (a model turn of a trajectory): its run, ids,
  model, time, the cooked usage (tokens of each kind; null when the request recorded none),
  cost, stop reason and error.
- `messages.parquet`: one row per message of each run in the Timeline's order (everything, in
  time order; `position` from 1): ids, role, text, the tool calls it makes (names, ids) and
  the call a tool result answers.

Every number is the cooked document's own (request usage, trace totals) or the library's
runs row, never summed again here. Runs come with the cooked document holding them, from a
library (`library_runs`) or cooked from files the way the library cooks them (`cooked_runs`),
so both give the same rows. Pure: no Streamlit.
"""
from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import io
import itertools
import zipfile

import orjson
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import zstandard

from parsers import pipeline
from parsers.model import Problem
from viewer.analysis import conversation as conv
from viewer.analysis import transcript
from viewer.analysis.per_run import SCORE_PREFIX
from viewer.library import families, ingest
from viewer.library.db import TRACE_COLUMNS
from viewer.library.library import RUN_FIELDS, Library, RunsQuery, Scope
from viewer.render import export as export_pages

TABLES = ("runs", "requests", "messages")
FORMATS = ("html", "json", "md", "csv", "parquet")
ONE_FILE = ("json", "md", "csv")  # always one file; html is one file for one run, a folder for more
SUFFIX = {"html": ".html", "json": ".json", "md": ".md", "csv": ".csv"}
PAGE = 500          # runs read from a library at a time
ROW_GROUP = 10_000  # requests or messages written at a time

TIME = pa.timestamp("ms", tz="UTC")
RUN_SCHEMA = pa.schema([
    ("trace_id", pa.string()), ("title", pa.string()), ("task", pa.string()), ("format", pa.string()),
    ("models", pa.string()), ("started_at", TIME), ("duration_ms", pa.float64()), ("outcome", pa.string()),
    ("score", pa.float64()), ("cost", pa.float64()), ("tokens", pa.int64()), ("requests", pa.int64()),
    ("messages", pa.int64()), ("errors", pa.int64()), ("problems", pa.int64()), ("group", pa.string()),
    ("parent", pa.string()), ("family", pa.string()), ("origin", pa.string()), ("path", pa.string()),
    ("name", pa.string()),
])
# Runs-table fields under another name in the export (`trace_id` joins the three tables).
_RENAMED = {"id": "trace_id", "grp": "group"}
USAGE = ("input", "output", "cache_read", "cache_write", "cache_write_1h", "reasoning")
REQUEST_SCHEMA = pa.schema([
    ("trace_id", pa.string()), ("request_id", pa.string()), ("parent_id", pa.string()), ("model", pa.string()),
    ("provider", pa.string()), ("timestamp", TIME), ("duration_ms", pa.float64()),
    *((f"{k}_tokens", pa.int64()) for k in USAGE),
    ("cost", pa.float64()), ("stop_reason", pa.string()), ("error", pa.string()),
])
MESSAGE_SCHEMA = pa.schema([
    ("trace_id", pa.string()), ("position", pa.int64()), ("message_id", pa.string()), ("role", pa.string()),
    ("content", pa.string()), ("name", pa.string()), ("timestamp", TIME),
    ("tool_names", pa.list_(pa.string())), ("tool_call_ids", pa.list_(pa.string())),
    ("tool_use_id", pa.string()), ("is_error", pa.bool_()),
])


# -- where runs come from ----------------------------------------------------------------------

def library_runs(lib: Library, ids: Iterable[str] = (), scope: Scope | None = None) -> Iterator[tuple[dict, dict]]:
    """(runs row, cooked family document) of the runs `ids` within `scope` (the whole library
    by default), or of every run in the library (by source file, then place in it). Ids not
    there are left out."""
    ids = list(ids)
    if ids:
        rows: Iterable[dict] = (r for r in (lib.run(i, scope) for i in ids) if r is not None)
    else:
        rows = _every_run(lib)
    family, doc = None, None
    for row in rows:
        if row["family"] != family:  # a family's runs come together: read its document once
            family = row["family"]
            raw = lib.family_stored(family)
            doc = None if raw is None else families.unpack(raw)
        if doc is not None:
            yield row, doc


def _every_run(lib: Library) -> Iterator[dict]:
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
    unz = zstandard.ZstdDecompressor()
    runs = []
    for item in ingest.cook_batch(files)["inputs"]:
        problems.extend(Problem(**p) for p in item["entry"].get("problems") or ())
        docs = {family: families.unpack(unz.decompress(data)) for family, data in item["blobs"]}
        for cooked in item["rows"]:
            row = dict(zip(_COOKED_ROW, cooked), path=item["file"].path, name=item["entry"]["name"])
            row["scores"] = orjson.loads(row["scores"]) if row["scores"] else {}
            runs.append(({k: row.get(k) for k in RUN_FIELDS}, docs[row["family"]]))
    return runs, problems


# -- rows ----------------------------------------------------------------------------------------

def run_record(row: dict) -> dict:
    """A runs row as the export's columns (scores as `score: NAME`)."""
    out = {_RENAMED.get(k, k): row.get(k) for k in RUN_FIELDS if k not in ("scores", "input_id")}
    out["started_at"] = _iso_time(out["started_at"])
    out.update((SCORE_PREFIX + name, value) for name, value in (row.get("scores") or {}).items())
    return out


def request_records(run: dict, doc: dict) -> Iterator[dict]:
    """The run's requests, in the order the trace lists them."""
    trace = _trace(run, doc)
    requests = {r["id"]: r for r in doc.get("requests") or ()}
    for rid in trace.get("requests") or ():
        r = requests.get(rid)
        if r is None:
            continue
        usage = r.get("usage") or {}
        yield {"trace_id": run["id"], "request_id": rid, "parent_id": r.get("parent_id"), "model": r.get("model"),
               "provider": r.get("provider"), "timestamp": _ms(r.get("timestamp")),
               "duration_ms": r.get("duration_ms"),
               **{f"{k}_tokens": usage.get(k) for k in USAGE},
               "cost": r.get("cost"), "stop_reason": r.get("stop_reason"), "error": r.get("error")}


def message_records(run: dict, doc: dict) -> Iterator[dict]:
    """The run's messages as its Timeline orders them (everything, in time order)."""
    trace = _trace(run, doc)
    messages = {m["id"]: m for m in doc.get("messages") or ()}
    requests = {r["id"]: r for r in doc.get("requests") or ()}
    ids = conv.in_time_order(trace, requests, messages).message_ids
    for position, mid in enumerate(ids, 1):
        m = messages.get(mid)
        if m is None:
            continue
        calls = [c for c in m.get("tool_calls") or () if isinstance(c, dict)]
        yield {"trace_id": run["id"], "position": position, "message_id": mid, "role": m.get("role"),
               "content": m.get("content"), "name": m.get("name"), "timestamp": _ms(m.get("timestamp")),
               "tool_names": [c.get("name") for c in calls], "tool_call_ids": [c.get("id") for c in calls],
               "tool_use_id": m.get("tool_use_id"), "is_error": m.get("is_error")}


def _trace(run: dict, doc: dict) -> dict:
    return next((t for t in doc.get("traces") or () if t.get("id") == run["id"]), {})


def _ms(value) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _iso_time(value) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value) if value else None


# -- tables and files ----------------------------------------------------------------------------

def runs_table(rows: Iterable[dict]) -> pa.Table:
    """The runs table of runs rows: the fixed columns, then one `score: NAME` column per
    scorer, in the order scorers are first met."""
    records = [run_record(r) for r in rows]
    scorers = list(dict.fromkeys(k for r in records for k in r if k not in RUN_SCHEMA.names))
    schema = pa.schema([*RUN_SCHEMA, *((k, pa.float64()) for k in scorers)])
    return pa.Table.from_pylist(records, schema=schema)


def tables(runs: Iterable[tuple[dict, dict]]) -> dict[str, pa.Table]:
    """The three tables in memory (for a download of a few runs; `write_parquet` streams)."""
    runs = list(runs)
    return {"runs": runs_table(run for run, _ in runs),
            "requests": pa.Table.from_pylist([r for run, doc in runs for r in request_records(run, doc)],
                                             schema=REQUEST_SCHEMA),
            "messages": pa.Table.from_pylist([m for run, doc in runs for m in message_records(run, doc)],
                                             schema=MESSAGE_SCHEMA)}


@dataclass
class Written:
    runs: int = 0
    requests: int = 0
    messages: int = 0
    # Runs whose cooked document did not hold them: their row is written, their requests and
    # messages could not be.
    without_document: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)  # what was written


def write_parquet(runs: Iterable[tuple[dict, dict]], folder) -> Written:
    """Write `runs.parquet`, `requests.parquet` and `messages.parquet` into `folder` (made if
    needed). Requests and messages stream out as runs come; each file takes its name only
    once complete, so a failed export leaves no half-written table under a table's name."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    partial = {name: folder / f".{name}.parquet.partial" for name in TABLES}
    rows: list[dict] = []
    lost: list[str] = []
    try:
        with _Stream(partial["requests"], REQUEST_SCHEMA) as requests, \
                _Stream(partial["messages"], MESSAGE_SCHEMA) as messages:
            for run, doc in runs:
                rows.append(run)
                if not _trace(run, doc):
                    lost.append(run["id"])
                requests.add(request_records(run, doc))
                messages.add(message_records(run, doc))
        pq.write_table(runs_table(rows), partial["runs"])
        written = Written(len(rows), requests.count, messages.count, lost)
        for name, path in partial.items():
            os.replace(path, folder / f"{name}.parquet")
    finally:
        for path in partial.values():
            path.unlink(missing_ok=True)
    return written


class _Stream:
    """A Parquet file written a row group at a time."""

    def __init__(self, path: Path, schema: pa.Schema):
        self.writer = pq.ParquetWriter(path, schema)
        self.schema = schema
        self.buffer: list[dict] = []
        self.count = 0

    def add(self, records: Iterable[dict]) -> None:
        for r in records:
            self.buffer.append(r)
            if len(self.buffer) >= ROW_GROUP:
                self.flush()

    def flush(self) -> None:
        if self.buffer:
            self.writer.write_table(pa.Table.from_pylist(self.buffer, schema=self.schema))
            self.count += len(self.buffer)
            self.buffer = []

    def __enter__(self) -> _Stream:
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            self.flush()
        self.writer.close()


# -- every format -------------------------------------------------------------------------------

class ExportError(ValueError):
    """An export that cannot be made as asked (the message says why, in plain words)."""


def write(runs: Iterable[tuple[dict, dict]], to: str, output) -> Written:
    """Write `runs` ((runs row, family document) pairs) as `to` at `output`: a file for csv,
    json and md and for html of one run; a folder for parquet, and for html of several runs
    (one page per run, named by its id, and index.html). Runs are read once, as they come."""
    if to not in FORMATS:
        raise ExportError(f"unknown export format {to!r} (one of {', '.join(FORMATS)})")
    output = Path(output)
    if to == "parquet":
        written = write_parquet(runs, output)
        written.files = [output / f"{name}.parquet" for name in TABLES]
        return written
    runs = iter(runs)
    first = list(itertools.islice(runs, 2))
    runs = itertools.chain(first, runs)
    written = Written()
    if to == "html" and len(first) > 1:
        if output.exists() and not output.is_dir():
            raise ExportError(f"{output} is a file: the pages of several runs go into a folder (name one)")
        listed = []
        for run, doc in _counted(runs, written):
            name = f"{run['id']}.html"
            _replace(output / name, html_bytes(run, doc))
            written.files.append(output / name)
            listed.append((name, _trace(run, doc)))
        _replace(output / "index.html", export_pages.index_page(listed).encode("utf-8"))
        written.files.append(output / "index.html")
        return written
    if output.is_dir():
        raise ExportError(f"{output} is a folder: {to} is written to one file (name the file)")
    if to == "csv":  # the runs rows are all it needs
        rows = [run for run, _ in runs]
        written.runs, data = len(rows), csv_bytes(rows)
    elif to == "json":
        data = json_bytes(_counted(runs, written))
    elif to == "md":
        data = md_bytes(_counted(runs, written))
    else:
        data = b"".join(html_bytes(run, doc) for run, doc in _counted(runs, written))  # the one run
        if not data:
            raise ExportError(f"nothing to write: {written.without_document[0]} is not in the document "
                              "held for it")
    _replace(output, data)
    written.files.append(output)
    return written


def _counted(runs: Iterable[tuple[dict, dict]], written: Written) -> Iterator[tuple[dict, dict]]:
    """The runs whose document holds them, counted into `written` (the others noted there);
    a run without its trace has no page or transcript to give."""
    for run, doc in runs:
        written.runs += 1
        if _trace(run, doc):
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


# A text cell a spreadsheet would read as a formula (OWASP's list): written after a "'".
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_bytes(rows: Iterable[dict]) -> bytes:
    """The runs table as CSV: the columns of runs.parquet (scores included), a header line.
    Titles and tasks come from the traces: a text cell that a spreadsheet would take for a
    formula is written after a "'", so opening the file runs nothing."""
    table = runs_table(rows)
    for i, field in enumerate(table.schema):
        if pa.types.is_string(field.type):
            cells = table.column(i).to_pylist()
            table = table.set_column(i, field, pa.array(
                [f"'{v}" if isinstance(v, str) and v.startswith(FORMULA_START) else v for v in cells], pa.string()))
    out = io.BytesIO()
    pacsv.write_csv(table, out)
    return out.getvalue()


def parquet_zip_bytes(runs: Iterable[tuple[dict, dict]]) -> bytes:
    """runs.parquet, requests.parquet and messages.parquet in one zip (a download)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:  # Parquet is compressed already
        for name, table in tables(runs).items():
            buf = io.BytesIO()
            pq.write_table(table, buf)
            z.writestr(f"{name}.parquet", buf.getvalue())
    return out.getvalue()


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
    return orjson.dumps(cooked_document(runs)) + b"\n"


def md_bytes(runs: Iterable[tuple[dict, dict]]) -> bytes:
    """Each run's Markdown transcript, one after another (a rule between them); a sub-agent
    run whose parent is among them is in the parent's transcript already."""
    runs = list(runs)
    ids = {run["id"] for run, _ in runs}
    parts = [transcript.markdown(transcript.Family(doc), _trace(run, doc)) for run, doc in runs
             if _trace(run, doc) and run.get("parent") not in ids]
    return "\n---\n\n".join(parts).encode("utf-8")


def html_bytes(run: dict, doc: dict) -> bytes:
    """One run as a page that stands alone."""
    return export_pages.trace_page(transcript.Family(doc), _trace(run, doc)).encode("utf-8")


def compare_html_bytes(left: tuple[dict, dict], right: tuple[dict, dict]) -> bytes:
    """Two runs side by side, aligned as the Compare page aligns them."""
    (lrun, ldoc), (rrun, rdoc) = left, right
    return export_pages.compare_page((transcript.Family(ldoc), _trace(lrun, ldoc)),
                                     (transcript.Family(rdoc), _trace(rrun, rdoc))).encode("utf-8")
