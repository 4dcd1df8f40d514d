"""Following served paths: a change under them wakes the index (told by the file system, else
found by polling), at most once per interval; reads and hidden files wake nothing."""
from __future__ import annotations

import contextlib
import threading
import time

from viewer.library.follow import Follower


class Runs:
    """An index that records when it ran and says it changed the library."""

    def __init__(self):
        self.times: list[float] = []
        self.ran = threading.Event()

    def __call__(self):
        self.times.append(time.monotonic())
        self.ran.set()
        return True


@contextlib.contextmanager
def following(paths, **kw):
    """(a follower of `paths` whose index is a `Runs`, that index), stopped after."""
    runs = Runs()
    f = Follower(paths, runs, lambda changed: changed, **kw)
    time.sleep(0.3)  # the observer is started
    try:
        yield f, runs
    finally:
        f.stop()


def a_log(folder):
    log = folder / "run.jsonl"
    log.write_text("{}\n")
    return log


def test_a_file_that_grows_wakes_the_index_and_the_version_counts_it(tmp_path):
    log = a_log(tmp_path)
    with following([tmp_path], interval=0.2) as (f, runs):
        assert f.watching and not runs.times
        with log.open("a") as out:
            out.write("{}\n")
        assert runs.ran.wait(3)
        deadline = time.monotonic() + 3
        while f.version < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert f.version >= 1


def test_a_file_given_alone_is_watched_through_its_folder(tmp_path):
    log = a_log(tmp_path)
    with following([log], interval=0.2) as (_, runs):
        log.write_text("{}\n{}\n")  # rewritten
        assert runs.ran.wait(3)


def test_rewrites_many_times_a_second_are_read_once_per_interval(tmp_path):
    doc = tmp_path / "session.json"
    doc.write_text("{}")
    with following([tmp_path], interval=1.0) as (_, runs):
        start = time.monotonic()
        while time.monotonic() - start < 2.5:
            doc.write_text('{"n": %d}' % time.monotonic_ns())
            time.sleep(0.02)
        time.sleep(1.2)
        gaps = [b - a for a, b in zip(runs.times, runs.times[1:])]
        assert 2 <= len(runs.times) <= 5, runs.times
        assert all(g >= 0.95 for g in gaps), gaps


def test_reads_and_hidden_files_wake_nothing(tmp_path):
    log = a_log(tmp_path)
    with following([tmp_path], interval=0.1, ignore=lambda p: p.endswith(".sqlite")) as (_, runs):
        log.read_text()
        (tmp_path / ".swap").write_text("x")
        (tmp_path / "library.sqlite").write_text("x")
        assert not runs.ran.wait(1.0)


def test_without_the_file_system_the_paths_are_polled(tmp_path):
    with following([tmp_path], watch=False, poll=0.2, interval=0.1) as (f, runs):
        assert not f.watching
        time.sleep(1.0)
        assert len(runs.times) >= 3


def test_a_watched_folder_is_scanned_all_the_same_now_and_then(tmp_path):
    """A network file system takes the watch and never reports another machine's writes."""
    with following([tmp_path], rescan=0.3, interval=0.1) as (f, runs):
        assert f.watching
        time.sleep(1.2)
        assert len(runs.times) >= 2


def test_an_index_that_takes_long_leaves_as_long_idle(tmp_path):
    """A large file written without pause is indexed again only after as long again as its
    last index took (the server stays at most half busy)."""
    slow = Runs()

    def index():
        time.sleep(0.4)
        return slow()

    f = Follower([tmp_path], index, lambda changed: changed, interval=0.05, poll=0.01, watch=False)
    try:
        time.sleep(2.5)
    finally:
        f.stop()
    gaps = [b - a for a, b in zip(slow.times, slow.times[1:])]
    assert gaps and all(g >= 0.75 for g in gaps), gaps  # 0.4 s running, then as long idle
