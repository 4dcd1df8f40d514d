"""Timeline benchmark: the real app (`traceview serve`) in headless Chromium.

    python bench/bench_timeline.py [--runs N] [--workdir DIR]

Inputs come from the shared generator (`../shared/bench/gen_traces.py` next to the repo);
when it is absent, or Chromium is not at /usr/bin/chromium, the benchmark says so and exits 0.
Prints a table, then one JSON line (`{"bench": "timeline", ...}`).

Measured (wall time in the browser process, each figure the median of --runs):
  1. opening /timeline?trace=ID of a 3,000-step `*.trials.json` trace until the first
     messages are visible: the first open on a fresh server (which reads its files as it
     starts; an open before that is done waits for it) and warm (a new browser session)
  2. moving to the next page of messages (until the new page's first message is shown)
  3. expanding a shortened message with the page's "Expand a long message" control
  4. opening an 80 MB request log (300 streamed requests) by URL, the first open on a fresh
     server
  0. for scale: the same measure as 1 for a one-element Streamlit page (what any Streamlit
     app costs on this machine right now; a busy machine raises every figure with it), at
     "/" and at "/timeline" of a two-page app
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

from bench_cook import new_library  # noqa: E402
from browser import CHROMIUM, CHROMIUM_ARGS, GEN, parse_args, shown  # noqa: E402

TARGETS = {"open_warm_s": 2.0, "page_move_s": 0.5, "expand_s": 0.5, "open_80mb_s": 10.0}
FIRST_MSG = "() => { const e = document.querySelector('.tv-root .tv-msg'); return e && e.id; }"


def generate(workdir: Path) -> dict[str, Path]:
    out = {"trials": workdir / "trials" / "big.trials.json", "log80": workdir / "log80" / "log300s.jsonl"}
    args = {"trials": ["trials", "3000"], "log80": ["requests", "300", "--stream"]}
    for name, path in out.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            kind, n, *opts = args[name]
            subprocess.run([sys.executable, str(GEN), kind, n, str(path), *opts], check=True)
    return out


def trace_id(path: Path) -> str:
    """The id `traceview cook` gives the file's first trace."""
    from parsers.pipeline import list_runs

    return list_runs([str(path)])[0][0].trace_id


VISIBLE_MSG = shown(".tv-root .tv-msg")


def open_timeline(browser, url: str) -> tuple[float, object]:
    """Seconds from navigation to the first message visible, and the open page.

    Checked at every animation frame (`polling="raf"`): `wait_for_selector` re-checks on a
    backoff that reaches 500 ms after a few tries, which would add up to half a second."""
    # A browser: a page of its own (nothing cached); a context: a page sharing its cache (a
    # reader who opened the app before), at the context's viewport.
    page = browser.new_page(viewport={"width": 1400, "height": 1000}) if hasattr(browser, "new_context") \
        else browser.new_page()
    page.set_default_timeout(120_000)
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_function(VISIBLE_MSG, polling="raf")
    return time.perf_counter() - t0, page


SETTLED = """() => { const a = document.querySelector('[data-testid=stApp]');
  return a && a.getAttribute('data-test-script-state') === 'notRunning'; }"""


def next_page(page) -> float:
    """From the click on the pagination's next arrow to the new page's first message.

    The page is first let settle (the page bar drawn, the script not running): the page of
    messages is drawn before the bar above it, and a reader clicks once it is there."""
    button = page.get_by_test_id("stPaginationNext")
    button.wait_for(state="visible")
    page.wait_for_function(SETTLED, polling="raf")
    before = page.evaluate(FIRST_MSG)
    t0 = time.perf_counter()
    button.click()
    page.wait_for_function(f"(b) => ({FIRST_MSG})() !== b", arg=before, polling="raf")
    return time.perf_counter() - t0


def expand_first_long(page) -> float | None:
    """Open the expand menu, then time from choosing a message to its full text shown."""
    box = page.get_by_test_id("stSelectbox").filter(has_text="Expand a long message")
    if box.locator("input").is_disabled():
        return None
    box.locator("input").click()
    option = page.get_by_role("option").first
    option.wait_for()
    pos = option.inner_text().split()[0].lstrip("#")
    size = page.evaluate(f"() => document.getElementById('msg-{pos}').innerText.length")
    t0 = time.perf_counter()
    option.click()
    page.wait_for_function(f"(n) => document.getElementById('msg-{pos}').innerText.length > n", arg=size)
    return time.perf_counter() - t0


