"""The library's commands: `traceview index`, `search`, `ls` and `export`.

Expected runs, titles, scores and tokens are read from the sample files themselves."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pyarrow.parquet as pq
import pytest

from viewer.cli import main

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_data"
TRIALS = SAMPLES / "trials" / "claude-4-sonnet_claude-cli_demo_2025-01-10.trials.json"
PIXEL = SAMPLES / "inspect_ai" / "2026-03-15T09-00-00+00-00_pixel-colour_Wc6vN1sD4kFbR8tY3mQxPz.json"
# A request log of one call whose answer holds a planted word, an escape sequence that would
# turn the terminal red and a right-to-left override.
PLANTED = {"id": "planted-1", "timestamp": "2026-02-20T10:00:00Z", "duration_ms": 900,
           "request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "Which bird is that?"}]},
           "response": {"choices": [{"message": {"role": "assistant", "content":
                        "It is a \x1b[31mred\x1b[0m zebrafinch \u202eevil\u202c, a small finch."}}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 3}}}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """Copies of a few sample folders, and the planted log."""
    root = tmp_path / "corpus"
    for name in ("api_logs", "trials", "inspect_ai"):
        shutil.copytree(SAMPLES / name, root / name)
    (root / "planted.jsonl").write_bytes(orjson.dumps(PLANTED) + b"\n")
    return root


@pytest.fixture
def tv(tmp_path, capsys):
    """tv(*args) -> (exit code, stdout, stderr) of `traceview ARGS` on this test's library."""
    library = str(tmp_path / "lib.sqlite")

    def run(*args: str) -> tuple[int, str, str]:
        code = main([*args, "--library", library])
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


def _files(root: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(root))


def _runs_in(corpus: Path) -> int:
    """Runs the corpus holds, counted from the files: a request log is one conversation; a
    trials file one run per trial; an Inspect log one per sample and epoch."""
    inspect = 0
    for f in (corpus / "inspect_ai").iterdir():
        if f.suffix == ".json":
            inspect += len(json.loads(f.read_text())["samples"])
        else:  # an .eval archive: one member per sample and epoch
            import zipfile
            with zipfile.ZipFile(f) as z:
                inspect += sum(n.startswith("samples/") for n in z.namelist())
    return len(list((corpus / "api_logs").iterdir())) + 1 + len(json.loads(TRIALS.read_text())) + inspect


def _ls(tv, *args) -> list[dict]:
    code, out, _ = tv("ls", "--json", "--limit", "1000", *args)
    assert code == 0
    return [json.loads(line) for line in out.splitlines()]


def test_index_is_incremental_and_prune_drops_gone_files(tv, corpus):
    n = _files(corpus)
    code, _, err = tv("index", str(corpus))
    assert code == 0
    assert f"{n} files: 0 unchanged, {n} of {n} cooked, 0 gone" in err
    assert re.search(r"; \d+ problems? in the files cooked$", err.strip())
    assert len(_ls(tv)) == _runs_in(corpus)

    code, _, err = tv("index", str(corpus))
    assert code == 0 and f"{n} files: {n} unchanged, 0 of 0 cooked, 0 gone; 0 runs written" in err

    log = corpus / "api_logs" / "openai_chat.jsonl"
    os.utime(log, ns=(1, 1))  # touched, the same bytes: still unchanged
    assert f"{n} unchanged, 0 of 0 cooked" in tv("index", str(corpus))[2]
    kept = log.read_text().splitlines()[:3]
    log.write_text("\n".join(kept) + "\n")  # changed: cooked again
    assert f"{n - 1} unchanged, 1 of 1 cooked" in tv("index", str(corpus))[2]
    (run,) = [r for r in _ls(tv) if r["path"] == str(log)]
    assert run["requests"] == len(kept)

    (corpus / "planted.jsonl").unlink()
    assert f"{n - 1} files: {n - 1} unchanged, 0 of 0 cooked, 1 gone" in tv("index", str(corpus))[2]
    assert not [r for r in _ls(tv) if r["name"] == "planted.jsonl"]
    code, _, err = tv("index", "--prune")
    assert code == 0 and "pruned 1 gone file" in err
    assert "pruned 0 gone files" in tv("index", "--prune")[2]


