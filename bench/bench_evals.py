"""Evaluation-runs benchmark: Inspect AI logs and folders of SWE-agent trajectories.

    python bench/bench_evals.py [--runs N] [--workdir DIR] [--profile]

Inputs:
  - two Inspect AI `.eval` logs written by the real `inspect-ai` (INSPECT_VERSION, installed into a
    throwaway venv: $BENCH_INSPECT_VENV, default /tmp/tv_bench_inspect, created when missing) with
    its mock model `mockllm/model`, so no network is needed: a task of 1,000 samples, and a task
    of two samples, one small and one whose conversation is about 20 MB;
  - a folder of 500 trajectories: the real SWE-agent and mini-swe-agent trajectories of
    `../shared/realdata/` copied round-robin under fresh names, each copy made distinct by a
    mark appended to its long strings (identical copies would cook to one trace id and share
    every message, which no real folder does).
When the shared folder is absent, or inspect-ai cannot be installed, or Chromium is not at
/usr/bin/chromium, the parts that need them are skipped with the reason. Prints a table,
then one JSON line (`{"bench": "evals", ...}`).

Measured, each against a baseline in the same run (runs paired, alternating which goes first):
  0. for scale: a one-element Streamlit page, as in the timeline benchmark
  1. the 1,000-sample log's runs on the Open page of `traceview serve LOG` in headless Chromium
     (until the "Runs · 1,000" heading and the table are drawn), from starting the server and
     warm (a new page), target < 2 s; against `inspect view start --log-dir DIR` until its
     sample list shows its rows, the same two ways (target: ours no later)
  1b. a log of 1,000 samples of 200 KB (80 MB), which takes a while to cook: `Library.index` of
     it in-process, until its runs are listed from the summaries / until they are cooked; and
     the Open page from starting the server / `inspect view`'s sample list (no target: what
     listing a log ahead of its cook gives)
  2. `parsers.pipeline.open_run` of the 20 MB sample / of the small sample, in-process
     (target < 2 s), and `/timeline?trace=ID` of each until its first message shows (fresh
     server and warm)
  3. `pipeline.cook_paths([folder])` of the 500 trajectories / `orjson.loads` of every file,
     each side reading the files inside its timing (target <= 2x)
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from viewer import serve  # noqa: E402

from bench_cook import byte_compile, compare, fmt_ratio, fmt_s, new_library, paired, print_report, status, timed  # noqa: E402
from bench_session import verdict  # noqa: E402
from bench_timeline import median, open_timeline, streamlit_floor  # noqa: E402
from browser import CHROMIUM, CHROMIUM_ARGS, shown  # noqa: E402

REALDATA = REPO.parent / "shared" / "realdata"
# The trajectory folders copied into the 500-file folder, and how a trajectory file is named.
TRAJECTORY_DIRS = ("swe_agent_traj", "mini_swe_agent")
TRAJECTORY_SUFFIXES = (".traj", ".traj.json")
FOLDER_SIZE = 500
SAMPLES = 1000
LARGE_KB = 20_000
WIDE_KB = 200  # the conversation of each of the 1,000 samples of the `wide` log (an 80 MB log)
# Later versions write their archives with Zstandard, which the product does not read (see the
# README), and their mock model counts tokens with a tokenizer it downloads.
INSPECT_VERSION = "0.3.130"
INSPECT_VENV = Path(os.environ.get("BENCH_INSPECT_VENV", "/tmp/tv_bench_inspect"))
TARGETS = {"list_s": 2.0, "list_vs_inspect_view": 1.0, "open_run_s": 2.0, "folder_ratio": 2.0}
MARKED_LENGTH = 40  # strings at least this long get the copy's mark (text, not roles or ids)

# The Inspect task: `many` lists n trivial questions; `long` has a small sample and one whose
# conversation is `kb` kilobytes of words (user and assistant turns of about 100 KB).
TASK_PY = '''\
import random

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser
from inspect_ai.scorer import match
from inspect_ai.solver import generate, solver

WORDS = "the a model tool call result file line patch test error value list read write run step".split()


@task
def many(n: int = 1000):
    return Task(dataset=MemoryDataset([Sample(id=i + 1, input=f"What is {i} plus one?", target=str(i + 1))
                                       for i in range(n)]), solver=generate(), scorer=match())


@solver
def long_talk():
    async def solve(state, generate_):
        rng = random.Random(0)
        left = state.metadata["kb"] * 1000
        turn = 0
        while left > 0:
            text = " ".join(rng.choices(WORDS, k=max(1, min(20_000, left // 5))))
            state.messages.append((ChatMessageUser if turn % 2 else ChatMessageAssistant)(content=text))
            left -= len(text)
            turn += 1
        return await generate_(state)
    return solve


@task
def long(kb: int = 20_000):
    samples = [Sample(id=name, input=f"{name}: say hello", target="hello", metadata={"kb": size})
               for name, size in (("large", kb), ("small", 2))]
    return Task(dataset=MemoryDataset(samples), solver=long_talk(), scorer=match())


@task
def wide(n: int = 1000, kb: int = 20):
    return Task(dataset=MemoryDataset([Sample(id=i + 1, input=f"sample {i + 1}: say hello", target="hello",
                                              metadata={"kb": kb}) for i in range(n)]),
                solver=long_talk(), scorer=match())
'''

# On the Open page: the heading counts the runs, then the table is drawn.
RUNS_SHOWN = ("() => [...document.querySelectorAll('h3')].some(h => h.textContent.includes('Runs · {n}'))"
              " && ({table})()")
TABLE = shown("[data-testid=stDataFrame] canvas, [data-testid=stDataFrame] [role=grid]")
# `inspect view` opens a folder's only log on its sample list, a row per sample on screen.
INSPECT_ROWS = shown(".sample-input")


# --- inputs -------------------------------------------------------------------------------

def trajectory_sources(realdata: Path = REALDATA) -> list[Path]:
    """The real trajectories, in a fixed order."""
    return sorted(p for d in TRAJECTORY_DIRS for p in (realdata / d).rglob("*")
                  if p.is_file() and p.name.endswith(TRAJECTORY_SUFFIXES))


def marked(value, mark: str):
    """`value` with `mark` appended to every string of MARKED_LENGTH characters or more."""
    if isinstance(value, str):
        return value + mark if len(value) >= MARKED_LENGTH else value
    if isinstance(value, list):
        return [marked(v, mark) for v in value]
    if isinstance(value, dict):
        return {k: marked(v, mark) for k, v in value.items()}
    return value


def write_folder(out: Path, count: int = FOLDER_SIZE, sources: list[Path] | None = None) -> list[Path]:
    """`count` trajectories in `out`, the sources taken in turn, each under a fresh name
    (`run-0001-<source name>`) and marked with its number so no two are alike."""
    sources = sources if sources is not None else trajectory_sources()
    out.mkdir(parents=True, exist_ok=True)
    docs = [orjson.loads(p.read_bytes()) for p in sources]
    written = []
    for k in range(count):
        src = sources[k % len(sources)]
        path = out / f"run-{k + 1:04d}-{src.name}"
        path.write_bytes(orjson.dumps(marked(docs[k % len(docs)], f" [run {k + 1}]"), option=orjson.OPT_INDENT_2))
        written.append(path)
    return written


def parse_files(paths: list[Path]) -> int:
    """The baseline of the folder cook: read and `orjson.loads` every file."""
    return sum(len(orjson.loads(p.read_bytes())) for p in paths)


def failed(what: str, e: Exception) -> str:
    """Why `what` failed: the exception and the last line its process wrote to stderr."""
    detail = (getattr(e, "stderr", b"") or b"").decode(errors="replace").strip().splitlines()[-1:]
    return f"{what} failed: {e} {' '.join(detail)}".strip()


def venv_exe(venv: Path, requirement: str, version: str, exe: str) -> tuple[str | None, str]:
    """`exe` of `venv` with `requirement`==`version` installed (the venv created and the package
    installed or replaced when needed); else None and why."""
    python = venv / "bin" / "python"
    query = [str(python), "-c", f"import importlib.metadata as m; print(m.version({requirement!r}))"]
    try:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
        if subprocess.run(query, capture_output=True, text=True).stdout.strip() != version:
            subprocess.run([str(python), "-m", "pip", "install", "-q", f"{requirement}=={version}"],
                           check=True, capture_output=True, timeout=900)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
        return None, failed(f"installing {requirement}=={version} into {venv}", e)
    return str(venv / "bin" / exe), version


def eval_log(log_dir: Path) -> Path | None:
    found = sorted(log_dir.glob("*.eval")) if log_dir.is_dir() else []
    return found[-1] if found else None


def inspect_log(inspect: str, task_file: Path, name: str, args: list[str], log_dir: Path) -> Path:
    """The `.eval` log of `inspect eval TASK@name -T args --model mockllm/model` (reused when
    `log_dir` already holds one)."""
    if (log := eval_log(log_dir)) is None:
        subprocess.run([inspect, "eval", f"{task_file}@{name}", *args, "--model", "mockllm/model",
                        "--log-dir", str(log_dir), "--display", "none"],
                       check=True, capture_output=True, cwd=task_file.parent, timeout=1800)
        log = eval_log(log_dir)
    if log is None:
        raise RuntimeError(f"inspect eval wrote no .eval log into {log_dir}")
    return log


def make_logs(inspect: str, workdir: Path) -> dict[str, Path]:
    task_file = workdir / "inspect" / "task.py"
    task_file.parent.mkdir(parents=True, exist_ok=True)
    task_file.write_text(TASK_PY)
    return {"many": inspect_log(inspect, task_file, "many", ["-T", f"n={SAMPLES}"], workdir / "inspect" / "many"),
            "long": inspect_log(inspect, task_file, "long", ["-T", f"kb={LARGE_KB}"], workdir / "inspect" / "long"),
            "wide": inspect_log(inspect, task_file, "wide", ["-T", f"n={SAMPLES}", "-T", f"kb={WIDE_KB}"],
                                workdir / "inspect" / "wide")}


def mb(path: Path) -> float:
    return path.stat().st_size / 1e6


# --- measuring ----------------------------------------------------------------------------

def wait_page(browser, url: str, check: str) -> float:
    """Seconds from navigating a new page to `url` until `check` holds (checked every frame)."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(120_000)
    try:
        t0 = time.perf_counter()
        page.goto(url, wait_until="commit")
        page.wait_for_function(check, polling="raf")
        return time.perf_counter() - t0
    finally:
        page.close()


