"""What the server holds: the library it reads, and the runs opened from it.

Everything a server shows is in its library (`viewer.library.library`): the paths it was given
and its uploads are indexed there, and pages ask the library for runs tables, search hits and
groups. Opening a run reads its family's cooked document (the run with its parent and
sub-agent runs) from the library once, into a `Collection` kept while memory allows, so a page
re-run never decompresses it again. Trace ids are the cook's own, so a URL naming a trace finds
it here and nowhere else: nothing a URL says is ever read as a file path.

Uploads are written under the library's uploads folder (one folder per batch, named by the
digest of its files) and indexed from there, marked as uploads; they can be removed again.

Pure Python (no Streamlit): the app keeps one `Store` per server process.
"""
from __future__ import annotations

import hashlib
import dataclasses
import os
import re
import shutil
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from parsers import pipeline
from viewer.library import families
from viewer.library.library import Library, Scope

TRACE_ID_RE = re.compile(r"[0-9a-f]{16}\Z")

# Opened runs stay in memory until these bounds push the least recently read out: their
# count, and an estimate of the memory their documents and derived views hold
# (TRACEVIEW_MAX_OPEN_MEMORY, in bytes). The run just opened is always kept.
MAX_OPEN = 48


def _env_bytes(name: str, default: int) -> int:
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else default


MAX_OPEN_MEMORY = _env_bytes("TRACEVIEW_MAX_OPEN_MEMORY", 512 * 1024**2)


@dataclass
class Collection:
    """A cooked document held in memory: one family of runs opened from the library."""
    key: str
    label: str
    origin: str  # "path" | "sample" | "upload"
    doc: dict
    path: str | None = None  # the file it was read from
    size: int = 0
    mtime_ns: int = 0
    reads: list = field(default_factory=list)  # [path, size, mtime_ns] of each file read beside it
    messages: dict = field(default_factory=dict)
    requests: dict = field(default_factory=dict)
    traces: dict = field(default_factory=dict)
    views: dict = field(default_factory=dict)  # memo of derived views (timeline items...)
    memory: int = 0  # estimated bytes the cooked document holds in memory
    _counted: frozenset = field(default=frozenset(), init=False, repr=False)

    def __post_init__(self):
        self.messages = {m["id"]: m for m in self.doc["messages"]}
        self.requests = {r["id"]: r for r in self.doc["requests"]}
        self.traces = {t["id"]: t for t in self.doc["traces"]}
        if not self.memory:
            self.memory = memory_estimate(self.doc)
        # The document's own objects, counted in `memory` already: a view pointing at its
        # messages counts only what it adds (walking a large run's messages again for each
        # view took a quarter of a second on its first open).
        self._counted = frozenset(id(x) for part in (self.messages.values(), self.requests.values(),
                                                     self.traces.values(), self.doc.get("tools") or ())
                                  for x in part)

    @property
    def inputs(self) -> list[dict]:
        return self.doc["inputs"]

    def input_problems(self, entry: dict) -> list[dict]:
        """One input's problems with those found inside its traces (a schema-invalid step is
        a problem of the file it came from)."""
        return pipeline.input_problems(entry, [self.traces[t] for t in entry["traces"] if t in self.traces])

    def source_record(self, name: str, line: int, records_file: str | None = None):
        """Line `line` of input `name` as the file has it (`pipeline.SourceRecord`), or None
        when it is not there as it was cooked (gone, or changed since). With `records_file` (a
        trace's, see the cooked document), the line is one of the file of that name the input's
        reader opened beside it, found among the files the library recorded it read."""
        if self.path is None:
            return None
        path, size, mtime_ns = self.path, self.size, self.mtime_ns
        entry = self.inputs[0] if self.inputs else {}
        if records_file:
            # The input's name is its path under the folder it was found in; so is the file's.
            name_of_input = entry.get("name") or ""
            root = self.path[:-len(name_of_input)] if name_of_input and self.path.endswith(name_of_input) else None
            want = os.path.normpath(root + records_file) if root is not None else None
            beside = next((r for r in self.reads if isinstance(r, list) and len(r) == 3
                           and isinstance(r[0], str) and os.path.normpath(r[0]) == want), None)
            if beside is None:
                return None
            path, size, mtime_ns = beside
        try:
            st = os.stat(path)
        except OSError:
            return None
        if (st.st_size, st.st_mtime_ns) != (size, mtime_ns):
            return None
        # A file is read again by itself (named as its own file); a zip's members by their names.
        own = Path(path).name if records_file or name == entry.get("name") else name
        rec = pipeline.source_record([path], None, name=own, line=line)
        # named as the cook names it: the input's name, or the file beside it as the trace names it
        return dataclasses.replace(rec, name=records_file) if rec is not None and records_file else rec

    def memo(self, key, make):
        """A derived view computed once per collection (cooked documents never change)."""
        try:
            return self.views[key]
        except KeyError:
            value = self.views[key] = make()
            self.memory += memory_estimate(value, self._counted)  # what the views add counts towards the bound
            return value


