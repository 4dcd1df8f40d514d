"""The `traceview` command: cook, validate, convert; index, search, list and export a library
of runs; serve.

Importing this module stays light (no Streamlit, no pandas) so that `traceview cook` starts
fast; `serve` starts Streamlit in its own process.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path

import orjson


def shown(text) -> str:
    """A line for the terminal: control and format characters from a trace or a file name
    (escape sequences, newlines that would forge a line, bidirectional overrides) are written
    as visible escapes (\\x1b, \\n, \\u202e) instead of acting."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() or c == " " else _escape(c) for c in s)


def _escape(c: str) -> str:
    n = ord(c)
    if c in "\n\r\t":
        return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}[c]
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


def say(*parts, err: bool = True) -> None:
    print(shown(" ".join(str(p) for p in parts)), file=sys.stderr if err else sys.stdout)


def use_prices(path) -> str | None:
    """Check a prices file and put it in force for every cook of this process and its children
    (the environment variable the cook reads); the problem in plain words when it is unusable."""
    from parsers.pipeline import PRICES_ENV, PricesError, read_prices_file

    resolved = Path(path).expanduser().resolve()
    try:
        read_prices_file(resolved)
    except PricesError as e:
        return str(e)
    os.environ[PRICES_ENV] = str(resolved)
    return None


def _prices(args) -> int | None:
    """Exit code 2 (with the message) when --prices names an unusable file."""
    if getattr(args, "prices", None):
        problem = use_prices(args.prices)
        if problem:
            say(f"traceview {args.command}: {problem}")
            return 2
    return None


def _cmd_cook(args) -> int:
    from parsers import pipeline
    from parsers.model import Problem

    if (bad := _prices(args)) is not None:
        return bad
    # --format is checked by argparse against the registered names.
    doc, summaries = pipeline.cook_paths(args.inputs, args.format)
    for s in summaries:
        say(s.line())
    summarised = {s.name for s in summaries}
    for p in doc["inputs"]:  # paths that gave no input at all (missing, over a cap)
        if p["name"] not in summarised:
            for prob in p["problems"]:
                say(f"{prob['file']}: {prob['message']}")
    if args.problems:
        for s in summaries:
            for p in s.problems:
                say(f"  {Problem(**p)}")
    if not doc["traces"]:
        print("traceview cook: nothing cooked: no input gave a trace", file=sys.stderr)
        return 1
    # The newline is written by orjson: adding it after would copy the whole text once more.
    opts = orjson.OPT_APPEND_NEWLINE | (orjson.OPT_INDENT_2 if args.pretty else 0)
    data = orjson.dumps(doc, option=opts)
    if args.output:
        Path(args.output).write_bytes(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0


def _cmd_validate(args) -> int:
    from parsers.pipeline import validate_file

    bad = 0
    for f in args.files:
        kind, errors = validate_file(f)
        if errors:
            bad += 1
            say(f"{f}: invalid {kind}: {len(errors)} error{'s' * (len(errors) != 1)}", err=False)
            for path, msg in errors:
                say(f"  {path or '/'}: {msg}", err=False)
        else:
            say(f"{f}: valid {kind}", err=False)
    return 1 if bad else 0


def _cmd_convert(args) -> int:
    from parsers.pipeline import convert_file

    if (bad := _prices(args)) is not None:
        return bad
    try:
        text, problems = convert_file(args.input, args.to)
    except ValueError as e:  # unknown target
        say(f"traceview convert: {e}")
        return 2
    for p in problems:
        say(str(p))
    if text is None:
        print("traceview convert: nothing converted", file=sys.stderr)
        return 1
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def _cmd_serve(args) -> int:
    from viewer.serve import serve

    if (bad := _prices(args)) is not None:
        return bad
    # The app gets the prices file through the environment `use_prices` set.
    return serve(args.paths, port=args.port, host=args.host, headless=args.headless,
                 private_uploads=args.private_uploads, token_file=args.token_file, no_auth=args.no_auth,
                 library=args.library, jobs=args.jobs)


def _prices_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prices", metavar="FILE",
                   help="prices of models (USD per million tokens: input, output, cache_read, cache_write, cache_write_1h), "
                        'a TOML file of [models."NAME"] tables or the same as JSON; they win over the bundled '
                        "price list")


# -- the library ----------------------------------------------------------------------------------

PROGRESS_EVERY = 3.0  # seconds between progress lines while indexing
BOLD, PLAIN = "\x1b[1m", "\x1b[0m"
LS_COLUMNS = (("id", "id", 16), ("title", "title", 48), ("format", "format", 14), ("models", "model", 28),
              ("outcome", "outcome", 9), ("score", "score", 5), ("cost", "cost", 9), ("tokens", "tokens", 7),
              ("started_at", "started", 16))