class InspectView:
    """`inspect view start --log-dir DIR --port P` until `stop()`."""

    def __init__(self, inspect: str, log_dir: Path, workdir: Path):
        self.port = serve.free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(workdir / f"inspect-view-{self.port}.log", "wb")
        self.proc = subprocess.Popen([inspect, "view", "start", "--log-dir", str(log_dir), "--port", str(self.port),
                                      "--host", "127.0.0.1"], stdout=self.log, stderr=subprocess.STDOUT, cwd=workdir)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with urllib.request.urlopen(self.url, timeout=2):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"inspect view did not answer on {self.url} (its output: {self.log.name})")

    def stop(self) -> None:
        serve.stop(self.proc)
        self.log.close()


def from_start(start, url_of, browser, check: str) -> tuple[float, object]:
    """Seconds from starting a server (`start()`) until `check` holds on its page, and the server."""
    t0 = time.perf_counter()
    server = start()
    try:
        wait_page(browser, url_of(server), check)
    except Exception:
        server.stop()
        raise
    return time.perf_counter() - t0, server


def listing(browser, log: Path, inspect: str | None, workdir: Path, runs: int) -> dict:
    """Row 1: the 1,000 samples listed by our Open page and, when it runs, by `inspect view`."""
    ours_check = RUNS_SHOWN.format(n=f"{SAMPLES:,}", table=TABLE)  # the heading writes 1,000
    sides = {"ours": (lambda: serve.Running([log], workdir, env=new_library(workdir)), lambda s: s.url + "/", ours_check)}
    if inspect:
        sides["inspect_view"] = (lambda: InspectView(inspect, log.parent, workdir), lambda s: s.url + "/", INSPECT_ROWS)
    out = {}
    for name, (start, url_of, check) in sides.items():
        try:
            cold, server = from_start(start, url_of, browser, check)
        except (RuntimeError, OSError) as e:
            if name == "ours":
                raise
            print(f"  {name} skipped: {e}", flush=True)
            out[name] = {"skipped": str(e)}
            continue
        try:
            warm = [wait_page(browser, url_of(server), check) for _ in range(runs)]
        finally:
            server.stop()
        out[name] = {"from_start_s": round(cold, 3), "warm_s": round(median(warm), 3),
                     "warm_runs": [round(x, 3) for x in warm]}
    return out


