"""The Standard Workflow Format: schema, tolerated variants, validation paths, cooking, broken files."""
from __future__ import annotations

import copy
import json
import os
from datetime import datetime
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
from tests.parsers.cook.test_pricing import package_price

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
        # the cost is worked out from the file by test_samples_cost_their_stated_turn_costs_or_the_package_price
        "totals": {k: v for k, v in trace["totals"].items() if k != "cost"}, "problems": trace["problems"],
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


def model_turns(name: str) -> list[tuple[str, str, int, int, float | None, datetime]]:
    """Each model turn of a workflow sample as its file states it: (model, provider, input
    tokens, output tokens, the cost the file gives for the turn or None, time)."""
    d = sample(name)
    provider = {"claude": "anthropic", "gpt-4": "openai"}

    def turn(model, tokens_in, tokens_out, cost, stamp):
        (vendor,) = [v for k, v in provider.items() if model.startswith(k)]
        return model, vendor, tokens_in, tokens_out, cost, datetime.fromisoformat(stamp.replace("Z", "+00:00"))

    if name == "chart_component.swf.json":
        return [turn(d["metadata"]["model_name"], s["tokens"]["input"], s["tokens"]["output"], s.get("cost"),
                     s["timestamp"]) for s in d["steps"] if s["type"].startswith("assistant")]
    if name == "claude_code_export.json":
        return [turn(d["session_metadata"]["model"], s["token_count"]["input"], s["token_count"]["output"], None,
                     s["timestamp"]) for s in d["conversation"] if s["role"] == "assistant"]
    if name == "cursor_session.json":
        return [turn(d["model"], s["token_usage"]["prompt_tokens"], s["token_usage"]["completion_tokens"], None,
                     s["timestamp"]) for s in d["chat_history"] if s["role"] == "assistant"]
    if name == "bolt_project.json":
        return [turn(d["model"], s["ai_response"]["tokens"]["input"], s["ai_response"]["tokens"]["output"], None,
                     s["timestamp"]) for s in d["prompt_history"]]
    assert name == "lovable_session.json"
    return [turn(d["model"], s["ai_response"]["token_usage"]["input_tokens"],
                 s["ai_response"]["token_usage"]["output_tokens"], None, s["timestamp"]) for s in d["interactions"]]


@pytest.mark.parametrize("name", sorted(SAMPLE_FORMATS))
def test_samples_cost_their_stated_turn_costs_or_the_package_price(name):
    """A turn costs what the file states for it, else what genai-prices makes of the tokens
    the file gives it; the trace's cost is their sum (its stated total is kept apart)."""
    doc, _ = pipeline.cook_paths([SAMPLES / name])
    turns = model_turns(name)
    want = [stated if stated is not None else package_price(model, vendor, input=i, output=o, when=when)
            for model, vendor, i, o, stated, when in turns]
    assert [r["cost"] for r in doc["requests"]] == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert [r["cost_source"] == "trace" for r in doc["requests"]] == [t[4] is not None for t in turns]
    (trace,) = doc["traces"]
    assert trace["totals"]["cost"] == pytest.approx(sum(want), rel=1e-9)


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


def is_prefix(part, whole) -> bool:
    """`part` is what a JSON value reads as when cut after complete members: the same keys (or
    elements) in the same order up to some point, all equal but the last, which may itself be
    such a prefix."""
    if isinstance(whole, dict):
        if not isinstance(part, dict) or list(part) != list(whole)[:len(part)]:
            return False
        keys = list(part)
        return all(part[k] == whole[k] for k in keys[:-1]) and (not keys or is_prefix(part[keys[-1]], whole[keys[-1]]))
    if isinstance(whole, list):
        if not isinstance(part, list) or len(part) > len(whole):
            return False
        return not part or (part[:-1] == whole[:len(part) - 1] and is_prefix(part[-1], whole[len(part) - 1]))
    return part == whole and type(part) is type(whole)


def resolve(doc, ptr: str):
    """The value the pointer names; an array index may also be the array's length (the break
    is where the array's next element would start, e.g. inside an empty array)."""
    parts = ptr.split("/")[1:]
    for n, raw in enumerate(parts):
        key = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(doc, list) and n == len(parts) - 1 and int(key) == len(doc):
            return None
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    return doc


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_salvage_never_fails_and_reads_a_prefix(data):
    """The sample cut anywhere before its closing brace: salvage reads something as soon as
    the opening brace is in, what it reads is a prefix of the document, a longer cut never
    reads less, and the pointer names a place in the document."""
    text = (SAMPLES / "chart_component.swf.json").read_text("utf-8")
    full = json.loads(text)
    end = text.rindex("}")  # from here on the text is the whole document
    cut = data.draw(st.integers(min_value=0, max_value=end), label="cut")
    longer = data.draw(st.integers(min_value=cut, max_value=end), label="longer")
    got = swf.salvage(text[:cut], cut)
    if cut == 0:
        assert got is None
        return
    assert got is not None
    value, path = got
    assert isinstance(value, dict) and is_prefix(value, full)
    keys = list(full)
    for key, nxt in zip(keys, keys[1:]):  # the file puts each top-level member on its own lines
        if text.index(f'\n  "{nxt}":') < cut:  # its comma is in: the member is read whole
            assert value[key] == full[key]
    resolve(full, path)  # raises when the pointer names no place in the document
    more, _ = swf.salvage(text[:longer], longer)
    assert is_prefix(value, more)