def test_index_stops_on_sigterm_after_the_batch_it_is_cooking(tv, corpus, monkeypatch):
    """SIGTERM (how `serve` ends its head start) lets the batch being cooked be written, then
    stops; the next index cooks the rest."""
    import signal

    from viewer.library import ingest

    n = _files(corpus)
    monkeypatch.setattr(ingest, "BATCH_FILES", 1)
    real, calls = ingest.cook_batch, []

    def cook_and_be_told_to_stop(files, origin="path"):
        calls.append(files)
        if len(calls) == 1:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(files, origin)

    monkeypatch.setattr(ingest, "cook_batch", cook_and_be_told_to_stop)
    code, _, err = tv("index", str(corpus), "--jobs", "1")
    assert code == 143 and f"stopped: {n} files: 0 unchanged, 1 of {n} cooked" in err
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is taken down again
    code, _, err = tv("index", str(corpus), "--jobs", "1")
    assert code == 0 and f"{n} files: 1 unchanged, {n - 1} of {n - 1} cooked" in err
    assert len(_ls(tv)) == _runs_in(corpus)


def test_index_names_a_path_that_is_not_there(tv, tmp_path, corpus):
    code, _, err = tv("index", str(corpus), str(tmp_path / "nope"))
    assert code == 2 and f"{tmp_path / 'nope'}: no such file or folder" in err
    assert not (tmp_path / "lib.sqlite").exists()
    assert tv("index")[0] == 2  # neither a path nor --prune


def test_commands_on_a_library_not_made_yet_say_so(tv, tmp_path):
    for args in (("ls",), ("search", "finch"), ("export", "--to", "parquet", "-o", str(tmp_path / "out"))):
        code, _, err = tv(*args)
        assert code == 1 and "no library at" in err and "traceview index" in err
    assert not (tmp_path / "lib.sqlite").exists()


def test_search_shows_the_planted_word_in_its_snippet(tv, corpus, monkeypatch):
    tv("index", str(corpus), "--jobs", "2")
    code, out, _ = tv("search", "zebrafinch")
    assert code == 0
    head, where, snippet = out.splitlines()
    assert head.startswith(tuple("0123456789abcdef")) and "planted.jsonl" in head and "(request-log)" in head
    assert where.strip() == f"{corpus / 'planted.jsonl'}, item 2"  # the question is item 1
    assert "«zebrafinch»" in snippet
    # The trace's escape sequence and override are shown, not sent to the terminal.
    assert "\x1b" not in out and "\u202e" not in out
    assert "\\x1b[31mred\\x1b[0m" in snippet and "\\u202eevil" in snippet

    code, out, _ = tv("search", "zebrafinch", "--json")
    (line,) = out.splitlines()
    assert line.isprintable()  # no raw control character reaches the terminal
    hit = json.loads(line)
    assert hit["path"] == str(corpus / "planted.jsonl") and hit["n"] == 2
    assert [hit["snippet"][a:b] for a, b in hit["matches"]] == ["zebrafinch"]
    assert "\x1b[31mred" in hit["snippet"] and "\u202eevil" in hit["snippet"]  # the text as it is
    assert "\x02" not in hit["snippet"] and "\x03" not in hit["snippet"]

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert "\x1b[1mzebrafinch\x1b[0m" in tv("search", "zebrafinch")[1]


def test_search_without_a_match_or_a_word(tv, corpus):
    tv("index", str(corpus))
    code, out, err = tv("search", "nosuchwordanywhere")
    assert code == 1 and out == "" and "no run matches" in err
    assert tv("search", "!!")[0] == 2


def test_ls_filters_by_format_model_and_outcome(tv, corpus):
    tv("index", str(corpus))
    trials = json.loads(TRIALS.read_text())
    rows = _ls(tv, "--format", "trials")
    assert sorted(r["title"] for r in rows) == sorted(t["instance_id"] for t in trials)
    pixel = json.loads(PIXEL.read_text())
    model = pixel["eval"]["model"]
    rows = _ls(tv, "--model", model.upper())
    assert [r["path"] for r in rows] == [str(corpus / "inspect_ai" / PIXEL.name)] * len(pixel["samples"])
    failed = _ls(tv, "--format", "trials", "--outcome", "failure")
    assert 0 < len(failed) < len(trials) and {r["outcome"] for r in failed} == {"failure"}

    code, out, err = tv("ls", "--format", "trials", "--limit", "2")
    header, *lines = out.splitlines()
    assert header.split() == ["id", "title", "format", "model", "outcome", "score", "cost", "tokens", "started"]
    assert len(lines) == 2 and all(" trials " in line for line in lines)
    assert f"2 of {len(trials)} runs shown" in err


