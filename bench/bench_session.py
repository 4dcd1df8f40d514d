"""Coding-agent session benchmark: a 15 MB Claude Code session, cooked, opened and compared with claude-code-log.

    python bench/bench_session.py [--runs N] [--size-mb MB] [--workdir DIR]

The input is a real Claude Code session from the shared folder next to the repository
(`../shared/realdata/claude_code_session/`, 125 KB, a main conversation with two sub-agents
inline as sidechains) repeated until the file is about --size-mb large: every copy gets
fresh record uuids, message ids, request ids and tool_use ids (replaced wherever they occur,
so tool results still name their calls), its first record continues the previous copy's
chain (`parentUuid` = the previous copy's last uuid) and its timestamps move forward past
the previous copy's. Deterministic (a seeded generator). When the shared folder is absent
the benchmark says so and exits 0. Prints a table, then one JSON line
(`{"bench": "session", ...}`).

Measured, each against a baseline in the same run (runs paired, alternating which goes first):
  1. in-process `pipeline.cook_paths([session])` / `orjson.loads` of every line (target
     <= 2x), and the peak RSS of a process that only cooks it / of one that only parses
     its lines
  2. `/timeline?trace=ID` of the session in headless Chromium against `traceview serve`,
     from navigation to the first message visible: the first open on a fresh server and
     warm (target < 2 s), against the same for three copies of the session, whose first page
     holds the same messages (needs Chromium at /usr/bin/chromium, else skipped)
  3. the `traceview cook SESSION -o out.json` process, and the `traceview export SESSION --to
     html -o OUT` process (one page: the session, its sub-agents nested), each against
     claude-code-log's conversion of the same file to HTML (target: ours >= 5x faster), with
     the processes' peak RSS.
     claude-code-log is installed into a throwaway venv ($BENCH_CCL_VENV, default
     /tmp/tv_bench_ccl) when missing; if that fails the comparison is skipped with the reason
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import random
import re
import shutil
import string
import subprocess
import sys
import tempfile
import uuid
from datetime import datetime, timedelta
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from viewer import serve  # noqa: E402

from bench_cook import (LINE_PARSER, byte_compile, compare, fmt_ratio, fmt_s, new_library, paired, parse_lines,  # noqa: E402
                        print_report, run_child, status, timed, traceview_argv)
from bench_timeline import median, open_timeline, trace_id  # noqa: E402
from browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

SESSION = REPO.parent / "shared" / "realdata" / "claude_code_session" / "ccv_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
SEED = 0
GAP = timedelta(minutes=1)  # between one copy's last record and the next copy's first
# The browser baseline: 3 copies make 54 timeline entries, so its first page (50 entries)
# shows the same messages as the large session's, and what differs is the session's size.
SMALL_COPIES = 3
CCL_VERSION = "1.7.0"
CCL_VENV = Path(os.environ.get("BENCH_CCL_VENV", "/tmp/tv_bench_ccl"))
TARGETS = {"in_process_ratio": 2.0, "first_screen_s": 2.0, "ccl_speedup": 5.0}

# A process that cooks its argument and nothing else: the cook's peak memory.
COOK_ONLY = "import sys\nfrom parsers import pipeline\npipeline.cook_paths(sys.argv[1:])\n"

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\Z")
ID_CHARS = string.ascii_letters + string.digits


# --- the input ----------------------------------------------------------------------------

def session_ids(records: list[dict]) -> set[str]:
    """Every id a copy must not share with another: record uuids, message and request ids,
    tool_use ids (tool results name the same ids, so replacing the text replaces both)."""
    ids = set()
    for rec in records:
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        ids.update(v for v in (rec.get("uuid"), rec.get("requestId"), msg.get("id")) if isinstance(v, str))
        blocks = msg.get("content") if isinstance(msg.get("content"), list) else []
        ids.update(b["id"] for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use")
    return ids


def fresh_id(old: str, rng: random.Random) -> str:
    """A new id of the old one's shape: a uuid4 for a uuid, else the same prefix
    (`msg_`, `req_`, `toolu_`) and as many random letters and digits."""
    if UUID.match(old):
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))
    prefix, sep, rest = old.rpartition("_")
    return prefix + sep + "".join(rng.choices(ID_CHARS, k=len(rest)))


def shifted(stamp: str, by: timedelta) -> str:
    t = datetime.fromisoformat(stamp.replace("Z", "+00:00")) + by
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_session(source: Path, copies: int, out: Path, seed: int = SEED) -> Path:
    """`source` (a Claude Code session, one record a line) repeated `copies` times into `out`,
    each copy with fresh ids, chained to the one before and later in time."""
    lines = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    records = [orjson.loads(line) for line in lines]
    ids = session_ids(records)
    pattern = re.compile("|".join(map(re.escape, sorted(ids, key=len, reverse=True))))
    stamps = [datetime.fromisoformat(r["timestamp"].replace("Z", "+00:00")) for r in records]
    span = max(stamps) - min(stamps) + GAP
    rng = random.Random(seed)
    previous = None  # the last uuid of the copy before
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f:
        for k in range(copies):
            new = {old: fresh_id(old, rng) for old in sorted(ids)}
            for n, line in enumerate(lines):
                rec = orjson.loads(pattern.sub(lambda m: new[m.group(0)], line))
                rec["timestamp"] = shifted(rec["timestamp"], span * k)
                if n == 0 and previous is not None:
                    rec["parentUuid"] = previous
                f.write(orjson.dumps(rec) + b"\n")
            previous = new[records[-1]["uuid"]]
    return out


def make_inputs(workdir: Path, size_mb: float) -> dict[str, Path]:
    """The large session and the small one (the browser baseline), each in its own folder
    under the session's own file name, as Claude Code writes it."""
    copies = max(1, math.ceil(size_mb * 1e6 / SESSION.stat().st_size))
    return {name: write_session(SESSION, n, workdir / name / SESSION.name.removeprefix("ccv_"))
            for name, n in (("large", copies), ("small", SMALL_COPIES))}