class _Member:
    """Where one value sits in a serialised document: its key, the offsets of its opening
    bracket, of its colon (object members) and of the comma or closing bracket that ends it."""

    def __init__(self, key, value):
        self.key, self.value, self.children = key, value, []
        self.open = self.colon = self.delim = self.close = None


def dump_with_offsets(doc, indent, separators) -> tuple[str, _Member]:
    """json.dumps(doc, indent=indent, separators=separators, ensure_ascii=False), written out
    by hand so that every member's offsets are known (the text is checked against json.dumps)."""
    item_sep, key_sep = separators
    parts: list[str] = []
    pos = 0

    def w(s: str) -> None:
        nonlocal pos
        parts.append(s)
        pos += len(s)

    def write(node: _Member, level: int) -> None:
        v = node.value
        if not isinstance(v, (dict, list)):
            w(json.dumps(v, ensure_ascii=False))
            return
        node.open = pos
        w("{" if isinstance(v, dict) else "[")
        items = list(v.items()) if isinstance(v, dict) else list(enumerate(v))
        for n, (k, child_value) in enumerate(items):
            child = _Member(k, child_value)
            if n:
                node.children[-1].delim = pos
                w(item_sep)
            if indent is not None:
                w("\n" + " " * indent * (level + 1))
            if isinstance(v, dict):
                w(json.dumps(k, ensure_ascii=False))
                child.colon = pos
                w(key_sep)
            node.children.append(child)
            write(child, level + 1)
        if items and indent is not None:
            w("\n" + " " * indent * level)
        node.close = pos
        if node.children:
            node.children[-1].delim = pos
        w("}" if isinstance(v, dict) else "]")

    root = _Member(None, doc)
    write(root, 0)
    text = "".join(parts)
    assert text == json.dumps(doc, indent=indent, separators=separators, ensure_ascii=False)
    return text, root


def read_before(node: _Member, cut: int):
    """What text[:cut] says of a container that is open there: the members whose comma or
    closing bracket is in, and the container member that is still open, with what it holds."""
    out: dict | list = {} if isinstance(node.value, dict) else []
    for child in node.children:
        if isinstance(child.value, (dict, list)):
            if child.open >= cut:
                break
            got = read_before(child, cut)
        elif child.delim < cut:
            got = child.value
        else:
            break
        if isinstance(out, dict):
            out[child.key] = got
        else:
            out.append(got)
    return out


def break_pointer(root: _Member, cut: int) -> str:
    """The member text[:cut] breaks in: in each open container its current key (from its
    colon to its comma) or element index (the commas so far)."""
    path, node = [], root
    while True:
        if isinstance(node.value, list):
            idx = sum(1 for ch in node.children[:-1] if ch.delim < cut)
            path.append(idx)
            child = node.children[idx] if idx < len(node.children) else None
        else:
            current = [ch for ch in node.children if ch.colon < cut <= ch.delim]
            if not current:
                break
            child = current[0]
            path.append(child.key)
        if child is None or child.open is None or child.open >= cut or child.close < cut:
            break
        node = child
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


_scalars = (st.none() | st.booleans() | st.integers(min_value=-2**63, max_value=2**63 - 1)
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(st.characters(blacklist_categories=("Cs",)), max_size=6))
_keys = st.text(st.characters(blacklist_categories=("Cs",)), max_size=4)
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
                       max_leaves=16)
_documents = st.lists(_values, max_size=4) | st.dictionaries(_keys, _values, max_size=4)
_layouts = st.sampled_from([(None, (", ", ": ")), (None, (",", ":")), (0, (",", ": ")), (2, (",", ": "))])


@settings(max_examples=300, deadline=None)
@given(_documents, _layouts, st.data())
def test_salvage_reads_every_complete_member_before_the_break(doc, layout, data):
    """Against an independent account of where each member of a serialised document ends:
    salvage of any cut before the closing bracket reads exactly the members completed before
    the cut (the longest prefix that closes into valid JSON) and points where it broke."""
    indent, separators = layout
    text, root = dump_with_offsets(doc, indent, separators)
    cut = data.draw(st.integers(min_value=0, max_value=root.close), label="cut")
    got = swf.salvage(text, cut)
    if cut == 0:
        assert got is None
    else:
        assert got == (read_before(root, cut), break_pointer(root, cut))


def test_load_json_reports_bytes_that_are_not_utf8():
    body = orjson.dumps(sample("chart_component.swf.json"))
    at = body.index(b'"', 10) + 1  # inside the first string value after the opening key
    raw = body[:at] + b"\xff\xfe" + body[at:]
    problems: list = []
    doc = swf.load_json(from_bytes("w.swf.json", raw), problems)
    assert isinstance(doc, dict)
    msgs = [p.message for p in problems]
    assert f"bytes that are not UTF-8 (the first at byte {at}) were replaced with U+FFFD" in msgs


def test_load_json_of_clean_utf8_reports_nothing():
    problems: list = []
    assert swf.load_json(from_bytes("w.swf.json", "{\"a\": \"caf\u00e9\"}".encode()), problems) == {"a": "caf\u00e9"}
    assert problems == []
