"""Session and URL state shared by the pages, over the server's library.

The server holds one `Store` (its library, and the runs opened from it). What a browser
session sees is a `Scope` of the library: the paths the server was given (else the bundled
samples; everything with `serve --library L` and no path), the samples it opened, and its own
uploads. The given paths are indexed in the background when the server starts; pages wait a
moment for that, then show what is indexed so far with the progress. The URL carries `trace`
(and `msg` on the timeline); nothing in it is ever a file path.
"""
from __future__ import annotations

import importlib.resources
import os
import threading
import time
from pathlib import Path

import streamlit as st

from viewer.library import follow, ingest
from viewer.library.library import Library, Scope
from viewer.library.store import Collection, Store, Upload
from viewer.pages import nav
from viewer.serve import wait_for_head_start

# Files and folders given to `traceview serve` (set by the entry script on every run).
START_PATHS: list[str] = []
# Set to "1" by `traceview serve --private-uploads`: an upload opens only in its own session.
PRIVATE_ENV = "TRACEVIEW_PRIVATE_UPLOADS"
# Set to "1" by `traceview serve --library L` without paths: the server shows the whole library.
WHOLE_LIBRARY_ENV = "TRACEVIEW_WHOLE_LIBRARY"
# Set by `traceview serve --jobs N`.
JOBS_ENV = "TRACEVIEW_JOBS"
# How long a page waits for the start-up indexing before showing what is there so far.
INDEX_WAIT_S = 5.0
INDEX_STEP_S = 0.1  # how often it looks whether runs are listed


def private_uploads() -> bool:
    return os.environ.get(PRIVATE_ENV, "").strip() == "1"