FORMATS = ("html", "json", "md", "csv", "parquet")  # viewer.library.export.FORMATS, without importing it
LIBRARY_HELP = ("the library: a SQLite file or a postgresql:// URL (default: $TRACEVIEW_LIBRARY, else "
                "library.sqlite in the user's data folder)")


def _library(args, *, create: bool = False):
    """The library --library names (else the default one), or None once the reason is said.
    Only `index` makes a library file that is not there yet."""
    from viewer.library.library import Library, LibraryError, default_location

    location = args.library or default_location()
    if not create and "://" not in location and not Path(location).expanduser().exists():
        say(f"traceview {args.command}: no library at {location} (`traceview index PATH...` makes one)")
        return None
    try:
        return Library(location)
    except LibraryError as e:
        say(f"traceview {args.command}: {e}")
        return None


def _positive(text: str) -> int:
    if not text.isdecimal() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number above 0")
    return int(text)


MAX_FILES_SAID = 20  # inputs whose problem count `export` names (a zip of thousands would bury the rest)


def _say_problems(problems, every: bool) -> None:
    """The problems met reading the inputs: each one with `every`, else how many each file
    had and how to see them (a folder of broken files would otherwise bury the outcome)."""
    if every:
        for p in problems:
            say(str(p))
        return
    per_file = Counter(p.file for p in problems)
    for name, n in itertools.islice(per_file.items(), MAX_FILES_SAID):
        say(f"{name}: {_counted(n, 'problem')}")
    if len(per_file) > MAX_FILES_SAID:
        say(f"… and {_counted(len(per_file) - MAX_FILES_SAID, 'more input')} with problems")
    if problems:
        say(f"{_counted(len(problems), 'problem')} in {_counted(len(per_file), 'input')} "
            f"(--problems lists each one)")


