"""Shared fixtures. Tests that need the shared real-data folder skip when it is absent; tests
that need a program the suite installs on purpose (PostgreSQL, Chromium) skip without it, except
in CI (`CI=true`), where they fail."""
from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import pytest

from tests import pgserver

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def shared_path(*parts: str) -> Path:
    """A path under the shared folder beside the repo, or a skip when it is not there."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} is not present (the shared real-data and benchmark folder sits beside "
                    "the repository only in the development checkout)")
    return p


@pytest.fixture
def shared():
    """shared(*parts) -> Path under the shared folder, skipping the test when it is absent."""
    return shared_path


@pytest.fixture
def realdata():
    return shared_path("realdata")


@pytest.fixture(scope="session")
def gen_traces():
    """Run the shared deterministic trace generator: gen_traces(kind, n, out, *opts)."""
    import subprocess
    import sys

    script = shared_path("bench", "gen_traces.py")

    def run(kind: str, n: int, out: Path, *opts: str) -> Path:
        subprocess.run([sys.executable, str(script), kind, str(n), str(out), *opts], check=True)
        return out

    return run


def unavailable(reason: str) -> None:
    """A program the test needs is missing: skip on a user's machine, fail in CI (`CI=true`),
    which installs everything and must not pass by skipping."""
    if os.environ.get("CI") == "true":
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_url():
    """One throwaway PostgreSQL server for the session on 127.0.0.1 (tests/pgserver.py); yields
    `postgresql://USER@127.0.0.1:PORT/traceview`."""
    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(pgserver.running())
        except pgserver.Unavailable as e:
            unavailable(str(e))
        yield url


@pytest.fixture
def postgres_db(postgres_url):
    """The URL of a fresh empty database of this test's own on the session's server, dropped after."""
    with pgserver.fresh_database(postgres_url) as url:
        yield url


def install_plugin(root: Path, module: str, source: str, entry_points: dict[str, str]) -> Path:
    """Write a tiny installed package under `root`: `module`.py and a dist-info naming its
    formats in the `traceview.formats` entry-point group, as pip would. Put `root` on
    sys.path (or PYTHONPATH for a subprocess) to install it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(source, encoding="utf-8")
    info = root / f"{module}-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n", encoding="utf-8")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points.items())
    (info / "entry_points.txt").write_text(f"[traceview.formats]\n{lines}", encoding="utf-8")
    return root


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """plugin(module, source, {name: "module:OBJ"}) installs a format package into this process
    for the test; the registry reads the entry points again before and after."""
    import sys

    from parsers import registry

    def install(module: str, source: str, entry_points: dict[str, str]) -> Path:
        root = install_plugin(tmp_path / "site", module, source, entry_points)
        monkeypatch.syspath_prepend(str(root))
        registry.refresh()
        return root

    yield install
    for name in [m for m in sys.modules if m.startswith("tv_test_")]:
        del sys.modules[name]
    registry.refresh()


# Property tests draw the same examples on every run (derived from each test's name), so a run
# of the suite is reproducible; widen a search locally with --hypothesis-seed or more examples.
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("traceview", derandomize=True, database=None, deadline=None)
_hypothesis_settings.load_profile("traceview")


@pytest.fixture(autouse=True)
def _followers():
    """The app's followers of served paths (a thread and a file-system watch each) stop with
    the test that started them. Streamlit's test runner also leaves its script (a temporary
    file it deletes) as the `__main__` module, which a process pool's workers would run
    again: the real one is put back."""
    main = sys.modules.get("__main__")
    yield
    state = sys.modules.get("viewer.pages.state")
    if state is not None:
        state.indexing.clear()
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture(scope="session", autouse=True)
def _library(tmp_path_factory):
    """Every app, server and command of the test session keeps its library in a folder of the
    session (never the user's own), unless the caller named one."""
    if os.environ.get("TRACEVIEW_LIBRARY"):
        yield os.environ["TRACEVIEW_LIBRARY"]
        return
    path = str(tmp_path_factory.mktemp("library") / "library.sqlite")
    os.environ["TRACEVIEW_LIBRARY"] = path
    try:
        yield path
    finally:
        os.environ.pop("TRACEVIEW_LIBRARY", None)


@pytest.fixture(scope="session", autouse=True)
def _cache(tmp_path_factory):
    """What the test session's cooks keep between processes (the package's prices) goes to a
    folder of the session, never the user's cache, unless the caller named one."""
    if os.environ.get("TRACEVIEW_CACHE"):
        yield os.environ["TRACEVIEW_CACHE"]
        return
    os.environ["TRACEVIEW_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    try:
        yield os.environ["TRACEVIEW_CACHE"]
    finally:
        os.environ.pop("TRACEVIEW_CACHE", None)


def another_run(data: bytes, n: int = 1) -> bytes:
    """JSON lines `data` as a run of their own: the same records, the first written with `n`
    more spaces (a run is named by its first record when its file names no session)."""
    assert data.startswith(b"{")
    return b"{" + b" " * n + data[1:]


@pytest.fixture
def open_panels():
    """Open every expander of a Streamlit test run that draws its content only when open
    (those with a key), and run the page again; returns the run."""
    def opened(at):
        for e in at.expander:
            if e.key:
                at.session_state[e.key] = True
        return at.run()
    return opened