def index_marks(log: Path, workdir: Path, runs: int) -> dict:
    """Row 1b in-process: `Library.index` of a folder holding `log`, into a new library: seconds
    until its runs are in the library (listed from the summaries) and until they are cooked."""
    from viewer.library import ingest
    from viewer.library.library import Library

    listed, cooked = [], []
    for _ in range(runs):
        folder = Path(tempfile.mkdtemp(prefix="wide-", dir=workdir))
        os.link(log, folder / log.name)
        lib = Library(str(folder / "library.sqlite"))
        p = ingest.Progress()
        marks: list[tuple[int, float]] = []
        t0 = time.perf_counter()
        lib.index([folder / log.name], jobs=1, progress=p,
                  on_batch=lambda: marks.append((p.listed, p.runs, time.perf_counter() - t0)))
        lib.close()
        shutil.rmtree(folder)
        listed.append(next(t for n, _, t in marks if n))
        cooked.append(next(t for _, n, t in marks if n))
    return {"listed_s": round(median(listed), 3), "cooked_s": round(median(cooked), 3),
            "listed_runs": [round(x, 3) for x in listed], "cooked_runs": [round(x, 3) for x in cooked]}


def timeline_figures(browser, log: Path, ids: dict[str, str], workdir: Path, runs: int) -> dict:
    """Row 2 in Chromium: the first message of the large sample (fresh server, then warm) and
    of the small one."""
    app = serve.Running([log], workdir, env=new_library(workdir))
    try:
        urls = {name: f"{app.url}/timeline?trace={tid}" for name, tid in ids.items()}

        def first(name):
            t, page = open_timeline(browser, urls[name])
            page.close()
            return t

        cold = first("large")
        large, small = paired(runs, lambda: first("large"), lambda: first("small"))
    finally:
        app.stop()
    return {"cold_s": round(cold, 3), "warm_s": round(median(large), 3), "small_s": round(median(small), 3),
            "ratio": round(median(large) / median(small), 3)}


