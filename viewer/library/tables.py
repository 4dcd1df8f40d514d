"""The runs, requests and messages tables of exported runs (pyarrow), for analysis elsewhere
(DuckDB, Polars, pandas, Spark): `runs.parquet`, `requests.parquet` and `messages.parquet` in
a folder, the runs table as CSV, and the three in a zip for a download.

- `runs.parquet`: one row per run, the runs table's columns (as the library holds them), its
  headline `score` and one `score: NAME` column per scorer met.
- `requests.parquet`: one row per API request (a model turn of a trajectory): its run, ids,
  model, time, the cooked usage (tokens of each kind; null when the request recorded none),
  cost, stop reason and error.
- `messages.parquet`: one row per message of each run in the Timeline's order (everything, in
  time order; `position` from 1): ids, role, text, the tool calls it makes (names, ids) and
  the call a tool result answers.

Every number is the cooked document's own (request usage, trace totals) or the library's
runs row, never summed again here. Imported by the exports that write tables only (pyarrow
takes a fifth of a second to import). Pure: no Streamlit.
"""
from __future__ import annotations

import datetime as dt
import io
import os
import zipfile
from pathlib import Path
from typing import Iterable, Iterator

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from viewer.analysis import conversation as conv
from viewer.analysis.per_run import SCORE_PREFIX, number
from viewer.analysis.transcript import Family, with_families
from viewer.library.library import RUN_FIELDS

TABLES = ("runs", "requests", "messages")
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


def run_record(row: dict) -> dict:
    """A runs row as the export's columns (scores as `score: NAME`)."""
    out = {_RENAMED.get(k, k): row.get(k) for k in RUN_FIELDS if k not in ("scores", "input_id")}
    out["started_at"] = _iso_time(out["started_at"])
    out.update((SCORE_PREFIX + name, value) for name, value in (row.get("scores") or {}).items())
    return out


def request_records(run: dict, family: Family) -> Iterator[dict]:
    """The run's requests, in the order the trace lists them."""
    trace = family.trace(run["id"])
    for rid in trace.get("requests") or ():
        r = family.requests.get(rid)
        if r is None:
            continue
        usage = r.get("usage") or {}
        yield {"trace_id": run["id"], "request_id": rid, "parent_id": r.get("parent_id"), "model": r.get("model"),
               "provider": r.get("provider"), "timestamp": _ms(r.get("timestamp")),
               "duration_ms": r.get("duration_ms"),
               **{f"{k}_tokens": usage.get(k) for k in USAGE},
               "cost": r.get("cost"), "stop_reason": r.get("stop_reason"), "error": r.get("error")}


def message_records(run: dict, family: Family) -> Iterator[dict]:
    """The run's messages as its Timeline orders them (everything, in time order)."""
    trace = family.trace(run["id"])
    messages = family.messages
    ids = conv.in_time_order(trace, family.requests, messages).message_ids
    at_times = conv.at_their_times(ids, [messages.get(mid) or {} for mid in ids], trace.get("message_times"))
    for position, (mid, m) in enumerate(zip(ids, at_times), 1):
        if mid not in messages:
            continue
        calls = [c for c in m.get("tool_calls") or () if isinstance(c, dict)]
        yield {"trace_id": run["id"], "position": position, "message_id": mid, "role": m.get("role"),
               "content": m.get("content"), "name": m.get("name"), "timestamp": _ms(m.get("timestamp")),
               "tool_names": [c.get("name") for c in calls], "tool_call_ids": [c.get("id") for c in calls],
               "tool_use_id": m.get("tool_use_id"), "is_error": m.get("is_error")}


def _ms(value) -> int | None:
    value = number(value)
    return int(value) if value is not None else None


def _iso_time(value) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value) if value else None


def runs_table(rows: Iterable[dict]) -> pa.Table:
    """The runs table of runs rows: the fixed columns, then one `score: NAME` column per
    scorer, in the order scorers are first met."""
    records = [run_record(r) for r in rows]
    scorers = list(dict.fromkeys(k for r in records for k in r if k not in RUN_SCHEMA.names))
    schema = pa.schema([*RUN_SCHEMA, *((k, pa.float64()) for k in scorers)])
    return pa.Table.from_pylist(records, schema=schema)


def tables(runs: Iterable[tuple[dict, dict]]) -> dict[str, pa.Table]:
    """The three tables in memory (for a download of a few runs; `write_parquet` streams)."""
    runs = list(with_families(runs))
    return {"runs": runs_table(run for run, _, _ in runs),
            "requests": pa.Table.from_pylist([r for run, _, fam in runs for r in request_records(run, fam)],
                                             schema=REQUEST_SCHEMA),
            "messages": pa.Table.from_pylist([m for run, _, fam in runs for m in message_records(run, fam)],
                                             schema=MESSAGE_SCHEMA)}


def write_parquet(runs: Iterable[tuple[dict, dict]], folder) -> tuple[int, int, int, list[str]]:
    """Write `runs.parquet`, `requests.parquet` and `messages.parquet` into `folder` (made if
    needed). Requests and messages stream out as runs come; each file takes its name only
    once complete, so a failed export leaves no half-written table under a table's name.
    Returns how many runs, requests and messages were written, and the runs whose cooked
    document did not hold them (their row is written, their requests and messages could not be)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    partial = {name: folder / f".{name}.parquet.partial" for name in TABLES}
    rows: list[dict] = []
    lost: list[str] = []
    try:
        with _Stream(partial["requests"], REQUEST_SCHEMA) as requests, \
                _Stream(partial["messages"], MESSAGE_SCHEMA) as messages:
            for run, _, family in with_families(runs):
                rows.append(run)
                if not family.trace(run["id"]):
                    lost.append(run["id"])
                requests.add(request_records(run, family))
                messages.add(message_records(run, family))
        pq.write_table(runs_table(rows), partial["runs"])
        written = len(rows), requests.count, messages.count, lost
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


# A text cell a spreadsheet would read as a formula (OWASP's list): written after a "'".
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_bytes(rows: Iterable[dict]) -> bytes:
    """The runs table as CSV: the columns of runs.parquet (scores included), a header line.
    Titles and tasks come from the traces: a text cell that a spreadsheet would take for a
    formula is written after a "'", so opening the file runs nothing."""
    table = runs_table(rows)
    for i, column in enumerate(table.schema):
        if pa.types.is_string(column.type):
            cells = table.column(i).to_pylist()
            table = table.set_column(i, column, pa.array(
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
