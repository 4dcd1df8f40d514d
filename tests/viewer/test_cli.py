"""The `traceview` command as a user runs it: exit codes, messages, no tracebacks."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

REPO = Path(__file__).resolve().parents[2]
RECORD = {"id": "r1", "timestamp": "2026-02-20T10:00:00Z", "duration_ms": 900,
          "request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]},
          "response": {"choices": [{"message": {"role": "assistant", "content": "hello"}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 3}}}


def run(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "viewer.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_cook_to_stdout_and_summary_on_stderr(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(orjson.dumps(RECORD) + b"\n")
    p = run("cook", str(log))
    assert p.returncode == 0
    doc = json.loads(p.stdout)
    assert [r["id"] for r in doc["requests"]] == ["r1"]
    assert doc["requests"][0]["timestamp"] == 1771581600000
    assert p.stderr.strip() == ("log.jsonl: request-log, 1 record, 1 trace, 1 request, 2 unique messages, 0 tools, 0 problems")
    # One line of JSON and its newline; --pretty indents the same document.
    assert p.stdout.endswith("}\n") and p.stdout.count("\n") == 1
    pretty = run("cook", str(log), "--pretty").stdout
    assert pretty.endswith("\n}\n") and pretty.count("\n") > 10 and json.loads(pretty) == doc


def test_cook_exit_1_when_nothing_cooked(tmp_path):
    (tmp_path / "notes.log").write_text("just some notes\n")
    p = run("cook", str(tmp_path / "notes.log"), "-o", str(tmp_path / "out.json"))
    assert p.returncode == 1
    assert "nothing cooked" in p.stderr and "Traceback" not in p.stderr
    assert "a Markdown or plain text file" in p.stderr  # says what the file looks like
    assert not (tmp_path / "out.json").exists()


def test_cook_exit_2_for_wrong_usage(tmp_path):
    assert run("cook").returncode == 2
    p = run("cook", "--format", "nonsense", str(tmp_path))
    assert p.returncode == 2 and "invalid choice" in p.stderr
    assert run("frobnicate").returncode == 2


def test_the_format_names_are_read_only_where_they_are_needed(tmp_path):
    """`cook -h` lists every format name and --format takes any of them; other commands (serve
    starts with this) parse their arguments without loading a single format."""
    from parsers.registry import names

    help_text = " ".join(run("cook", "-h").stdout.split())
    listed = help_text.split("detecting it: ", 1)[1]
    for name in names():
        assert name in listed.replace("- ", "-")  # argparse wraps long names at their hyphen
    forced = run("cook", "--format", "request-log", str(tmp_path / "nope.jsonl"))
    assert forced.returncode == 1 and "invalid choice" not in forced.stderr
    code = ("import sys; from viewer import cli; cli.build_parser().parse_args(['serve', '.']); "
            "print(sorted(m for m in sys.modules if m == 'parsers.registry' or m.startswith('parsers.formats')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "[]"


def test_missing_input_is_reported(tmp_path):
    p = run("cook", str(tmp_path / "nope.jsonl"))
    assert p.returncode == 1 and "no such file" in p.stderr


def test_validate_reports_errors_with_json_paths(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_bytes(orjson.dumps(RECORD) + b"\n")
    out = tmp_path / "c.json"
    assert run("cook", str(log), "-o", str(out)).returncode == 0
    ok = run("validate", str(out))
    assert ok.returncode == 0 and "valid cooked document" in ok.stdout
    doc = json.loads(out.read_text())
    doc["messages"][0]["role"] = "robot"
    doc["requests"][0]["request_messages"].append("ffffffffffffffff")
    del doc["traces"][0]["timeline"]
    out.write_text(json.dumps(doc))
    bad = run("validate", str(out))
    assert bad.returncode == 1
    assert "/messages/0/role" in bad.stdout and "'robot' is not one of" in bad.stdout
    assert "/traces/0: 'timeline' is a required property" in bad.stdout
    (tmp_path / "junk.json").write_text("{nope")
    junk = run("validate", str(tmp_path / "junk.json"))
    assert junk.returncode == 1 and "not valid JSON" in junk.stdout


def test_problems_flag_lists_each_problem_with_its_place(tmp_path):
    log = tmp_path / "log.jsonl"
    bad = dict(RECORD, request={"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}, 5]})
    log.write_bytes(orjson.dumps(bad) + b"\n" + b"{broken\n")
    p = run("cook", str(log), "--problems", "-o", str(tmp_path / "out.json"))
    assert p.returncode == 0
    assert "  log.jsonl:1 at /request/messages/1: expected a message object, found a number; skipped" in p.stderr
    assert "  log.jsonl:2: not valid JSON" in p.stderr


def test_terminal_escapes_and_newlines_from_traces_are_shown_not_acted(shared, tmp_path):
    # An error text and an archive member name carry escape sequences (clipboard write, screen
    # clear, title change); a file name carries a newline that would forge a summary line.
    forged = tmp_path / "a\nfake.jsonl: request-log, 99 records.jsonl"
    forged.write_bytes((REPO / "sample_data" / "api_logs" / "openai_chat.jsonl").read_bytes())
    inputs = [shared("badinputs", "term", "T01_ansi_in_error.jsonl"),
              shared("badinputs", "term", "T02_ansi_member_name.zip"), forged]
    run = subprocess.run([sys.executable, "-m", "viewer.cli", "cook", "--problems", *map(str, inputs),
                          "-o", str(tmp_path / "out.json")], capture_output=True, cwd=REPO, timeout=120)
    assert run.returncode == 0
    err = run.stderr.decode()
    assert "\x1b" not in err and "\x07" not in err
    assert "\\x1b]52;c;" in err  # shown, escaped
    lines = err.splitlines()
    assert sum(line.startswith(("a", "/")) and "fake.jsonl" in line for line in lines) == 1
    assert not any(line.startswith("fake.jsonl") for line in lines)


# -- prices -----------------------------------------------------------------------------------
PRICES = '[models."ark-code-latest"]\ninput = 0.8\noutput = 2.0\ncache_read = 0.16\n'


def test_cook_with_a_prices_file_prices_unknown_models(realdata, tmp_path):
    """nanobot's model is unknown to the price list; `--prices` gives it a price, and every
    request names the file as its price source. Costs from the raw usage at the file's prices."""
    prices = tmp_path / "prices.toml"
    prices.write_text(PRICES)
    src = realdata / "llm_trace_raw" / "nanobot.jsonl"
    p = run("cook", str(src), "-o", str(tmp_path / "out.json"), "--prices", str(prices))
    assert p.returncode == 0, p.stderr
    doc = orjson.loads((tmp_path / "out.json").read_bytes())
    raw = [json.loads(line)["response"]["usage"] for line in src.read_text("utf-8").splitlines()]
    expected = sum(u["prompt_tokens"] * 0.8 + u["completion_tokens"] * 2.0 for u in raw) / 1e6
    (t,) = doc["traces"]
    assert t["totals"]["cost"] == pytest.approx(expected) and t["totals"]["unpriced_requests"] == 0
    assert {r["cost_source"] for r in doc["requests"]} == {f"prices file {prices.resolve()}"}
    # without the file: unpriced, as before
    p = run("cook", str(src), "-o", str(tmp_path / "plain.json"))
    plain = orjson.loads((tmp_path / "plain.json").read_bytes())
    assert plain["traces"][0]["totals"]["cost"] is None and plain["traces"][0]["totals"]["unpriced_requests"] == 25


@pytest.mark.parametrize("text,says", [
    ('[models."ark"]\ninput = "cheap"\noutput = 1\n', 'models."ark".input: expected a number'),
    ('[models."ark"]\ninput = 1\n', 'models."ark": output is missing'),
    ("[models\n", "not valid TOML"),
])
def test_a_bad_prices_file_is_named_with_its_entry(tmp_path, text, says):
    (tmp_path / "in.jsonl").write_text(json.dumps(RECORD) + "\n")
    bad = tmp_path / "prices.toml"
    bad.write_text(text)
    for cmd in (["cook", str(tmp_path / "in.jsonl")], ["serve", str(tmp_path / "in.jsonl"), "--headless"]):
        p = run(*cmd, "--prices", str(bad))
        assert p.returncode == 2 and "Traceback" not in p.stderr
        assert str(bad) in p.stderr and says in p.stderr, p.stderr
    p = run("cook", str(tmp_path / "in.jsonl"), "--prices", str(tmp_path / "missing.toml"))
    assert p.returncode == 2 and "missing.toml: cannot be read" in p.stderr
