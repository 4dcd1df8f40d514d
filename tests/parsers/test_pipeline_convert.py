"""`traceview convert --to swf`: the library call and the command, end to end."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from parsers.formats.workflow import swf
from parsers.pipeline import convert_file
from parsers.cook.schema import cooked_errors

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_data" / "workflow"
ALL = ["chart_component.swf.json", "claude_code_export.json", "cursor_session.json", "bolt_project.json",
       "lovable_session.json"]


def traceview(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "viewer.cli", *args], capture_output=True, text=True,
                          cwd=REPO, timeout=120)


@pytest.mark.parametrize("name", ALL)
def test_every_sample_converts_to_valid_swf(name):
    text, problems = convert_file(SAMPLES / name, "swf")
    assert problems == []
    doc = json.loads(text)
    assert swf.check(doc) == []
    assert doc["version"] == "1.0" and len(doc["steps"]) >= 5
    assert all(s["type"] in ("user_message", "assistant_message", "system_message") for s in doc["steps"])


def test_swf_input_is_normalised():
    text, problems = convert_file(SAMPLES / "chart_component.swf.json", "SWF")
    doc = json.loads(text)
    assert problems == [] and swf.validation_problems(doc, strict=True) == []
    assert [s["type"] for s in doc["steps"]].count("assistant_message") == 3
    assert doc["steps"][2]["tool_calls"][2]["output"]["exit_code"] == 1


def test_unknown_target_is_a_value_error():
    with pytest.raises(ValueError, match="unknown target format 'html'"):
        convert_file(SAMPLES / "bolt_project.json", "html")


def test_inputs_that_do_not_convert(tmp_path):
    text, problems = convert_file(tmp_path / "missing.json", "swf")
    assert text is None and problems[0].message == "no such file"
    log = tmp_path / "calls.jsonl"
    log.write_bytes(orjson.dumps({"request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
                                  "response": {"choices": [{"message": {"role": "assistant", "content": "hello"}}]}}) + b"\n")
    text, problems = convert_file(log, "swf")
    assert text is None and "cannot be converted to the Standard Workflow Format" in problems[0].message
    junk = tmp_path / "notes.txt"
    junk.write_text("just some notes")
    text, problems = convert_file(junk, "swf")
    assert text is None and "no supported format recognised it" in problems[0].message


def test_broken_export_reports_paths(tmp_path):
    export = json.loads((SAMPLES / "claude_code_export.json").read_text("utf-8"))
    export["conversation"] = {"msg_001": export["conversation"][0]}
    bad = tmp_path / "export.json"
    bad.write_text(json.dumps(export))
    text, problems = convert_file(bad, "swf")
    assert text is None and [p.path for p in problems] == ["/conversation"]

    export = json.loads((SAMPLES / "claude_code_export.json").read_text("utf-8"))
    del export["conversation"][1]["timestamp"]
    bad.write_text(json.dumps(export))
    text, problems = convert_file(bad, "swf")
    assert text is not None  # what converts is written; the break is named
    assert [p.message for p in problems] == [
        "the written Standard Workflow Format breaks its schema at /steps/1/timestamp: "
        "required field 'timestamp' is missing"]
    assert [path for path, _ in swf.check(json.loads(text))] == ["/steps/1/timestamp"]


def test_convert_command_end_to_end(tmp_path):
    outs = []
    for name in ALL:
        out = tmp_path / f"{name.split('.')[0]}.swf.json"
        proc = traceview("convert", str(SAMPLES / name), "--to", "swf", "-o", str(out))
        assert proc.returncode == 0, proc.stderr
        assert proc.stderr == ""
        outs.append(out)
    check = traceview("validate", *map(str, outs))
    assert check.returncode == 0, check.stdout
    assert check.stdout.splitlines() == [f"{out}: valid Standard Workflow Format" for out in outs]


def test_convert_command_failures(tmp_path):
    proc = traceview("convert", str(SAMPLES / "bolt_project.json"), "--to", "html")
    assert proc.returncode == 2 and "unknown target format" in proc.stderr
    bad = tmp_path / "cut.json"
    bad.write_text('{"session_metadata": {"id": "s"}, "conversation": 3}')
    proc = traceview("convert", str(bad), "--to", "swf", "-o", str(tmp_path / "o.json"))
    assert proc.returncode == 1 and "at /conversation" in proc.stderr
    assert not (tmp_path / "o.json").exists()


def test_validate_command_names_swf_violations(tmp_path):
    doc = json.loads((SAMPLES / "chart_component.swf.json").read_text("utf-8"))
    doc["steps"][1]["tokens"]["input"] = "15"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    proc = traceview("validate", str(bad))
    assert proc.returncode == 1
    assert "/steps/1/tokens/input: expected integer, found a string" in proc.stdout


def test_cook_command_on_the_sample_folder(tmp_path):
    out = tmp_path / "w.json"
    proc = traceview("cook", str(SAMPLES), "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    assert cooked_errors(json.loads(out.read_text("utf-8"))) == []
    check = traceview("validate", str(out))
    assert check.returncode == 0 and "valid cooked document" in check.stdout
