"""Export benchmark: a 3,000-message trace exported as a page that stands alone, opened from disk
in headless Chromium, against a plain HTML page of the same text.

    python bench/bench_export.py [--runs N] [--workdir DIR]

The input comes from the shared generator (`../shared/bench/gen_traces.py` next to the repo):
`gen_traces.py trials 3000`, one trajectory of about 3,000 messages. When the generator or
Chromium (/usr/bin/chromium) is missing the benchmark says so and exits 0. Prints a table, then
one JSON line (`{"bench": "export", ...}`).

Measured (each time the median of --runs, the export and its baseline opened alternately):
  1. the page's size (target under 5 MB), against the baseline's: every message's text,
     escaped, one <p> each, no style
  2. opening the page from disk (file://) until its last message is in the DOM (target under
     2 s), against the same for the baseline
  3. for scale: writing the page (`traceview export --to html`, the cook included)
"""
from __future__ import annotations

import html
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from browser import CHROMIUM, CHROMIUM_ARGS, GEN, parse_args  # noqa: E402

TARGETS = {"html_mb": 5.0, "open_s": 2.0}


def generate(workdir: Path) -> Path:
    path = workdir / "big.trials.json"
    if not path.exists():
        subprocess.run([sys.executable, str(GEN), "trials", "3000", str(path)], check=True)
    return path


def export_page(src: Path, out: Path) -> tuple[float, int]:
    """Seconds to write the page (in this process: cook and render), and its messages."""
    from viewer.library import export

    t0 = time.perf_counter()
    runs, _ = export.cooked_runs([src])
    export.write(runs, "html", out)
    took = time.perf_counter() - t0
    (row, _), = runs
    return took, row["messages"]


def baseline_page(doc: dict, out: Path) -> int:
    """The same messages' text as a plain page: escaped, one paragraph each. Returns how many."""
    texts = [m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
             for m in doc["messages"]]
    body = "".join(f'<p class="m">{html.escape(t)}</p>\n' for t in texts)
    out.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>baseline</title></head>"
                   f"<body>{body}</body></html>", encoding="utf-8")
    return len(texts)


def open_until_last(browser, path: Path, selector: str, expected: int) -> float:
    """Seconds from navigation to `expected` elements matching `selector` in the DOM."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)
    try:
        t0 = time.perf_counter()
        page.goto(path.as_uri(), wait_until="commit")
        page.wait_for_function(f"(sel) => document.querySelectorAll(sel).length >= {expected}", arg=selector,
                               polling="raf")
        return time.perf_counter() - t0
    finally:
        page.close()


def _cell(value, width: int) -> str:
    return f"{value:>{width}.2f}" if value is not None else " " * width


def main(argv=None) -> int:
    args = parse_args(__doc__, "bench_export", argv)
    if args is None:
        return 0
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        return run(args.workdir, args.runs)
    with tempfile.TemporaryDirectory(prefix="bench-export-") as tmp:
        return run(Path(tmp), args.runs)


def run(workdir: Path, runs: int) -> int:
    from playwright.sync_api import sync_playwright

    src = generate(workdir)
    page, plain = workdir / "export.html", workdir / "baseline.html"
    write_s, n_messages = export_page(src, page)
    # The last entry of the exported timeline: entries number the messages (a call holds its result).
    from viewer.analysis.transcript import Family
    from viewer.library import export

    (row, doc), = export.cooked_runs([src])[0]
    n_plain = baseline_page(doc, plain)
    fam = Family(doc)
    n_items = len(fam.items(fam.traces[row["id"]]))
    fig: dict[str, object] = {"messages": n_messages, "entries": n_items, "write_s": write_s,
                              "html_mb": page.stat().st_size / 1e6, "baseline_mb": plain.stat().st_size / 1e6}
    exported, baseline = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for i in range(runs):
                pair = [(exported, page, ".tv-timeline > .tv-root > .tv-msg", n_items),
                        (baseline, plain, "p.m", n_plain)]
                for times, path, sel, n in (pair if i % 2 == 0 else pair[::-1]):
                    times.append(open_until_last(browser, path, sel, n))
        finally:
            browser.close()
    fig.update(open_s=statistics.median(exported), baseline_open_s=statistics.median(baseline),
               open_runs=exported, baseline_open_runs=baseline)
    rows = [("page size (MB)", fig["html_mb"], fig["baseline_mb"], TARGETS["html_mb"]),
            ("open from disk to the last message (s)", fig["open_s"], fig["baseline_open_s"], TARGETS["open_s"]),
            ("write the page: cook and render (s)", write_s, None, None)]
    print(f"export benchmark: {n_messages:,} messages ({n_items:,} timeline entries), {runs} run(s), medians")
    print(f"{'figure':<42} {'export':>8} {'baseline':>9} {'ratio':>6} {'target':>7}  status")
    for name, value, base, target in rows:
        ratio = f"{value / base:.1f}x" if base else ""
        status = "" if target is None else ("ok" if value < target else "OVER")
        print(f"{name:<42} {_cell(value, 8)} {_cell(base, 9)} {ratio:>6} {_cell(target, 7)}  {status}")
    print(json.dumps({"bench": "export", "runs": runs, "input_bytes": src.stat().st_size, "figures": fig,
                      "targets": TARGETS}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
