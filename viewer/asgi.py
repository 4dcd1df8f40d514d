"""The server `traceview serve` runs: the app (viewer/main.py) as an `st.App`, whose
start-up reads the files it was given before the first browser connects.

Without it the first visitor waits for the cook (and for the app's modules to import);
with it, by the time a browser opens the app, what `serve` was given is cooked.
"""
from __future__ import annotations

import threading
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st

ENTRY = Path(__file__).with_name("main.py")


def _prewarm() -> None:
    import sys

    from viewer import render, state
    from viewer.views import timeline  # noqa: F401  (imported now rather than on the first visit)

    render.page_css()
    state.START_PATHS = state.paths_from(sys.argv, str(ENTRY))
    try:
        state.start_collections()
    except Exception as e:  # the first page reads them again and shows what went wrong
        print(f"traceview: reading the files at start failed: {e}", file=sys.stderr)


@asynccontextmanager
async def _lifespan(app):
    threading.Thread(target=_prewarm, name="traceview-prewarm", daemon=True).start()
    yield


app = st.App(ENTRY, lifespan=_lifespan)
