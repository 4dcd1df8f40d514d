"""The library of runs: where it lives, and everything asked of it.

`Library(location)` opens (or creates) one: a SQLite file path, or a `postgresql://` URL.
Pages, the CLI and the benchmarks ask it for a page of runs (filtered, sorted and counted in
the database), facets, search hits with snippets, a run's family document, evaluation logs
and inputs; `index` brings it up to date with files on disk. A `Scope` keeps every answer to
what one server was given (its paths and the uploads it took), or to the whole library.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import zstandard

from viewer.library import families, search
from viewer.library.db import ITEM_SLOTS, Database, LibraryError, below, chunks, connect, run_of, text_key
from viewer.library.search import SNIPPET_CLOSE, SNIPPET_OPEN

if TYPE_CHECKING:
    from viewer.library import ingest

ENV = "TRACEVIEW_LIBRARY"

__all__ = ["Library", "Scope", "RunsQuery", "default_location", "LibraryError", "SNIPPET_OPEN", "SNIPPET_CLOSE"]


def default_location() -> str:
    """TRACEVIEW_LIBRARY, else `library.sqlite` in the user's data folder."""
    env = os.environ.get(ENV, "").strip()
    if env:
        return env
    import platformdirs

    return str(Path(platformdirs.user_data_dir("traceview", appauthor=False)) / "library.sqlite")


def shown_location(location: str) -> str:
    """A library's location as it may be printed: a URL's password masked."""
    from urllib.parse import urlsplit, urlunsplit

    if "://" not in location:
        return location
    parts = urlsplit(location)
    if parts.password is None:
        return location
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


NO_PROBLEMS = "[]"  # an input's problems as written when it has none (a JSON list)


@dataclass(frozen=True)
class Scope:
    """Which inputs an answer covers: those under `paths` (files or folders) and the uploads
    named by their input ids; everything when `everything`."""
    paths: tuple[str, ...] = ()
    uploads: tuple[int, ...] = ()
    everything: bool = False

    def sql(self, alias: str = "i") -> tuple[str, tuple]:
        """An SQL condition on inputs (`alias`), and its parameters."""
        if self.everything:
            return f"{alias}.gone = 0", ()
        parts, params = [], []
        for p in self.paths:  # the file, or the range of paths below the folder (indexed)
            parts.append(f"{alias}.path = ? OR ({alias}.path >= ? AND {alias}.path < ?)")
            params += [p, *below(p)]
        if self.uploads:
            parts.append(f"{alias}.id IN ({', '.join('?' * len(self.uploads))})")
            params += list(self.uploads)
        if not parts:
            return "1 = 0", ()
        return f"{alias}.gone = 0 AND ({' OR '.join(parts)})", tuple(params)


SORTS = {"title": "t.title", "task": "t.task", "format": "t.format", "model": "t.models", "outcome": "t.outcome",
         "score": "t.score", "cost": "t.cost", "tokens": "t.tokens", "requests": "t.requests",
         "messages": "t.messages", "duration": "t.duration_ms", "errors": "t.errors", "problems": "t.problems",
         "started": "t.started_at", "source": "i.path", "file": "i.path"}


@dataclass
class RunsQuery:
    """A runs-table question: filters (each empty = all), a sort and a page."""
    contains: str = ""        # a substring of title, task, model or source
    formats: tuple = ()
    models: tuple = ()        # model keys (ingest.model_key)
    outcomes: tuple = ()
    tasks: tuple = ()
    groups: tuple = ()        # evaluation-log ids
    min_score: float | None = None
    max_score: float | None = None
    min_cost: float | None = None
    max_cost: float | None = None
    since: str | None = None  # ISO dates (start time)
    until: str | None = None
    sort: str = "started"
    descending: bool = False
    limit: int = 50
    offset: int = 0

    def where(self) -> tuple[list[str], list]:
        conds, params = [], []

        def among(col, values):
            if values:
                conds.append(f"{col} IN ({', '.join('?' * len(values))})")
                params.extend(values)
        among("t.format", self.formats)
        among("t.outcome", self.outcomes)
        among("t.task", self.tasks)
        among("t.grp", self.groups)
        if self.models:
            conds.append("(" + " OR ".join("t.model_keys LIKE ?" for _ in self.models) + ")")
            params.extend(f"%|{_like(m)}|%" for m in self.models)
        if self.contains.strip():
            conds.append("lower(coalesce(t.title, '') || ' ' || coalesce(t.task, '') || ' ' || coalesce(t.models, '') "
                         "|| ' ' || i.name) LIKE ? ESCAPE '\\'")
            params.append(f"%{_like(self.contains.strip().lower())}%")
        for col, op, v in (("t.score", ">=", self.min_score), ("t.score", "<=", self.max_score),
                           ("t.cost", ">=", self.min_cost), ("t.cost", "<=", self.max_cost),
                           ("t.started_at", ">=", self.since), ("t.started_at", "<", self.until)):
            if v is not None:
                conds.append(f"{col} {op} ?")
                params.append(v)
        return conds, params


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


