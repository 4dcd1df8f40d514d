"""The app's entry script: `traceview serve` runs it with `streamlit run`.

Only a router: page setup, the stylesheet, navigation over `viewer.pages.nav.PAGES`.
Arguments after the script name are the files and folders to open.
"""
from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

from viewer.pages import nav

from viewer.render import html as render

from viewer.pages import state

ICON = Path(__file__).with_name("icon.png")


def main(script: str = __file__) -> None:
    # A local icon file: a Material or emoji icon would make the browser fetch it remotely.
    st.set_page_config(page_title="traceview", page_icon=str(ICON), layout="wide")
    state.START_PATHS = state.paths_from(sys.argv, script)
    # Our stylesheet only (no trace text): style-only HTML goes to Streamlit's event container.
    st.html(f"<style>{render.page_css()}</style>")
    current = st.navigation(nav.build(), position="hidden")
    nav.sidebar(state.current_trace_id())
    current.run()


if __name__ == "__main__":
    main()
