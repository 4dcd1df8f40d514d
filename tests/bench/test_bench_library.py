"""The library benchmark on a tiny generated corpus: it runs to the end and prints its table, leaves
the corpus it was given alone, its check of the planted search markers catches a library that
finds the wrong runs, and its server memory counts the server's whole process tree."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bench.conftest import BENCH
from tests.conftest import shared_path

RUNS = 30


@pytest.fixture(scope="module")
def bench_library(bench_module):
    return bench_module("bench_library")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """RUNS small runs from the shared corpus generator."""
    gen = shared_path("bench", "gen_corpus.py")
    out = tmp_path_factory.mktemp("corpus")
    subprocess.run([sys.executable, str(gen), "small", str(out), str(RUNS)], check=True)
    return out


def digests(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def test_quick_run_prints_its_table_and_exits_0(corpus, tmp_path):
    before = digests(corpus)
    r = subprocess.run([sys.executable, str(BENCH / "bench_library.py"), "--runs", str(RUNS), "--quick",
                        "--corpus", str(corpus), "--workdir", str(tmp_path / "work")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    table = lines[lines.index(next(ln for ln in lines if ln.startswith("measurement"))):]
    for label in ("1 index", "1 index, minutes per GB", "2 re-scan of the unchanged corpus",
                  f"2 re-index after {RUNS} runs changed", "3 library on disk", "4 peak RSS",
                  "5 SQLite p95: runs page", "5 SQLite p95: 50-run search", "5 SQLite p95: open a run",
                  "6 PostgreSQL", "7 Chromium"):
        assert any(ln.startswith(label) for ln in table), label
    figures = json.loads(lines[-1])
    assert figures["bench"] == "library" and figures["files"] == RUNS
    assert figures["markers_checked"] and figures["failures"] == []
    assert figures["changed"]["files"] == RUNS
    assert digests(corpus) == before  # the benchmark rewrote its own copy


def test_marker_check_reports_runs_missing_and_runs_not_planted(bench_library, corpus, tmp_path):
    from viewer.library.library import Library, Scope

    folder = tmp_path / "corpus"
    shutil.copytree(corpus, folder)
    # The library misses run 11's only marker (i % 10 == 1: indexed without it, the file then
    # given it back); run 12 gains the one planted in run 7 alone.
    r11, r12 = folder / "r00011.trials.json", folder / "r00012.trials.json"
    original = r11.read_bytes()
    assert original.count(b"zqneedlethousand") == 1
    r11.write_bytes(original.replace(b"zqneedlethousand", b"zqsomethingelse"))
    r12.write_bytes(r12.read_bytes().replace(b"<issue>", b"<issue>zqneedleone ", 1))
    lib = Library(str(tmp_path / "lib.sqlite"))
    lib.index([folder])
    r11.write_bytes(original)
    problems, found = bench_library.check_markers(lib, Scope(paths=(os.path.realpath(folder),)))
    assert sorted(problems) == [
        "search 'zqneedleone': expected 1 runs, found 2 (missing none; not planted r00012.trials.json)",
        "search 'zqneedlethousand': expected 3 runs, found 2 (missing r00011.trials.json; not planted none)",
    ]
    assert len(found["zq_snake_marker"]) == 1  # run 7


def test_tree_rss_counts_the_grandchildren(bench_library):
    """A server's memory is its whole process tree (`traceview serve` starts the app as a child)."""
    megabytes = 60
    hold = f"import time; x = b'x' * {megabytes * 1024 * 1024}; print(flush=True); time.sleep(60)"
    parent = subprocess.Popen(["sh", "-c", f'{sys.executable} -c "{hold}"; true'], stdout=subprocess.PIPE,
                              start_new_session=True)
    try:
        parent.stdout.readline()  # the grandchild holds its bytes
        assert bench_library.tree_rss_mb(parent.pid) >= megabytes
    finally:
        os.killpg(parent.pid, signal.SIGKILL)  # the shell and the grandchild it started
        parent.wait()
