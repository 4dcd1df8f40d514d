"""Cook benchmark: how close `traceview cook` stays to the cost of just parsing the JSON.

    python bench/bench_cook.py [--quick] [--workdir DIR]

Inputs come from the shared generator (`../shared/bench/gen_traces.py` next to the repo);
when it is absent the benchmark says so and exits 0. Every figure is the median of
several runs, each run paired with its baseline in the same loop, because the machine is
shared and noisy. Prints a table, then one JSON line (`{"bench": "cook", ...}`).

Measured:
  1. in-process `pipeline.cook_paths([file])` / `orjson.loads` of every line of the file
  2. the `traceview cook FILE -o /dev/null` process / a process that only parses the lines
  3. peak RSS (ru_maxrss) of both processes, each started by a small wrapper (see `run_child`)
  4. the published `llm-path cook` (llm-path==0.3.0, in a throwaway venv) / ours
  5. linearity: cook seconds per MB on 150-, 300- and 600-request logs
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GEN = REPO.parent / "shared" / "bench" / "gen_traces.py"
LLM_PATH_VERSION = "0.3.0"
LLM_PATH_PREINSTALLED = Path("/tmp/llmpath/venv/bin/llm-path")

# name -> gen_traces.py `requests` arguments
INPUTS = {
    "claude-60": ["60"],
    "claude-150s": ["150", "--stream"],
    "claude-300s": ["300", "--stream"],
    "claude-600s": ["600", "--stream"],
    "openai-200s": ["200", "--format", "openai", "--stream"],
}
TARGET_INPROC = ("claude-300s", 1.5)
TARGET_PROCESS = ("claude-600s", 2.0)
TARGET_RSS_MB = ("claude-600s", 300.0)

BOM = b"\xef\xbb\xbf"

# The baseline is the plain way to parse a JSON lines file: binary file iteration, BOM
# dropped from line 1, blank lines skipped, one orjson.loads per line.
LINE_PARSER = """\
import sys, orjson
with open(sys.argv[1], "rb") as f:
    for n, line in enumerate(f, 1):
        if n == 1 and line.startswith(b"\\xef\\xbb\\xbf"):
            line = line[3:]
        if not line.strip():
            continue
        orjson.loads(line)
"""


def parse_lines(path: Path) -> int:
    import orjson

    count = 0
    with open(path, "rb") as f:
        for n, line in enumerate(f, 1):
            if n == 1 and line.startswith(BOM):
                line = line[3:]
            if not line.strip():
                continue
            orjson.loads(line)
            count += 1
    return count


def parse_lines_buffered(path: Path) -> int:
    """orjson.loads of every line as traceview's own reader hands the lines over (a reused
    buffer instead of one bytes object per line): the stricter baseline of row 1b."""
    import orjson
    from parsers.io.records import iter_lines

    count = 0
    with open(path, "rb") as f:
        for n, line in iter_lines(f):
            if n == 1 and line[:3] == BOM:
                line = line[3:]
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                if bytes(line).strip():
                    raise
                continue  # a blank line
            count += 1
    return count


# --- inputs -------------------------------------------------------------------------------

def generate(workdir: Path, name: str) -> Path:
    """The generator is deterministic, so a file already in the workdir is reused."""
    out = workdir / f"{name}.jsonl"
    if out.exists() and out.stat().st_size > 0:
        return out
    part = out.with_suffix(".part")
    subprocess.run([sys.executable, str(GEN), "requests", INPUTS[name][0], str(part),
                    *INPUTS[name][1:]], check=True, stdout=subprocess.DEVNULL)
    part.replace(out)
    return out


def new_library(workdir: Path) -> dict[str, str]:
    """The environment for a `traceview serve` with a new library of its own in `workdir`: its
    first page is a first open of its files. (The user's own library, which keeps the runs of
    every earlier start, would make a "fresh server" re-scan files it cooked in a previous run.)"""
    path = Path(tempfile.mkdtemp(prefix="library-", dir=workdir)) / "library.sqlite"
    return {"TRACEVIEW_LIBRARY": str(path)}


def mb(path: Path) -> float:
    return path.stat().st_size / 1e6


# --- measuring ----------------------------------------------------------------------------

def timed(fn) -> dict:
    """Wall and CPU seconds of one call. CPU time barely moves when others load the machine,
    so it shows whether a slow figure is ours or the neighbours'."""
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    result = fn()
    run = {"s": time.perf_counter() - t0, "cpu": time.process_time() - c0}
    del result
    gc.collect()
    return run