def _trial_usage(corpus: Path) -> dict[str, tuple[int, int]]:
    """Per trial, (input, output) tokens as its steps record them: in the trials file, or in
    its own message file (OpenAI names or Anthropic names)."""
    out = {}
    for trial in json.loads(TRIALS.read_text()):
        steps = [s.get("message") for s in trial["trajectory"]] if "trajectory" in trial else \
            json.loads((corpus / "trials" / "messages" / f"{trial['instance_id']}.json").read_text())
        usage = [m.get("usage") for m in steps if isinstance(m, dict) and m.get("usage")]
        out[trial["instance_id"]] = (sum(u.get("input_tokens", u.get("prompt_tokens", 0)) for u in usage),
                                     sum(u.get("output_tokens", u.get("completion_tokens", 0)) for u in usage))
    return out


def test_export_from_the_library_and_from_files(tv, corpus, tmp_path, capsys):
    tv("index", str(corpus / "trials"), str(corpus / "api_logs"))
    code, _, err = tv("export", "--to", "parquet", "-o", str(tmp_path / "lib"))
    assert code == 0, err
    runs = pq.read_table(tmp_path / "lib" / "runs.parquet").to_pylist()
    assert len(runs) == len(_ls(tv)) and f"{len(runs)} runs" in err
    requests = pq.read_table(tmp_path / "lib" / "requests.parquet").to_pylist()
    task_of = {r["trace_id"]: r["task"] for r in runs if r["format"] == "trials"}
    exported = {task: (sum(r["input_tokens"] for r in requests if task_of.get(r["trace_id"]) == task),
                       sum(r["output_tokens"] for r in requests if task_of.get(r["trace_id"]) == task))
                for task in task_of.values()}
    assert exported == _trial_usage(corpus)
    assert {r["task"]: r["tokens"] for r in runs if r["format"] == "trials"} == \
        {task: i + o for task, (i, o) in _trial_usage(corpus).items()}

    one = runs[0]["trace_id"]
    assert main(["export", str(corpus), "--trace", one, "--to", "parquet", "-o", str(tmp_path / "files")]) == 0
    assert "1 run, " in capsys.readouterr().err
    assert [r["trace_id"] for r in pq.read_table(tmp_path / "files" / "runs.parquet").to_pylist()] == [one]


def test_export_refuses_unknown_runs_and_formats(tv, corpus, tmp_path):
    tv("index", str(corpus / "api_logs"))
    code, _, err = tv("export", "--trace", "0123456789abcdef", "--to", "parquet", "-o", str(tmp_path / "out"))
    assert code == 1 and "no run 0123456789abcdef in the library" in err
    assert not (tmp_path / "out").exists()
    code, _, err = tv("export", "--to", "xlsx", "-o", str(tmp_path / "out"))
    assert code == 2 and "invalid choice: 'xlsx'" in err
    code, _, err = tv("export", str(corpus), "--to", "parquet", "-o", str(tmp_path / "out"))
    assert code == 2 and "not both" in err


def test_the_installed_command_indexes_and_lists(tmp_path, corpus):
    env = dict(os.environ, TRACEVIEW_LIBRARY=str(tmp_path / "env.sqlite"))

    def run(*args):
        return subprocess.run([sys.executable, "-m", "viewer.cli", *args], capture_output=True, text=True,
                              cwd=REPO, env=env, timeout=120)
    assert run("index", str(corpus / "api_logs")).returncode == 0
    p = run("ls", "--json")
    assert p.returncode == 0 and len(p.stdout.splitlines()) == len(list((corpus / "api_logs").iterdir()))
    assert (tmp_path / "env.sqlite").exists()


def test_counts_must_be_above_zero(tv):
    for args in (("ls", "--limit", "0"), ("search", "finch", "--limit", "-3"), ("index", ".", "--jobs", "two")):
        code, _, err = tv(*args)
        assert code == 2 and "is not a whole number above 0" in err


def test_export_formats_are_those_the_library_writes():
    from viewer import cli
    from viewer.library import export

    assert cli.FORMATS == export.FORMATS


def test_export_pages_transcripts_documents_and_the_runs_table(tv, corpus, tmp_path):
    tv("index", str(corpus / "api_logs"))
    logs = sorted((corpus / "api_logs").iterdir())
    code, _, err = tv("export", "--to", "html", "-o", str(tmp_path / "pages"))
    assert code == 0, err
    pages = sorted(p.name for p in (tmp_path / "pages").iterdir())
    assert len(pages) == len(logs) + 1 and "index.html" in pages
    assert f"{len(logs)} pages and index.html written" in err
    one = _ls(tv)[0]["id"]
    for to, name in (("html", "one.html"), ("md", "one.md"), ("json", "one.json"), ("csv", "one.csv")):
        code, _, err = tv("export", "--trace", one, "--to", to, "-o", str(tmp_path / name))
        assert code == 0 and "1 run written" in err, (to, err)
    assert (tmp_path / "one.html").read_text().startswith("<!DOCTYPE html>")
    assert json.loads((tmp_path / "one.json").read_text())["traces"][0]["id"] == one
    assert (tmp_path / "one.csv").read_text().splitlines()[1].startswith(f'"{one}"')


