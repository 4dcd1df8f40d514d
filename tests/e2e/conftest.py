"""Browser tests: `traceview serve` in a subprocess, driven by Playwright in Debian's Chromium.

Starting and stopping the server goes through viewer.serve's helpers (the benchmark uses them
too). Every test here is marked `browser`; without Chromium at /usr/bin/chromium or without
Playwright they skip with that reason, and fail in CI (`CI=true`).
"""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import unavailable
from viewer import serve

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test reports what its page showed: the address and the page's text
    (a timeout alone does not say whether the page was still loading, showed an error, or
    showed something else)."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed:
        return
    for name, value in getattr(item, "funcargs", {}).items():
        if type(value).__name__ != "Page":
            continue
        try:
            text = value.evaluate("() => document.body ? document.body.innerText : ''")
            report.sections.append((f"page `{name}` at the failure: {value.url}", text[-6000:]))
        except Exception as e:  # noqa: BLE001 - the page may be gone; the failure stands as it is
            report.sections.append((f"page `{name}` at the failure", f"not readable: {e}"))


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not Path(CHROMIUM).exists():
        return f"Chromium not found at {CHROMIUM}; install Debian's chromium package"
    if importlib.util.find_spec("playwright") is None:
        return "Playwright is not installed; install the test extras (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="session", autouse=True)
def browser_present():
    """Set up before any app or browser of these tests: skip them, or fail them in CI, when
    the browser cannot run."""
    reason = browser_missing()
    if reason:
        unavailable(reason)


def start_server(paths, log_dir: Path) -> serve.Running:
    """`traceview serve PATH...` on a free port (`.url`, `.stop()`)."""
    return serve.Running(paths, log_dir)


def launch_browser(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@pytest.fixture(scope="module")
def browser():
    from playwright import sync_api

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