# Runs argv, waits for it with os.wait4 and prints its wall time and rusage as JSON.
WRAPPER = """\
import json, os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, status, usage = os.wait4(p.pid, 0)
print(json.dumps({"s": time.perf_counter() - t0, "cpu": usage.ru_utime + usage.ru_stime,
                  "rss_kb": usage.ru_maxrss, "rc": os.waitstatus_to_exitcode(status)}))
"""


# Children run as installed programs do, with their compiled bytecode cached (pip writes it at
# install time); an environment that turns the cache off would charge every run the compiling
# of the sources of whichever side is run from a source tree.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def run_child(argv: list[str], cwd: Path | None = None) -> dict:
    """Wall seconds, CPU seconds and peak RSS (MB) of one fresh child process.

    getrusage(RUSAGE_CHILDREN).ru_maxrss is the maximum over every child reaped so far, so it
    cannot tell runs apart; os.wait4 gives the rusage of the one child it reaps. But Linux
    carries the memory high-water mark of the process image a child replaces at exec into its
    ru_maxrss, and subprocess spawns with vfork, so a child of this (large) process would be
    charged this process's peak. Hence a small dedicated wrapper process starts each child
    and reports its figures; the wrapper's own ~10 MB is below any Python child's peak, so it
    cannot inflate the figure."""
    r = subprocess.run([sys.executable, "-c", WRAPPER, *argv], cwd=cwd, capture_output=True, text=True, env=CHILD_ENV)
    if r.returncode != 0 or not r.stdout.strip():
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr[-2000:]}")
    m = json.loads(r.stdout.strip().splitlines()[-1])
    if m["rc"] != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {m['rc']}: {r.stderr[-2000:]}")
    # ru_maxrss is KiB on Linux, bytes on macOS
    return {"s": m["s"], "cpu": m["cpu"], "rss": m["rss_kb"] / (1e6 if sys.platform == "darwin" else 1024)}


def compare(ours: list[dict], base: list[dict]) -> dict:
    """Medians of both sides and their ratios, wall and CPU, with every run kept."""
    o = {k: statistics.median(r[k] for r in ours) for k in ("s", "cpu")}
    b = {k: statistics.median(r[k] for r in base) for k in ("s", "cpu")}
    return {"ours_s": round(o["s"], 4), "base_s": round(b["s"], 4), "ratio": round(o["s"] / b["s"], 3),
            "ours_cpu_s": round(o["cpu"], 4), "base_cpu_s": round(b["cpu"], 4),
            "cpu_ratio": round(o["cpu"] / b["cpu"], 3),
            "ours_runs": [round(r["s"], 4) for r in ours], "base_runs": [round(r["s"], 4) for r in base]}


def paired(reps: int, ours, base) -> tuple[list, list]:
    """Run ours and the baseline back to back `reps` times, alternating which goes first."""
    a, b = [], []
    for i in range(reps):
        if i % 2:
            a.append(ours())
            b.append(base())
        else:
            b.append(base())
            a.append(ours())
    return a, b


def byte_compile() -> None:
    """Compile the project's modules before anything is timed. An installed package has its
    bytecode (pip compiles it at install, Python on first import), but where
    PYTHONDONTWRITEBYTECODE is set a checkout's changed modules would be compiled again by
    every process a benchmark starts, and their start-up timed with the compiler in it."""
    import compileall

    for part in ("parsers", "viewer"):
        compileall.compile_dir(str(REPO / part), quiet=1)


def traceview_argv() -> list[str]:
    script = Path(sys.executable).parent / "traceview"
    if script.exists():
        return [str(script)]
    found = shutil.which("traceview")
    return [found] if found else [sys.executable, "-m", "viewer.cli"]


def find_llm_path(workdir: Path) -> tuple[str | None, str]:
    """The llm-path executable, installing it into a throwaway venv if needed; else why not."""
    if LLM_PATH_PREINSTALLED.exists():
        exe = LLM_PATH_PREINSTALLED
    else:
        venv = workdir / "llm-path-venv"
        exe = venv / "bin" / "llm-path"
        if not exe.exists():
            try:
                subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True,
                               capture_output=True)
                subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                                f"llm-path=={LLM_PATH_VERSION}"], check=True, capture_output=True,
                               timeout=600)
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
                detail = getattr(e, "stderr", b"") or b""
                detail = detail.decode(errors="replace").strip().splitlines()[-1:] if detail else []
                return None, f"installing llm-path=={LLM_PATH_VERSION} failed: {e} {' '.join(detail)}"
    try:
        usage = subprocess.run([str(exe), "cook", "--help"], capture_output=True, text=True,
                               timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{exe} does not run: {e}"
    if "--output" not in usage:
        return None, f"{exe} cook has no --output option; its usage: {usage.strip()[:300]}"
    return str(exe), ""


# --- report -------------------------------------------------------------------------------

def fmt_s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f} s"


def fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}x"


def status(r: dict, limit: float) -> str:
    """The verdict on the wall-time ratio, and the CPU ratio's when a busy machine makes them differ."""
    wall, cpu = r["ratio"] <= limit, r["cpu_ratio"] <= limit
    verdict = "met" if wall else "MISSED"
    return verdict if wall == cpu else f"{verdict} (CPU: {'met' if cpu else 'MISSED'})"


TABLE_HEADER = ("measurement", "input", "ours", "baseline", "ratio", "CPU ratio", "target", "status")


def print_table(rows: list[tuple], header: tuple = TABLE_HEADER) -> None:
    rows = [header] + [tuple(str(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for n, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))


def print_report(rows: list[tuple], out: dict) -> None:
    """A benchmark's end: its table, then its figures as one JSON line."""
    print()
    print_table(rows)
    print()
    print(json.dumps(out, separators=(",", ":")))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one run per measurement instead of three")
    ap.add_argument("--workdir", type=Path,
                    help="keep generated inputs here (and reuse them); default: a temp dir")
    args = ap.parse_args(argv)

    if not GEN.exists():
        print(f"bench_cook: skipped: the trace generator is not at {GEN}")
        return 0
    byte_compile()
    sys.path.insert(0, str(REPO))
    from parsers import pipeline

    reps = 1 if args.quick else 3
    temp = None
    if args.workdir:
        workdir = args.workdir.resolve()
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        temp = tempfile.TemporaryDirectory(prefix="bench_cook-")
        workdir = Path(temp.name)
    try:
        return run(pipeline, workdir, reps)
    except RuntimeError as e:  # a measured process failed: say which and why
        print(f"bench_cook: failed: {e}", file=sys.stderr)
        return 1
    finally:
        if temp:
            temp.cleanup()


def run(pipeline, workdir: Path, reps: int) -> int:
    print(f"cook benchmark: {reps} run(s) per figure, medians; python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; inputs in {workdir}",
          flush=True)
    files = {}
    for name in INPUTS:
        print(f"  generating {name} ...", end=" ", flush=True)
        files[name] = generate(workdir, name)
        print(f"{mb(files[name]):.1f} MB", flush=True)

    rows: list[tuple] = []
    out: dict = {"bench": "cook", "reps": reps, "inputs": {n: round(mb(p), 2) for n, p in files.items()}}

    # 1 + 5: in-process cook over bare line parsing, and seconds per MB
    inproc = {}
    for name in ("claude-150s", "claude-300s", "openai-200s", "claude-600s"):
        path = files[name]
        print(f"  in-process cook {name} ...", flush=True)
        r = inproc[name] = compare(*paired(reps, lambda: timed(lambda: pipeline.cook_paths([path])),
                                           lambda: timed(lambda: parse_lines(path))))
        for k in ("ours_s", "base_s", "ours_cpu_s", "base_cpu_s"):
            r[k + "_per_mb"] = round(r[k] / mb(path), 5)
        target = TARGET_INPROC[1] if name == TARGET_INPROC[0] else None
        rows.append(("1 in-process cook / orjson lines", name, fmt_s(r["ours_s"]), fmt_s(r["base_s"]),
                     fmt_ratio(r["ratio"]), fmt_ratio(r["cpu_ratio"]), f"<= {target}x" if target else "",
                     status(r, target) if target else ""))
    out["in_process"] = inproc

    # 1b: the same cook against parsing every line as our reader reads it (no target; it
    # shows how much of row 1 comes from not parsing repeated history at all)
    strict = {}
    for name in ("claude-300s", "claude-600s"):
        path = files[name]
        print(f"  in-process cook {name} against buffered line parsing ...", flush=True)
        r = strict[name] = compare(*paired(reps, lambda: timed(lambda: pipeline.cook_paths([path])),
                                           lambda: timed(lambda: parse_lines_buffered(path))))
        rows.append(("1b in-process cook / orjson lines, our line reader", name, fmt_s(r["ours_s"]),
                     fmt_s(r["base_s"]), fmt_ratio(r["ratio"]), fmt_ratio(r["cpu_ratio"]), "", ""))
    out["in_process_buffered_lines"] = strict

    # 2 + 3: the traceview cook process over a line-parsing process, with peak RSS
    name, limit = TARGET_PROCESS
    path = files[name]
    print(f"  traceview cook process {name} ...", flush=True)
    tv = traceview_argv()
    ours, base = paired(reps, lambda: run_child([*tv, "cook", str(path), "-o", os.devnull], cwd=REPO),
                        lambda: run_child([sys.executable, "-c", LINE_PARSER, str(path)]))
    r = out["process"] = {"input": name, **compare(ours, base)}
    rss_ours, rss_base = max(x["rss"] for x in ours), max(x["rss"] for x in base)
    r["ours_max_rss_mb"], r["base_max_rss_mb"] = round(rss_ours, 1), round(rss_base, 1)
    rows.append(("2 `traceview cook` process / line-parse process", name, fmt_s(r["ours_s"]),
                 fmt_s(r["base_s"]), fmt_ratio(r["ratio"]), fmt_ratio(r["cpu_ratio"]), f"<= {limit}x",
                 status(r, limit)))
    rss_limit = TARGET_RSS_MB[1]
    rows.append(("3 peak RSS of those processes (max of runs)", name, f"{rss_ours:.0f} MB",
                 f"{rss_base:.0f} MB", fmt_ratio(rss_ours / rss_base), "", f"< {rss_limit:.0f} MB",
                 "met" if rss_ours < rss_limit else "MISSED"))

    # 4: the published llm-path cook against ours
    name = "claude-60"
    path = files[name]
    print("  llm-path cook ...", flush=True)
    exe, why = find_llm_path(workdir)
    if exe is None:
        print(f"  llm-path comparison skipped: {why}", flush=True)
        out["llm_path"] = {"skipped": why}
        rows.append(("4 `traceview cook` vs `llm-path cook` (baseline)", name, "skipped", "", "", "", "", ""))
    else:
        lp_out, tv_out = workdir / "llm-path-out.json", workdir / "traceview-out.json"
        r = out["llm_path"] = {"input": name, "version": LLM_PATH_VERSION, **compare(*paired(
            reps, lambda: run_child([*tv, "cook", str(path), "-o", str(tv_out)], cwd=REPO),
            lambda: run_child([exe, "cook", str(path), "-o", str(lp_out)], cwd=workdir)))}
        r["speedup"] = round(r["base_s"] / r["ours_s"], 2)
        rows.append(("4 `traceview cook` vs `llm-path cook` (baseline)", name, fmt_s(r["ours_s"]),
                     fmt_s(r["base_s"]), fmt_ratio(r["ratio"]), fmt_ratio(r["cpu_ratio"]), "",
                     f"{r['speedup']:.1f}x faster"))

    # 5: linearity, from the in-process medians above (wall, and CPU which noise moves less)
    lin = {}
    for name in ("claude-150s", "claude-300s", "claude-600s"):
        r = inproc[name]
        lin[name] = {"s_per_mb": r["ours_s_per_mb"], "cpu_s_per_mb": r["ours_cpu_s_per_mb"]}
        rows.append(("5 cook ms per MB (CPU ms per MB)", name,
                     f"{r['ours_s_per_mb'] * 1000:.1f} ({r['ours_cpu_s_per_mb'] * 1000:.1f})",
                     f"{r['base_s_per_mb'] * 1000:.1f} ({r['base_cpu_s_per_mb'] * 1000:.1f})", "", "", "", ""))
    growth = {k: lin["claude-600s"][k] / lin["claude-300s"][k] for k in ("s_per_mb", "cpu_s_per_mb")}
    out["linearity"] = {"cook": lin, "per_mb_600_over_300": round(growth["s_per_mb"], 3),
                        "cpu_per_mb_600_over_300": round(growth["cpu_s_per_mb"], 3),
                        "per_mb_300_over_150": round(lin["claude-300s"]["s_per_mb"] / lin["claude-150s"]["s_per_mb"], 3)}
    rows.append(("5 per-MB time, 600 / 300 requests", "claude-600s / claude-300s", f"{growth['s_per_mb']:.2f}x",
                 "", "", f"{growth['cpu_s_per_mb']:.2f}x", "~1.0x = linear", ""))

    targets = {
        "in_process_ratio": inproc[TARGET_INPROC[0]]["ratio"] <= TARGET_INPROC[1],
        "process_ratio": out["process"]["ratio"] <= TARGET_PROCESS[1],
        "max_rss": rss_ours < TARGET_RSS_MB[1],
    }
    out["targets_met"] = targets
    print_report(rows, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
