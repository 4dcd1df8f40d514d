"""Live benchmark: what appending to a followed session costs, against a full re-cook of the file.

    python bench/bench_live.py [--runs N] [--size-mb MB] [--workdir DIR] [--no-browser]

The input is the session benchmark's (`bench_session.write_session`: a real Claude Code session
from the shared folder repeated with fresh ids to about --size-mb), written in two parts: the
file without its last APPEND_MB, then that tail appended (whole lines). When the shared folder
is absent the benchmark says so and exits 0. Prints a table, then one JSON line
(`{"bench": "live", ...}`).

Measured, each against a baseline in the same run (runs paired, alternating which goes first):
  1. the library brought up to date after the append (`Library.index` of the folder: what a
     following server does on a change), per appended MB / a full index of the whole file
     into a fresh library, per MB of the file (target: an append costs in proportion to what
     was appended, so its per-MB cost stays near the full cook's per-MB cost);
     and the same append to a file a tenth of the size, which shows whether the cost
     follows the append or the file
  2. in Chromium against `traceview serve` following the folder: from the append to the new
     last message shown on the open timeline, without a reload (target < 2 s), against a
     reload of the page after the index has caught up (needs Chromium, else skipped)
"""
from __future__ import annotations

import os
import platform
import shutil
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from viewer import serve  # noqa: E402

from bench_cook import compare, fmt_ratio, fmt_s, paired, print_report, timed  # noqa: E402
from bench_session import SESSION, run_on_session, session_args, write_session  # noqa: E402
from browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

APPEND_MB = 0.25
TARGETS = {"append_per_mb_ratio": 2.0, "shown_s": 2.0}


def split_at(lines: list[bytes], tail_bytes: float) -> int:
    """Where the last `tail_bytes` of whole lines begin."""
    total, k = 0, len(lines)
    while k > 0 and total < tail_bytes:
        k -= 1
        total += len(lines[k])
    return k


