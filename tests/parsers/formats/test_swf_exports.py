"""Claude Code, Cursor, Bolt.new and Lovable exports: detection, conversion to the Standard
Workflow Format, and bad input."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import orjson
import pytest

from parsers import pipeline
from parsers.formats.workflow import swf
from parsers.formats.workflow import exports as swf_exports
from parsers.model import ValidationError
from parsers.registry import detect
from parsers.io.source import from_bytes, from_path
from parsers.cook.schema import cooked_errors

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "sample_data" / "workflow"
SEEDS = REPO.parent / "shared" / "seeds"
EXPORTS = {"claude_code_export.json": "claude-code-export", "cursor_session.json": "cursor-export",
           "bolt_project.json": "bolt-export", "lovable_session.json": "lovable-export"}
SPEC_EXAMPLES = {"### Claude Code Format": "claude-code-export", "### Cursor Format": "cursor-export",
                 "### Bolt.new Format": "bolt-export", "### Lovable Format": "lovable-export"}


def spec_example(heading: str) -> dict:
    specs = [p for p in sorted(SEEDS.glob("*.txt")) if "Standard Workflow Format (SWF)" in p.read_text("utf-8")] \
        if SEEDS.is_dir() else []
    if not specs:
        pytest.skip(f"the Standard Workflow Format specification is not present under {SEEDS}")
    text = specs[0].read_text("utf-8")
    return json.loads(re.search(r"```json\n(.*?)```", text[text.index(heading):], re.S).group(1))


def sample(name: str) -> dict:
    return json.loads((SAMPLES / name).read_text("utf-8"))


def to_swf(data: dict | bytes, fmt: str, name: str = "export.json") -> tuple[dict, list]:
    raw = data if isinstance(data, bytes) else orjson.dumps(data)
    return swf_exports.TO_SWF[fmt](from_bytes(name, raw))


def cook(data: dict | bytes, name: str = "export.json"):
    raw = data if isinstance(data, bytes) else orjson.dumps(data)
    doc, (summary,) = pipeline.cook_uploads([(name, raw)])
    assert cooked_errors(doc) == []
    return doc, summary


def timeline(doc: dict) -> list[dict]:
    msgs = {m["id"]: m for m in doc["messages"]}
    return [msgs[i] for i in doc["traces"][0]["timeline"]]


# -- detection ----------------------------------------------------------------------------

@pytest.mark.parametrize("name, fmt", sorted(EXPORTS.items()))
def test_each_export_is_detected_as_its_format(name, fmt):
    assert detect(from_path(SAMPLES / name)).name == fmt
    for other in swf_exports.FORMATS:
        if other.name != fmt:
            assert other.sniff(from_path(SAMPLES / name)) is not None
    assert swf.sniff(from_path(SAMPLES / name)) is not None


@pytest.mark.parametrize("heading, fmt", sorted(SPEC_EXAMPLES.items()))
def test_specification_examples_are_detected(heading, fmt):
    assert detect(from_bytes("x.json", orjson.dumps(spec_example(heading)))).name == fmt


# -- the specification's own schema and SWF example ----------------------------------------

def test_schema_file_is_the_specifications_verbatim():
    assert swf.seed_schema() == spec_example("### JSON Schema for Standard Workflow Format")


def test_specification_example_needs_only_the_documented_tolerance():
    example = spec_example("### Standard Workflow Format (SWF)")
    assert swf.validation_problems(example) == []
    strict = swf.validation_problems(example, strict=True)
    assert [(p.path, "assistant_response" in p.message) for p in strict] == [("/steps/1/type", True)]


# -- conversion -----------------------------------------------------------------------------

@pytest.mark.parametrize("name, fmt", sorted(EXPORTS.items()))
def test_each_export_converts_to_valid_swf(name, fmt):
    doc, problems = swf_exports.TO_SWF[fmt](from_path(SAMPLES / name))
    assert problems == []
    out = swf.normalise(doc)
    assert swf.validation_problems(out) == []
    # Only the Bolt.new tool name is outside the verbatim schema (its enum says "bolt44").
    strict = [(p.path, out["metadata"]["tool_name"]) for p in swf.validation_problems(out, strict=True)]
    assert strict == ([("/metadata/tool_name", "bolt")] if fmt == "bolt-export" else [])
    assert out["summary"]["total_tokens"]["total"] > 0 and out["summary"]["estimated_cost"] > 0
    calls = [c for s in out["steps"] for c in s.get("tool_calls", [])]
    assert len(calls) == 5 and all(isinstance(c["output"], dict) for c in calls)
    assert sum(swf.failed(c["output"]) for c in calls) == 1


@pytest.mark.parametrize("heading, fmt", sorted(SPEC_EXAMPLES.items()))
def test_specification_examples_convert_to_valid_swf(heading, fmt):
    doc, problems = to_swf(spec_example(heading), fmt)
    assert problems == []
    assert swf.validation_problems(swf.normalise(doc)) == []


def test_claude_code_plain_number_token_count_does_not_crash():
    # The specification's converter calls .get() on token_count; its own example's user
    # message carries a plain number there.
    example = spec_example("### Claude Code Format")
    assert example["conversation"][0]["token_count"] == 15
    doc, _ = to_swf(example, "claude-code-export")
    assert [s["tokens"] for s in doc["steps"]] == [{"input": 15, "output": 0}, {"input": 15, "output": 450}]
    assert doc["steps"][1]["tool_calls"][0] == {
        "tool_name": "str_replace_editor", "input": example["conversation"][1]["tool_uses"][0]["parameters"],
        "output": {"type": "success", "file_created": True, "file_size": 1250}}


def test_claude_code_plain_number_for_an_assistant_counts_output():
    export = sample("claude_code_export.json")
    export["conversation"][1]["token_count"] = 77
    doc, problems = to_swf(export, "claude-code-export")
    assert problems == [] and doc["steps"][1]["tokens"] == {"input": 0, "output": 77}
    assert doc["steps"][0]["tokens"] == {"input": 21, "output": 0}


def test_bolt_string_results_become_objects():
    doc, _ = to_swf(spec_example("### Bolt.new Format"), "bolt-export")
    calls = doc["steps"][1]["tool_calls"]
    assert [c["output"] for c in calls] == [{"result": "success"}, {"result": "success"}]
    assert calls[1]["input"] == {"dependency": "d3", "version": "^7.8.5"}
    assert doc["metadata"]["tool_name"] == "bolt" and doc["metadata"]["workflow_name"] == "data-viz-component"
    # the response step takes the prompt's time: Bolt.new times prompts only
    assert doc["steps"][1]["timestamp"] == doc["steps"][0]["timestamp"] == "2024-01-01T10:00:00Z"


def test_cursor_keeps_every_action_field():
    doc, _ = to_swf(sample("cursor_session.json"), "cursor-export")
    failing = doc["steps"][3]["tool_calls"][0]
    assert failing["input"] == {"command": "npm run build"}
    assert failing["output"]["success"] is False and "Can't resolve" in failing["output"]["error"]
    assert doc["metadata"]["project_context"]["git_commit"] == "abc123def456"
    assert doc["summary"]["files_created"] == 1 and doc["summary"]["files_modified"] == 2


def test_lovable_changes_become_calls_and_patches():
    doc, summary = cook(sample("lovable_session.json"))
    trace = doc["traces"][0]
    patch = next(a for a in trace["artifacts"] if a["kind"] == "patch" and a["title"] == "App.jsx")
    assert patch["content"].splitlines()[2:] == [
        "@@ line 5 @@", "-import './App.css';", "+import './App.css';", "+import BarChart from './components/BarChart';"]
    converted, _ = to_swf(sample("lovable_session.json"), "lovable-export")
    first = converted["steps"][1]["tool_calls"][0]
    assert first["output"] == {"lines_added": 45} and "lines_added" not in first["input"]
    assert converted["metadata"]["total_duration"] == 330


def test_tool_results_pair_with_calls_in_every_export():
    doc, _ = pipeline.cook_paths([SAMPLES / n for n in EXPORTS])
    assert cooked_errors(doc) == []
    msgs = {m["id"]: m for m in doc["messages"]}
    for t in doc["traces"]:
        tl = [msgs[i] for i in t["timeline"]]
        call_ids = [c["id"] for m in tl if m["role"] == "tool_use" for c in m["tool_calls"]]
        result_ids = [m["tool_use_id"] for m in tl if m["role"] == "tool_result"]
        assert call_ids == result_ids and len(set(call_ids)) == len(call_ids) == 5


# -- bad input --------------------------------------------------------------------------------

def test_missing_conversation_is_a_validation_error_naming_it():
    export = sample("claude_code_export.json")
    del export["conversation"]
    with pytest.raises(ValidationError) as info:
        to_swf(export, "claude-code-export")
    assert [p.path for p in info.value.errors] == ["/conversation"]
    doc, summary = cook(export)
    assert doc["traces"] == [] and [p["path"] for p in summary.problems] == ["/conversation"]


def test_bad_records_are_reported_and_the_rest_converts():
    export = sample("claude_code_export.json")
    export["conversation"][3] = "Run the type checker please."
    export["conversation"][1]["token_count"] = "many"
    export["conversation"][2]["tool_uses"][0]["parameters"] = "create src/theme.ts"
    export["conversation"][4]["role"] = "tool"
    doc, summary = cook(export)
    assert [(p["path"], p["message"]) for p in summary.problems] == [
        ("/conversation/1/token_count", "expected a number or an object of token counts, found a string"),
        ("/conversation/2/tool_uses/0/parameters", "expected an object, found a string"),
        ("/conversation/3", "expected an object (a message), found a string; skipped"),
        ("/conversation/4/role", "unknown role 'tool'; kept as a system step"),
    ]
    roles = [m["role"] for m in timeline(doc)]
    assert roles.count("user") == 1 and roles.count("system") == 1 and roles.count("tool_result") == 5
    assert doc["requests"][0]["usage"] is None


@pytest.mark.parametrize("fmt, name, mutate, path", [
    ("cursor-export", "cursor_session.json", lambda d: d["chat_history"][0].update(timestamp=[2024]),
     "/chat_history/0/timestamp"),
    ("cursor-export", "cursor_session.json", lambda d: d["chat_history"][1]["token_usage"].update(prompt_tokens="850"),
     "/chat_history/1/token_usage/prompt_tokens"),
    ("bolt-export", "bolt_project.json", lambda d: d["prompt_history"][0]["ai_response"].update(actions={"a": 1}),
     "/prompt_history/0/ai_response/actions"),
    ("bolt-export", "bolt_project.json", lambda d: d["usage_stats"].update(estimated_cost="cheap"),
     "/usage_stats/estimated_cost"),
    ("lovable-export", "lovable_session.json", lambda d: d["interactions"][2]["ai_response"]["code_changes"].insert(0, 7),
     "/interactions/2/ai_response/code_changes/0"),
    ("lovable-export", "lovable_session.json", lambda d: d["interactions"][1].update(user_message={"text": "blue"}),
     "/interactions/1/user_message"),
])
def test_wrong_types_name_their_path(fmt, name, mutate, path):
    export = sample(name)
    mutate(export)
    doc, summary = cook(export)
    assert summary.format == fmt
    assert [p["path"] for p in summary.problems] == [path]
    assert len(doc["traces"]) == 1 and len(timeline(doc)) >= 10


def test_truncated_export_loads_what_came_before():
    text = (SAMPLES / "lovable_session.json").read_text("utf-8")
    cut = text[: text.index('"Publish the preview"')]
    doc, summary = cook(cut.encode())
    assert summary.format == "lovable-export"
    (problem,) = summary.problems
    assert "not valid JSON" in problem["message"] and problem["path"] == "/interactions/2/user_message"
    users = [m["content"] for m in timeline(doc) if m["role"] == "user"]
    assert users == ["I need a React component for displaying bar charts", "Make the bars blue and add axis labels", ""]


def test_export_that_is_not_an_object():
    with pytest.raises(ValidationError) as info:
        to_swf(b'[{"session_metadata": {}, "conversation": []}]', "claude-code-export")
    assert "expected a JSON object" in info.value.errors[0].message


# -- Cursor agent transcripts (real files) --------------------------------------------------

def test_cursor_agent_transcripts(realdata):
    files = sorted((realdata / "cursor_agent").glob("*.jsonl"))
    assert len(files) == 4
    doc, summaries = pipeline.cook_paths(files)
    assert cooked_errors(doc) == []
    assert [s.format for s in summaries] == ["cursor-export"] * 4 and all(not s.problems for s in summaries)
    msgs = {m["id"]: m for m in doc["messages"]}
    by_name = {t["source"]: [msgs[i] for i in t["timeline"]] for t in doc["traces"]}
    large = by_name["agent-sessions_cursor_large.jsonl"]
    assert [m["role"] for m in large[:5]] == ["user", "thinking", "assistant", "tool_use", "tool_result"]
    assert large[4]["content"] == "file1.txt\nfile2.txt" and large[4]["tool_use_id"] == large[3]["tool_calls"][0]["id"]
    small = by_name["agent-sessions_cursor_small.jsonl"]
    assert small[-1]["role"] == "tool_use"  # the last call has no result in the transcript
    test_session = by_name["agent-sessions_cursor_test-session.jsonl"]
    assert test_session[0]["content"] == "run ls command"  # the <user_query> wrapper is removed


def test_cursor_agent_transcript_converts_without_times(realdata):
    src = from_path(realdata / "cursor_agent" / "agent-sessions_cursor_large.jsonl")
    doc, problems = swf_exports.TO_SWF["cursor-export"](src)
    assert problems == []
    paths = {p.path for p in swf.validation_problems(swf.normalise(doc))}
    # the transcripts carry no times, which the schema requires; nothing else is missing
    assert paths == {"/metadata/start_time", "/metadata/end_time"} | {f"/steps/{i}/timestamp" for i in range(8)}
    assert doc["steps"][1]["thinking"] == "Let me check the directory."


def test_seed_converter_shape_for_cursor_defaults():
    # An action without any result field gives a call without output (nothing is invented).
    export = copy.deepcopy(sample("cursor_session.json"))
    for key in ("success",):
        export["chat_history"][1]["actions"][0].pop(key)
    doc, _ = to_swf(export, "cursor-export")
    assert "output" not in doc["steps"][1]["tool_calls"][0]
    cooked, _ = cook(export)
    assert [m["role"] for m in timeline(cooked)][2:4] == ["tool_use", "tool_result"]
    assert len([m for m in timeline(cooked) if m["role"] == "tool_result"]) == 4