def profile(label: str, fn) -> None:
    """The 15 functions of `fn()` with the most time of their own."""
    prof = cProfile.Profile()
    prof.runcall(fn)
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(15)
    print(f"\nprofile: {label}\n" + "\n".join(text.getvalue().splitlines()[:40]), flush=True)


# --- main ---------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="paired runs per figure (medians)")
    ap.add_argument("--workdir", type=Path, help="keep and reuse the generated inputs here; default: a temp dir")
    ap.add_argument("--profile", action="store_true", help="print a profile of the in-process figures")
    args = ap.parse_args(argv)
    byte_compile()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        return run(args.workdir.resolve(), args)
    with tempfile.TemporaryDirectory(prefix="bench_evals-") as tmp:
        return run(Path(tmp), args)


def skip(out: dict, rows: list, key: str, label: str, why: str) -> None:
    print(f"  {label} skipped: {why}", flush=True)
    out[key] = {"skipped": why}
    rows.append((label, "", "skipped", "", "", "", "", ""))


def run(workdir: Path, args) -> int:
    from parsers import pipeline

    reps = args.runs
    print(f"evals benchmark: {reps} run(s) per figure, medians; python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; files in {workdir}", flush=True)
    met: dict[str, bool] = {}  # filled in by each figure
    out: dict = {"bench": "evals", "runs": reps, "targets": TARGETS, "targets_met": met}
    rows: list[tuple] = []
    browser_ok = Path(CHROMIUM).exists()

    print(f"  inspect-ai {INSPECT_VERSION} in {INSPECT_VENV} ...", flush=True)
    inspect, why = venv_exe(INSPECT_VENV, "inspect-ai", INSPECT_VERSION, "inspect")
    logs = None
    if inspect is not None:
        print("  writing the Inspect logs with mockllm/model ...", flush=True)
        try:
            logs = make_logs(inspect, workdir)
            out["inputs"] = {name: {"file": p.name, "mb": round(mb(p), 2)} for name, p in logs.items()}
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, RuntimeError) as e:
            why = failed("inspect eval", e)
    if logs is None:
        for key, label in (("listing", "1 Open page lists 1,000 samples"), ("open_run", "2 open a 20 MB sample")):
            skip(out, rows, key, label, why)

    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS) if browser_ok else None
        try:
            if logs:
                measure_inspect(pipeline, browser, logs, inspect, workdir, reps, args.profile, out, rows, met)
        finally:
            if browser:
                browser.close()

    measure_folder(pipeline, workdir, reps, args.profile, out, rows, met)

    print_report(rows, out)
    return 0


