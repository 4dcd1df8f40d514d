"""Library benchmark: indexing a corpus of runs into the library, keeping it up to date, its size,
memory and query latency, on SQLite and (when it can be started) PostgreSQL.

    python bench/bench_library.py [--runs N] [--corpus DIR] [--kind small|large] [--reps R] [--quick] [--workdir DIR]

The corpus comes from the shared generator (`../shared/bench/gen_corpus.py`, `--gen`): `small` runs
of about 60 KB or `large` runs of about 1 MB, one `*.trials.json` file each, with planted
search markers. The first --runs files (sorted by name) of `--corpus DIR` are copied into the
working folder (the corpus itself is never changed); without --corpus, --runs files are
generated there. When neither is available the benchmark says so and exits 0. It prints a
table, then one JSON line (`{"bench": "library", ...}`), and exits 1 only when the library
answers a planted-marker search wrongly (checked when the files are named as the generator
names them, `r<run number>.trials.json`).

Measured, each against a baseline in the same run (indexing runs interleaved, rotating which
goes first; figures are medians, latencies 95th percentiles):
  1. `traceview index DIR --library L` (a fresh library each time; where the CLI has no `index`
     command yet, a process calling `Library(L).index([DIR])`) / `traceview cook DIR -o
     /dev/null` (target <= 1.5x, and <= 2 minutes per GB), `index` cooking in its default
     pool (a process per CPU core); `--jobs 1` / cook, and the pool / `--jobs 1` (target: faster)
  2. re-scanning the unchanged corpus, in-process / a walk that stats every file (target < 1 s);
     100 runs rewritten with a new word, re-indexed / cooking those 100 files (target < 10 s),
     and afterwards the new word finds exactly those runs
  3. the library on disk (the file with its -wal and -shm) / the trace files (target <= 1.6x)
  4. memory: `traceview serve --library L --headless` (RSS of its process tree, after opening
     its first page in Chromium when there is one) with the library / with an empty library;
     where serve has no --library yet, the peak RSS of a process that opens `Library(L)` and
     answers the runs pages, searches and opens of row 5 (target: <= 150 MB above)
  5. in-process on the library: a runs page (first page, sorted by cost, descending, filtered by
     a model and an outcome; target p95 < 50 ms), a 50-run search with snippets over 50 queries
     of planted markers and common words (p95 < 100 ms) and opening a run (`Library.family`,
     p95 < 50 ms), against the default page (unfiltered, by start time), the full-text index's
     own match of the same words, and cooking the run's file; and every planted marker finds
     exactly the runs the generator planted it in
  6. PostgreSQL (a throwaway server from tests/pgserver.py, when that file is there and the
     server starts): indexing the same corpus, the latencies of row 5, and whether each
     marker search returns the same runs as SQLite
  7. Chromium against `traceview serve --library L`: the runs table's first screen (the table
     and the search box above it) from
     navigation (target < 2 s) and a search's results (a snippet marking the word) from pressing
     Enter, for the rarest marker and a common word (< 1 s); only when the app reads the library
     and has a search box
--quick (for the tests): one run per figure, and no `--jobs 1`, serve, PostgreSQL or Chromium.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from viewer import serve  # noqa: E402
from viewer.library.ingest import default_jobs  # noqa: E402
from viewer.library.ingest import model_key  # noqa: E402
from viewer.library.library import Library, LibraryError, RunsQuery, Scope  # noqa: E402

from bench_cook import byte_compile, fmt_ratio, fmt_s, print_table, run_child, timed, traceview_argv  # noqa: E402
from bench_session import verdict  # noqa: E402
from browser import CHROMIUM, CHROMIUM_ARGS, shown  # noqa: E402

GEN = REPO.parent / "shared" / "bench" / "gen_corpus.py"
PGSERVER = REPO / "tests" / "pgserver.py"

# Where gen_corpus.py plants each marker: run i (its file r{i:05d}.trials.json) holds it when
# the rule holds (the generator's docstring).
PLANTED = {
    "zqneedleone": lambda i: i == 7,
    "zqneedleten": lambda i: i % 1000 == 3,
    "zqneedlehundred": lambda i: i % 100 == 5,
    "zqneedlethousand": lambda i: i % 10 == 1,
    "zq_snake_marker": lambda i: i % 100 == 7,
    "zq.dotted.marker": lambda i: i % 100 == 7,
    "ZqCamelMarker": lambda i: i % 100 == 7,
}
COMMON_WORDS = ("error", "test", "function", "value", "return")
BROWSER_WORDS = ("zqneedleone", "error")  # searched in the app: the rarest marker, a common word
RUN_NUMBER = re.compile(r"r(\d+)\.trials\.json")  # a generated run's file name
QUERIES = 50
COUNT_ALL = 1_000_000  # a limit above any corpus: every matching run
CHANGED = 100
PAGE = 50
# The rewritten runs' new word: the task's opening tag gains it (REWRITE_WORD + rep number).
TASK_TAG, REWRITE_WORD = b"<issue>", "zqrewritten"
TARGETS = {"index_over_cook": 1.5, "min_per_gb": 2.0, "rescan_s": 1.0, "changed_s": 10.0, "disk_ratio": 1.6,
           "memory_mb": 150.0, "page_ms": 50.0, "search_ms": 100.0, "open_ms": 50.0, "first_screen_s": 2.0,
           "search_results_s": 1.0}
HEADER = ("measurement", "ours", "baseline", "ratio", "target", "status")

# A process that indexes folders into a library: the library's work when the CLI has no `index`.
INDEX_ONLY = ("import sys\nfrom viewer.library.library import Library\n"
              "Library(sys.argv[1]).index(sys.argv[3:], jobs=int(sys.argv[2]) or None)\n")
# A process standing in for a server reading the library: row 5's questions, then exit.
ANSWERING = """\
import sys
sys.path.insert(0, sys.argv[1])
import bench_library
from viewer.library.library import Library, Scope
bench_library.latencies(Library(sys.argv[2]), Scope(paths=tuple(sys.argv[3:])), with_cook=False)
"""


# --- the corpus ---------------------------------------------------------------------------------

def run_number(path) -> int | None:
    m = RUN_NUMBER.fullmatch(Path(path).name)
    return int(m.group(1)) if m else None


def prepare_corpus(args, workdir: Path) -> Path | None:
    """The folder of --runs trace files to index: the first files of --corpus copied, else
    generated; None (after saying why) when there is neither."""
    corpus = workdir / "corpus"
    if args.corpus is not None and args.corpus.resolve() == corpus:
        raise SystemExit(f"bench_library: {corpus} is where the copy of the corpus goes; pass another --workdir")
    if corpus.exists():
        shutil.rmtree(corpus)
    if args.corpus is None:
        if not args.gen.exists():
            print(f"bench_library: skipped: no --corpus given and the corpus generator is not at {args.gen}")
            return None
        print(f"  generating {args.runs} {args.kind} runs ...", flush=True)
        subprocess.run([sys.executable, str(args.gen), args.kind, str(corpus), str(args.runs)], check=True)
        return corpus
    files = sorted(p for p in args.corpus.iterdir() if p.is_file())[:args.runs]
    if not files:
        print(f"bench_library: skipped: no files in {args.corpus}")
        return None
    corpus.mkdir()
    for p in files:
        shutil.copy2(p, corpus / p.name)
    return corpus


def rewrite(paths: list[Path], originals: dict[Path, bytes], rep: int) -> None:
    """Give each run a word it did not have (`zqrewritten<rep>` after its task's opening tag),
    or, in a file without that tag, rep + 1 spaces at its end: new content every rep."""
    for p in paths:
        data = originals[p]
        new = data.replace(TASK_TAG, TASK_TAG + f"{REWRITE_WORD}{rep} ".encode(), 1)
        p.write_bytes(new if new != data else data + b" " * (rep + 1))


def library_files(lib: Path) -> list[Path]:
    return [Path(f"{lib}{suffix}") for suffix in ("", "-wal", "-shm")]


def on_disk(lib: Path) -> int:
    return sum(p.stat().st_size for p in library_files(lib) if p.exists())


def remove_library(lib: Path) -> None:
    for p in library_files(lib):
        p.unlink(missing_ok=True)


def stat_walk(folder: Path) -> int:
    """The re-scan's baseline: every file under the folder listed and stat'ed."""
    n = 0
    for dirpath, _dirs, names in os.walk(folder):
        for name in names:
            os.stat(os.path.join(dirpath, name))
            n += 1
    return n


# --- the CLI as it is now -----------------------------------------------------------------------

def cli_help(*command: str) -> str:
    """`traceview COMMAND --help`, or "" when there is no such command."""
    r = subprocess.run([*traceview_argv(), *command, "--help"], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else ""


def index_argv(lib, corpus: Path, jobs: int | None, has_index: bool) -> list[str]:
    """`traceview index` with `--jobs N` (its default, one process per core, when None)."""
    if has_index:
        return [*traceview_argv(), "index", str(corpus), "--library", str(lib),
                *(["--jobs", str(jobs)] if jobs else [])]
    return [sys.executable, "-c", INDEX_ONLY, str(lib), str(jobs or 0), str(corpus)]


def rotated(reps: int, fns: list) -> list[list]:
    """Each function's results over `reps` rounds, run back to back, each round starting one
    further along the list."""
    out: list[list] = [[] for _ in fns]
    for r in range(reps):
        for k in range(len(fns)):
            j = (r + k) % len(fns)
            out[j].append(fns[j]())
    return out


def median_of(runs: list[dict], key: str = "s") -> float:
    return statistics.median(r[key] for r in runs)


# --- questions to the library -------------------------------------------------------------------

def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20, method="inclusive")[18] if len(xs) > 1 else xs[0]


def ms(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


def search_words() -> list[str]:
    words = [*PLANTED, *COMMON_WORDS]
    return [words[k % len(words)] for k in range(QUERIES)]


def page_query(lib: Library, scope: Scope) -> RunsQuery:
    """The runs page asked: the most frequent single model and outcome, the costliest first."""
    facets = lib.facets(RunsQuery(), scope)
    model = next((m for m, _ in facets["model"] if ", " not in m), None)
    outcome = next((o for o, _ in facets["outcome"]), None)
    return RunsQuery(models=(model_key(model),) if model else (), outcomes=(outcome,) if outcome else (),
                     sort="cost", descending=True, limit=PAGE)


def latencies(lib: Library, scope: Scope, with_cook: bool = True) -> dict:
    """Milliseconds (p95) of a runs page, a search and opening a run, QUERIES times each, beside
    their baselines: the default page (unfiltered, by start time), the full-text index's own
    match of the same words, cooking the run's file (unless not `with_cook`)."""
    from parsers import pipeline
    from viewer.library import search

    rows = lib.runs(RunsQuery(limit=COUNT_ALL), scope).rows
    if not rows:
        return {}
    rng = random.Random(0)
    picks = [rng.choice(rows) for _ in range(QUERIES)]
    q = page_query(lib, scope)
    lib.runs(q, scope)  # warm: the first question opens the connection and reads the pages in
    out: dict = {"page_filters": {"models": list(q.models), "outcomes": list(q.outcomes)}}
    default = RunsQuery(limit=PAGE)
    out["default_page_ms"] = round(p95([ms(lambda: lib.runs(default, scope)) for _ in range(QUERIES)]), 2)
    out["page_ms"] = round(p95([ms(lambda: lib.runs(q, scope)) for _ in range(QUERIES)]), 2)
    words = search_words()
    out["match_ms"] = round(p95([ms(lambda w=w: lib.db.match(search.parse(w), PAGE * 4)) for w in words]), 2)
    took = [(w, ms(lambda w=w: lib.search(w, scope, limit=PAGE))) for w in words]
    out["search_ms"] = round(p95([t for _, t in took]), 2)
    out["search_median_ms_by_word"] = {w: round(statistics.median(t for v, t in took if v == w), 2)
                                       for w in dict.fromkeys(words)}
    out["open_ms"] = round(p95([ms(lambda r=r: lib.family(r["id"], scope)) for r in picks]), 2)
    if with_cook:
        out["cook_file_ms"] = round(p95([ms(lambda r=r: pipeline.cook_paths([r["path"]])) for r in picks]), 2)
    return out


def marker_runs(lib: Library, scope: Scope, words) -> dict[str, set[str]]:
    """Each word's matching runs (ids), every one of them."""
    return {w: {h.run["id"] for h in lib.search(w, scope, limit=COUNT_ALL)} for w in words}


def check_markers(lib: Library, scope: Scope) -> tuple[list[str], dict]:
    """Problems (none when right) of the planted-marker searches: each must find exactly the
    indexed runs the generator planted it in (read from the files); and every marker's found runs."""
    rows = lib.runs(RunsQuery(limit=COUNT_ALL), scope).rows
    number = {r["id"]: run_number(r["path"]) for r in rows}
    if any(n is None for n in number.values()):
        return [], {}
    found = marker_runs(lib, scope, PLANTED)
    problems = []
    paths = {r["id"]: r["path"] for r in rows}
    for word, rule in PLANTED.items():
        # The runs the rule names whose file holds the word: the generator drops a marker
        # whose turn another marker of the same run took.
        expected = {tid for tid, i in number.items() if rule(i) and holds(paths[tid], word)}
        got = found[word]
        if got != expected:
            problems.append(f"search {word!r}: expected {len(expected)} runs, found {len(got)}"
                            f" (missing {_names(expected - got, rows)}; not planted {_names(got - expected, rows)})")
    return problems, found


def holds(path: str, word: str) -> bool:
    """Whether the file has `word` as a whole token (any case), as a search finds it."""
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    return re.search(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", text, re.IGNORECASE) is not None


def _names(ids: set[str], rows: list[dict]) -> str:
    names = sorted(Path(r["path"]).name for r in rows if r["id"] in ids)
    return ", ".join(names[:5]) + (" …" if len(names) > 5 else "") if names else "none"


# --- processes and the browser ------------------------------------------------------------------

def tree_rss_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants, MB (from /proc)."""
    parent = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                parent[int(d.name)] = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    tree, todo = set(), [pid]
    while todo:
        p = todo.pop()
        tree.add(p)
        todo.extend(c for c, pp in parent.items() if pp == p and c not in tree)
    total = 0
    for p in tree:
        try:
            status = Path(f"/proc/{p}/status").read_text()
        except OSError:
            continue
        m = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
        total += int(m.group(1)) if m else 0
    return total / 1024


def serve_rss(lib: Path, workdir: Path) -> float:
    """RSS of `traceview serve --library LIB` after it answers and, with Chromium, after its
    first page has been open a few seconds."""
    app = serve.Running([], workdir, options=["--library", str(lib)])
    try:
        if Path(CHROMIUM).exists():
            from playwright.sync_api import sync_playwright

            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(app.url)
                page.wait_for_timeout(5000)
                rss = tree_rss_mb(app.proc.pid)
                browser.close()
                return rss
        time.sleep(2)
        return tree_rss_mb(app.proc.pid)
    finally:
        app.stop()


RUNS_TABLE = '[data-testid="stDataFrame"], table'
SEARCH_BOX = 'input[aria-label*="search" i], input[placeholder*="search" i]'
# A search's results are shown: a snippet marks the word asked.
MARKED = "(word) => [...document.querySelectorAll('mark')].some(m => m.innerText.toLowerCase() === word)"


FLOOR_APP = """import pandas as pd
import streamlit as st
st.set_page_config(layout="wide")
st.title("Open traces")
st.file_uploader("Files", accept_multiple_files=True)
st.subheader("Runs")
st.dataframe(pd.DataFrame({"title": [f"run {i}" for i in range(50)], "cost": [i / 100 for i in range(50)]}))
"""


class FloorApp:
    """The framework's floor: a Streamlit page of a title, an uploader and a 50-row table,
    served the same way, so the first-screen figure has a baseline measured in the same run."""

    def __init__(self, workdir: Path):
        script = Path(workdir) / "floor_app.py"
        script.write_text(FLOOR_APP)
        port = serve.free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", str(script), "--server.port", str(port),
                                      "--server.headless", "true", "--server.fileWatcherType", "none"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=workdir)
        serve.wait_ready(self.url, self.proc)

    def stop(self) -> None:
        serve.stop(self.proc)


def browser_figures(lib: Path, workdir: Path, reps: int, words: tuple[str, ...]) -> dict:
    """Seconds from navigation to the runs table, and from pressing Enter in the search box to
    a result marking the word, for each of `words` (a new page each), against `traceview serve
    --library LIB`; or why not measured."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    app = serve.Running([], workdir, options=["--library", str(lib)])
    floor = FloorApp(workdir)
    firsts: list[float] = []
    floors: list[float] = []
    searches: dict[str, list[float]] = {w: [] for w in words}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                for _ in range(reps):
                    for word in words:
                        page = browser.new_page(viewport={"width": 1400, "height": 1000})
                        t0 = time.perf_counter()
                        page.goto(floor.url)
                        page.wait_for_function(shown(RUNS_TABLE), polling="raf", timeout=30_000)
                        floors.append(time.perf_counter() - t0)
                        page.close()
                        page = browser.new_page(viewport={"width": 1400, "height": 1000})
                        t0 = time.perf_counter()
                        page.goto(app.url)
                        # The first screen: the runs table and the search box above it (each
                        # widget's code arrives on its own, so one may show before the other).
                        for what, selector in (("runs table", RUNS_TABLE), ("search box", SEARCH_BOX)):
                            try:
                                page.wait_for_function(shown(selector), polling="raf", timeout=30_000)
                            except PlaywrightError:
                                return {"skipped": f"not measured: no {what} on the app's first page within 30 s"}
                        firsts.append(time.perf_counter() - t0)
                        box = page.locator(SEARCH_BOX).first
                        box.fill(word)
                        t0 = time.perf_counter()
                        box.press("Enter")
                        try:
                            page.wait_for_function(MARKED, arg=word.lower(), polling="raf", timeout=30_000)
                        except PlaywrightError:
                            return {"skipped": f"not measured: no result marking {word!r} within 30 s"}
                        searches[word].append(time.perf_counter() - t0)
                        page.close()
            finally:
                browser.close()
    finally:
        app.stop()
        floor.stop()
    return {"first_screen_s": round(statistics.median(firsts), 3),
            "floor_first_screen_s": round(statistics.median(floors), 3),
            "search_results_s": {w: round(statistics.median(t), 3) for w, t in searches.items()}}


# --- the benchmark ------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=2000, help="runs (files) to index (default 2000)")
    ap.add_argument("--corpus", type=Path, help="take the first --runs files of this folder (copied)")
    ap.add_argument("--kind", choices=("small", "large"), default="small", help="what to generate without --corpus")
    ap.add_argument("--gen", type=Path, default=GEN, help=f"the corpus generator (default {GEN})")
    ap.add_argument("--reps", type=int, default=1, help="runs of each indexing figure (medians)")
    ap.add_argument("--quick", action="store_true",
                    help="one run per figure; no --jobs 1, serve, PostgreSQL or Chromium")
    ap.add_argument("--workdir", type=Path, help="work here (a copy of the corpus, the libraries); default: a temp dir")
    args = ap.parse_args(argv)
    byte_compile()
    try:
        if args.workdir:
            args.workdir.mkdir(parents=True, exist_ok=True)
            return run(args.workdir.resolve(), args)
        with tempfile.TemporaryDirectory(prefix="bench_library-") as tmp:
            return run(Path(tmp), args)
    except RuntimeError as e:  # a measured process failed: say which and why
        print(f"bench_library: failed: {e}", file=sys.stderr)
        return 1


def run(workdir: Path, args) -> int:
    reps = 1 if args.quick else max(1, args.reps)
    print(f"library benchmark: python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.2f}; files in {workdir}", flush=True)
    corpus = prepare_corpus(args, workdir)
    if corpus is None:
        return 0
    files = sorted(corpus.iterdir())
    size = sum(p.stat().st_size for p in files)
    print(f"  corpus: {len(files)} files, {size / 1e6:.1f} MB", flush=True)
    out: dict = {"bench": "library", "files": len(files), "mb": round(size / 1e6, 2), "reps": reps}
    rows: list[tuple] = []
    failures: list[str] = []
    scope = Scope(paths=(os.path.realpath(corpus),))

    # 1: indexing processes against cooking the same folder
    has_index = bool(cli_help("index"))
    how = "`traceview index`" if has_index else "Library.index process"
    print(f"  indexing ({how}) and cooking ...", flush=True)
    lib1, lib2 = workdir / "library-j1.sqlite", workdir / "library-j2.sqlite"

    def index(lib: Path, jobs: int | None):
        remove_library(lib)
        return run_child(index_argv(lib, corpus, jobs, has_index), cwd=REPO)
    sides = [lambda: run_child([*traceview_argv(), "cook", str(corpus), "-o", os.devnull], cwd=REPO),
             lambda: index(lib1, None)]
    if not args.quick:
        sides.append(lambda: index(lib2, 1))
    cooked, *indexed = rotated(reps, sides)
    cook_s, index_s = median_of(cooked), median_of(indexed[0])
    per_gb_min = index_s / (size / 1e9) / 60
    r = out["index"] = {"how": how, "jobs": default_jobs(), "index_s": round(index_s, 3), "cook_s": round(cook_s, 3),
                        "ratio": round(index_s / cook_s, 3), "index_cpu_s": round(median_of(indexed[0], "cpu"), 3),
                        "cook_cpu_s": round(median_of(cooked, "cpu"), 3), "min_per_gb": round(per_gb_min, 2),
                        "index_rss_mb": round(max(x["rss"] for x in indexed[0]), 1),
                        "cook_rss_mb": round(max(x["rss"] for x in cooked), 1)}
    limit = TARGETS["index_over_cook"]
    rows.append((f"1 index ({how}, {default_jobs()} processes: its default) / `traceview cook`", fmt_s(index_s),
                 fmt_s(cook_s), fmt_ratio(r["ratio"]), f"<= {limit}x", verdict(r["ratio"] <= limit)))
    rows.append(("1 index, minutes per GB", f"{per_gb_min:.2f} min", "", "", f"<= {TARGETS['min_per_gb']:.0f} min",
                 verdict(per_gb_min <= TARGETS["min_per_gb"])))
    rows.append(("1 peak RSS, index / cook process", f"{r['index_rss_mb']:.0f} MB", f"{r['cook_rss_mb']:.0f} MB",
                 fmt_ratio(r["index_rss_mb"] / r["cook_rss_mb"]), "", ""))
    if len(indexed) > 1:
        j1_s = median_of(indexed[1])
        r["jobs1_s"] = round(j1_s, 3)
        rows.append(("1 index --jobs 1 / `traceview cook`", fmt_s(j1_s), fmt_s(cook_s), fmt_ratio(j1_s / cook_s), "", ""))
        rows.append((f"1 index, {default_jobs()} processes / --jobs 1", fmt_s(index_s), fmt_s(j1_s),
                     fmt_ratio(index_s / j1_s), "faster", verdict(index_s < j1_s)))
        remove_library(lib2)

    # 3: the library on disk, as the index process left it
    disk = on_disk(lib1)
    r = out["disk"] = {"library_mb": round(disk / 1e6, 2), "traces_mb": round(size / 1e6, 2),
                       "ratio": round(disk / size, 3)}
    rows.append(("3 library on disk / trace files", f"{disk / 1e6:.1f} MB", f"{size / 1e6:.1f} MB",
                 fmt_ratio(r["ratio"]), f"<= {TARGETS['disk_ratio']}x", verdict(r["ratio"] <= TARGETS["disk_ratio"])))

    # 2: re-scans, in-process
    print("  re-scanning ...", flush=True)
    lib = Library(str(lib1))
    scans, walks = [], []
    for _ in range(max(3, reps)):
        scans.append(timed(lambda: lib.index([corpus])))
        walks.append(timed(lambda: stat_walk(corpus)))
    scan_s, walk_s = median_of(scans), median_of(walks)
    out["rescan"] = {"s": round(scan_s, 4), "stat_walk_s": round(walk_s, 4)}
    rows.append(("2 re-scan of the unchanged corpus / stat of every file", fmt_s(scan_s), fmt_s(walk_s),
                 fmt_ratio(scan_s / walk_s), f"< {TARGETS['rescan_s']:.0f} s", verdict(scan_s < TARGETS["rescan_s"])))

    from parsers import pipeline

    step = max(1, len(files) // CHANGED)
    changed = files[::step][:CHANGED]
    originals = {p: p.read_bytes() for p in changed}
    rescans, cooks = [], []
    for k in range(reps):
        rewrite(changed, originals, k)
        rescans.append(timed(lambda: lib.index([corpus])))
        cooks.append(timed(lambda: pipeline.cook_paths(changed)))
    changed_s, cook_s = median_of(rescans), median_of(cooks)
    out["changed"] = {"files": len(changed), "s": round(changed_s, 3), "cook_s": round(cook_s, 3)}
    rows.append((f"2 re-index after {len(changed)} runs changed / cooking them", fmt_s(changed_s), fmt_s(cook_s),
                 fmt_ratio(changed_s / cook_s), f"< {TARGETS['changed_s']:.0f} s",
                 verdict(changed_s < TARGETS["changed_s"])))
    if all(TASK_TAG in originals[p] for p in changed):
        word = f"{REWRITE_WORD}{reps - 1}"
        found = marker_runs(lib, scope, [word])[word]
        expected = {os.path.realpath(p) for p in changed}
        paths = {row["path"] for tid in found if (row := lib.run(tid))}
        if paths != expected:
            failures.append(f"after re-indexing, {word!r} finds {len(paths)} runs, not the {len(expected)} rewritten")

    # 5: latency and correctness, in-process
    print("  questions to the library ...", flush=True)
    lat = out["sqlite"] = latencies(lib, scope)
    problems, sqlite_found = check_markers(lib, scope)
    failures += problems
    out["markers_checked"] = bool(sqlite_found)
    latency_rows(rows, "5 SQLite", lat)
    lib.close()

    # 4: memory of a server on the library, against one on an empty library
    print("  memory ...", flush=True)
    empty = workdir / "empty.sqlite"
    remove_library(empty)
    Library(str(empty)).close()
    serve_reads_library = "--library" in cli_help("serve")
    if serve_reads_library and not args.quick:
        what = "`traceview serve --library` RSS"
        ours, base = serve_rss(lib1, workdir), serve_rss(empty, workdir)
    else:
        what = "peak RSS of a process answering row 5"
        answer = lambda target: run_child([sys.executable, "-c", ANSWERING, str(Path(__file__).parent), str(target),  # noqa: E731
                                           *scope.paths], cwd=REPO)["rss"]
        ours, base = answer(lib1), answer(empty)
    out["memory"] = {"how": what, "library_mb": round(ours, 1), "empty_mb": round(base, 1)}
    rows.append((f"4 {what}, library / empty library", f"{ours:.0f} MB", f"{base:.0f} MB",
                 f"+{ours - base:.0f} MB", f"<= +{TARGETS['memory_mb']:.0f} MB",
                 verdict(ours - base <= TARGETS["memory_mb"])))

    # 6: PostgreSQL
    if args.quick:
        skip(rows, out, "postgresql", "6 PostgreSQL", "not measured (--quick)")
    elif not PGSERVER.exists():
        skip(rows, out, "postgresql", "6 PostgreSQL", f"not measured: no {PGSERVER.relative_to(REPO)}")
    else:
        print("  PostgreSQL ...", flush=True)
        postgres(rows, out, failures, corpus, scope, sqlite_found, j1_s, has_index)

    # 7: the app in Chromium
    if args.quick:
        skip(rows, out, "browser", "7 Chromium", "not measured (--quick)")
    elif not serve_reads_library:
        skip(rows, out, "browser", "7 Chromium", "not measured: the app does not read the library yet")
    elif not Path(CHROMIUM).exists():
        skip(rows, out, "browser", "7 Chromium", f"not measured: Chromium is not at {CHROMIUM}")
    else:
        print("  Chromium ...", flush=True)
        b = out["browser"] = browser_figures(lib1, workdir, max(3, reps), BROWSER_WORDS)
        if "skipped" in b:
            skip(rows, out, "browser", "7 Chromium", b["skipped"])
        else:
            rows.append(("7 runs table first screen / a bare Streamlit page's", fmt_s(b["first_screen_s"]),
                         fmt_s(b["floor_first_screen_s"]), fmt_ratio(b["first_screen_s"] / b["floor_first_screen_s"]),
                         f"< {TARGETS['first_screen_s']:.0f} s", verdict(b["first_screen_s"] < TARGETS["first_screen_s"])))
            for word, t in b["search_results_s"].items():
                rows.append((f"7 search results from Enter: {word!r}", fmt_s(t), "", "",
                             f"< {TARGETS['search_results_s']:.0f} s", verdict(t < TARGETS["search_results_s"])))

    out["failures"] = failures
    print()
    print_table(sorted(rows, key=lambda r: r[0].split()[0]), HEADER)  # in figure order
    print()
    print(json.dumps(out, separators=(",", ":")))
    for f in failures:
        print(f"FAILED: {f}")
    return 1 if failures else 0


def latency_rows(rows: list, name: str, lat: dict) -> None:
    if not lat:
        rows.append((f"{name}: questions", "no runs indexed", "", "", "", "MISSED"))
        return
    for label, key, base_ms in (
            ("runs page (model + outcome, by cost) / default page", "page_ms", lat["default_page_ms"]),
            (f"{PAGE}-run search with snippets / full-text match alone", "search_ms", lat["match_ms"]),
            ("open a run (family) / cook its file", "open_ms", lat.get("cook_file_ms"))):
        target = TARGETS[key]
        rows.append((f"{name} p95: {label}", fmt_ms(lat[key]), fmt_ms(base_ms) if base_ms else "",
                     fmt_ratio(lat[key] / base_ms) if base_ms else "", f"< {target:.0f} ms",
                     verdict(lat[key] < target)))


def fmt_ms(x: float) -> str:
    return f"{x:.2f} ms" if x < 10 else f"{x:.1f} ms"


def skip(rows: list, out: dict, key: str, label: str, why: str) -> None:
    print(f"  {label}: {why}", flush=True)
    out[key] = {"skipped": why}
    rows.append((label, "", "", "", "", why))


def postgres(rows: list, out: dict, failures: list, corpus: Path, scope: Scope, sqlite_found: dict,
             sqlite_index_s: float, has_index: bool) -> None:
    """Row 6: the corpus indexed into a throwaway PostgreSQL server as row 1 indexes it into
    SQLite, then asked row 5's questions."""
    from tests import pgserver

    try:
        with pgserver.running() as url:
            t = run_child(index_argv(url, corpus, 1, has_index), cwd=REPO)
            lib = Library(url)
            lat = latencies(lib, scope)
            pg_found = marker_runs(lib, scope, PLANTED) if sqlite_found else {}
            lib.close()
    except (pgserver.Unavailable, RuntimeError, LibraryError) as e:
        skip(rows, out, "postgresql", "6 PostgreSQL", f"not measured: {e}".splitlines()[0])
        return
    differ = [w for w in pg_found if pg_found[w] != sqlite_found[w]]
    out["postgresql"] = {"index_s": round(t["s"], 3), **lat, "markers_differ": differ}
    rows.append(("6 PostgreSQL index / SQLite index (row 1)", fmt_s(t["s"]), fmt_s(sqlite_index_s),
                 fmt_ratio(t["s"] / sqlite_index_s), "", ""))
    latency_rows(rows, "6 PostgreSQL", lat)
    rows.append(("6 marker searches: PostgreSQL runs = SQLite runs",
                 "same" if not differ else f"differ: {', '.join(differ)}", "", "", "same",
                 verdict(not differ) if pg_found else "not checked"))
    failures += [f"PostgreSQL and SQLite find different runs for {w!r}" for w in differ]


if __name__ == "__main__":
    sys.exit(main())
