"""The cook's door on the audit's reproducers: one bad value is a problem on its record, the
record and every other record still cook, and the written document is always valid."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from parsers.cook.intake import MAX_DEPTH, as_text, unwritable
from parsers.cook.schema import cooked_errors
from parsers.pipeline import cook_paths

REPO = Path(__file__).resolve().parents[3]

# reproducer -> (requests or traces it must still give, (line or record, words of its problem))
REPRO = {
    "R01_model_is_object.jsonl": (3, (2, "the model: expected a string, found an object")),
    "R02_model_is_number.jsonl": (3, (2, "the model: expected a string, found 4; left out")),
    "R03_timestamp_1e20.jsonl": (3, (2, "expected an ISO 8601 time or epoch number, found 1e+20")),
    "R04_negative_tokens.jsonl": (3, (2, "usage output: expected a whole number of tokens")),
    "R05_tool_schema_depth300.jsonl": (3, (2, f"nested deeper than {MAX_DEPTH} levels; kept as text")),
    "R06_tokens_1e308.jsonl": (3, (2, "usage input: expected a whole number of tokens")),
    "R07_param_depth300.jsonl": (3, (2, "the request setting 'temperature': nested deeper")),
    "R08_duration_1e300.jsonl": (3, (2, "the duration: expected a number")),
    "R09_trials_role_list.trials.json": (6, (1, "expected a role name, found an array; read as the user's")),
    "R10_trials_timestamp_inf.trials.json": (6, (1, "found 'inf'; the event is shown without a time")),
    "R11_trials_deep_element.trials.json": (6, (2, "nested deeper than its JSON can be read")),
    "R12_swf_step_type_list.swf.json": (3, (None, "expected string, found an array")),
    "R14_claude_code_timestamp_1e20.json": (4, (1, "found 1e+20; the step is shown without a time")),
    "R15_tool_call_id_object.jsonl": (1, (1, "a tool call's id: expected a string, found an object")),
    "R16_deep_value_poisons_next_record.jsonl": (4, None),
}


@pytest.mark.parametrize("name", sorted(REPRO))
def test_a_bad_value_is_a_problem_on_its_record_and_the_document_is_written(name, shared):
    path = shared("badinputs", "repro", name)
    doc, (summary,) = cook_paths([path])
    count, expected = REPRO[name]
    assert len(doc["requests"]) == count
    if expected is not None:
        where, words = expected
        assert any(words in p["message"] and (where is None or where in (p["line"], p["record"]))
                   for p in summary.problems), summary.problems
    text = orjson.dumps(doc)  # the document can be written...
    assert cooked_errors(orjson.loads(text)) == []  # ...and it validates


def test_the_command_line_writes_every_reproducer(shared, tmp_path):
    names = [n for n in REPRO]
    paths = [str(shared("badinputs", "repro", n)) for n in names]
    out = tmp_path / "all.json"
    run = subprocess.run([sys.executable, "-m", "viewer.cli", "cook", *paths, "-o", str(out)],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert run.returncode == 0, run.stderr
    doc = orjson.loads(out.read_bytes())
    assert {i["name"].rsplit("/", 1)[-1] for i in doc["inputs"] if i["traces"]} == set(names)


def test_a_negative_count_leaves_the_request_unpriced(shared):
    doc, _ = cook_paths([shared("badinputs", "repro", "R04_negative_tokens.jsonl")])
    by_line = {r["line"]: r for r in doc["requests"]}
    assert by_line[2]["usage"] is None and by_line[2]["cost"] is None


@pytest.mark.parametrize("value, why", [
    ({"a": 1, "b": [1.5, "x", None, True]}, None),
    (2**64 - 1, None),
    (2**64, "an integer past 64 bits"),
    (-(2**63) - 1, "an integer past 64 bits"),
    (float("nan"), "a number that is not finite"),
    ([float("inf")], "a number that is not finite"),
    ({1: "x"}, "an object key that is not text"),
])
def test_what_the_document_cannot_hold_is_named(value, why):
    assert unwritable(value) == why


def test_deep_values_become_text_that_reads_back():
    deep = current = []
    for _ in range(MAX_DEPTH + 50):
        current.append([])
        current = current[0]
    assert unwritable(deep) == f"nested deeper than {MAX_DEPTH} levels"
    text = as_text(deep)
    assert text == "[" * (MAX_DEPTH + 51) + "]" * (MAX_DEPTH + 51)
    very = current = []
    for _ in range(sys.getrecursionlimit() * 2):
        current.append([])
        current = current[0]
    assert as_text(very) == "[a value nested too deep to write]"


def test_a_task_keeps_no_edge_white_space(tmp_path):
    # A prompt typed with trailing newlines is the run's task as the runs table shows and pairs it.
    prompt = "  Create hello.txt with \"Hello, world!\" as the content.\n\n"
    lines = [{"type": "user", "sessionId": "s-1", "uuid": "u1", "parentUuid": None,
              "timestamp": "2026-01-05T10:00:00Z", "message": {"role": "user", "content": prompt}},
             {"type": "assistant", "sessionId": "s-1", "uuid": "a1", "parentUuid": "u1",
              "timestamp": "2026-01-05T10:00:02Z", "requestId": "r1",
              "message": {"id": "m1", "role": "assistant", "model": "claude-sonnet-4-5",
                          "content": [{"type": "text", "text": "Done."}], "usage": {"input_tokens": 3, "output_tokens": 1}}}]
    path = tmp_path / "s-1.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    doc, _ = cook_paths([str(path)])
    (t,) = doc["traces"]
    assert t["task"] == prompt.strip()
