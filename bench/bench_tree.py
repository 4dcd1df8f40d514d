"""Request-tree benchmark: time per request of `assign_parents` as logs grow, on three shapes.

    python bench/bench_tree.py [--quick] [--workdir DIR] [--sizes 1000,4000,16000] [--impl FILE]

Shapes, each at 1,000 / 4,000 / 16,000 requests:
  independent  one question per request under a shared system prompt (a batch evaluation):
               no request continues another, and every one is a candidate for every later one
  retries      the same request and response again and again (a client retrying one call)
  sessions     agent sessions of 40 requests each, every request carrying its session's whole
               history, 25 / 100 / 400 sessions side by side (`gen_traces.py requests 1000
               --sessions 25`, then copies of it under other message ids)

The tree's input (model, message ids, tools of every request) is taken from a real cook of
each log, then `assign_parents` alone is timed: the median of several runs, wall and CPU.
Linear means the same time per request at every size, so the table gives time per request
and its ratio to the smallest size, both from this run. The whole cook of each shape's
1,000-request log is timed too (with the same tree), for the tree's share of its CPU time.
`--impl FILE` times the `assign_parents` of another tree module (an older
parsers/cook/tree.py) on the same inputs, and in that whole cook.
Without the shared generator (`../shared/bench/gen_traces.py`) the sessions shape is skipped.
Prints a table, then one JSON line (`{"bench": "tree", ...}`).
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_cook import print_table, timed

REPO = Path(__file__).resolve().parents[1]
GEN = REPO.parent / "shared" / "bench" / "gen_traces.py"
SIZES = (1000, 4000, 16000)
SESSION_LEN = 40  # requests per session in the sessions shape
BASE_SIZE = 1000  # the generated sessions log, and the size whose whole cook is timed


# --- inputs -------------------------------------------------------------------------------

def chat_line(n: int, question: str, answer: str) -> str:
    """One OpenAI chat-completions record as a logging proxy writes it."""
    return json.dumps({
        "id": f"r{n}", "timestamp": 1746000000000 + n,
        "request": {"model": "gpt-4o", "messages": [{"role": "system", "content": "grade this"},
                                                    {"role": "user", "content": question}]},
        "response": {"choices": [{"message": {"role": "assistant", "content": answer}}],
                     "usage": {"prompt_tokens": 10, "completion_tokens": 2}}})


def write_log(workdir: Path, shape: str, size: int) -> Path:
    out = workdir / f"{shape}-{size}.jsonl"
    if out.exists() and out.stat().st_size > 0:
        return out
    part = out.with_suffix(".part")
    if shape == "sessions":
        subprocess.run([sys.executable, str(GEN), "requests", str(size), str(part),
                        "--sessions", str(size // SESSION_LEN)], check=True, stdout=subprocess.DEVNULL)
    else:
        with open(part, "w") as f:
            for n in range(size):
                if shape == "independent":
                    f.write(chat_line(n, f"question number {n}", f"answer {n}") + "\n")
                else:
                    f.write(chat_line(n, "where is my order?", "on its way") + "\n")
    part.replace(out)
    return out


def tree_input(path: Path) -> list[tuple]:
    """The requests as the cook hands them to `assign_parents` (one trace per log)."""
    from parsers import pipeline
    from parsers.cook import builder

    seen = []
    real = builder.assign_parents

    def capture(requests):
        seen.append(requests)
        return real(requests)

    builder.assign_parents = capture
    try:
        pipeline.cook_paths([path])
    finally:
        builder.assign_parents = real
    if len(seen) != 1:
        raise RuntimeError(f"{path}: expected one request log, got {len(seen)}")
    return seen[0]


def copies(requests: list[tuple], k: int) -> list[tuple]:
    """k copies of a log under distinct message ids, interleaved request by request: k times
    the sessions, each as long as before."""
    out = []
    for r in requests:
        for c in range(k):
            if c == 0:
                out.append(r)
            else:
                model, req, resp, tools = r
                out.append((model, [f"{c}:{m}" for m in req], [f"{c}:{m}" for m in resp], tools))
    return out


# --- measuring ----------------------------------------------------------------------------

def median(runs: list[dict]) -> dict:
    return {k: statistics.median(r[k] for r in runs) for k in ("s", "cpu")}


def load_impl(path: Path | None):
    if path is None:
        from parsers.cook.tree import assign_parents
        return assign_parents, "parsers/cook/tree.py"
    spec = importlib.util.spec_from_file_location("tree_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.assign_parents, str(path)


# --- report -------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one run per figure instead of three")
    ap.add_argument("--workdir", type=Path, help="keep generated logs here (and reuse them); default: a temp dir")
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)),
                    help="request counts, comma-separated, the first being the base of the ratios")
    ap.add_argument("--impl", type=Path, help="time the assign_parents of this tree module instead")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    sys.path.insert(0, str(REPO))
    temp = None
    if args.workdir:
        workdir = args.workdir.resolve()
        workdir.mkdir(parents=True, exist_ok=True)
    else:
        temp = tempfile.TemporaryDirectory(prefix="bench_tree-")
        workdir = Path(temp.name)
    try:
        return run(workdir, sizes, 1 if args.quick else 3, args.impl)
    finally:
        if temp:
            temp.cleanup()


def run(workdir: Path, sizes: list[int], reps: int, impl: Path | None) -> int:
    from parsers import pipeline
    from parsers.cook import builder

    project_tree = builder.assign_parents
    assign_parents, impl_name = load_impl(impl)
    print(f"tree benchmark: {impl_name}, {reps} run(s) per figure, medians; python "
          f"{platform.python_version()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
          f"logs in {workdir}", flush=True)
    shapes = ["independent", "retries"]
    if GEN.exists():
        shapes.append("sessions")
    else:
        print(f"  sessions shape skipped: the trace generator is not at {GEN}")
    out = {"bench": "tree", "impl": impl_name, "reps": reps, "load_average": round(os.getloadavg()[0], 2),
           "shapes": {}, "cook": {}}
    rows, cook_rows = [], []
    for shape in shapes:
        print(f"  {shape}: reading the logs ...", flush=True)
        if shape == "sessions":
            base = BASE_SIZE
            path = write_log(workdir, shape, base)
            logs = {base: path}
            first = tree_input(path)
            inputs = {size: copies(first, max(1, size // base))[:size] for size in sizes}
        else:
            logs = {size: write_log(workdir, shape, size) for size in sizes}
            inputs = {size: tree_input(logs[size]) for size in sizes}
        figures = out["shapes"][shape] = {}
        for size in sizes:
            requests = inputs[size]
            print(f"  {shape} {size}: assign_parents ...", flush=True)
            m = median([timed(lambda: assign_parents(requests)) for _ in range(reps)])
            figures[size] = {"requests": len(requests), "s": round(m["s"], 4), "cpu_s": round(m["cpu"], 4),
                             "us_per_request": round(m["s"] / len(requests) * 1e6, 2),
                             "cpu_us_per_request": round(m["cpu"] / len(requests) * 1e6, 2)}
        base = figures[sizes[0]]
        for size in sizes:
            f = figures[size]
            f["per_request_over_base"] = round(f["us_per_request"] / base["us_per_request"], 2)
            f["cpu_per_request_over_base"] = round(f["cpu_us_per_request"] / base["cpu_us_per_request"], 2)
            rows.append((shape, f"{f['requests']:,}", f"{f['s']:.3f} s", f"{f['us_per_request']:.1f}",
                         f"{f['cpu_us_per_request']:.1f}", f"{f['per_request_over_base']:.2f}x",
                         f"{f['cpu_per_request_over_base']:.2f}x"))
        # the whole cook of the 1,000-request log, and the tree's share of it
        path = logs.get(BASE_SIZE)
        if path is not None:
            print(f"  {shape} {BASE_SIZE}: whole cook ...", flush=True)
            builder.assign_parents = assign_parents  # the implementation under test
            try:
                m = median([timed(lambda: pipeline.cook_paths([path])) for _ in range(reps)])
            finally:
                builder.assign_parents = project_tree
            tree_cpu = figures[BASE_SIZE]["cpu_s"] if BASE_SIZE in figures else None
            c = out["cook"][shape] = {"requests": BASE_SIZE, "mb": round(path.stat().st_size / 1e6, 2),
                                      "s": round(m["s"], 4), "cpu_s": round(m["cpu"], 4),
                                      "tree_cpu_share": round(tree_cpu / m["cpu"], 3) if tree_cpu else None}
            cook_rows.append((shape, f"{BASE_SIZE:,}", f"{c['mb']:.1f} MB", f"{c['s']:.3f} s",
                              f"{c['cpu_s']:.3f} s", "-" if c["tree_cpu_share"] is None else f"{c['tree_cpu_share']:.0%}"))

    print()
    print_table(rows, ("shape", "requests", "assign_parents", "us/request", "CPU us/request",
                       f"per request / {sizes[0]:,}", "CPU ratio"))
    if cook_rows:
        print()
        print_table(cook_rows, ("whole cook", "requests", "log", "cook", "CPU", "tree's share of CPU"))
    print()
    print(json.dumps(out, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
