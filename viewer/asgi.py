"""The server `traceview serve` runs: the app (viewer/main.py) as an `st.App` whose start-up
pays the first page's one-time costs and reads the files it was given.

Without it the first visitor waits for the app's modules to import and for the cook; with
it, the server answers once the imports are done (a fraction of a second), and the files
are read in the background right away, so a browser opened a moment later finds them ready
(a page opened during the reading waits for it; nothing is read twice).
"""
from __future__ import annotations

import sys
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

ENTRY = Path(__file__).with_name("main.py")


def _warm_up() -> None:
    """The one-time costs of a process's first page."""
    # Imported now rather than on the first visit.
    import numpy  # noqa: F401  (the page icon goes through Streamlit's image code: numpy, PIL)
    import PIL.Image  # noqa: F401
    from streamlit import env_util

    from viewer.pages import open as open_page, state, timeline  # noqa: F401
    from viewer.render import html as render

    # The first element sent makes Streamlit inspect the call stack, which maps every
    # loaded module to its file once; the stylesheet is built once.
    env_util.is_repl()
    render.page_css()


def _read_given_files() -> None:
    from viewer.pages import state

    state.START_PATHS = state.paths_from(sys.argv, str(ENTRY))
    try:
        state.start_collections()
    except Exception as e:  # the first page reads them again and shows what went wrong
        print(f"traceview: reading the files at start failed: {e}", file=sys.stderr)


@asynccontextmanager
async def _lifespan(app):
    _warm_up()  # before the server listens
    threading.Thread(target=_read_given_files, name="traceview-read", daemon=True).start()
    yield


# Streamlit takes a `pages/` folder beside the entry script for its old file-per-page
# navigation; ours (viewer/pages/) is a package of page functions routed by st.navigation
# in main.py, so that convention is turned off before any session starts.
PagesManager.uses_pages_directory = False
app = st.App(ENTRY, lifespan=_lifespan)
