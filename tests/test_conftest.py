"""What the shared fixtures do when a program the suite needs is missing: skip on a user's
machine, fail in CI (`CI=true`)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.conftest import REPO, unavailable
from tests.e2e import conftest as e2e

NO_POSTGRESQL = """
from pathlib import Path
from tests import pgserver
pgserver.ROOT = Path({empty!r})
"""
NO_CHROMIUM = """
def pytest_plugin_registered(plugin, manager):
    if getattr(plugin, "__name__", "").endswith("e2e.conftest"):
        plugin.CHROMIUM = {empty!r}
"""


@pytest.mark.parametrize("ci, outcome", [(None, pytest.skip.Exception), ("false", pytest.skip.Exception),
                                         ("1", pytest.skip.Exception), ("true", pytest.fail.Exception)])
def test_a_missing_program_skips_except_in_ci(monkeypatch, ci, outcome):
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="^PostgreSQL not found here$"):
        unavailable("PostgreSQL not found here")


def test_the_browser_tests_name_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(e2e, "CHROMIUM", str(tmp_path / "chromium"))
    assert e2e.browser_missing() == (f"Chromium not found at {tmp_path / 'chromium'}; "
                                     "install Debian's chromium package")
    (tmp_path / "chromium").touch()
    monkeypatch.setitem(sys.modules, "playwright", None)  # as if it were not installed
    assert e2e.browser_missing().startswith("Playwright is not installed")
    monkeypatch.delitem(sys.modules, "playwright")
    assert e2e.browser_missing() is None


@pytest.mark.parametrize("ci, outcome", [("", "skipped"), ("true", "error")])
@pytest.mark.parametrize("plugin, tests, reason", [
    (NO_POSTGRESQL, "tests/test_pgserver.py",
     "PostgreSQL not found under {empty}; install Debian's postgresql package"),
    (NO_CHROMIUM, "tests/e2e", "Chromium not found at {empty}; install Debian's chromium package"),
], ids=["postgresql", "chromium"])
def test_a_whole_run_without_the_program(tmp_path, ci, outcome, plugin, tests, reason):
    """pytest in a process where the program is missing: the tests that need it are skipped, or
    errors in CI, each saying what to install."""
    empty = str(tmp_path / "empty")
    (tmp_path / "missing.py").write_text(plugin.format(empty=empty), encoding="utf-8")
    env = {**os.environ, "CI": ci, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "missing", "-p", "no:cacheprovider",
                           "-q", "-rsE", tests],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    summary = out.strip().splitlines()[-1]
    counts = dict((kind.rstrip("s"), int(n)) for n, kind in re.findall(r"(\d+) (\w+)", summary))
    assert outcome in counts and set(counts) <= {outcome, "passed"}, out
    named = [line for line in out.splitlines() if line.startswith(("SKIPPED", "ERROR"))]
    assert named and all(reason.format(empty=empty) in line for line in named), out