RUN_FIELDS = ("id", "title", "task", "format", "models", "started_at", "duration_ms", "outcome", "score", "scores",
              "cost", "tokens", "requests", "messages", "errors", "problems", "grp", "parent", "family", "origin",
              "path", "name", "input_id")
_RUN_SELECT = ", ".join(f"t.{c}" for c in RUN_FIELDS[:-3]) + ", i.path, i.name, i.id"


@dataclass
class Hit:
    """A run matching a search: its row, the item that matched best and a snippet of it
    (matched words between SNIPPET_OPEN and SNIPPET_CLOSE)."""
    run: dict
    n: int
    snippet: str
    rank: float


@dataclass
class RunsPage:
    rows: list[dict]
    total: int            # rows matching (at most `cap` when counting was cut short)
    capped: bool = False  # more than `total` match; counting stopped


COUNT_CAP = 10_000
# Matching items a search ranks (the newest first): every match of a word in fewer items, so
# its ranking is exact; the newest of a common one's (more while too few runs have one).
SEARCH_CANDIDATES = 1_000


class Library:
    def __init__(self, location: str | None = None):
        self.location = location or default_location()
        self.db: Database = connect(self.location)
        self._zstd = zstandard.ZstdDecompressor()

    @property
    def dialect(self) -> str:
        return self.db.dialect.name

    def close(self) -> None:
        self.db.close()

    # -- writing ------------------------------------------------------------------------------
    # The indexer (`ingest`) brings the whole cook with it, so it is imported by the methods
    # that write: reading a library, or checking that one opens (`traceview serve` does before
    # it starts the app), costs none of it.
    def index(self, paths, *, jobs: int | None = None, origin: str = "path", progress: ingest.Progress | None = None,
              on_batch=None, stop=None) -> ingest.Progress:
        """Bring the library up to date with the files under `paths` (see `ingest`), cooking
        in `jobs` processes (by default one per CPU core). `stop()`, asked before each batch
        of files, can end the run early: what was written stays, the next run does the rest."""
        from viewer.library import ingest

        return ingest.Indexer(self.db, jobs=jobs, origin=origin, progress=progress, on_batch=on_batch,
                              stop=stop).run(paths)

    def prune(self) -> int:
        """Drop the rows of files marked gone; returns how many."""
        from viewer.library import ingest

        return ingest.prune(self.db)

    def forget(self, path: str) -> None:
        """Take the file or folder at `path` out of the library now (an upload removed)."""
        from viewer.library import ingest

        ingest.forget(self.db, os.path.realpath(path))

    # -- runs ---------------------------------------------------------------------------------
    def runs(self, q: RunsQuery, scope: Scope) -> RunsPage:
        """A page of runs matching `q` within `scope`, sorted and counted in the database (a text
        search is `search`)."""
        conds, params = q.where()
        where_scope, scope_params = scope.sql()
        where = " AND ".join([where_scope, *conds])
        base = f"FROM traces t JOIN inputs i ON i.id = t.input_id WHERE {where}"
        total = self.count_runs(q, scope)
        order = SORTS.get(q.sort, "t.started_at")
        direction = "DESC" if q.descending else "ASC"
        rows = self.db.query(
            f"SELECT {_RUN_SELECT} {base} ORDER BY {order} IS NULL, {order} {direction}, i.path, t.pos "
            f"LIMIT ? OFFSET ?", (*scope_params, *params, q.limit, q.offset))
        return RunsPage([_run(r) for r in rows], min(total, COUNT_CAP), capped=total > COUNT_CAP)

    def count_runs(self, q: RunsQuery, scope: Scope) -> int:
        """How many runs match `q` (its text search aside), counted up to COUNT_CAP + 1."""
        conds, params = q.where()
        where_scope, scope_params = scope.sql()
        where = " AND ".join([where_scope, *conds])
        return self.db.one(f"SELECT count(*) FROM (SELECT 1 FROM traces t JOIN inputs i ON i.id = t.input_id "
                           f"WHERE {where} LIMIT {COUNT_CAP + 1}) c", (*scope_params, *params))[0]

    def facets(self, q: RunsQuery, scope: Scope) -> dict[str, list[tuple[str, int]]]:
        """Counts per format, outcome and model of the runs `q` matches (its text search aside)."""
        conds, params = q.where()
        where_scope, scope_params = scope.sql()
        where = " AND ".join([where_scope, *conds])
        base = f"FROM traces t JOIN inputs i ON i.id = t.input_id WHERE {where}"
        out = {}
        for name, col in (("format", "t.format"), ("outcome", "t.outcome"), ("model", "t.models")):
            rows = self.db.query(f"SELECT {col}, count(*) {base} GROUP BY {col} ORDER BY count(*) DESC",
                                 (*scope_params, *params))
            out[name] = [(v, n) for v, n in rows if v is not None]
        return out

    def values(self, column: str, scope: Scope) -> list[str]:
        """The distinct values of a run column (format, outcome, models, task) within scope."""
        col = {"format": "t.format", "outcome": "t.outcome", "models": "t.models", "task": "t.task"}[column]
        where_scope, scope_params = scope.sql()
        rows = self.db.query(f"SELECT DISTINCT {col} FROM traces t JOIN inputs i ON i.id = t.input_id "
                             f"WHERE {where_scope} AND {col} IS NOT NULL ORDER BY 1", scope_params)
        return [r[0] for r in rows]

    def listed_inputs(self, scope: Scope) -> int:
        """How many inputs in `scope` have their runs listed, not cooked yet (see
        `ingest.Indexer._list_ahead`)."""
        where_scope, scope_params = scope.sql()
        return self.db.one(f"SELECT count(*) FROM inputs i WHERE i.cooker = ? AND {where_scope}",
                           (families.LISTED_COOKER, *scope_params))[0]

    def count(self, scope: Scope) -> int:
        where_scope, scope_params = scope.sql()
        return self.db.one(f"SELECT count(*) FROM traces t JOIN inputs i ON i.id = t.input_id WHERE {where_scope}",
                           scope_params)[0]

    def run(self, trace_id: str, scope: Scope | None = None) -> dict | None:
        where_scope, scope_params = (scope or Scope(everything=True)).sql()
        # Files holding runs of one id (a session and an older copy of it): the newest one's.
        r = self.db.one(f"SELECT {_RUN_SELECT} FROM traces t JOIN inputs i ON i.id = t.input_id "
                        f"WHERE t.id = ? AND {where_scope} ORDER BY i.mtime_ns DESC, i.path LIMIT 1",
                        (trace_id, *scope_params))
        return _run(r) if r else None

    def family(self, trace_id: str, scope: Scope | None = None) -> dict | None:
        """The cooked document of a run's family (the run, its parent and sub-agent runs), or
        None when the run is not in the library (or not in scope)."""
        found = self.run_and_family(trace_id, scope)
        return None if found is None else found[1]

    def run_and_family(self, trace_id: str, scope: Scope | None = None) -> tuple[dict, dict] | None:
        """(runs row, family document) of a run, both of the same file; None as `family`."""
        run = self.run(trace_id, scope)
        raw = None if run is None else self.family_stored(run)
        return None if raw is None else (run, families.unpack(raw))

    def family_stored(self, run: dict) -> bytes | None:
        """The JSON text of the family document of a runs row (`families.unpack` reads it):
        as stored; for a run listed before its input was cooked, read from its file now."""
        row = self.db.one("SELECT data FROM blobs WHERE family = ?", (run["family"],))
        if row is not None:
            return self._zstd.decompress(bytes(row[0]))
        return self._read_listed(run) if families.listed(run["family"]) else None

    def _read_listed(self, run: dict) -> bytes | None:
        """A listed run's document, read from its file (its place in the file is its row's)."""
        from parsers import pipeline  # the readers: a library that is only read never needs them

        found = self.db.one("SELECT t.pos, i.root, i.format FROM traces t JOIN inputs i ON i.id = t.input_id "
                            "WHERE t.family = ? AND i.id = ?", (run["family"], run["input_id"]))
        if found is None:
            return None
        pos, root, fmt = found
        doc, _ = pipeline.open_run(run["path"], pos, fmt, root=root)
        if run["id"] not in {t["id"] for t in doc["traces"]}:  # the file changed since it was listed
            return None
        return families.pack(doc)

    # -- search -------------------------------------------------------------------------------
    def search(self, text: str, scope: Scope, limit: int = 50, query: RunsQuery | None = None) -> list[Hit]:
        """Runs whose items match `text`, best first (relevance, then time), one hit each: the
        best-matching item and its snippet. What is ranked is the newest matching items: every
        one of a word in at most SEARCH_CANDIDATES items, else the newest SEARCH_CANDIDATES and
        more until `limit` runs in scope have one (with every item of those runs written with
        the one met)."""
        parsed = search.parse(text)
        if parsed.empty:
            return []
        conds, params = (query or RunsQuery()).where()
        where_scope, scope_params = scope.sql()
        where = " AND ".join([where_scope, *conds])
        owner: dict[int, str] = {}  # texts id -> its run's text key (`db.text_key`)
        wanted: dict[str, str] = {}  # the text keys of runs in scope (another file's run of one id is not) -> run
        found: set[str] = set()  # those of them with a matching item read
        checked: set[str] = set()  # runs whose scope is known
        ranked: list[tuple[int, float]] = []  # (key, rank) of the items read, newest first
        lowest, below, fetch = 0, None, SEARCH_CANDIDATES
        while True:
            rows = self.db.match(parsed, fetch, below)
            ranked += rows
            pieces = list({key // ITEM_SLOTS for key, _ in rows} - owner.keys())
            for chunk in chunks(pieces, 500):
                owner.update(self.db.query(f"SELECT id, trace FROM texts WHERE id IN ({', '.join('?' * len(chunk))})",
                                           chunk))
            new_runs = list({run_of(owner[p]) for p in pieces if p in owner} - checked)
            checked.update(new_runs)
            for chunk in chunks(new_runs, 500):
                wanted.update((text_key(*r), r[0]) for r in self.db.query(
                    f"SELECT t.id, t.family FROM traces t JOIN inputs i ON i.id = t.input_id "
                    f"WHERE t.id IN ({', '.join('?' * len(chunk))}) AND {where}", (*chunk, *scope_params, *params)))
            for key, _ in rows:  # newest first: the window ends where the last run wanted is met
                text = owner.get(key // ITEM_SLOTS)
                if text in wanted and text not in found:
                    found.add(text)
                    if len(found) == limit:  # ranked by its best item: its pieces written with this one are read
                        lowest = self._first_piece(text, key // ITEM_SLOTS) * ITEM_SLOTS
                        if lowest < ranked[-1][0]:
                            ranked += self.db.match(parsed, None, ranked[-1][0], lowest)
                        break
            else:
                if len(rows) == fetch and len(found) < limit:  # more to read: as many as the runs still
                    below = rows[-1][0]                          # wanted took so far
                    fetch = int(len(ranked) / len(found) * (limit - len(found)) * 1.2) + 1 if found else 4 * fetch
                    continue
            break
        best: dict[str, tuple[int, float]] = {}  # run -> its best item's key and rank
        for key, rank in ranked:
            tid = wanted.get(owner.get(key // ITEM_SLOTS))
            if key >= lowest and tid is not None and ((b := best.get(tid)) is None or (rank, -key) < (b[1], -b[0])):
                best[tid] = (key, rank)
        top = sorted(best.items(), key=lambda kv: (kv[1][1], -kv[1][0]))[:limit]
        runs = {}
        for chunk in chunks([tid for tid, _ in top], 500):
            rows = self.db.query(f"SELECT {_RUN_SELECT} FROM traces t JOIN inputs i ON i.id = t.input_id "
                                 f"WHERE t.id IN ({', '.join('?' * len(chunk))}) AND {where}",
                                 (*chunk, *scope_params, *params))
            for r in map(_run, rows):  # the row of the file whose text matched
                if owner[best[r["id"]][0] // ITEM_SLOTS] == text_key(r["id"], r["family"]):
                    runs[r["id"]] = r
        texts = dict(self.db.query(f"SELECT id, data FROM texts WHERE id IN ({', '.join('?' * len(top))})",
                                   [key // ITEM_SLOTS for _, (key, _) in top])) if top else {}
        hits = []
        for tid, (key, rank) in top:
            items = orjson.loads(self._zstd.decompress(bytes(texts[key // ITEM_SLOTS])))
            n, text = items[min(key % ITEM_SLOTS, len(items) - 1)]
            hits.append(Hit(runs[tid], n, search.snippet(text, parsed), rank))
        hits.sort(key=lambda h: (h.rank, _neg_time(h.run.get("started_at"))))
        return hits

    def _first_piece(self, text: str, piece: int) -> int:
        """The first of the run's pieces written together with `piece` (consecutive ids): a
        run whose file changed keeps the pieces the change left alone where they were."""
        for (text_id,) in self.db.query("SELECT id FROM texts WHERE trace = ? AND id < ? ORDER BY id DESC",
                                        (text, piece)):
            if text_id != piece - 1:
                break
            piece = text_id
        return piece

    # -- the rest -----------------------------------------------------------------------------
    def groups(self, scope: Scope) -> list[dict]:
        where_scope, scope_params = scope.sql()
        rows = self.db.query(f"SELECT g.data FROM groups g JOIN inputs i ON i.id = g.input_id WHERE {where_scope} "
                             f"ORDER BY i.path, g.pos", scope_params)
        return [orjson.loads(r[0]) for r in rows]

    def inputs(self, scope: Scope, *, with_problems: bool = False) -> list[dict]:
        """The inputs in scope (only those with problems when `with_problems`), by path."""
        where_scope, scope_params = scope.sql()
        only = f" AND i.problems <> '{NO_PROBLEMS}'" if with_problems else ""
        rows = self.db.query(f"SELECT i.id, i.path, i.root, i.name, i.origin, i.size, i.format, i.problems, i.note, "
                             f"(SELECT count(*) FROM traces t WHERE t.input_id = i.id) FROM inputs i "
                             f"WHERE {where_scope}{only} ORDER BY i.path", scope_params)
        return [{"id": r[0], "path": r[1], "root": r[2], "name": r[3], "origin": r[4], "size": r[5], "format": r[6],
                 "problems": orjson.loads(r[7]), "note": r[8], "runs": r[9]} for r in rows]

    def input_counts(self, scope: Scope) -> tuple[int, int]:
        """How many inputs are in scope, and how many of them have problems."""
        where_scope, scope_params = scope.sql()
        total, bad = self.db.one(f"SELECT count(*), sum(CASE WHEN i.problems <> '{NO_PROBLEMS}' THEN 1 ELSE 0 END) "
                                 f"FROM inputs i WHERE {where_scope}", scope_params)
        return total, bad or 0

    def stubs(self, scope: Scope, ids=None, limit: int | None = None) -> list[dict]:
        """Runs as pages over many runs read them (`ingest.stub`: the trace without what it
        points to, with `by_model`), in file order; only `ids` when given."""
        where_scope, scope_params = scope.sql()
        out = []
        for chunk in (chunks(list(ids), 500) if ids is not None else [None]):
            cond = f" AND t.id IN ({', '.join('?' * len(chunk))})" if chunk else ""
            rows = self.db.query(f"SELECT t.stub FROM traces t JOIN inputs i ON i.id = t.input_id WHERE {where_scope}"
                                 f"{cond} ORDER BY i.path, t.pos" + (f" LIMIT {int(limit)}" if limit else ""),
                                 (*scope_params, *(chunk or ())))
            out.extend(orjson.loads(r[0]) for r in rows)
        return out

    def runs_in(self, scope: Scope) -> list[str]:
        """The ids of every run in scope, in file order."""
        where_scope, scope_params = scope.sql()
        return [r[0] for r in self.db.query(f"SELECT t.id FROM traces t JOIN inputs i ON i.id = t.input_id "
                                            f"WHERE {where_scope} ORDER BY i.path, t.pos", scope_params)]

    def input_stat(self, input_id: int) -> tuple[int, int, list]:
        """(size, mtime_ns, the files its reader opened beside it as [path, size, mtime_ns]) of an
        input as the library read it."""
        row = self.db.one("SELECT size, mtime_ns, reads FROM inputs WHERE id = ?", (input_id,))
        if row is None:
            return -1, -1, []
        return row[0], row[1], orjson.loads(row[2]) if row[2] else []

    def paths_of(self, trace_id: str) -> list[str]:
        """Every file a run was read from (identical copies in several places share runs)."""
        rows = self.db.query("SELECT i.path FROM traces t JOIN inputs i ON i.id = t.input_id "
                             "WHERE t.id = ? AND i.gone = 0 ORDER BY i.path", (trace_id,))
        return [r[0] for r in rows]

    def stats(self) -> dict:
        one = self.db.one
        return {"inputs": one("SELECT count(*) FROM inputs WHERE gone = 0")[0],
                "gone": one("SELECT count(*) FROM inputs WHERE gone = 1")[0],
                "runs": one("SELECT count(DISTINCT id) FROM traces")[0],
                "texts": one("SELECT count(*) FROM texts")[0]}


def _run(r) -> dict:
    d = dict(zip(RUN_FIELDS, r))
    d["scores"] = orjson.loads(d["scores"]) if d["scores"] else {}
    return d


def _neg_time(iso) -> str:
    """Newer first among equal ranks: an ISO time's characters inverted for an ascending sort."""
    return "".join(chr(0x10FFFF - ord(c)) for c in iso) if iso else "\U0010ffff"
