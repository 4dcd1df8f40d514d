"""Requests page benchmark: the 1,000-request forest in headless Chromium.

Generates `gen_traces.py requests 1000 --sessions 40` (40 roots, about 35 MB), starts
`traceview serve` on it, cooks once (the first open), then opens `/requests?trace=ID` in new
tabs and times what a reader waits for: the request table (the forest in tree order) and
the drawing. Prints a table and a JSON line. Needs the shared generator and Chromium at
/usr/bin/chromium; without either it says so and exits 0.

    python bench/bench_requests.py [--runs 5] [--workdir DIR]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from viewer import serve  # noqa: E402

GEN = REPO.parent / "shared" / "bench" / "gen_traces.py"
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
TARGET_S = 2.0


def shown(selector: str) -> str:
    """A check, run at every animation frame, that the first `selector` has a box on the
    page (Playwright's own waits re-check on a backoff that reaches 500 ms)."""
    return (f"() => {{ const e = document.querySelector({selector!r}); if (!e) return false;"
            " const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; }")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--workdir", type=Path)
    args = ap.parse_args(argv)
    if not GEN.exists():
        print(f"requests benchmark skipped: the generator {GEN} is not present")
        return 0
    if not Path(CHROMIUM).exists():
        print(f"requests benchmark skipped: Chromium not found at {CHROMIUM}")
        return 0
    from playwright.sync_api import sync_playwright

    import parsers

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="tv-bench-requests-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "requests1000.jsonl"
    if not log.exists():
        subprocess.run([sys.executable, str(GEN), "requests", "1000", str(log), "--sessions", "40"], check=True)
    doc, _ = parsers.cook_paths([log])
    tid = doc["traces"][0]["id"]

    port = serve.free_port()
    proc = serve.spawn([log], port)
    table, drawing = [], []
    try:
        serve.wait_ready(f"http://127.0.0.1:{port}/", proc, timeout=180)
        url = f"http://127.0.0.1:{port}/requests?trace={tid}"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
            for k in range(args.runs + 1):  # the first open cooks the log: not counted
                page = ctx.new_page()
                t0 = time.perf_counter()
                page.goto(url, wait_until="commit")
                page.wait_for_function(shown("table.tv-table"), polling="raf", timeout=180_000)
                t_table = time.perf_counter() - t0
                page.wait_for_function(shown(".js-plotly-plot"), polling="raf", timeout=180_000)
                t_drawing = time.perf_counter() - t0
                if k:
                    table.append(t_table)
                    drawing.append(t_drawing)
                page.close()
            browser.close()
    finally:
        serve.stop(proc)
    fig = {"table_s": statistics.median(table), "drawing_s": statistics.median(drawing),
           "table_runs": [round(x, 3) for x in table], "drawing_runs": [round(x, 3) for x in drawing]}
    print(f"{'figure':<58}{'seconds':>8}  target  status")
    print(f"{'1,000-request forest: request table visible (warm)':<58}{fig['table_s']:>8.3f}  "
          f"{TARGET_S:>6}  {'met' if fig['table_s'] < TARGET_S else 'MISSED'}")
    print(f"{'  the drawing (plotly) visible':<58}{fig['drawing_s']:>8.3f}       -")
    print(json.dumps({"bench": "requests", "runs": args.runs, "figures": fig}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
