"""Render benchmark: turning a 3,000-message trace into the timeline's HTML, against escaping its text.

    python bench/bench_render.py [--quick] [--workdir DIR]

The input comes from the shared generator (`../shared/bench/gen_traces.py` next to the repo):
`gen_traces.py trials 2000`, one trajectory of 2,998 messages, cooked in-process and made into
the timeline's view items (`conversation.build_items`, tool results with their calls). When
the generator is absent the benchmark says so and exits 0. Every figure is the median of
several runs, each run paired with its baseline in the same loop (alternating which goes
first), because the machine is shared and noisy. Prints a table, then one JSON line
(`{"bench": "render", ...}`).

Measured (`viewer.render.html.render_messages`, the one place trace text becomes HTML), each
against `html.escape` of the same texts (message text, tool names and arguments, results):
  1. the whole trace in one block, the renderer's caches emptied first (a text seen for the
     first time)
  2. the same, rendered again (a rerun of the page: the Markdown and diff caches are warm)
  3. the whole trace with a find query highlighting its matches, caches emptied
  4. one page of 50 items (what the timeline sends per run), the median page, caches emptied
  5. 3,000 made-up messages of every kind the renderer treats specially (Markdown with code,
     thinking, shell output with ANSI colours, edits shown as diffs, JSON results), every
     text unique, caches emptied: the generator's text is plain words, which skip Markdown
"""
from __future__ import annotations

import argparse
import html
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_cook import compare, fmt_ratio, paired, print_table, timed

REPO = Path(__file__).resolve().parents[1]
GEN = REPO.parent / "shared" / "bench" / "gen_traces.py"
STEPS = 2000  # gen_traces.py `trials` steps: 2,998 messages
PAGE = 50  # the timeline's default page size
MAX_CHARS = 4000  # the timeline's limit before a message is shortened
QUERY = "fix"
MIXED = 3000  # made-up messages of row 5


def generate(workdir: Path) -> Path:
    """The generator is deterministic, so a file already in the workdir is reused."""
    out = workdir / f"render-{STEPS}.trials.json"
    if not (out.exists() and out.stat().st_size > 0):
        part = workdir / f"render-{STEPS}.part"
        subprocess.run([sys.executable, str(GEN), "trials", str(STEPS), str(part)], check=True,
                       stdout=subprocess.DEVNULL)
        part.replace(out)
    return out


def view_items(path: Path) -> tuple[list[dict], int]:
    """The main branch's view items as the timeline builds them, and the message count."""
    from parsers import pipeline
    from viewer.analysis import conversation

    doc, _ = pipeline.cook_paths([path])
    (trace,) = doc["traces"]
    messages = {m["id"]: m for m in doc["messages"]}
    requests = {r["id"]: r for r in doc["requests"]}
    items = conversation.build_items(trace["timeline"], messages, [requests[r] for r in trace["requests"]])
    return items, len(trace["timeline"])


def _message(mid: str, role: str, content: str = "", **extra) -> dict:
    return {"id": mid, "role": role, "content": content, "tool_calls": None, "tool_use_id": None,
            "is_error": None, **extra}


def _item(message: dict, position: int, result: dict | None = None) -> dict:
    return {"message": message, "position": position, "result": result, "unmatched": False, "error": None}


def mixed_items(n: int) -> list[dict]:
    """n made-up messages cycling through the kinds the renderer treats specially, each text
    unique so that no cache flatters the figure."""
    prose = ("I'll look at the **failing test** first. The error says `KeyError: 'x'` in "
             "`parsers/cook.py`, so:\n\n1. read the file\n2. fix the lookup\n\n"
             "```python\nvalue = data.get('x', None)\n```\n")
    out = []
    for i in range(n):
        k = i % 6
        if k == 0:
            out.append(_item(_message(f"m{i}", "user", f"Please fix bug #{i} in the parser. It fails on empty input.",
                                      timestamp=1_700_000_000_000 + i), i))
        elif k == 1:
            out.append(_item(_message(f"m{i}", "thinking", "Let me think. " * 40), i))
        elif k == 2:
            out.append(_item(_message(f"m{i}", "assistant", prose), i))
        elif k == 3:
            call = {"name": "Shell", "arguments": {"command": f"pytest -q tests/test_{i}.py", "timeout": 120},
                    "id": f"c{i}"}
            res = _message(f"r{i}", "tool_result", "\x1b[32m.....\x1b[0m\n5 passed in 0.12s\n" * 5, tool_use_id=f"c{i}")
            out.append(_item(_message(f"m{i}", "tool_use", "", tool_calls=[call]), i, res))
        elif k == 4:
            call = {"name": "Edit", "arguments": {"file_path": "/p/cook.py", "old_string": f"a = {i}\nb = 2\n",
                                                   "new_string": f"a = {i + 1}\nb = 2\n"}, "id": f"c{i}"}
            res = _message(f"r{i}", "tool_result", "The file has been updated.", tool_use_id=f"c{i}")
            out.append(_item(_message(f"m{i}", "tool_use", "", tool_calls=[call]), i, res))
        else:
            out.append(_item(_message(f"m{i}", "tool_result", '{"status": "ok", "items": [1, 2, 3], "n": %d}' % i), i))
    for it in out:
        m = it["message"]
        if m["content"] and not m["content"].startswith("{"):
            m["content"] += f" (step {it['position']})"
    return out