def measure_inspect(pipeline, browser, logs, inspect, workdir, reps, want_profile, out, rows, met) -> None:
    many, long = logs["many"], logs["long"]
    listed, _ = pipeline.list_runs([many])
    name = f"{len(listed)} samples, {mb(many):.1f} MB .eval"

    # 1: the runs listed on the Open page, against `inspect view`
    if browser is None:
        skip(out, rows, "listing", "1 Open page lists 1,000 samples", f"Chromium is not at {CHROMIUM}")
    else:
        print("  Open page / inspect view in Chromium ...", flush=True)
        r = out["listing"] = listing(browser, many, inspect, workdir, reps)
        r["streamlit_floor_s"] = round(streamlit_floor(browser, workdir, reps), 3)
        rows.append(("0 a one-element Streamlit page (for scale)", "", fmt_s(r["streamlit_floor_s"]),
                     "", "", "", "", ""))
        ours, theirs = r["ours"], r.get("inspect_view", {})
        theirs = theirs if "warm_s" in theirs else None
        limit = TARGETS["list_s"]
        for key, what in (("from_start_s", "from server start"), ("warm_s", "warm")):
            ratio = ours[key] / theirs[key] if theirs else None
            rows.append((f"1 runs listed ({what}) / inspect view's sample list", name, fmt_s(ours[key]),
                         fmt_s(theirs[key] if theirs else None), fmt_ratio(ratio), "", f"< {limit:.0f} s, <= 1x",
                         f"{verdict(ours[key] < limit)}, {verdict(ratio is not None and ratio <= 1)}"))
        met["list_s"] = ours["warm_s"] < limit
        if theirs:
            met["list_vs_inspect_view"] = ours["warm_s"] <= theirs["warm_s"]

    # 1b: a log whose cook takes a while: its runs are listed from the summaries first
    wide = logs["wide"]
    name = f"{SAMPLES:,} samples of {WIDE_KB} KB, {mb(wide):.0f} MB .eval"
    print("  index of the wide log in-process ...", flush=True)
    r = out["wide_index"] = index_marks(wide, workdir, reps)
    rows.append(("1b index: runs listed / all cooked (in-process)", name, fmt_s(r["listed_s"]), fmt_s(r["cooked_s"]),
                 fmt_ratio(r["listed_s"] / r["cooked_s"]), "", "", ""))
    if browser is not None:
        print("  Open page / inspect view in Chromium, wide log ...", flush=True)
        r = out["wide_listing"] = listing(browser, wide, inspect, workdir, reps)
        ours, theirs = r["ours"], r.get("inspect_view", {})
        theirs = theirs if "from_start_s" in theirs else None
        ratio = ours["from_start_s"] / theirs["from_start_s"] if theirs else None
        rows.append(("1b runs listed (from server start) / inspect view's", name, fmt_s(ours["from_start_s"]),
                     fmt_s(theirs["from_start_s"] if theirs else None), fmt_ratio(ratio), "", "", ""))

    # 2: one sample of about 20 MB, in-process and in the timeline
    runs_of = {r.summary.title.split(":")[0]: r for r in pipeline.list_runs([long])[0]}
    large, small = runs_of["large"], runs_of["small"]
    name = f"20 MB sample / small sample ({mb(long):.1f} MB .eval)"
    print("  open_run in-process ...", flush=True)
    r = out["open_run"] = compare(*paired(reps, lambda: timed(lambda: pipeline.open_run(long, large.summary.index)),
                                          lambda: timed(lambda: pipeline.open_run(long, small.summary.index))))
    limit = TARGETS["open_run_s"]
    rows.append(("2 open_run in-process", name, fmt_s(r["ours_s"]), fmt_s(r["base_s"]), fmt_ratio(r["ratio"]),
                 fmt_ratio(r["cpu_ratio"]), f"< {limit:.0f} s", verdict(r["ours_s"] < limit)))
    met["open_run_s"] = r["ours_s"] < limit
    if browser is None:
        skip(out, rows, "open_timeline", "2 timeline first screen", f"Chromium is not at {CHROMIUM}")
    else:
        print("  timeline of the 20 MB sample in Chromium ...", flush=True)
        b = out["open_timeline"] = timeline_figures(browser, long, {"large": large.trace_id, "small": small.trace_id},
                                                    workdir, reps)
        rows.append(("2 timeline first screen, fresh server", name, fmt_s(b["cold_s"]), "", "", "",
                     f"< {limit:.0f} s", verdict(b["cold_s"] < limit)))
        rows.append(("2 timeline first screen, warm / small sample", name, fmt_s(b["warm_s"]), fmt_s(b["small_s"]),
                     fmt_ratio(b["ratio"]), "", f"< {limit:.0f} s", verdict(b["warm_s"] < limit)))
    if want_profile:
        profile("open_run of the 20 MB sample", lambda: pipeline.open_run(long, large.summary.index))


