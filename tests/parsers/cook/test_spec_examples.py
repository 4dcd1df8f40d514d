"""The cook spec's two worked examples, as golden tests.

The examples' literal ids (m0, call_abc) are illustrative; where the input carries no id the
cooked value is null, and message ids are content hashes.
"""
from __future__ import annotations

import hashlib
import json

import orjson

from parsers import pipeline
from parsers.cook.schema import cooked_errors

OPENAI_EXAMPLE = {"request": {"messages": [
    {"role": "system", "content": "Be helpful"},
    {"role": "user", "content": "What's 2+2?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": "calc", "arguments": "{\"expr\":\"2+2\"}"}}]},
    {"role": "tool", "content": "4"}]}}

CLAUDE_EXAMPLE = {"request": {
    "system": [{"type": "text", "text": "Be helpful"}],
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "What's 2+2?"}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Simple math question"},
            {"type": "tool_use", "id": "call_1", "name": "calc", "input": {"expr": "2+2"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "4"}]}]}}

OPENAI_EXPECTED = [
    {"role": "system", "content": "Be helpful", "tool_calls": None, "tool_use_id": None, "is_error": None},
    {"role": "user", "content": "What's 2+2?", "tool_calls": None, "tool_use_id": None, "is_error": None},
    {"role": "tool_use", "content": "", "tool_calls": [{"name": "calc", "arguments": {"expr": "2+2"}, "id": None}],
     "tool_use_id": None, "is_error": None},
    {"role": "tool_result", "content": "4", "tool_calls": None, "tool_use_id": None, "is_error": False},
]
CLAUDE_EXPECTED = [
    {"role": "system", "content": "Be helpful", "tool_calls": None, "tool_use_id": None, "is_error": None},
    {"role": "user", "content": "What's 2+2?", "tool_calls": None, "tool_use_id": None, "is_error": None},
    {"role": "thinking", "content": "Simple math question", "tool_calls": None, "tool_use_id": None, "is_error": None},
    {"role": "tool_use", "content": "", "tool_calls": [{"name": "calc", "arguments": {"expr": "2+2"}, "id": "call_1"}],
     "tool_use_id": None, "is_error": None},
    {"role": "tool_result", "content": "4", "tool_calls": None, "tool_use_id": "call_1", "is_error": False},
]


def cook_one(record: dict, name: str = "log.jsonl") -> dict:
    doc, _ = pipeline.cook_uploads([(name, orjson.dumps(record) + b"\n")])
    assert cooked_errors(doc) == []
    return doc


def request_messages(doc: dict) -> list[dict]:
    by_id = {m["id"]: m for m in doc["messages"]}
    (req,) = doc["requests"]
    return [by_id[i] for i in req["request_messages"]]


def strip_ids(msgs: list[dict]) -> list[dict]:
    keys = ("role", "content", "tool_calls", "tool_use_id", "is_error")
    return [{k: m[k] for k in keys} for m in msgs]


def test_openai_example():
    msgs = request_messages(cook_one(OPENAI_EXAMPLE))
    assert strip_ids(msgs) == OPENAI_EXPECTED


def test_claude_example():
    doc = cook_one(CLAUDE_EXAMPLE)
    msgs = request_messages(doc)
    assert strip_ids(msgs) == CLAUDE_EXPECTED
    assert doc["traces"][0]["format"] == "request-log"
    assert doc["requests"][0]["provider"] == "anthropic"


def spec_id(m: dict) -> str:
    """The documented id, computed here: SHA-256 of json.dumps of the five fields."""
    fields = {k: m[k] for k in ("role", "content", "tool_calls", "tool_use_id", "is_error")}
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_ids_are_content_hashes_shared_across_shapes():
    """Every id is the hash of the spec's expected fields; the system and user messages of
    both examples are identical, so they share ids."""
    a = request_messages(cook_one(OPENAI_EXAMPLE))
    b = request_messages(cook_one(CLAUDE_EXAMPLE))
    assert [x["id"] for x in a] == [spec_id(m) for m in OPENAI_EXPECTED]
    assert [x["id"] for x in b] == [spec_id(m) for m in CLAUDE_EXPECTED]
    assert a[0]["id"] == b[0]["id"] and a[1]["id"] == b[1]["id"]
    # The system message's text, hashed with coreutils: printf '%s' '{"content":"Be helpful",
    # "is_error":null,"role":"system","tool_calls":null,"tool_use_id":null}' | sha256sum
    # (the JSON on one line, no spaces).
    assert a[0]["id"] == "e2e1d492f2c2c53e"


def test_identical_messages_deduplicated_across_requests():
    rec2 = orjson.loads(orjson.dumps(CLAUDE_EXAMPLE))
    rec2["request"]["messages"].append({"role": "assistant", "content": [{"type": "text", "text": "4"}]})
    data = orjson.dumps(CLAUDE_EXAMPLE) + b"\n" + orjson.dumps(rec2) + b"\n"
    doc, _ = pipeline.cook_uploads([("log.jsonl", data)])
    assert len(doc["requests"]) == 2
    assert len(doc["messages"]) == 6  # five shared + the one new assistant message
    r0, r1 = doc["requests"]
    assert r1["request_messages"][:5] == r0["request_messages"]
    assert r1["parent_id"] == r0["id"]
