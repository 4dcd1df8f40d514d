"""Requests page benchmark: the 1,000-request forest in headless Chromium.

Generates `gen_traces.py requests 1000 --sessions 40` (40 roots, about 35 MB), starts
`traceview serve` on it, cooks once (the first open), then opens `/requests?trace=ID` in new
tabs and times what a reader waits for: the request table (the forest in tree order) and
the drawing. Prints a table and a JSON line. Needs the shared generator and Chromium at
/usr/bin/chromium; without either it says so and exits 0.

    python bench/bench_requests.py [--runs 5] [--workdir DIR]
"""
from __future__ import annotations

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

from browser import CHROMIUM, CHROMIUM_ARGS, GEN, parse_args, shown  # noqa: E402

TARGET_S = 2.0


def main(argv=None) -> int:
    args = parse_args(__doc__, "bench_requests", argv)
    if args is None:
        return 0
    from playwright.sync_api import sync_playwright

    from parsers import pipeline

    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="tv-bench-requests-"))
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "requests1000.jsonl"
    if not log.exists():
        subprocess.run([sys.executable, str(GEN), "requests", "1000", str(log), "--sessions", "40"], check=True)
    doc, _ = pipeline.cook_paths([log])
    tid = doc["traces"][0]["id"]

    port = serve.free_port()
    proc = serve.spawn([log], port)
    table, drawing = [], []
    try:
        serve.wait_ready(f"http://127.0.0.1:{port}/", proc, timeout=180)
        url = f"http://127.0.0.1:{port}/requests?trace={tid}"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
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
