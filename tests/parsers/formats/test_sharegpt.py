"""Tests for parsers.formats.sharegpt: ShareGPT `[{id, conversations: [{from, value}]}]` files."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from parsers.pipeline import cook_paths, cook_uploads
from parsers.registry import detect
from parsers.formats.sharegpt import FORMAT, sniff
from parsers.io.source import from_bytes
from parsers.cook.schema import cooked_errors

REALDATA = Path(__file__).resolve().parents[4] / "shared" / "realdata"
DUMMY = REALDATA / "sharegpt_fastchat" / "dummy_conversation.json"


def _cook(name: str, data) -> tuple[dict, list]:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    doc, summaries = cook_uploads([(name, raw)])
    assert cooked_errors(doc) == []
    return doc, summaries


def test_real_fixture_file():
    if not DUMMY.is_file():
        pytest.skip(f"shared real-data file not present: {DUMMY}")
    doc, summaries = cook_paths([str(DUMMY)])
    assert cooked_errors(doc) == []
    assert summaries[0].format == "sharegpt" and summaries[0].problems == []
    records = json.loads(DUMMY.read_text())
    assert len(doc["traces"]) == len(records) == 500
    msgs = {m["id"]: m for m in doc["messages"]}
    first = doc["traces"][0]
    assert first["task"] == records[0]["id"] and first["title"] == records[0]["conversations"][0]["value"]
    assert [msgs[m]["role"] for m in first["timeline"]] == ["user", "assistant"] * (len(records[0]["conversations"]) // 2)
    assert [msgs[m]["content"] for m in first["timeline"]] == [t["value"] for t in records[0]["conversations"]]
    # one synthetic request per answer
    assert len(first["requests"]) == len(records[0]["conversations"]) // 2


def test_roles_system_and_tool_turns():
    doc, _ = _cook("chats.json", [{"id": "t1", "system": "Be brief.", "conversations": [
        {"from": "human", "value": "Weather in Paris?"},
        {"from": "function_call", "value": '{"name": "weather", "arguments": {"city": "Paris"}}'},
        {"from": "observation", "value": '{"temp": 12}'},
        {"from": "gpt", "value": "12 degrees."}]}])
    msgs = {m["id"]: m for m in doc["messages"]}
    (t,) = doc["traces"]
    assert [msgs[m]["role"] for m in t["timeline"]] == ["system", "user", "assistant", "tool_result", "assistant"]
    assert t["task"] == "t1" and t["title"] == "Weather in Paris?"


def test_jsonl_and_bad_records():
    lines = [json.dumps({"id": "ok", "conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]}),
             json.dumps({"id": "no-convs"}),
             json.dumps([1]),
             json.dumps({"id": "odd", "conversations": [{"from": "narrator", "value": "once"}, {"from": "gpt", "value": 3},
                                                         {"from": "gpt", "value": "upon"}]}),
             '{"id": "cut", "conversations": [{"from": "hu']
    doc, summaries = _cook("chats.jsonl", "\n".join(lines).encode())
    assert [t["task"] for t in doc["traces"]] == ["ok", "odd"]
    probs = {(p["line"], p["path"]): p["message"] for p in summaries[0].problems}
    assert probs[(2, "/conversations")].startswith("expected `conversations`")
    assert probs[(3, "")].startswith("expected an object")
    assert probs[(4, "/conversations/0/from")].startswith("unknown speaker 'narrator'")
    assert probs[(4, "/conversations/1")].startswith("expected a turn")
    assert "not valid JSON" in probs[(5, "")]


def test_sniff():
    rec = b'[{"id": "a", "conversations": [{"from": "human", "value": "hi"}]}]'
    assert sniff(from_bytes("x.json", rec)) is None
    assert detect(from_bytes("x.json", rec)) is FORMAT
    assert sniff(from_bytes("x.json", b'[{"id": "a", "messages": []}]')) is not None
    assert sniff(from_bytes("x.json", b'[{"conversations": [{"role": "user", "content": "hi"}]}]')) is not None


def test_a_file_of_500_conversations_is_one_input_of_500_runs_titled_by_their_first_words(realdata):
    path = realdata / "sharegpt_fastchat" / "dummy_conversation.json"
    records = json.loads(path.read_text("utf-8"))
    doc, (s,) = cook_paths([path])
    assert (s.traces, len(doc["inputs"]), len(doc["inputs"][0]["traces"])) == (len(records), 1, len(records))
    firsts = [" ".join(next(t["value"] for t in r["conversations"] if t["from"] == "human").split())[:80]
              for r in records]
    assert [t["title"] for t in doc["traces"]] == firsts
    assert [t["task"] for t in doc["traces"]] == [r["id"] for r in records]
