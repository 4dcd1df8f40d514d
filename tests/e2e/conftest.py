"""Browser tests: `traceview serve` in a subprocess, driven by Playwright in Debian's Chromium.

Starting and stopping the server goes through viewer.serve's helpers (the benchmark uses them
too). Every test here is marked `browser`; without Chromium at /usr/bin/chromium they skip
with that reason.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from viewer import serve

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.browser)
            if not Path(CHROMIUM).exists():
                item.add_marker(pytest.mark.skip(reason=f"Chromium not found at {CHROMIUM}"))


def start_server(paths, log_dir: Path) -> serve.Running:
    """`traceview serve PATH...` on a free port (`.url`, `.stop()`)."""
    return serve.Running(paths, log_dir)


def launch_browser(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = launch_browser(p)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh browser context and page (1400 x 1000), 30 s timeouts."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    p = ctx.new_page()
    p.set_default_timeout(30_000)
    yield p
    ctx.close()


@pytest.fixture(scope="module")
def shots_dir(tmp_path_factory) -> Path:
    """Where screenshots go: TRACEVIEW_SHOTS when set (to look at them), else a tmp folder."""
    d = os.environ.get("TRACEVIEW_SHOTS")
    if d:
        Path(d).mkdir(parents=True, exist_ok=True)
        return Path(d)
    return tmp_path_factory.mktemp("shots")


def copy_into(folder: Path, *files: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for f in files:
        shutil.copy(f, folder / f.name)
