"""The app's entry script: `traceview serve` runs it with `streamlit run`.

Only a router: page setup, the stylesheet, the sign-in a served app may require
(viewer/pages/auth.py), navigation over `viewer.pages.nav.PAGES`.
Arguments after the script name are the files and folders to open.
"""
from __future__ import annotations

import sys
from pathlib import Path

import streamlit as st

from viewer.pages import nav

from viewer.render import html as render

from viewer.pages import auth, state

ICON = Path(__file__).with_name("icon.png")

# The app around the pages (Streamlit's own elements; the trace stylesheet is page_css()).
# Pages lead with their content: a slim header that keeps only the main menu's row, narrow
# page margins (the wide layout's default is 5rem a side and 6rem on top), a compact
# sidebar, smaller page titles and metric figures.
APP_CSS = """
.stApp [data-testid="stHeader"], .stApp [data-testid="stToolbar"] { height: 2.5rem; min-height: 2.5rem; }
.stApp [data-testid="stMainBlockContainer"] { padding: 2.75rem 2rem 4rem 2rem; }
.stApp [data-testid="stSidebarHeader"] { height: 2.5rem; margin-bottom: 0; }
.stApp [data-testid="stSidebarUserContent"] { padding-bottom: 2rem; }
.stApp [data-testid="stSidebarUserContent"] h3 { padding-top: 0; }
.stApp [data-testid="stMainBlockContainer"] h1 { font-size: 2.1rem; padding-top: 0.25rem; }
.stApp [data-testid="stMetricValue"] { font-size: 1.6rem; }
/* The timeline's find bar stays in view while reading: its wrapper sticks below the header
   (a sticky box cannot leave its parent), on the app's background, which also covers the
   strip above it; a jump to a message stops below it. */
div:has(> .st-key-tv_controls) {
  position: sticky; top: 2.5rem; z-index: 5;
  background: light-dark(#ffffff, #0d1117);
  box-shadow: 0 -1rem 0 0 light-dark(#ffffff, #0d1117);
}
.st-key-tv_controls { padding-bottom: 6px; }
.stMain:has(.st-key-tv_controls) .tv-root .tv-msg { scroll-margin-top: 10rem; }
"""


def main(script: str = __file__) -> None:
    # A local icon file: a Material or emoji icon would make the browser fetch it remotely.
    st.set_page_config(page_title="traceview", page_icon=str(ICON), layout="wide")
    state.START_PATHS = state.paths_from(sys.argv, script)
    # Our stylesheets only (no trace text): style-only HTML goes to Streamlit's event container.
    st.html(f"<style>{render.page_css()}{APP_CSS}</style>")
    current = st.navigation(nav.build(), position="hidden")  # also keeps the page asked for
    if not auth.gate():  # a server that requires a sign-in shows only its sign-in page
        return
    nav.sidebar(state.current_trace_id())
    auth.sidebar()
    current.run()


if __name__ == "__main__":
    main()
