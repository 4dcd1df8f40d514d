"""The Standard Workflow Format: schema, tolerated variants, validation paths, cooking, broken files."""
from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers import pipeline
from parsers.formats.workflow import swf
from parsers.model import ValidationError
from parsers.io.source import from_bytes
from parsers.cook.schema import cooked_errors
from parsers.pipeline import validate_file

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "sample_data" / "workflow"
GOLDEN = Path(__file__).parent / "golden"
SAMPLE_FORMATS = {"chart_component.swf.json": "swf", "claude_code_export.json": "claude-code-export",
                  "cursor_session.json": "cursor-export", "bolt_project.json": "bolt-export",
                  "lovable_session.json": "lovable-export"}


def sample(name: str) -> dict:
    return json.loads((SAMPLES / name).read_text("utf-8"))


def cook(data: bytes | dict, name: str = "w.json") -> tuple[dict, list]:
    if isinstance(data, dict):
        data = orjson.dumps(data)
    doc, summaries = pipeline.cook_uploads([(name, data)])
    assert cooked_errors(doc) == []
    return doc, summaries


def timeline(doc: dict, trace: int = 0) -> list[dict]:
    msgs = {m["id"]: m for m in doc["messages"]}
    return [msgs[i] for i in doc["traces"][trace]["timeline"]]


def projection(doc: dict) -> dict:
    (trace,) = doc["traces"]
    return {
        "format": trace["format"], "title": trace["title"], "task": trace["task"],
        "outcome": trace["outcome"], "outcome_detail": trace["outcome_detail"], "models": trace["models"],
        "started_at": trace["started_at"], "ended_at": trace["ended_at"], "duration_ms": trace["duration_ms"],
        "timeline": [[m["role"], m["content"][:60], [c["name"] for c in m["tool_calls"] or []], m["is_error"]]
                     for m in timeline(doc)],
        "totals": trace["totals"], "problems": trace["problems"],
        "artifacts": [[a["kind"], a["title"]] for a in trace["artifacts"]],
    }


# -- golden: every sample, each through its own format ----------------------------------

@pytest.mark.parametrize("name", sorted(SAMPLE_FORMATS))
def test_samples_golden(name):
    doc, (summary,) = pipeline.cook_paths([SAMPLES / name])
    assert cooked_errors(doc) == []
    assert summary.format == SAMPLE_FORMATS[name] and summary.problems == []
    got = projection(doc)
    path = GOLDEN / f"swf_{name.split('.')[0]}.json"
    if os.environ.get("TRACEVIEW_REGEN_GOLDEN"):
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    assert got == json.loads(path.read_text(encoding="utf-8"))


def test_whole_sample_folder_cooks_valid():
    doc, summaries = pipeline.cook_paths([SAMPLES])
    assert cooked_errors(doc) == []
    assert sorted(s.format for s in summaries) == sorted(SAMPLE_FORMATS.values())
    for t in doc["traces"]:
        assert t["outcome"] == "success" and t["totals"]["errors"] == 1  # one failing tool call each
        assert t["totals"]["input"] > 0 and t["totals"]["cost"] > 0 and t["totals"]["stated_cost"] > 0


# -- the schema and its tolerated variants ----------------------------------------------

@pytest.mark.parametrize("where, value", [
    (("steps", 1, "type"), "assistant_response"),
    (("metadata", "tool_name"), "bolt"),
    (("metadata", "tool_name"), "bolt44"),
    (("steps", 1, "tool_calls", 0, "output"), "success"),
])
def test_tolerated_variants(where, value):
    doc = copy.deepcopy(sample("chart_component.swf.json"))
    doc["steps"][1]["type"] = "assistant_message"
    doc["steps"][1]["tool_calls"] = [{"tool_name": "x", "input": {}, "output": {}}]
    target = doc
    for k in where[:-1]:
        target = target[k]
    target[where[-1]] = value
    assert swf.validation_problems(doc) == []


@pytest.mark.parametrize("mutate, path, words", [
    (lambda d: d["metadata"].pop("start_time"), "/metadata/start_time", "required"),
    (lambda d: d["steps"][1].pop("content"), "/steps/1/content", "required"),
    (lambda d: d.pop("summary"), "/summary", "required"),
    (lambda d: d["steps"][1].update(content=42), "/steps/1/content", "expected string, found a number"),
    (lambda d: d["steps"][2]["tokens"].update(output=-3), "/steps/2/tokens/output", "minimum"),
    (lambda d: d["steps"][2].update(type="tool_message"), "/steps/2/type", "is not one of"),
    (lambda d: d["metadata"].update(end_time="yesterday"), "/metadata/end_time", "date-time"),
    (lambda d: d["steps"][2]["tool_calls"][0].update(input="Chart.jsx"), "/steps/2/tool_calls/0/input", "expected object"),
    (lambda d: d.update(steps=[]), "/steps", "at least 1"),
    (lambda d: d.update(version="one"), "/version", "does not match"),
])
def test_violations_name_their_path(mutate, path, words):
    doc = copy.deepcopy(sample("chart_component.swf.json"))
    mutate(doc)
    with pytest.raises(ValidationError) as info:
        swf.validate(doc, "w.json")
    assert [p.path for p in info.value.errors] == [path]
    assert words in info.value.errors[0].message
    assert not isinstance(info.value, __import__("jsonschema").ValidationError)