@dataclass
class Upload:
    """A batch of uploaded files, written to `folder` and indexed from there."""
    key: str
    label: str
    folder: str
    traces: list[str]
    owners: set = field(default_factory=set)


# A cooked document in memory holds about this many bytes per byte of its JSON text (measured:
# 3.6 to 3.8); walking the objects to count them takes seconds on a large run.
DOC_MEMORY_PER_BYTE = 4


def stored_memory(raw: bytes, doc: dict) -> int:
    """About the bytes a family read from its stored text holds: its objects, and a reference
    (8 bytes) per message id of each request's history, which the stored text does not repeat
    (`families`)."""
    return DOC_MEMORY_PER_BYTE * len(raw) + 8 * sum(len(r.get("request_messages") or ()) for r in doc["requests"])


def memory_estimate(obj, counted=frozenset()) -> int:
    """Bytes a value holds in memory: every dict, list, object and scalar reached from it,
    shared objects once, as `sys.getsizeof` reports them (a DataFrame reports its own);
    objects whose `id` is in `counted` (and what only they reach) are not counted again."""
    seen: set[int] = set(counted)
    total = 0
    stack = [obj]
    while stack:
        o = stack.pop()
        if id(o) in seen:
            continue
        seen.add(id(o))
        total += sys.getsizeof(o)
        if isinstance(o, dict):
            stack.extend(o.keys())
            stack.extend(o.values())
        elif isinstance(o, (list, tuple, set, frozenset)):
            stack.extend(o)
        elif hasattr(o, "__dict__") and not isinstance(o, type):  # a derived view's objects
            stack.append(vars(o))
    return total


def upload_label(names: list[str]) -> str:
    """How an upload is named: its first file, and how many more it holds."""
    names = sorted(names)
    return names[0] + (f" and {len(names) - 1} more" if len(names) > 1 else "") if names else "upload"


def uploads_key(files: list[tuple[str, bytes]]) -> str:
    h = hashlib.sha256(b"uploads\n")
    for name, data in sorted(files, key=lambda f: f[0]):
        h.update(name.encode() + b"\0" + str(len(data)).encode() + b"\0")
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


def _safe_name(name: str) -> str | None:
    """An uploaded file's name as a relative path inside its folder (a name that would leave
    it keeps only its last part)."""
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    if ".." in parts:
        parts = parts[-1:] if parts[-1] != ".." else []
    return "/".join(parts) or None