FLOOR_APPS = {
    "/": "import streamlit as st\nst.html('<div class=\"tv-root\"><div class=\"tv-msg\">x</div></div>')\n",
    # The same element on a page of a two-page app opened by its URL path, as /timeline is:
    # Streamlit's page first looks for its server under the page's path, then under "/".
    "/timeline": (
        "import streamlit as st\n"
        "def first():\n    st.write('open')\n"
        "def second():\n    st.html('<div class=\"tv-root\"><div class=\"tv-msg\">x</div></div>')\n"
        "st.navigation([st.Page(first, url_path='open', default=True),\n"
        "               st.Page(second, url_path='timeline')], position='hidden').run()\n"),
}


def streamlit_floor(browser, workdir: Path, runs: int, url_path: str = "/") -> float:
    """Seconds to the first element of a one-element Streamlit page, same flags as the app."""
    script = workdir / f"floor_app{url_path.replace('/', '_')}.py"
    script.write_text(FLOOR_APPS[url_path])
    port = serve.free_port()
    cmd = serve.command([], port=port)
    cmd[cmd.index(str(serve.ENTRY))] = str(script)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir)
    try:
        serve.wait_ready(f"http://127.0.0.1:{port}", proc)
        times = []
        for _ in range(runs):
            t, page = open_timeline(browser, f"http://127.0.0.1:{port}{url_path}")
            times.append(t)
            page.close()
        return median(times)
    finally:
        serve.stop(proc)


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def main(argv=None) -> int:
    args = parse_args(__doc__, "bench_timeline", argv)
    if args is None:
        return 0
    from playwright.sync_api import sync_playwright

    tmp = None
    workdir = args.workdir
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-timeline-")
        workdir = Path(tmp.name)
    workdir.mkdir(parents=True, exist_ok=True)
    inputs = generate(workdir)
    ids = {k: trace_id(p) for k, p in inputs.items()}
    sizes = {k: p.stat().st_size for k, p in inputs.items()}
    fig: dict[str, object] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            fig["streamlit_floor_s"] = streamlit_floor(browser, workdir, args.runs)
            fig["streamlit_floor_path_s"] = streamlit_floor(browser, workdir, args.runs, "/timeline")
            app = serve.Running([inputs["trials"]], workdir, env=new_library(workdir))
            try:
                url = f"{app.url}/timeline?trace={ids['trials']}"
                fig["open_cold_s"], page = open_timeline(browser, url)
                page.close()
                warm, moves = [], []
                for _ in range(args.runs):
                    t, page = open_timeline(browser, url)
                    warm.append(t)
                    moves.append(next_page(page))
                    page.close()
                fig["open_warm_s"], fig["page_move_s"] = median(warm), median(moves)
                fig["open_warm_runs"], fig["page_move_runs"] = warm, moves
            finally:
                app.stop()
            app = serve.Running([inputs["log80"]], workdir, env=new_library(workdir))
            try:
                url = f"{app.url}/timeline?trace={ids['log80']}"
                fig["open_80mb_s"], page = open_timeline(browser, url)
                page.close()
                expands = []
                for _ in range(args.runs):
                    _, page = open_timeline(browser, url)
                    expands.append(expand_first_long(page))
                    page.close()
                fig["expand_s"], fig["expand_runs"] = median(expands), expands
            finally:
                app.stop()
        finally:
            browser.close()
    met = {k: (fig.get(k) is not None and fig[k] <= v) for k, v in TARGETS.items()}
    rows = [
        ("for scale: a one-element Streamlit page", fig["streamlit_floor_s"], None),
        ("  the same at /timeline of a two-page app", fig["streamlit_floor_path_s"], None),
        ("open 3,000-step trace by URL, first open on a fresh server", fig["open_cold_s"], None),
        ("open 3,000-step trace by URL, warm (new session)", fig["open_warm_s"], TARGETS["open_warm_s"]),
        ("  of which above the one-element page at /timeline", fig["open_warm_s"] - fig["streamlit_floor_path_s"], None),
        ("next page of messages", fig["page_move_s"], TARGETS["page_move_s"]),
        ("expand a shortened message", fig["expand_s"], TARGETS["expand_s"]),
        (f"open {sizes['log80'] / 1e6:.0f} MB request log by URL, first open on a fresh server", fig["open_80mb_s"], TARGETS["open_80mb_s"]),
    ]
    print(f"{'figure':<52} {'seconds':>8} {'target':>7}  status")
    for name, value, target in rows:
        v = f"{value:8.3f}" if value is not None else "     n/a"
        t = f"{target:7.1f}" if target else "      -"
        status = "" if target is None else ("met" if value is not None and value <= target else "MISSED")
        print(f"{name:<52} {v} {t}  {status}")
    print(json.dumps({"bench": "timeline", "runs": args.runs, "input_bytes": sizes, "figures": fig,
                      "targets": TARGETS, "targets_met": met}))
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