def jobs() -> int | None:
    """Processes indexing the given paths (`serve --jobs N`; None: the library's default)."""
    value = os.environ.get(JOBS_ENV, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def whole_library() -> bool:
    return os.environ.get(WHOLE_LIBRARY_ENV, "").strip() == "1" and not START_PATHS


@st.cache_resource(show_spinner=False)
def library() -> Library:
    return Library()


@st.cache_resource(show_spinner=False)
def store() -> Store:
    return Store(library(), private_uploads=private_uploads())


def _lookup_store() -> Store:
    """The store, its private-uploads switch read again from the environment."""
    s = store()
    s.private_uploads = private_uploads()
    return s


class Indexing:
    """One indexing of some paths, in a thread: its progress, and its error if any."""

    def __init__(self, paths: tuple[str, ...], origin: str, first: bool = True):
        self.paths = paths
        self.first = first  # the server's start-up indexing (pages wait a moment for it)
        self.progress = ingest.Progress()
        self.error: str | None = None
        self.thread = threading.Thread(target=self._run, args=(origin,), name="traceview-index", daemon=True)
        self.thread.start()

    def _run(self, origin: str) -> None:
        try:
            if self.first:
                wait_for_head_start()  # `traceview serve` may be indexing these paths already
            library().index(list(self.paths), origin=origin, progress=self.progress, jobs=jobs())
        except Exception as e:  # noqa: BLE001 - shown on the Open page, never lost
            self.error = f"{type(e).__name__}: {e}"
            self.progress.finished = self.progress.finished or 0.0

    def wait(self, seconds: float) -> bool:
        self.thread.join(seconds)
        return not self.thread.is_alive()


class Following:
    """The paths a server was given, indexed at start, then followed: a file that grows,
    changes, appears or goes is indexed again at once (`follow.Follower`). The bundled samples
    are not followed."""

    def __init__(self, paths: tuple[str, ...], origin: str):
        self.paths, self.origin = paths, origin
        self._lock = threading.Lock()
        self.job = Indexing(paths, origin)
        self.follower = follow.Follower(paths, self._again, _changed_library, ignore=_library_file) \
            if origin == "path" else None

    def current(self) -> Indexing:
        with self._lock:
            return self.job

    def stop(self) -> None:
        if self.follower is not None:
            self.follower.stop()

    def _again(self) -> Indexing:
        """Index the paths again (after the one running, if any) and wait for it."""
        self.job.wait(None)
        with self._lock:
            job = self.job = Indexing(self.paths, self.origin, first=False)
        job.wait(None)
        return job


def _changed_library(job: Indexing) -> bool:
    p = job.progress
    return bool(p.cooked or p.gone or job.error)


def _library_file(path: str) -> bool:
    """The library's own files (a SQLite library kept in a served folder changes as it is written)."""
    loc = library().location
    return library().dialect == "sqlite" and path.startswith(str(loc))


def follow_version() -> int | None:
    """How many times following the server's paths changed the library (None: not following)."""
    if whole_library() or not START_PATHS:
        return None
    paths, origin = start_paths()
    f = indexing(paths, origin).follower
    return f.version if f is not None else None


FOLLOW_S = 0.5  # how often an open page asks whether what it shows changed


def follow_run(tid: str, col: Collection) -> None:
    """On a page showing one run of a followed file: rerun the page when the run changes."""
    if follow_version() is not None:
        _watch_run(tid, col)


def follow_library() -> None:
    """On a page over the runs (the runs table): rerun it when following changed the library."""
    if follow_version() is not None:
        _watch_library()


@st.fragment(run_every=FOLLOW_S)
def _watch_library() -> None:
    ss = st.session_state
    version = follow_version()
    seen, ss["tv_follow_seen_library"] = ss.get("tv_follow_seen_library"), version
    if seen is not None and seen != version:
        st.rerun()


@st.fragment(run_every=FOLLOW_S)
def _watch_run(tid: str, col: Collection) -> None:
    ss = st.session_state
    version = follow_version()
    if ss.get("tv_follow_seen") == version:
        return
    ss["tv_follow_seen"] = version
    found = find_trace(tid)
    if found is None or found[0] is not col:
        st.rerun()


@st.cache_resource(show_spinner=False, on_release=Following.stop)
def indexing(paths: tuple[str, ...], origin: str) -> Following:
    """The indexing of `paths` this server keeps up (one per set of paths)."""
    return Following(paths, origin)


def start_paths() -> tuple[tuple[str, ...], str]:
    """What the server was started with: its paths, else the bundled samples."""
    if START_PATHS:
        return tuple(os.path.realpath(p) for p in START_PATHS), "path"
    return tuple(str(p) for p in sample_dirs()), "sample"


def start_indexing() -> Indexing | None:
    """The latest indexing of what the server was started with (started in the background
    once, then again as followed files change). None when the server shows its whole library
    as it is."""
    if whole_library():
        return None
    paths, origin = start_paths()
    return indexing(paths, origin).current() if paths else None


def session_id() -> str | None:
    """This browser session's id (Streamlit's own), which owns the uploads it made."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def scope() -> Scope:
    """What this session's lists show: the server's paths (or samples, or the whole library),
    the samples it opened and its uploads."""
    if whole_library():
        return Scope(everything=True)
    paths, _ = start_paths()
    extra = tuple(st.session_state.get("tv_samples") or ()) + tuple(
        u.folder for u in my_uploads())
    return Scope(paths=tuple(dict.fromkeys(paths + extra)))


def reachable() -> Scope:
    """What a link may open: this session's scope, every sample, and every upload (only its
    own when uploads are private)."""
    if whole_library():
        return Scope(everything=True)
    s = _lookup_store()
    return Scope(paths=tuple(dict.fromkeys(scope().paths + tuple(str(p) for p in sample_dirs())
                                           + s.upload_scope(session_id()))))


def add_upload(files: list[tuple[str, bytes]]) -> Upload:
    """Index an upload for this session."""
    up = store().add_uploads(files, owner=session_id())
    keys = st.session_state.setdefault("tv_uploads", [])
    if up.key not in keys:
        keys.append(up.key)
    return up


def my_uploads() -> list[Upload]:
    """This session's uploads still in the library, oldest first."""
    s = store()
    return [s.uploads[k] for k in st.session_state.get("tv_uploads") or () if k in s.uploads]


def remove_upload(key: str) -> None:
    store().remove_upload(key)
    keys = st.session_state.get("tv_uploads") or []
    if key in keys:
        keys.remove(key)