class Growing:
    """A session file in a folder of its own, written up to line `cut`; `append()` adds the rest."""

    def __init__(self, source: Path, folder: Path, tail_mb: float):
        self.lines = source.read_bytes().splitlines(keepends=True)
        self.cut = split_at(self.lines, tail_mb * 1e6)
        self.folder = folder
        self.path = folder / source.name

    def reset(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        self.path.write_bytes(b"".join(self.lines[:self.cut]))

    def append(self) -> None:
        with self.path.open("ab") as f:
            f.write(b"".join(self.lines[self.cut:]))

    @property
    def tail_mb(self) -> float:
        return sum(map(len, self.lines[self.cut:])) / 1e6

    @property
    def whole_mb(self) -> float:
        return sum(map(len, self.lines)) / 1e6


def library_at(path: Path):
    from viewer.library.library import Library

    for p in path.parent.glob(path.name + "*"):
        p.unlink()
    return Library(str(path))


def append_run(g: Growing, workdir: Path) -> dict:
    """Seconds to bring a library up to date after the append (the part before indexed first)."""
    g.reset()
    lib = library_at(workdir / "append.sqlite")
    lib.index([g.folder], jobs=1)
    g.append()
    return timed(lambda: lib.index([g.folder], jobs=1))


def full_run(g: Growing, workdir: Path) -> dict:
    """Seconds to index the whole file into a fresh library."""
    g.reset()
    g.append()
    lib = library_at(workdir / "full.sqlite")
    return timed(lambda: lib.index([g.folder], jobs=1))


def shown_after_append(g: Growing, workdir: Path, reps: int) -> dict:
    """Seconds from the append to the new last message on the open timeline (no reload),
    and from a reload to the same message once the index has caught up."""
    from playwright import sync_api

    from bench_timeline import trace_id

    live, reload = [], []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(reps):
            g.reset()
            lib = workdir / "served.sqlite"
            library_at(lib)  # a fresh library of its own
            server = serve.Running([g.folder], workdir, env={"TRACEVIEW_LIBRARY": str(lib)})
            try:
                tid = trace_id(g.path)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(60_000)
                page.goto(f"{server.url}/timeline?trace={tid}&msg=1000000")
                page.locator(".tv-root .tv-msg").first.wait_for()
                before = page.locator(".tv-root .tv-msg").last.get_attribute("id")
                g.append()
                t0 = time.perf_counter()
                page.wait_for_function(
                    "id => { const m = document.querySelectorAll('.tv-root .tv-msg');"
                    " return m.length && m[m.length - 1].id !== id; }", arg=before, polling="raf")
                live.append(time.perf_counter() - t0)
                last_text = page.locator(".tv-root .tv-msg").last.get_attribute("id")
                t0 = time.perf_counter()
                page.reload()
                page.locator(f".tv-root #{last_text}").wait_for()
                reload.append(time.perf_counter() - t0)
                page.close()
            finally:
                server.stop()
        browser.close()
    live.sort()
    reload.sort()
    return {"shown_s": round(live[len(live) // 2], 3), "reload_s": round(reload[len(reload) // 2], 3),
            "shown_runs": [round(x, 3) for x in live], "reload_runs": [round(x, 3) for x in reload]}


def main(argv: list[str] | None = None) -> int:
    ap = session_args(__doc__)
    ap.add_argument("--no-browser", action="store_true", help="skip the browser figure")
    return run_on_session("bench_live", ap.parse_args(argv), run)


def run(workdir: Path, args) -> int:
    reps = args.runs
    print(f"live benchmark: {reps} run(s) per figure, medians; python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; files in {workdir}", flush=True)
    copies = max(1, round(args.size_mb * 1e6 / SESSION.stat().st_size))
    sources = {"large": write_session(SESSION, copies, workdir / "src" / "large.jsonl"),
               "small": write_session(SESSION, max(1, copies // 10), workdir / "src" / "small.jsonl")}
    out: dict = {"bench": "live", "runs": reps}
    rows: list[tuple] = []
    limit = TARGETS["append_per_mb_ratio"]
    for name, src in sources.items():
        g = Growing(src, workdir / name, APPEND_MB)
        print(f"  {name}: {g.whole_mb:.1f} MB file, {g.tail_mb:.2f} MB appended ...", flush=True)
        r = compare(*paired(reps, lambda: append_run(g, workdir), lambda: full_run(g, workdir)))
        per_mb = {"append_s_per_mb": round(r["ours_s"] / g.tail_mb, 3),
                  "full_s_per_mb": round(r["base_s"] / g.whole_mb, 3)}
        per_mb["per_mb_ratio"] = round(per_mb["append_s_per_mb"] / per_mb["full_s_per_mb"], 2)
        out[name] = {"file_mb": round(g.whole_mb, 2), "appended_mb": round(g.tail_mb, 3), **r, **per_mb}
        ok = per_mb["per_mb_ratio"] <= limit
        rows.append((f"1 index after an append / full index ({name})", f"{g.whole_mb:.1f} MB + {g.tail_mb:.2f} MB",
                     fmt_s(r["ours_s"]), fmt_s(r["base_s"]), fmt_ratio(r["ratio"]), fmt_ratio(r["cpu_ratio"]), "", ""))
        rows.append((f"1 per MB: appended / whole file ({name})", "", f"{per_mb['append_s_per_mb']:.3f} s/MB",
                     f"{per_mb['full_s_per_mb']:.3f} s/MB", fmt_ratio(per_mb["per_mb_ratio"]), "",
                     f"<= {limit}x", "met" if ok else "MISSED"))
    if args.no_browser or not Path(CHROMIUM).exists():
        why = "--no-browser" if args.no_browser else f"Chromium is not at {CHROMIUM}"
        out["browser"] = {"skipped": why}
        rows.append(("2 append shown on the open timeline", "", "skipped", "", "", "", "", ""))
    else:
        print("  append shown in Chromium ...", flush=True)
        g = Growing(sources["large"], workdir / "served", APPEND_MB)
        b = out["browser"] = shown_after_append(g, workdir, reps)
        limit = TARGETS["shown_s"]
        rows.append(("2 append shown on the open timeline / a reload", f"{g.whole_mb:.1f} MB + {g.tail_mb:.2f} MB",
                     fmt_s(b["shown_s"]), fmt_s(b["reload_s"]), fmt_ratio(b["shown_s"] / b["reload_s"]), "",
                     f"< {limit:.0f} s", "met" if b["shown_s"] < limit else "MISSED"))
    print_report(rows, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