def _counted(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def _missing(args, paths) -> int | None:
    """Exit code 2 (saying which) when a path given does not exist."""
    gone = [p for p in paths if not os.path.exists(p)]
    for p in gone:
        say(f"traceview {args.command}: {p}: no such file or folder")
    return 2 if gone else None


def _cmd_index(args) -> int:
    import signal
    import threading
    import time

    from viewer.library.ingest import Progress

    if not args.paths and not args.prune:
        say("traceview index: give a PATH to index, or --prune")
        return 2
    if (bad := _missing(args, args.paths)) is not None:
        return bad
    lib = _library(args, create=True)
    if lib is None:
        return 1
    try:
        if args.paths:
            progress = Progress()
            shown_at = [time.monotonic()]

            def report() -> None:
                if time.monotonic() - shown_at[0] >= PROGRESS_EVERY:
                    shown_at[0] = time.monotonic()
                    say(progress.line())
            # SIGTERM ends the run once the batch being cooked is written (what is written
            # stays; the next run does the rest): `serve` asks its head start to stop so.
            stopped = threading.Event()
            previous = signal.signal(signal.SIGTERM, lambda *_: stopped.set())
            try:
                lib.index([os.path.abspath(p) for p in args.paths], jobs=args.jobs, progress=progress,
                          on_batch=report, stop=stopped.is_set)
            finally:
                signal.signal(signal.SIGTERM, previous)
            if stopped.is_set() and progress.cooked < progress.to_cook:
                say(f"stopped: {progress.line()}")
                return 143
            say(f"{progress.line()}; {_counted(progress.problems, 'problem')} in the files cooked")
        if args.prune:
            say(f"pruned {_counted(lib.prune(), 'gone file')}")
    finally:
        lib.close()
    return 0


def _json_line(obj) -> str:
    """One JSON object on one line, every character that could act on a terminal (controls,
    bidirectional overrides) written as a JSON escape: trace text stays inert wherever it goes."""
    s = json.dumps(obj, ensure_ascii=False, default=str)
    return s if s.isprintable() else "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in s)


def _run_json(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "input_id"}


def _matches(snippet: str) -> tuple[str, list[list[int]]]:
    """A search snippet's text without its match markers, and the [start, end) character
    offsets of its matched words in that text."""
    from viewer.library.library import SNIPPET_CLOSE, SNIPPET_OPEN

    text, spans, start, pos = [], [], None, 0
    for piece in re.split(f"([{SNIPPET_OPEN}{SNIPPET_CLOSE}])", snippet):
        if piece == SNIPPET_OPEN:
            start = pos
        elif piece == SNIPPET_CLOSE:
            if start is not None:
                spans.append([start, pos])
            start = None
        else:
            text.append(piece)
            pos += len(piece)
    return "".join(text), spans


def _highlighted(text: str, spans, tty: bool) -> str:
    """The text for the terminal, matched words in bold (a terminal) or «between marks»."""
    out, pos = [], 0
    for a, b in spans:
        word = shown(text[a:b])
        out += [shown(text[pos:a]), f"{BOLD}{word}{PLAIN}" if tty else f"«{word}»"]
        pos = b
    out.append(shown(text[pos:]))
    return "".join(out)


def _cmd_search(args) -> int:
    from viewer.library import search as text_search
    from viewer.library.library import Scope

    if text_search.parse(args.query).empty:
        say("traceview search: nothing to search for (give words of letters or digits)")
        return 2
    lib = _library(args)
    if lib is None:
        return 1
    try:
        hits = lib.search(args.query, Scope(everything=True), limit=args.limit)
    finally:
        lib.close()
    tty = sys.stdout.isatty()
    for h in hits:
        text, spans = _matches(h.snippet)
        if args.json:
            print(_json_line({**_run_json(h.run), "n": h.n, "snippet": text, "matches": spans}))
        else:
            print(shown(f"{h.run['id']}  {h.run['title']}  ({h.run['format']})"))
            print(shown(f"    {h.run['path']}, item {h.n}"))
            print("    " + _highlighted(text, spans, tty))
    if not hits:
        say(f"traceview search: no run matches {args.query}")
        return 1
    return 0


def _ls_cell(key: str, value) -> str:
    from viewer.render import fmt

    if value is None:
        return fmt.MISSING
    if key == "score":
        return f"{value:.2f}"
    if key == "cost":
        return fmt.cost(value)
    if key == "tokens":
        return fmt.tokens(value)
    if key == "started_at":
        return value[:16].replace("T", " ")
    return shown(value)


def _cmd_ls(args) -> int:
    from viewer.library.ingest import model_key
    from viewer.library.library import RunsQuery, Scope

    lib = _library(args)
    if lib is None:
        return 1
    q = RunsQuery(formats=tuple(args.format), models=tuple(map(model_key, args.model)),
                  outcomes=tuple(args.outcome), tasks=tuple(args.task), limit=args.limit)
    try:
        page = lib.runs(q, Scope(everything=True))
    finally:
        lib.close()
    if args.json:
        for row in page.rows:
            print(_json_line(_run_json(row)))
    else:
        cells = [[_ls_cell(key, row[key]) for key, _, _ in LS_COLUMNS] for row in page.rows]
        widths = [min(most, max([len(head)] + [len(c[i]) for c in cells]))
                  for i, (_, head, most) in enumerate(LS_COLUMNS)]
        for line in [[head for _, head, _ in LS_COLUMNS]] + cells:
            print("  ".join(_fit(c, w) for c, w in zip(line, widths)).rstrip())
    if page.total > len(page.rows):
        say(f"{len(page.rows)} of {page.total}{'+' * page.capped} runs shown (--limit N for more)")
    return 0


def _fit(text: str, width: int) -> str:
    return text.ljust(width) if len(text) <= width else text[:width - 1] + "…"


def _cmd_export(args) -> int:
    from viewer.library import export
    from viewer.library.library import Scope

    if args.inputs and args.library:
        say("traceview export: give INPUT files or --library, not both")
        return 2
    if (bad := _missing(args, args.inputs)) is not None:
        return bad
    ids = list(dict.fromkeys(args.trace))
    lib = None
    if args.inputs:
        runs, problems = export.cooked_runs(args.inputs)
        _say_problems(problems, args.problems)
        found = {run["id"] for run, _ in runs}
        runs = [(run, doc) for run, doc in runs if not ids or run["id"] in ids]
        # for html, the pages (a run's page holds the runs it started)
        where, count = "the inputs", export.page_count(run for run, _ in runs) if args.to == "html" else len(runs)
    else:
        lib = _library(args)
        if lib is None:
            return 1
        rows = [row for row in map(lib.run, ids) if row is not None]
        found = {row["id"] for row in rows}
        runs = export.library_runs(lib, ids)
        where = "the library"
        if args.to == "html":
            count = export.page_count(rows if ids else export.every_run(lib))
        else:
            count = len(found) if ids else lib.count(Scope(everything=True))
    try:
        unknown = [t for t in ids if t not in found]
        if unknown:
            say(f"traceview export: no run {', '.join(unknown)} in {where}")
            return 1
        if not count:
            say(f"traceview export: nothing to export: no run in {where}")
            return 1
        if (bad := _export_target(args, count)) is not None:
            say(f"traceview export: {bad}")
            return 2
        try:
            written = export.write(runs, args.to, args.output)
        except export.ExportError as e:
            say(f"traceview export: {e}")
            return 2
    finally:
        if lib is not None:
            lib.close()
    if written.without_document:
        left_out = "requests and messages are" if args.to == "parquet" else f"{args.to} is"
        say(f"traceview export: {_counted(len(written.without_document), 'run')} not found in the cooked "
            f"document held for them, so their {left_out} left out: {', '.join(written.without_document)}")
    if args.to == "parquet":
        from viewer.library import tables

        say(f"{_counted(written.runs, 'run')}, {_counted(written.requests, 'request')}, "
            f"{_counted(written.messages, 'message')} written to "
            f"{', '.join(f'{name}.parquet' for name in tables.TABLES)} in {args.output}")
    elif len(written.files) > 1:
        say(f"{_counted(len(written.files) - 1, 'page')} and index.html written to {args.output}")
    else:
        say(f"{_counted(written.runs, 'run')} written to {args.output}")
    return 0


def _export_target(args, count: int) -> str | None:
    """Why -o cannot take this export, or None: a folder where one file is written, a file (or
    a name ending .html) where a folder of pages is. `count`: the runs, or for html the pages
    (a run's page holds the runs it started)."""
    out = Path(args.output)
    folder = args.to == "parquet" or (args.to == "html" and count > 1)
    what = _counted(count, "page" if args.to == "html" else "run")
    if folder and out.exists() and not out.is_dir():
        return f"{args.output} is a file: --to {args.to} of {what} writes a folder (name one)"
    if folder and args.to == "html" and out.suffix.lower() == ".html":
        return (f"{what} and index.html are written: -o names the folder they go into, not a .html file "
                "(or choose one run with --trace ID)")
    if not folder and out.is_dir():
        return f"{args.output} is a folder: --to {args.to} writes one file (name the file)"
    return None


class _FormatNames:
    """The names --format accepts, asked of the registry only when --format is given or help
    is shown: loading every format is a tenth of a second that other commands need not pay."""

    def __contains__(self, name) -> bool:
        return name in self._names()

    def __iter__(self):
        return iter(self._names())

    @staticmethod
    def _names() -> list[str]:
        from parsers.registry import names

        return names()


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="traceview", description="Read LLM-agent traces: cook, validate, convert; "
                                "index, search, list and export a library of runs; serve.")
    sub = p.add_subparsers(dest="command")

    c = sub.add_parser("cook", help="convert inputs (files, folders, zips) into one cooked JSON document")
    c.add_argument("inputs", nargs="+", metavar="INPUT")
    c.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    c.add_argument("--format", choices=_FormatNames(), metavar="NAME",
                   help="force a format instead of detecting it: %(choices)s")
    c.add_argument("--pretty", action="store_true", help="indent the JSON")
    c.add_argument("--problems", action="store_true", help="list every problem on stderr")
    _prices_option(c)
    c.set_defaults(func=_cmd_cook)

    v = sub.add_parser("validate", help="check cooked documents (and workflow files) against their JSON Schema")
    v.add_argument("files", nargs="+", metavar="FILE")
    v.set_defaults(func=_cmd_validate)

    cv = sub.add_parser("convert", help="convert a trace file to another format (e.g. the Standard Workflow Format)")
    cv.add_argument("input", metavar="INPUT")
    cv.add_argument("--to", required=True, metavar="FORMAT", help="target format, e.g. swf")
    cv.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")
    _prices_option(cv)
    cv.set_defaults(func=_cmd_convert)

    ix = sub.add_parser("index", help="index files and folders into the library (only what changed is cooked again)")
    ix.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to index")
    ix.add_argument("--library", metavar="L", help=LIBRARY_HELP)
    ix.add_argument("--jobs", type=_positive, metavar="N",
                    help="cook in N processes (default: one per CPU core, at most 8; 1 cooks in this process)")
    ix.add_argument("--prune", action="store_true",
                    help="then drop what the library holds of files that are gone (with no PATH: only that)")
    ix.set_defaults(func=_cmd_index)

    se = sub.add_parser("search", help="search every message of every run in the library",
                        description="Runs whose messages hold every word of QUERY (\"quoted phrases\"; a trailing * "
                                    "makes a prefix), best first: the run, the Timeline item that matched best and a "
                                    "snippet of it with the matched words in bold (on a terminal) or "
                                    "«between marks». Exit 1 when no run matches.")
    se.add_argument("query", metavar="QUERY")
    se.add_argument("--library", metavar="L", help=LIBRARY_HELP)
    se.add_argument("--limit", type=_positive, default=20, metavar="N", help="at most N runs (default 20)")
    se.add_argument("--json", action="store_true",
                    help="one JSON object per line: the run's runs-table columns, n (the Timeline item), "
                         "snippet (plain text) and matches: the [start, end) character offsets of the matched "
                         "words in snippet")
    se.set_defaults(func=_cmd_search)

    ls = sub.add_parser("ls", help="list the library's runs (the runs table)")
    ls.add_argument("--library", metavar="L", help=LIBRARY_HELP)
    for flag, what in (("format", "format name"), ("model", "model (in any letter case)"), ("outcome", "outcome"),
                       ("task", "task")):
        ls.add_argument(f"--{flag}", action="append", default=[], metavar=flag[0].upper(),
                        help=f"only runs of this {what} (repeat for any of several)")
    ls.add_argument("--limit", type=_positive, default=50, metavar="N", help="at most N runs (default 50)")
    ls.add_argument("--json", action="store_true", help="one JSON object per line, every runs-table column")
    ls.set_defaults(func=_cmd_ls)

    ex = sub.add_parser("export", help="write runs as pages to read offline (html), the cooked document (json), "
                                       "Markdown transcripts (md) or tables (csv, parquet)",
                        description="Export runs from INPUT files and folders (cooked now) or from the library. "
                                    "html: a page per run that reads offline in any browser (no script, nothing "
                                    "loaded), sub-agent runs nested under the calls that started them (one exported "
                                    "with the run that started it has no page of its own); -o is the file for one "
                                    "page, a folder (the pages and index.html) for several. "
                                    "json: one cooked document of the runs (as `cook` writes it). md: each run as "
                                    "a Markdown transcript. csv: the runs table, one row per run with `score` and "
                                    "one `score: NAME` column per scorer. parquet: runs.parquet (the runs table), "
                                    "requests.parquet (one row per request: tokens of each kind, cost, stop reason, "
                                    "error) and messages.parquet (one row per message in Timeline order) in the "
                                    "folder -o, joined by trace_id; for DuckDB, Polars, pandas or Spark.")
    ex.add_argument("inputs", nargs="*", metavar="INPUT", help="files or folders to cook and export (else the library)")
    ex.add_argument("--library", metavar="L", help=LIBRARY_HELP)
    ex.add_argument("--problems", action="store_true",
                    help="list every problem met reading the inputs on stderr (else how many each file had)")
    ex.add_argument("--trace", action="append", default=[], metavar="ID", help="only this run (repeat for several)")
    ex.add_argument("--to", required=True, choices=FORMATS,
                    help="html (pages), json (cooked document), md (transcripts), csv (runs table) or parquet "
                         "(runs, requests and messages tables)")
    ex.add_argument("-o", "--output", required=True, metavar="OUT",
                    help="the file to write (json, md, csv, html of one run) or the folder (parquet, html of "
                         "several runs)")
    ex.set_defaults(func=_cmd_export)

    s = sub.add_parser("serve", help="start the web app on files and folders (indexed into the library), the whole "
                                     "library (--library L and no path), or the bundled samples")
    s.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to open")
    s.add_argument("--library", metavar="L", help=LIBRARY_HELP + "; with no PATH the app shows the whole library")
    s.add_argument("--jobs", type=_positive, metavar="N",
                   help="index the paths in N processes (default: one per CPU core, at most 8)")
    s.add_argument("--port", type=int, default=8501)
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    s.add_argument("--headless", action="store_true", help="do not open a browser")
    s.add_argument("--private-uploads", action="store_true",
                   help="an upload's traces open only in the browser session that uploaded it "
                        "(by default anyone who knows a trace's id can open it)")
    who = s.add_mutually_exclusive_group()
    who.add_argument("--token-file", metavar="FILE",
                     help="require this shared access token (the file's text) to sign in; "
                          "the environment variable TRACEVIEW_TOKEN gives it too. Beyond loopback a "
                          "sign-in is required: this, or OpenID Connect from an [auth] section of "
                          ".streamlit/secrets.toml")
    who.add_argument("--no-auth", action="store_true",
                     help="serve without a sign-in even on an address other machines reach")
    _prices_option(s)
    s.set_defaults(func=_cmd_serve)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    if not argv:
        argv = ["serve"]  # `traceview` alone opens the app on the bundled samples
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.func(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # never a traceback for the user
        say(f"traceview {args.command}: error: {type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