class Store:
    def __init__(self, library: Library, *, private_uploads: bool = False):
        self.library = library
        # Private: an upload's traces are found only by the sessions that uploaded it.
        self.private_uploads = private_uploads
        self._lock = threading.RLock()
        self._opening: dict[str, threading.Lock] = {}
        self.open: OrderedDict[str, Collection] = OrderedDict()  # family id -> its runs
        self.uploads: dict[str, Upload] = self._uploads_held()

    def _uploads_held(self) -> dict[str, Upload]:
        """The uploads earlier servers wrote into this library, found again (no session owns
        them any more: with private uploads nobody opens them until uploaded again)."""
        out = {}
        folder = self.uploads_dir
        if not folder.is_dir():
            return out
        for d in sorted(folder.iterdir()):
            if not d.is_dir() or ".tmp" in d.name:
                continue
            traces = self.library.runs_in(Scope(paths=(str(d),)))
            names = [p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file()]
            out[d.name] = Upload(d.name, upload_label(names), str(d), traces)
        return out

    # -- uploads ---------------------------------------------------------------------------------
    @property
    def uploads_dir(self) -> Path:
        return uploads_dir(self.library)

    def add_uploads(self, files: list[tuple[str, bytes]], *, label: str | None = None,
                    owner: str | None = None) -> Upload:
        """Write a batch of uploaded files into the library's uploads folder and index them
        (once per content). `owner` is the browser session that uploaded it: with
        `private_uploads` only its owners find its runs."""
        key = uploads_key(files)[:32]
        if label is None:
            label = upload_label([n for n, _ in files])
        folder = self.uploads_dir / key
        with self._lock:
            up = self.uploads.get(key)
            if up is None:
                if not folder.is_dir():
                    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
                    shutil.rmtree(tmp, ignore_errors=True)
                    for name, data in files:
                        safe = _safe_name(name)
                        if safe is None:
                            continue
                        dest = tmp / safe
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        dest.write_bytes(data)
                    tmp.mkdir(parents=True, exist_ok=True)
                    os.replace(tmp, folder)
                self.library.index([folder], origin="upload")
                page = self.library.runs_in(Scope(paths=(str(folder),)))
                up = self.uploads[key] = Upload(key, label, str(folder), page)
            if owner is not None:
                up.owners.add(owner)
        return up

    def remove_upload(self, key: str) -> None:
        """Take an upload out of the library and off the disk."""
        with self._lock:
            up = self.uploads.pop(key, None)
        if up is None:
            return
        self.library.forget(up.folder)
        shutil.rmtree(up.folder, ignore_errors=True)
        with self._lock:
            for fam in [k for k, c in self.open.items() if c.path and c.path.startswith(up.folder + os.sep)]:
                del self.open[fam]

    def upload_scope(self, session: str | None) -> tuple[str, ...]:
        """The upload folders a session may read: its own, or every upload unless private."""
        with self._lock:
            return tuple(u.folder for u in self.uploads.values()
                         if not self.private_uploads or session in u.owners)

    # -- opening runs ----------------------------------------------------------------------------
    def find_trace(self, trace_id, scope: Scope) -> tuple[Collection, dict] | None:
        """The family and trace for an id within `scope`; None for anything not in the
        library (or not an id, or out of scope)."""
        if not isinstance(trace_id, str) or not TRACE_ID_RE.match(trace_id):
            return None
        run = self.library.run(trace_id, scope)
        if run is None:
            return None
        col = self._family(run)
        if col is None or trace_id not in col.traces:
            return None
        return col, col.traces[trace_id]

    def _family(self, run: dict) -> Collection | None:
        fam = run["family"]  # names the content: a file that changed holds another family
        with self._lock:
            col = self.open.get(fam)
            if col is not None:
                self.open.move_to_end(fam)
                return col
            gate = self._opening.setdefault(fam, threading.Lock())
        with gate:  # two sessions opening the same run read it once
            with self._lock:
                if fam in self.open:
                    return self.open[fam]
            raw = self.library.family_stored(run)
            if raw is None:
                return None
            doc = families.unpack(raw)
            _link_relatives(self.library, doc)
            held = self.library.input_stat(run["input_id"])
            col = Collection(fam, run["path"], run["origin"] or "path", doc, path=run["path"],
                             size=held[0], mtime_ns=held[1], reads=held[2], memory=stored_memory(raw, doc))
            with self._lock:
                self.open[fam] = col
                self._opening.pop(fam, None)
                self._evict(keep=fam)
            return col

    def _evict(self, keep: str) -> None:
        memory = sum(c.memory for c in self.open.values())
        while len(self.open) > 1 and (len(self.open) > MAX_OPEN or memory > MAX_OPEN_MEMORY):
            old = next(k for k in self.open if k != keep)
            memory -= self.open.pop(old).memory


def _link_relatives(library: Library, doc: dict) -> None:
    """Runs of other files a family links to (a sub-agent's parent, a child run), added to the
    document as the library lists them (without messages or requests), so links find them."""
    held = {t["id"] for t in doc["traces"]}
    linked = {link.get("trace") for t in doc["traces"]
              for link in [t.get("parent") or {}, *(t.get("children") or ())]} - held - {None}
    for stub in library.stubs(Scope(everything=True), ids=sorted(linked)):
        if stub["id"] not in held:
            held.add(stub["id"])
            doc["traces"].append({**stub, "timeline": [], "requests": [], "tools": [], "problems": []})


def uploads_dir(library: Library) -> Path:
    """Where uploads are written: beside a SQLite library, else in the user's data folder."""
    if library.dialect == "sqlite":
        loc = Path(library.location)
        return loc.with_name(loc.stem + "-uploads")
    import platformdirs

    return Path(platformdirs.user_data_dir("traceview", appauthor=False)) / "uploads"