def item_texts(item: dict) -> list[str]:
    """Every text an item shows: the baseline escapes exactly these."""
    m = item["message"]
    out = [m.get("content") or ""]
    for call in m.get("tool_calls") or ():
        args = call.get("arguments")
        out += [call.get("name") or "", args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)]
    if item.get("result"):
        out.append(item["result"].get("content") or "")
    if item.get("error"):
        out.append(json.dumps(item["error"], ensure_ascii=False))
    return [t if isinstance(t, str) else json.dumps(t, ensure_ascii=False) for t in out]


def fmt_ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def escape_all(texts: list[str]) -> int:
    return sum(len(html.escape(t)) for t in texts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one run per measurement instead of five")
    ap.add_argument("--workdir", type=Path, help="keep the generated input here (and reuse it); default: a temp dir")
    args = ap.parse_args(argv)

    if not GEN.exists():
        print(f"bench_render: skipped: the trace generator is not at {GEN}")
        return 0
    sys.path.insert(0, str(REPO))
    reps = 1 if args.quick else 5
    if args.workdir:
        workdir = args.workdir.resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        return run(workdir, reps)
    with tempfile.TemporaryDirectory(prefix="bench_render-") as tmp:
        return run(Path(tmp), reps)


def run(workdir: Path, reps: int) -> int:
    from viewer.render import html as render

    def cold() -> None:
        """Empty every cache of the renderer (Markdown, diffs, lexers), as for text never seen."""
        for obj in vars(render).values():
            if callable(getattr(obj, "cache_clear", None)):
                obj.cache_clear()

    print(f"render benchmark: {reps} run(s) per figure, medians; python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; input in {workdir}", flush=True)
    path = generate(workdir)
    items, n_messages = view_items(path)
    texts = [t for it in items for t in item_texts(it)]
    pages = [items[k:k + PAGE] for k in range(0, len(items), PAGE)]
    page_texts = [[t for it in p for t in item_texts(it)] for p in pages]
    html_bytes = len(render.render_messages(items, max_chars=MAX_CHARS).encode())
    print(f"  {path.name}: {n_messages} messages, {len(items)} view items, {len(pages)} pages of {PAGE}, "
          f"{sum(map(len, texts)) / 1e6:.1f} M characters of text, {html_bytes / 1e6:.1f} MB of HTML", flush=True)

    def render_cold(query=None):
        def go():
            cold()
            return render.render_messages(items, max_chars=MAX_CHARS, query=query)
        return go

    def render_warm():
        render.render_messages(items, max_chars=MAX_CHARS)  # fills the caches, not timed
        return lambda: render.render_messages(items, max_chars=MAX_CHARS)

    def page_runs(fn) -> list[dict]:
        return [timed(lambda p=p: fn(p)) for p in range(len(pages))]

    def median_page(runs: list[dict]) -> dict:
        return {k: statistics.median(r[k] for r in runs) for k in ("s", "cpu")}

    figures: dict = {}
    rows: list[tuple] = []
    base = lambda: timed(lambda: escape_all(texts))  # noqa: E731
    for key, label, ours in (("whole_cold", "1 whole trace, caches emptied", render_cold()),
                             ("whole_warm", "2 whole trace, rendered again", None),
                             ("whole_find", f"3 whole trace with find '{QUERY}', caches emptied", render_cold(QUERY))):
        print(f"  {label} ...", flush=True)
        fn = ours or render_warm()
        r = figures[key] = compare(*paired(reps, lambda: timed(fn), base))
        rows.append((label, f"{len(items)} items", fmt_ms(r["ours_s"]), fmt_ms(r["base_s"]),
                     fmt_ratio(r["ratio"]), fmt_ratio(r["cpu_ratio"]), "", ""))

    print(f"  4 one page of {PAGE} ...", flush=True)

    def one_page(p: int) -> str:
        cold()
        return render.render_messages(pages[p], max_chars=MAX_CHARS)

    ours_runs, base_runs = paired(reps, lambda: median_page(page_runs(one_page)),
                                  lambda: median_page(page_runs(lambda p: escape_all(page_texts[p]))))
    r = figures["page_cold"] = compare(ours_runs, base_runs)
    rows.append((f"4 one page of {PAGE} (median page), caches emptied", f"{len(pages)} pages", fmt_ms(r["ours_s"]),
                 fmt_ms(r["base_s"]), fmt_ratio(r["ratio"]), fmt_ratio(r["cpu_ratio"]), "", ""))

    mixed = mixed_items(MIXED)
    mixed_texts = [t for it in mixed for t in item_texts(it)]
    label = f"5 {MIXED:,} mixed made-up messages, caches emptied"
    print(f"  {label} ...", flush=True)

    def render_mixed():
        cold()
        return render.render_messages(mixed, max_chars=MAX_CHARS)

    r = figures["mixed_cold"] = compare(*paired(reps, lambda: timed(render_mixed),
                                                lambda: timed(lambda: escape_all(mixed_texts))))
    rows.append((label, f"{len(mixed)} items", fmt_ms(r["ours_s"]), fmt_ms(r["base_s"]),
                 fmt_ratio(r["ratio"]), fmt_ratio(r["cpu_ratio"]), "", ""))

    print()
    print_table(rows)
    print()
    print(json.dumps({"bench": "render", "reps": reps, "messages": n_messages, "items": len(items),
                      "text_chars": sum(map(len, texts)), "html_bytes": html_bytes, "page_size": PAGE,
                      **figures}, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