def sample_dirs() -> list[Path]:
    """The bundled samples: one folder per format under the `sample_data` package."""
    try:
        root = Path(str(importlib.resources.files("sample_data")))
    except (ModuleNotFoundError, TypeError):
        return []
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir()
                  if p.is_dir() and not p.name.startswith((".", "_")))


def open_sample(p: Path) -> None:
    """Index a bundled sample and show it in this session's lists."""
    library().index([p], origin="sample")
    opened = st.session_state.setdefault("tv_samples", [])
    if str(p) not in opened:
        opened.append(str(p))


def find_trace(trace_id) -> tuple[Collection, dict] | None:
    """A run by id, opened from the library, as this session may see it."""
    if not trace_id:
        return None
    start_indexing_and_wait()
    return _lookup_store().find_trace(trace_id, reachable())


def start_indexing_and_wait(until_listed: bool = False) -> Indexing | None:
    """Start (once) the indexing of what the server was given, and wait a moment for the first
    one (a later scan is followed by the Open page's progress, never waited for). With
    `until_listed` (a page that follows the progress), only until a large evaluation log's
    runs are listed: they show while it is cooked."""
    job = start_indexing()
    if job is not None and job.first:
        deadline = time.monotonic() + INDEX_WAIT_S
        while not job.wait(INDEX_STEP_S) and time.monotonic() < deadline:
            if until_listed and library().listed_inputs(scope()):
                break
    return job


def current_trace_id() -> str | None:
    """The trace named by the URL, else the one this session last read."""
    tid = st.query_params.get("trace")
    return tid or st.session_state.get("tv_trace")


def remember(trace_id: str, col: Collection) -> None:
    st.session_state["tv_trace"] = trace_id


def open_trace(title: str) -> tuple[str, Collection, dict] | None:
    """For a page about one trace: the trace the URL (or this session) names, remembered and
    written into the URL. When it is not loaded, the page says so, links to Open and gets None."""
    tid = current_trace_id()
    found = find_trace(tid) if tid else None
    if found is None:
        _missing(title, tid)
        return None
    col, trace = found
    remember(tid, col)
    if st.query_params.get("trace") != tid:
        st.query_params["trace"] = tid
    return tid, col, trace


def _missing(title: str, tid) -> None:
    st.title(title)
    if tid:
        st.warning("This trace is not in what this server shows (it may have been an upload that was "
                   "removed, or a file that changed or is gone). Open it again to read it."
                   + (" Uploads on this server open only in the browser session that uploaded them."
                      if private_uploads() else ""),
                   icon=":material/link_off:")
    else:
        st.info("No trace chosen yet.", icon=":material/info:")
    nav.link("open", "Open traces", icon=":material/folder_open:")


ENTRY_SCRIPTS = ("main.py", "asgi.py")  # viewer/main.py, and viewer/asgi.py that serves it


def _is_entry(script: str, main_script: str) -> bool:
    """Whether Streamlit ran one of our entry scripts. Ours by name in a `viewer` package, not
    only this copy's: started in a checkout of traceview that is also installed, the app
    runs the installed `viewer/asgi.py` while `python -m streamlit` imports the checkout's
    `viewer` package from the working folder."""
    path = Path(os.path.realpath(script))
    return path == Path(os.path.realpath(main_script)) or (path.name in ENTRY_SCRIPTS and path.parent.name == "viewer")


def paths_from(argv: list[str], main_script: str) -> list[str]:
    """Paths after the script name when Streamlit runs our entry script (or the server
    module around it) with arguments; else TRACEVIEW_PATHS (os.pathsep-separated); else none."""
    if argv and _is_entry(argv[0], main_script):
        return [os.path.abspath(a) for a in argv[1:]]
    env = os.environ.get("TRACEVIEW_PATHS")
    if env:
        return [os.path.abspath(p) for p in env.split(os.pathsep) if p]
    return []


def themed(html: str) -> str:
    """Rendered trace HTML as the page shows it. Its stylesheet takes every colour from the
    colour scheme Streamlit sets for the theme the reader chose (CSS `light-dark()`), so a
    theme switch recolours it at once; the server, which hears of a switch only on the next
    rerun, never picks a theme for it."""
    return html