def test_validate_command_checks_swf_files(tmp_path):
    good = tmp_path / "good.json"
    good.write_bytes((SAMPLES / "chart_component.swf.json").read_bytes())
    assert validate_file(str(good)) == (swf.TITLE, [])
    doc = sample("chart_component.swf.json")
    del doc["steps"][0]["timestamp"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert validate_file(str(bad)) == (swf.TITLE, [("/steps/0/timestamp", "required field 'timestamp' is missing")])


def test_normalised_sample_keeps_to_the_verbatim_schema():
    raw = sample("chart_component.swf.json")
    norm = swf.normalise(raw)
    assert swf.validation_problems(norm, strict=True) == []
    assert [s["type"] for s in norm["steps"]][2:4] == ["assistant_message", "assistant_message"]
    assert raw["steps"][2]["type"] == "assistant_response"  # the input is not changed
    odd = {"version": "1.0", "metadata": {"tool_name": "other", "start_time": 1704103200, "end_time": "2024-01-01T10:00:09Z"},
           "steps": [{"step_id": "a", "type": "assistant_response", "timestamp": 1704103205000, "content": "hi",
                      "tokens": {"input": 3, "output": 4}, "tool_calls": [{"tool_name": "t", "input": {}, "output": "ok"}]}]}
    norm = swf.normalise(odd)
    assert swf.validation_problems(norm, strict=True) == []
    assert norm["metadata"]["start_time"] == "2024-01-01T10:00:00Z" and norm["metadata"]["total_duration"] == 9
    assert norm["steps"][0]["timestamp"] == "2024-01-01T10:00:05Z"
    assert norm["steps"][0]["tool_calls"][0]["output"] == {"result": "ok"}
    assert norm["summary"] == {"total_tokens": {"input": 3, "output": 4, "total": 7},
                               "tool_calls": {"total": 1, "by_type": {"t": 1}}}


# -- cooking ------------------------------------------------------------------------------

def test_tool_calls_pair_with_results_by_made_up_or_given_ids():
    doc = sample("chart_component.swf.json")
    doc["steps"][3]["tool_calls"][1]["call_id"] = "toolu_edit"
    cooked, _ = cook(doc)
    tl = timeline(cooked)
    uses = [c for m in tl if m["role"] == "tool_use" for c in m["tool_calls"]]
    results = [m for m in tl if m["role"] == "tool_result"]
    assert [c["id"] for c in uses] == ["step_003:0", "step_003:1", "step_003:2", "step_004:0", "toolu_edit", "step_004:2"]
    assert [r["tool_use_id"] for r in results] == [c["id"] for c in uses]
    assert [r["is_error"] for r in results] == [False, False, True, False, False, False]
    assert "Failed to resolve import" in results[2]["content"]
    assert uses[0]["arguments"]["path"] == "src/Chart.jsx"


def test_steps_become_turns_with_usage_and_stated_cost():
    cooked, _ = cook(sample("chart_component.swf.json"))
    reqs = cooked["requests"]
    assert [r["usage"]["input"] for r in reqs] == [1210, 1890, 2150]
    assert [r["cost"] for r in reqs] == [0.01038, 0.00747, 0.0099]
    assert {r["cost_source"] for r in reqs} == {"trace"}
    assert [r["model"] for r in reqs] == ["claude-3-5-sonnet-20241022"] * 3
    # each turn sees the history before it: system + user, then the first turn and its results
    assert [len(r["request_messages"]) for r in reqs] == [2, 7, 12]
    t = cooked["traces"][0]
    assert t["started_at"] == 1704103200000 and t["duration_ms"] == 330000
    assert t["meta"]["tool"] == "Claude Code" and t["meta"]["session_id"] == "session_abc123"


@pytest.mark.parametrize("meta, outcome", [
    ({"success": True}, "success"), ({"success": False}, "failure"), ({}, "unknown"),
    ({"status": "partial"}, "partial"), ({"status": "failed", "success": True}, "failure"),
    ({"outcome": "completed"}, "success"),
])
def test_outcome(meta, outcome):
    doc = sample("chart_component.swf.json")
    doc["metadata"].pop("success")
    doc["metadata"].update(meta)
    cooked, _ = cook(doc)
    assert cooked["traces"][0]["outcome"] == outcome


def test_title_and_task_fall_back_to_the_first_user_message():
    doc = sample("chart_component.swf.json")
    for k in ("task_description", "session_id"):
        doc["metadata"].pop(k)
    doc["metadata"]["tool_name"] = "other"
    cooked, _ = cook(doc, "run7.json")
    t = cooked["traces"][0]
    assert t["title"] == "run7.json"
    assert t["task"].startswith("Create a React component that renders a bar chart")


def test_sniff():
    assert swf.sniff(from_bytes("w.json", (SAMPLES / "chart_component.swf.json").read_bytes())) is None
    assert swf.sniff(from_bytes("x.jsonl", b'{"request": {"messages": []}, "response": {}}\n')) is not None
    assert swf.sniff(from_bytes("x.json", b'{"steps": [{"action": "ls"}], "metadata": {}}')) is not None
    assert swf.sniff(from_bytes("x.json", b"\x00\x01binary")) == "binary content"


# -- broken files: problems with paths, good parts still load -----------------------------

def test_missing_required_field_is_listed_and_the_rest_loads():
    doc = sample("chart_component.swf.json")
    del doc["metadata"]["end_time"]
    del doc["steps"][4]["timestamp"]
    cooked, (summary,) = cook(doc)
    assert [p["path"] for p in summary.problems] == ["/metadata/end_time", "/steps/4/timestamp"]
    assert len(timeline(cooked)) == 13


def test_wrong_types_are_listed_and_the_rest_loads():
    doc = sample("chart_component.swf.json")
    doc["steps"][1]["content"] = ["Create a chart"]
    doc["steps"][2]["tokens"] = "lots"
    doc["steps"][4] = "not a step"
    cooked, (summary,) = cook(doc)
    paths = [p["path"] for p in summary.problems]
    assert paths == ["/steps/1/content", "/steps/2/tokens", "/steps/4"]
    tl = timeline(cooked)
    assert tl[1]["content"] == '[\n  "Create a chart"\n]' and len(tl) == 12
    assert cooked["requests"][0]["usage"] is None and cooked["requests"][1]["usage"]["input"] == 1890


def test_steps_not_an_array_fails_the_input_with_its_path():
    doc = sample("chart_component.swf.json")
    doc["steps"] = {"step_001": doc["steps"][0]}
    cooked, (summary,) = cook(doc)
    assert cooked["traces"] == []
    assert ("/steps", "expected array, found an object") in [(p["path"], p["message"]) for p in summary.problems]


@pytest.mark.parametrize("cut_after, path, steps_read", [
    ('"content": "The test failed because', "/steps/3/content", 3),
    ('"tool_name": "edit_file",', "/steps/3/tool_calls/1", 4),
    ('"total_tokens": {"input": 5250', "/summary/total_tokens/input", 5),
])
def test_truncated_file_loads_what_came_before(cut_after, path, steps_read):
    text = (SAMPLES / "chart_component.swf.json").read_text("utf-8")
    text = text[: text.index(cut_after) + len(cut_after)]
    cooked, (summary,) = cook(text.encode())
    first = summary.problems[0]
    assert "not valid JSON" in first["message"] and first["path"] == path and first["line"] > 1
    tl = timeline(cooked)
    # a step cut inside its content keeps its other fields and shows an empty message
    assert len({m["content"] for m in tl if m["role"] in ("user", "assistant", "system")} - {""}) == steps_read
    assert cooked["traces"][0]["outcome"] == "success"


def test_nothing_readable_raises_validation_error_with_problems():
    for data, path, words in ((b"", "", "empty"), (b"{", "/steps", "required"),
                              (b"[1, 2", "", "expected a JSON object")):
        with pytest.raises(ValidationError) as info:
            swf.parse(from_bytes("w.json", data))
        assert path in [p.path for p in info.value.errors]
        assert any(words in p.message for p in info.value.errors)
    (trace,) = swf.parse(from_bytes("w.json", b'{"metadata": {"tool_name": "cursor"}, "steps": [ oops')).traces
    assert trace.messages == [] and "/steps" in [p.path for p in trace.problems]


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=6000))
def test_salvage_never_fails_and_reads_a_prefix(cut):
    text = (SAMPLES / "chart_component.swf.json").read_text("utf-8")[:cut]
    got = swf.salvage(text, len(text))
    if got is not None:
        value, path = got
        assert isinstance(value, dict) and path.startswith("/") or path == ""
        full = sample("chart_component.swf.json")
        for k, v in value.get("metadata", {}).items():  # what was read equals the original
            if k in full["metadata"] and not isinstance(v, (dict, list)):
                assert v == full["metadata"][k]
