"""Following the paths a server was given: a file that grows, is rewritten, appears or goes is
indexed again within about a second, and pages learn from `Follower.version` that the library
changed.

The file system says when something changed (watchdog's observer: inotify on Linux); where it
cannot (the package or the kernel's watches are missing), the paths are polled every POLL_S
seconds, and where it may stay silent (a network file system) they are scanned every RESCAN_S
seconds all the same. Either way a change only wakes the index of the paths, which skips
unchanged files by their size and time, so it costs a listing and the cook of what changed.
The index runs at most once per `interval`: a file rewritten many times a second is read once
a second.
"""
from __future__ import annotations

import logging
import os
import threading
import time
from typing import Callable

log = logging.getLogger(__name__)

INTERVAL_S = 1.0  # at most one index run a second
POLL_S = 2.0      # how often the paths are scanned when the file system cannot tell
# How often they are scanned all the same when it can: a network file system takes watches
# and never reports what other machines write.
RESCAN_S = 30.0
# What the file system reports that is a change (not a read: indexing opens the files too).
CHANGES = frozenset({"created", "modified", "moved", "deleted", "closed"})


class Follower:
    """Calls `index()` again whenever something under `paths` changes, in a thread of its own;
    `version` counts the runs whose result `changed(result)` says changed the library."""

    def __init__(self, paths, index: Callable[[], object], changed: Callable[[object], bool], *,
                 interval: float = INTERVAL_S, poll: float = POLL_S, rescan: float = RESCAN_S,
                 ignore: Callable[[str], bool] | None = None, watch: bool = True):
        self.paths = [os.path.realpath(p) for p in paths]
        self.index, self.changed = index, changed
        self.interval, self.poll, self.rescan = interval, poll, rescan
        self.ignore = ignore or (lambda path: False)
        self.version = 0
        self.watching = False  # the file system tells us (else we poll)
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._observer = self._watch() if watch else None
        self._thread = threading.Thread(target=self._loop, name="traceview-follow", daemon=True)
        self._thread.start()

    def poke(self) -> None:
        """Something may have changed: index again (within `interval`)."""
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._observer is not None:
            self._observer.stop()

    def _watch(self):
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:  # polled instead
            return None
        follower = self

        class Changes(FileSystemEventHandler):
            def on_any_event(self, event):
                if event.event_type not in CHANGES or (event.is_directory and event.event_type in ("modified", "closed")):
                    return  # a folder "modified" is a file in it created or gone: that file says so
                paths = [event.src_path, getattr(event, "dest_path", "") or ""]
                if any(p and follower._mine(os.fsdecode(p)) for p in paths):
                    follower.poke()

        observer = Observer()
        try:
            for p in self.paths:
                if os.path.isdir(p):
                    observer.schedule(Changes(), p, recursive=True)
                elif os.path.isdir(os.path.dirname(p)):
                    observer.schedule(Changes(), os.path.dirname(p), recursive=False)
            observer.start()
        except (OSError, RuntimeError) as e:  # out of inotify watches, say: polled instead
            log.warning("traceview: cannot watch %s for changes (%s); polling every %.0f s", self.paths, e, self.poll)
            return None
        self.watching = True
        return observer

    def _mine(self, path: str) -> bool:
        """Whether a changed path may be one the index reads (never a hidden file, nor one
        `ignore` names)."""
        return not (self.ignore(path) or os.path.basename(path).startswith("."))

    def _loop(self) -> None:
        last = took = 0.0
        while not self._stop.is_set():
            self._wake.wait(self.rescan if self.watching else self.poll)
            if self._stop.is_set():
                return
            # At most once per interval, and idle at least as long as the last run took: a
            # large session written without pause keeps the server half free, not busy.
            time.sleep(max(0.0, last + max(self.interval, 2 * took) - time.monotonic()))
            self._wake.clear()  # what changes from here on wakes the next run
            last = time.monotonic()
            try:
                if self.changed(self.index()):
                    self.version += 1
            except Exception:  # noqa: BLE001 - reported by the index itself; following goes on
                log.exception("traceview: indexing %s again failed", self.paths)
            took = time.monotonic() - last
