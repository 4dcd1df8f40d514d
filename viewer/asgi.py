"""The server `traceview serve` runs: the app (viewer/main.py) as an `st.App` whose start-up
pays the first page's one-time costs and reads the files it was given.

Without it the first visitor waits for the app's modules to import and for the cook; with
it, the server answers once the imports are done (a fraction of a second), and the files
are read in the background right away, so a browser opened a moment later finds them ready
(a page opened during the reading waits for it; nothing is read twice).

Every page's HTML also carries a small script that keeps one theme for the whole app (see
`THEME_SCRIPT`), and the runs table's page one that fetches the grid's code early (see
`EARLY_WIDGETS`).
"""
from __future__ import annotations

import functools
import json
import re
import sys
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st
from starlette.responses import HTMLResponse
from starlette.routing import Route
from streamlit import file_util
from streamlit.runtime.pages_manager import PagesManager

from viewer.pages import nav

ENTRY = Path(__file__).with_name("main.py")

# Streamlit keeps the theme a reader chooses (System, Light or Dark) in the browser's local
# storage under a key named after the page's path ("stActiveTheme-/timeline-v2"), so every page
# would remember its own and a link or a reload on another page would bring the old one back.
# Run before Streamlit's own scripts, this makes every such key read and write one shared entry.
THEME_KEY = "traceview-theme"
THEME_SCRIPT = """<script>(function () {
  var shared = "%s", perPage = /^stActiveTheme-.*-v[0-9]+$/;
  var proto = Storage.prototype, getItem = proto.getItem, setItem = proto.setItem;
  proto.getItem = function (key) {
    var chosen = perPage.test(key) ? getItem.call(this, shared) : null;
    return chosen !== null ? chosen : getItem.call(this, key);
  };
  proto.setItem = function (key, value) {
    if (perPage.test(key)) setItem.call(this, shared, value);
    return setItem.call(this, key, value);
  };
})();</script>""" % THEME_KEY


def _warm_up() -> None:
    """The one-time costs of a process's first page."""
    # Imported now rather than on the first visit.
    import numpy  # noqa: F401  (the page icon goes through Streamlit's image code: numpy, PIL)
    import PIL.Image

    PIL.Image.preinit()  # its image format plugins, which it imports when it first opens one
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
        state.start_indexing()
    except Exception as e:  # the first page tries again and shows what went wrong
        print(f"traceview: indexing the files at start failed: {e}", file=sys.stderr)


# Streamlit fetches a widget's code when the first such widget arrives. The runs table's grid
# is the largest (about 1.3 MB of JavaScript) and arrives last, so its code is fetched and
# compiled while the page waits for the server's first answer instead (after the page's
# own code, which it would otherwise compete with).
EARLY_WIDGETS = ("DataFrame",)
_STATIC_IMPORT = re.compile(r'(?:from|import)\s*"\./([^"/]+\.js)"')


def widget_code(js: Path, widgets) -> list[str]:
    """The files of `widgets`' code under `js` (Streamlit's static/js) with everything they
    import statically."""
    todo = [p.name for w in widgets for p in js.glob(f"{w}.*.js")]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen and (js / name).is_file():
            seen.add(name)
            todo += _STATIC_IMPORT.findall((js / name).read_text(encoding="utf-8", errors="replace"))
    return sorted(seen)


def early_script(index: str, files: list[str], styles: list[str]) -> str:
    links = [["modulepreload", f"./static/js/{n}"] for n in files if f"/{n}" not in index]
    links += [["stylesheet", f"./static/css/{n}"] for n in styles]
    return """<script>addEventListener("load", function () {
  %s.forEach(function (each) {
    var link = document.createElement("link");
    link.rel = each[0]; link.crossOrigin = ""; link.href = each[1];
    document.head.appendChild(link);
  });
});</script>""" % json.dumps(links)


@functools.cache
def page_html(runs_table: bool = False) -> str:
    """Streamlit's page (index.html) with `THEME_SCRIPT` in its head, and for the page that
    opens on the runs table the early fetch of the grid's code."""
    static = Path(file_util.get_static_dir())
    index = (static / "index.html").read_text(encoding="utf-8")
    head = THEME_SCRIPT + "\n"
    if runs_table:
        js, css = static / "static" / "js", static / "static" / "css"
        head += early_script(index, widget_code(js, EARLY_WIDGETS),
                             [p.name for w in EARLY_WIDGETS for p in sorted(css.glob(f"{w}.*.css"))]) + "\n"
    return index.replace("</head>", head + "</head>", 1)


async def _page(request):
    # Like Streamlit's own answer for a page: never cached, so a new version is picked up.
    return HTMLResponse(page_html(request.url.path in RUNS_TABLE_PATHS), headers={"Cache-Control": "no-cache"})


# The app's pages (the default one is served at the root too); any other path is Streamlit's.
PAGE_ROUTES = [Route(path, _page, methods=["GET", "HEAD"])
               for path in ["/", *(f"/{spec.url_path}" for spec in nav.PAGES)]]
RUNS_TABLE_PATHS = {"/", *(f"/{spec.url_path}" for spec in nav.PAGES if spec.default)}


@asynccontextmanager
async def _lifespan(app):
    _warm_up()  # before the server listens
    threading.Thread(target=_read_given_files, name="traceview-read", daemon=True).start()
    yield


# Streamlit takes a `pages/` folder beside the entry script for its old file-per-page
# navigation; ours (viewer/pages/) is a package of page functions routed by st.navigation
# in main.py, so that convention is turned off before any session starts.
PagesManager.uses_pages_directory = False
app = st.App(ENTRY, lifespan=_lifespan, routes=PAGE_ROUTES)