def mb(path: Path) -> float:
    return path.stat().st_size / 1e6


# --- claude-code-log ----------------------------------------------------------------------

def find_ccl() -> tuple[str | None, str]:
    """claude-code-log's executable, installed into its throwaway venv if needed; else why not."""
    exe = CCL_VENV / "bin" / "claude-code-log"
    if not exe.exists():
        try:
            subprocess.run([sys.executable, "-m", "venv", str(CCL_VENV)], check=True, capture_output=True)
            subprocess.run([str(CCL_VENV / "bin" / "python"), "-m", "pip", "install", "-q",
                            f"claude-code-log=={CCL_VERSION}"], check=True, capture_output=True, timeout=600)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
            detail = (getattr(e, "stderr", b"") or b"").decode(errors="replace").strip().splitlines()[-1:]
            return None, f"installing claude-code-log=={CCL_VERSION} into {CCL_VENV} failed: {e} {' '.join(detail)}"
    try:
        version = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{exe} does not run: {e}"
    if not version:
        return None, f"{exe} --version printed nothing"
    return str(exe), version


# --- measuring ----------------------------------------------------------------------------

def first_screen(browser, url: str) -> float:
    t, page = open_timeline(browser, url)
    page.close()
    return t


def browser_figures(inputs: dict[str, Path], workdir: Path, runs: int) -> dict:
    """Seconds to the first message of the large session (first open on a fresh server, then
    warm) and of the small session, both files served by one `traceview serve`."""
    from playwright.sync_api import sync_playwright

    app = serve.Running(list(inputs.values()), workdir, env=new_library(workdir))
    try:
        urls = {name: f"{app.url}/timeline?trace={trace_id(p)}" for name, p in inputs.items()}
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                cold = first_screen(browser, urls["large"])
                large, small = paired(runs, lambda: first_screen(browser, urls["large"]),
                                      lambda: first_screen(browser, urls["small"]))
                # A returning reader: the browser has the app's scripts cached from a visit before.
                ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
                first_screen(ctx, urls["small"])
                c_large, c_small = paired(runs, lambda: first_screen(ctx, urls["large"]),
                                          lambda: first_screen(ctx, urls["small"]))
            finally:
                browser.close()
    finally:
        app.stop()
    warm, base = median(large), median(small)
    return {"cold_s": round(cold, 3), "warm_s": round(warm, 3), "small_s": round(base, 3),
            "ratio": round(warm / base, 3), "warm_runs": [round(x, 3) for x in large],
            "small_runs": [round(x, 3) for x in small],
            "cached_s": round(median(c_large), 3), "cached_small_s": round(median(c_small), 3)}


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def session_args(doc: str) -> argparse.ArgumentParser:
    """The options of a benchmark over a generated session."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, help="paired runs per figure (medians)")
    ap.add_argument("--size-mb", type=float, default=15.0, help="size of the generated session")
    ap.add_argument("--workdir", type=Path, help="write the inputs and outputs here; default: a temp dir")
    return ap


def run_on_session(name: str, args, run) -> int:
    """`run(workdir, args)` in --workdir, else in a temporary folder; skipped (exit 0) without
    the shared session."""
    if not SESSION.exists():
        print(f"{name}: skipped: the Claude Code session is not at {SESSION}")
        return 0
    byte_compile()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        return run(args.workdir.resolve(), args)
    with tempfile.TemporaryDirectory(prefix=f"{name}-") as tmp:
        return run(Path(tmp), args)


def _size(path: Path) -> int:
    """Bytes of a file, or of every file in a folder."""
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def main(argv: list[str] | None = None) -> int:
    return run_on_session("bench_session", session_args(__doc__).parse_args(argv), run)


def run(workdir: Path, args) -> int:
    from parsers import pipeline

    reps = args.runs
    print(f"session benchmark: {reps} run(s) per figure, medians; python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; files in {workdir}", flush=True)
    inputs = make_inputs(workdir, args.size_mb)
    path = inputs["large"]
    doc, _ = pipeline.cook_paths([path])
    shape = {"mb": round(mb(path), 2), "lines": path.read_bytes().count(b"\n"),
             "traces": len(doc["traces"]), "messages": len(doc["messages"])}
    del doc
    print(f"  input: {shape['mb']:.1f} MB, {shape['lines']} lines; cooked: {shape['traces']} traces "
          f"(the session and its sub-agents), {shape['messages']} messages", flush=True)
    out: dict = {"bench": "session", "runs": reps, "input": shape}
    rows: list[tuple] = []
    name = f"{shape['mb']:.0f} MB session"

    # 1: in-process cook over bare line parsing; peak RSS of a cook-only process
    print("  in-process cook ...", flush=True)
    r = out["in_process"] = compare(*paired(reps, lambda: timed(lambda: pipeline.cook_paths([path])),
                                            lambda: timed(lambda: parse_lines(path))))
    limit = TARGETS["in_process_ratio"]
    rows.append(("1 in-process cook / orjson lines", name, fmt_s(r["ours_s"]), fmt_s(r["base_s"]),
                 fmt_ratio(r["ratio"]), fmt_ratio(r["cpu_ratio"]), f"<= {limit}x", status(r, limit)))
    cook_rss = run_child([sys.executable, "-c", COOK_ONLY, str(path)], cwd=REPO)["rss"]
    parse_rss = run_child([sys.executable, "-c", LINE_PARSER, str(path)])["rss"]
    r["cook_max_rss_mb"], r["parse_max_rss_mb"] = round(cook_rss, 1), round(parse_rss, 1)
    rows.append(("1 peak RSS: cook-only process / line-parse process", name, f"{cook_rss:.0f} MB",
                 f"{parse_rss:.0f} MB", fmt_ratio(cook_rss / parse_rss), "", "", ""))

    # 2: the timeline's first screen in Chromium
    if not Path(CHROMIUM).exists():
        why = f"Chromium is not at {CHROMIUM}"
        print(f"  timeline first screen skipped: {why}", flush=True)
        out["first_screen"] = {"skipped": why}
        rows.append(("2 timeline first screen", name, "skipped", "", "", "", "", ""))
    else:
        print("  timeline first screen in Chromium ...", flush=True)
        b = out["first_screen"] = browser_figures(inputs, workdir, reps)
        limit = TARGETS["first_screen_s"]
        rows.append(("2 timeline first screen, first open on a fresh server", name, fmt_s(b["cold_s"]),
                     "", "", "", f"< {limit:.0f} s", verdict(b["cold_s"] < limit)))
        rows.append((f"2 timeline first screen, warm / {SMALL_COPIES} copies of the session", name,
                     fmt_s(b["warm_s"]), fmt_s(b["small_s"]), fmt_ratio(b["ratio"]), "", f"< {limit:.0f} s",
                     verdict(b["warm_s"] < limit)))
        rows.append((f"2 timeline first screen, returning reader (scripts cached) / {SMALL_COPIES} copies", name,
                     fmt_s(b["cached_s"]), fmt_s(b["cached_small_s"]), fmt_ratio(b["cached_s"] / b["cached_small_s"]),
                     "", f"< {limit:.0f} s", verdict(b["cached_s"] < limit)))

    # 3: the traceview cook and export processes against claude-code-log's HTML conversion
    print("  claude-code-log ...", flush=True)
    exe, version = find_ccl()
    ours_commands = {
        "cook": ("`traceview cook`", ["cook", str(path), "-o", str(workdir / "traceview-out.json")],
                 workdir / "traceview-out.json"),
        "export_html": ("`traceview export --to html`",
                        ["export", str(path), "--to", "html", "-o", str(workdir / "traceview.html")],
                        workdir / "traceview.html"),
    }
    if exe is None:
        print(f"  claude-code-log comparison skipped: {version}", flush=True)
        out["claude_code_log"] = {"skipped": version}
        rows.append(("3 traceview / claude-code-log to HTML", name, "skipped", "", "", "", "", ""))
    else:
        ccl_out = workdir / "claude-code-log-out.html"
        out["claude_code_log"] = {"version": version}
        for key, (label, argv, written) in ours_commands.items():
            if written.is_dir():
                shutil.rmtree(written)  # each export writes its pages anew
            ours, base = paired(reps, lambda: run_child([*traceview_argv(), *argv], cwd=REPO),
                                lambda: run_child([exe, str(path), "-o", str(ccl_out), "--no-cache"], cwd=workdir))
            r = out["claude_code_log"][key] = compare(ours, base)
            r["speedup"], r["cpu_speedup"] = round(r["base_s"] / r["ours_s"], 2), round(r["base_cpu_s"] / r["ours_cpu_s"], 2)
            r["ours_max_rss_mb"] = round(max(x["rss"] for x in ours), 1)
            r["base_max_rss_mb"] = round(max(x["rss"] for x in base), 1)
            r["output_mb"] = {"traceview": round(_size(written) / 1e6, 2), "claude_code_log": round(mb(ccl_out), 2)}
            limit = TARGETS["ccl_speedup"]
            rows.append((f"3 {label} / claude-code-log to HTML", name, fmt_s(r["ours_s"]), fmt_s(r["base_s"]),
                         fmt_ratio(r["ratio"]), fmt_ratio(r["cpu_ratio"]), f">= {limit:.0f}x faster",
                         f"{r['speedup']:.1f}x faster (CPU {r['cpu_speedup']:.1f}x): {verdict(r['speedup'] >= limit)}"))
            rows.append(("3 peak RSS of those processes (max of runs)", name, f"{r['ours_max_rss_mb']:.0f} MB",
                         f"{r['base_max_rss_mb']:.0f} MB", fmt_ratio(r["ours_max_rss_mb"] / r["base_max_rss_mb"]),
                         "", "", ""))

    met = {"in_process_ratio": out["in_process"]["ratio"] <= TARGETS["in_process_ratio"]}
    if "warm_s" in out["first_screen"]:
        met["first_screen_s"] = out["first_screen"]["warm_s"] < TARGETS["first_screen_s"]
    for key in ("cook", "export_html"):
        if key in out["claude_code_log"]:
            met[f"ccl_speedup_{key}"] = out["claude_code_log"][key]["speedup"] >= TARGETS["ccl_speedup"]
    out["targets"], out["targets_met"] = TARGETS, met
    print_report(rows, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
