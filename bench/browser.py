"""What the browser benchmarks share: the shared trace generator, Debian's Chromium and how
it is launched, a visibility check run at every animation frame, and the command line with
its skip conditions."""
from __future__ import annotations

import argparse
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GEN = REPO.parent / "shared" / "bench" / "gen_traces.py"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def shown(selector: str) -> str:
    """A check for `page.wait_for_function(..., polling="raf")`: the first `selector` has a
    box on the page. Playwright's own waits re-check on a backoff that reaches 500 ms."""
    return (f"() => {{ const e = document.querySelector({selector!r}); if (!e) return false;"
            " const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; }")


def parse_args(doc: str, name: str, argv=None) -> argparse.Namespace | None:
    """`--runs` and `--workdir`; None, after saying why, when the generator or Chromium is
    missing (the benchmark then exits 0)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="runs per figure (median)")
    ap.add_argument("--workdir", type=Path, help="keep and reuse generated inputs here")
    args = ap.parse_args(argv)
    for needed, what in ((GEN, "the trace generator"), (Path(CHROMIUM), "Chromium")):
        if not needed.exists():
            print(f"{name}: skipped: {what} is not at {needed}; nothing to measure")
            return None
    from bench_cook import byte_compile  # the app's processes are timed from their start

    byte_compile()
    return args
