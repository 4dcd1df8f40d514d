"""viewer.asgi: the server `traceview serve` runs reads its files before any browser comes."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from parsers import pipeline
from streamlit.web.server.app_discovery import discover_asgi_app

from viewer import asgi, serve

from viewer.pages import state

SAMPLE = next(p for p in sorted((state.sample_dirs()[0]).iterdir()) if p.is_file())


def test_serve_runs_the_server_module_and_streamlit_finds_its_app():
    assert serve.ENTRY == asgi.Path(asgi.__file__).resolve()
    found = discover_asgi_app(serve.ENTRY)
    assert found.is_asgi_app and found.import_string.endswith(":app")
    assert asgi.app.script_path == asgi.ENTRY and asgi.ENTRY.name == "main.py"


def test_paths_reach_the_app_whichever_entry_streamlit_ran(monkeypatch):
    for entry in (asgi.__file__, str(asgi.ENTRY)):
        assert state.paths_from([entry, str(SAMPLE)], str(asgi.ENTRY)) == [str(SAMPLE.resolve())]
    # Another copy of the package (the installed one, run from a checkout, whose `viewer` the
    # app imports from the working folder) is ours too: its paths are not lost to the samples.
    installed = "/venv/lib/python3.11/site-packages/viewer/asgi.py"
    assert state.paths_from([installed, str(SAMPLE)], str(asgi.ENTRY)) == [str(SAMPLE.resolve())]
    monkeypatch.delenv("TRACEVIEW_PATHS", raising=False)
    assert state.paths_from(["/elsewhere/other.py", str(SAMPLE)], str(asgi.ENTRY)) == []
    assert state.paths_from(["/elsewhere/asgi.py", str(SAMPLE)], str(asgi.ENTRY)) == []


def test_warm_up_builds_the_stylesheet():
    from viewer.render import html as render

    render.page_css.cache_clear()
    asgi._warm_up()
    assert render.page_css.cache_info().currsize == 1


def test_warm_up_loads_the_image_plugins_the_page_icon_needs():
    # The first page's icon goes through PIL, which imports its format plugins when it first
    # opens an image (a fifth of a second): the warm-up does it instead. In a process of its
    # own, where nothing has opened an image yet.
    code = ("import sys; from viewer import asgi; before = 'PIL.PngImagePlugin' in sys.modules; "
            "asgi._warm_up(); print(before, 'PIL.PngImagePlugin' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(asgi.__file__).parents[1]).stdout.split()
    assert out == ["False", "True"]


def test_start_up_indexes_the_given_paths(monkeypatch):
    monkeypatch.setattr(sys, "argv", [asgi.__file__, str(SAMPLE)])
    monkeypatch.setattr(state, "START_PATHS", [])
    doc, _ = pipeline.cook_paths([SAMPLE])
    tid = doc["traces"][0]["id"]
    state.indexing.clear()
    asgi._read_given_files()
    job = state.start_indexing()
    assert job.paths == (str(SAMPLE.resolve()),) and job.wait(60) and not job.error
    assert state.library().run(tid) is not None


def test_every_page_is_served_with_the_script_that_keeps_one_theme():
    from starlette.applications import Starlette
    from starlette.testclient import TestClient

    from viewer.pages import nav

    client = TestClient(Starlette(routes=asgi.PAGE_ROUTES))
    for path in ["/", *(f"/{spec.url_path}" for spec in nav.PAGES)]:
        r = client.get(path)
        assert r.status_code == 200 and r.headers["cache-control"] == "no-cache"
        body = r.text
        # Streamlit's page, with our script in its head before Streamlit's own scripts run.
        assert body.count(asgi.THEME_SCRIPT) == 1
        assert body.index(asgi.THEME_SCRIPT) < body.index("</head>")
        assert '<script type="module"' in body and '<div id="root">' in body
        assert f'"{asgi.THEME_KEY}"' in asgi.THEME_SCRIPT
    assert client.get("/static/js/nothing.js").status_code == 404  # everything else is Streamlit's


def test_the_runs_table_page_fetches_the_grid_code_early_and_only_files_that_exist():
    from starlette.applications import Starlette
    from starlette.testclient import TestClient
    from streamlit import file_util

    client = TestClient(Starlette(routes=asgi.PAGE_ROUTES))
    for path in ("/", "/open"):
        body = client.get(path).text
        hrefs = re.findall(r'\["(?:modulepreload|stylesheet)", "\./static/([^"]+)"\]', body)
        assert any(re.fullmatch(r"js/DataFrame\.[^/]+\.js", h) for h in hrefs), hrefs
        assert any(re.fullmatch(r"css/DataFrame\.[^/]+\.css", h) for h in hrefs), hrefs
        static = Path(file_util.get_static_dir()) / "static"
        assert all((static / h).is_file() for h in hrefs)
        # Nothing the page already loads is named twice.
        assert not any(f'href="./static/{h}"' in body for h in hrefs)
    for path in ("/timeline", "/compare"):
        assert "modulepreload\", " not in client.get(path).text


def test_widget_code_follows_static_imports_only(tmp_path):
    js = tmp_path / "js"
    js.mkdir()
    (js / "Grid.AB12.js").write_text('import{a as b}from"./dep.X1.js";import"./side.Y2.js";'
                                     'const l=()=>import(`./Lazy.Z3.js`);')
    (js / "dep.X1.js").write_text('import{c}from"./deeper.W4.js";export const a=1;')
    (js / "deeper.W4.js").write_text("export const c=1;")
    (js / "side.Y2.js").write_text('import"./dep.X1.js";')  # a cycle back is fine
    (js / "Lazy.Z3.js").write_text("export default 1;")
    (js / "Other.Q5.js").write_text("export default 1;")
    assert asgi.widget_code(js, ["Grid"]) == ["Grid.AB12.js", "deeper.W4.js", "dep.X1.js", "side.Y2.js"]
    assert asgi.widget_code(js, ["Missing"]) == []