def measure_folder(pipeline, workdir, reps, want_profile, out, rows, met) -> None:
    label = "3 cook_paths(folder) / orjson.loads of every file"
    if not trajectory_sources():
        skip(out, rows, "folder", label, f"no SWE-agent trajectories under {REALDATA}")
        return
    folder = workdir / "trajectories"
    shutil.rmtree(folder, ignore_errors=True)
    files = write_folder(folder)
    size = sum(p.stat().st_size for p in files) / 1e6
    doc, _ = pipeline.cook_paths([folder])
    out["folder_input"] = {"files": len(files), "mb": round(size, 2), "traces": len(doc["traces"])}
    del doc
    print(f"  cooking a folder of {len(files)} trajectories ({size:.1f} MB) ...", flush=True)
    r = out["folder"] = compare(*paired(reps, lambda: timed(lambda: pipeline.cook_paths([folder])),
                                        lambda: timed(lambda: parse_files(sorted(folder.iterdir())))))
    limit = TARGETS["folder_ratio"]
    rows.append((label, f"{len(files)} trajectories, {size:.1f} MB", fmt_s(r["ours_s"]), fmt_s(r["base_s"]),
                 fmt_ratio(r["ratio"]), fmt_ratio(r["cpu_ratio"]), f"<= {limit:.0f}x", status(r, limit)))
    met["folder_ratio"] = r["ratio"] <= limit
    if want_profile:
        profile("cook_paths of the trajectory folder", lambda: pipeline.cook_paths([folder]))


if __name__ == "__main__":
    sys.exit(main())