def test_a_session_exports_to_one_page_holding_its_sub_agent_runs(tv, tmp_path, capsys):
    session = tmp_path / "session"
    shutil.copytree(SAMPLES / "claude_code" / "-home-user-notes-app", session)
    out = tmp_path / "session.html"
    code = main(["export", str(session), "--to", "html", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0 and "2 runs written" in err, err
    assert out.read_text().count('class="tv-subagent-run"') == 1
    tv("index", str(session))
    code, _, err = tv("export", "--to", "html", "-o", str(tmp_path / "again.html"))
    assert code == 0 and "2 runs written" in err, err
    assert (tmp_path / "again.html").read_bytes() == out.read_bytes()
    code, _, err = tv("export", "--to", "html", "-o", str(tmp_path / "pages"))
    assert code == 0 and not (tmp_path / "pages").is_dir()  # one page: a file of that name
    code, _, err = tv("export", "--to", "html", "-o", str(tmp_path))
    assert code == 2 and "is a folder: --to html writes one file" in err


def test_export_says_where_a_file_or_a_folder_is_wanted(tv, corpus, tmp_path):
    tv("index", str(corpus / "api_logs"))
    code, _, err = tv("export", "--to", "html", "-o", str(tmp_path / "all.html"))
    assert code == 2 and "-o names the folder" in err and not (tmp_path / "all.html").exists()
    (tmp_path / "folder").mkdir()
    code, _, err = tv("export", "--to", "md", "-o", str(tmp_path / "folder"))
    assert code == 2 and "is a folder: --to md writes one file" in err
    (tmp_path / "file").write_text("x")
    code, _, err = tv("export", "--to", "parquet", "-o", str(tmp_path / "file"))
    assert code == 2 and "is a file" in err and (tmp_path / "file").read_text() == "x"


def test_export_of_broken_files_counts_their_problems_and_lists_them_when_asked(tmp_path, capsys):
    # Two request logs: one with three lines that are not JSON, one with one; a good line each.
    folder = tmp_path / "logs"
    folder.mkdir()
    good = (SAMPLES / "api_logs" / "openai_chat.jsonl").read_text().splitlines()[0]
    (folder / "a.jsonl").write_text("\n".join([good, "{not json", "[1,", "{{"]) + "\n")
    (folder / "b.jsonl").write_text("\n".join([good, "nope{"]) + "\n")
    code = main(["export", str(folder), "--to", "csv", "-o", str(tmp_path / "runs.csv")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "a.jsonl: 3 problems" in err and "b.jsonl: 1 problem\n" in err
    assert "4 problems in 2 inputs (--problems lists each one)" in err
    assert "not valid JSON" not in err  # each problem only when asked
    code = main(["export", str(folder), "--to", "csv", "-o", str(tmp_path / "again.csv"), "--problems"])
    err = capsys.readouterr().err
    assert code == 0
    listed = [line for line in err.splitlines() if "not valid JSON" in line]
    assert len(listed) == 4 and [line.split(":")[:2] for line in listed] == [
        ["a.jsonl", "2"], ["a.jsonl", "3"], ["a.jsonl", "4"], ["b.jsonl", "2"]], err


def test_export_names_at_most_twenty_inputs_with_problems(tmp_path, capsys):
    from viewer import cli
    folder = tmp_path / "logs"
    folder.mkdir()
    good = (SAMPLES / "api_logs" / "openai_chat.jsonl").read_text().splitlines()[0]
    for n in range(cli.MAX_FILES_SAID + 3):
        (folder / f"{n:02d}.jsonl").write_text(good + "\n{broken\n")
    assert main(["export", str(folder), "--to", "csv", "-o", str(tmp_path / "runs.csv")]) == 0
    err = capsys.readouterr().err
    assert sum(1 for line in err.splitlines() if line.endswith(": 1 problem")) == cli.MAX_FILES_SAID
    assert "… and 3 more inputs with problems" in err and "23 problems in 23 inputs" in err
