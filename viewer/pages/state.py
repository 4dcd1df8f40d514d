"""Session and URL state shared by the pages.

The server holds one `Store` (cooked collections, found by trace id). Each browser session
has its own list of what it opened (`tv_loaded`: collection keys) and the trace it reads.
The URL carries `trace` (and `msg` on the timeline); nothing in it is ever a file path.
"""
from __future__ import annotations

import importlib.resources
import os
from pathlib import Path

import streamlit as st

from viewer.pages import nav
from viewer.library.store import Collection, Store

# Files and folders given to `traceview serve` (set by the entry script on every run).
START_PATHS: list[str] = []
# Set to "1" by `traceview serve --private-uploads`: an upload opens only in its own session.
PRIVATE_ENV = "TRACEVIEW_PRIVATE_UPLOADS"


def private_uploads() -> bool:
    return os.environ.get(PRIVATE_ENV, "").strip() == "1"


@st.cache_resource(show_spinner=False)
def store() -> Store:
    return Store(private_uploads=private_uploads())


def _lookup_store() -> Store:
    """The store, its private-uploads switch read again from the environment."""
    s = store()
    s.private_uploads = private_uploads()
    return s


def session_id() -> str | None:
    """This browser session's id (Streamlit's own), which owns the uploads it made."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else None


def add_upload(files: list[tuple[str, bytes]]) -> Collection:
    """Cook an upload for this session and remember its label, so the page can say when the
    server has let it go."""
    col = store().add_uploads(files, owner=session_id())
    st.session_state.setdefault("tv_upload_labels", {})[col.key] = col.label
    add_loaded(col)
    return col


def let_go() -> dict[str, str]:
    """This session's uploads the server no longer holds (key -> label)."""
    labels = st.session_state.get("tv_upload_labels") or {}
    s = store()
    return {k: v for k, v in labels.items() if s.get(k) is None}


def forget_let_go(key: str) -> None:
    (st.session_state.get("tv_upload_labels") or {}).pop(key, None)


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


def sample_label(p: Path) -> str:
    return f"sample: {p.name}"


def load_sample(p: Path) -> Collection:
    return store().add_paths([p], origin="sample", label=sample_label(p))


def start_collections() -> list[Collection]:
    """What the server was started with, cooked once: the given paths, else every sample."""
    if START_PATHS:
        out = []
        for p in START_PATHS:
            out.append(store().add_paths([p], origin="path", label=str(p)))
        return out
    return [load_sample(p) for p in sample_dirs()]


def loaded() -> list[Collection]:
    """This session's collections, in the order they were opened."""
    keys = st.session_state.get("tv_loaded")
    if keys is None:
        with st.spinner("Reading the traces this server was started with…"):
            keys = [c.key for c in start_collections()]
        st.session_state["tv_loaded"] = keys
    s = _lookup_store()
    me = session_id()
    return [c for c in (s.get(k) for k in keys) if c is not None and s.visible(c, me)]


def add_loaded(col: Collection) -> None:
    keys = st.session_state.setdefault("tv_loaded", [])
    if col.key not in keys:
        keys.append(col.key)


def remove_loaded(key: str) -> None:
    keys = st.session_state.get("tv_loaded") or []
    if key in keys:
        keys.remove(key)


def find_trace(trace_id) -> tuple[Collection, dict] | None:
    """A loaded trace by id. The start inputs are cooked first, so a link opened in a new
    session (or after a restart) finds their traces."""
    s = _lookup_store()
    me = session_id()
    found = s.find_trace(trace_id, me)
    if found is None and trace_id:
        loaded()
        found = s.find_trace(trace_id, me)
        if found is None and START_PATHS:  # samples are always openable too
            for p in sample_dirs():
                load_sample(p)
            found = s.find_trace(trace_id, me)
    return found


def current_trace_id() -> str | None:
    """The trace named by the URL, else the one this session last read."""
    tid = st.query_params.get("trace")
    return tid or st.session_state.get("tv_trace")


def remember(trace_id: str, col: Collection) -> None:
    st.session_state["tv_trace"] = trace_id
    add_loaded(col)


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
        st.warning("This trace is no longer loaded on the server (it may have been an upload from an "
                   "earlier session, or the server restarted). Open it again to read it."
                   + (" Uploads on this server open only in the browser session that uploaded them."
                      if private_uploads() else ""),
                   icon=":material/link_off:")
    else:
        st.info("No trace chosen yet.", icon=":material/info:")
    nav.link("open", "Open traces", icon=":material/folder_open:")


ENTRY_SCRIPTS = ("main.py", "asgi.py")  # viewer/main.py, and viewer/asgi.py that serves it


def paths_from(argv: list[str], main_script: str) -> list[str]:
    """Paths after the script name when Streamlit runs our entry script (or the server
    module around it) with arguments; else TRACEVIEW_PATHS (os.pathsep-separated); else none."""
    here = Path(__file__).parents[1]  # viewer/
    ours = {os.path.realpath(main_script), *(os.path.realpath(here / n) for n in ENTRY_SCRIPTS)}
    if argv and os.path.realpath(argv[0]) in ours:
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
