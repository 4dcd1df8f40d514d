"""Message and tool ids follow the documented rule for every JSON value.

The rule (README, "The cooked document"): the first 16 hex characters of the SHA-256 of
the UTF-8 bytes of json.dumps(obj, sort_keys=True, separators=(",", ":"),
ensure_ascii=False). Every expected id here is computed with json.dumps and hashlib in
the test, never with the code under test.
"""
from __future__ import annotations

import hashlib
import json
import sys

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers import pipeline
from parsers.cook.ids import _deep_text, canonical_json, message_id, tool_id
from parsers.cook.schema import cooked_errors


def rule(obj) -> str:
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def unsorted(obj) -> str:
    """The same text with the keys left in insertion order."""
    text = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def msg_obj(role, content, tool_calls, tool_use_id, is_error) -> dict:
    return {"role": role, "content": content, "tool_calls": tool_calls, "tool_use_id": tool_use_id,
            "is_error": is_error}


# -- generated values ---------------------------------------------------------------------
texts = st.text(max_size=30)  # any code point but lone surrogates: astral, controls, U+2028
scalars = (st.none() | st.booleans() | st.integers()  # unbounded: beyond 64 bits too
           | st.integers(min_value=-(2**63), max_value=2**64 - 1)
           | st.floats()  # NaN, infinities, -0.0, subnormals, 1e-07, 1e+16 ...
           | st.floats(min_value=-1e-3, max_value=1e-3) | texts)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(texts, inner, max_size=4), max_leaves=25)
tool_calls = st.none() | st.lists(st.fixed_dictionaries(
    {"name": st.none() | texts, "arguments": json_values, "id": st.none() | texts}), max_size=3)
roles = st.sampled_from(["system", "user", "assistant", "thinking", "tool_use", "tool_result"])
digests = st.lists(st.binary(max_size=20).map(lambda b: hashlib.sha256(b).hexdigest()), max_size=3)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(roles, texts, tool_calls, st.none() | texts, st.none() | st.booleans())
def test_message_ids_follow_json_dumps(role, content, calls, tool_use_id, is_error):
    expected = rule(msg_obj(role, content, calls, tool_use_id, is_error))
    assert message_id(role, content, calls, tool_use_id, is_error) == expected


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_canonical_text_is_json_dumps_for_any_value(value):
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert canonical_json(value) == expected.encode("utf-8")
    assert _deep_text(value) == expected  # the writer used past the recursion limit


@settings(max_examples=200, deadline=None)
@given(st.none() | texts, st.none() | texts, json_values)
def test_tool_ids_follow_json_dumps(name, description, parameters):
    assert tool_id(name, description, parameters) == rule(
        {"name": name, "description": description, "parameters": parameters})


@settings(max_examples=200, deadline=None)
@given(roles, texts, digests)
def test_image_digests_join_the_hashed_fields_only_when_present(role, content, images):
    obj = msg_obj(role, content, None, None, None)
    if images:
        obj["images"] = images
    assert message_id(role, content, None, None, None, images) == rule(obj)


# -- the values where orjson and json.dumps part ----------------------------------------------
EDGE_ARGUMENTS = [
    {"x": 1e-7}, {"x": 1.5e-5}, {"x": 1e16}, {"x": 1e22}, {"x": -0.0}, {"x": 5e-324},
    {"x": 1.7976931348623157e308}, {"x": float("nan")}, {"x": float("inf")}, {"x": float("-inf")},
    {"x": 2**64}, {"x": -(2**63) - 1}, {"x": 10**40}, {"x": [0.1, 2**70, "ü"]},
    {"s": "\x00\x1f\x7f\u2028\u2029\U0001F600 é \\ \""}, {"deep": [[[{"z": 1e-9, "a": 3}]]]},
]


def test_edge_values():
    for args in EDGE_ARGUMENTS:
        calls = [{"name": "f", "arguments": args, "id": "c1"}]
        assert message_id("tool_use", "", calls, None, None) == rule(msg_obj("tool_use", "", calls, None, None)), args


def test_small_floats_are_written_as_python_writes_them():
    calls = [{"name": "f", "arguments": {"x": 1e-7}, "id": None}]
    text = canonical_json(msg_obj("tool_use", "", calls, None, None))
    assert b'"x":1e-07' in text


def test_keys_are_sorted_at_every_level():
    """Keys given out of order, at the top and inside the arguments: only sorting gives the
    documented id (the unsorted text is checked to hash differently)."""
    calls = [{"name": "f", "id": "c", "arguments": {"zeta": {"b": 1, "a": 2}, "alpha": [{"y": 0, "x": 1}]}}]
    obj = msg_obj("tool_use", "", calls, None, None)
    assert rule(obj) != unsorted(obj)
    assert message_id("tool_use", "", calls, None, None) == rule(obj)
    params = {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "number", "minimum": 0.5}}}
    assert tool_id("f", "d", params) == rule({"name": "f", "description": "d", "parameters": params})
    assert rule({"name": "f", "description": "d", "parameters": params}) != \
        unsorted({"name": "f", "description": "d", "parameters": params})


def test_nesting_deeper_than_python_recurses_follows_the_rule_too():
    """Arguments nested 3,000 deep (beyond the default recursion limit): the id is still the
    rule's, checked with json.dumps under a raised limit."""
    deep = {"b": [1e-7, 2**70, "é"], "a": None}
    for i in range(3000):
        deep = [deep] if i % 2 else {"k": deep, "a": 1.5}
    calls = [{"name": "f", "arguments": {"x": deep}, "id": None}]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)
    try:
        expected = rule(msg_obj("tool_use", "", calls, None, None))
    finally:
        sys.setrecursionlimit(limit)
    assert message_id("tool_use", "", calls, None, None) == expected


# -- through the cook ---------------------------------------------------------------------------
def test_cooked_ids_follow_the_rule_for_floats_and_big_numbers():
    """A logged request whose tool call arguments hold floats, a big integer and non-ASCII
    text: every cooked message and tool id equals the rule applied to the cooked fields."""
    args = '{"threshold": 1e-7, "scale": 2.5e-05, "n": 12345678901234567890123, "ü": "日本"}'
    rec = {"id": "r1", "timestamp": 1_700_000_000_000,
           "request": {"model": "gpt-4o", "messages": [
               {"role": "user", "content": "measure — ok?"},
               {"role": "assistant", "content": None, "tool_calls": [
                   {"id": "c1", "type": "function", "function": {"name": "measure", "arguments": args}}]},
               {"role": "tool", "tool_call_id": "c1", "content": "0.0000001"}],
               "tools": [{"type": "function", "function": {
                   "name": "measure", "description": "Measure.",
                   "parameters": {"type": "object", "properties": {"threshold": {"type": "number", "minimum": 1e-9}}}}}]},
           "response": {"choices": [{"message": {"role": "assistant", "content": "done"}}]}}
    doc, _ = pipeline.cook_uploads([("log.jsonl", orjson.dumps(rec) + b"\n")])
    assert cooked_errors(doc) == []
    assert len(doc["messages"]) == 4 and len(doc["tools"]) == 1
    for m in doc["messages"]:
        assert m["id"] == rule({k: m[k] for k in ("role", "content", "tool_calls", "tool_use_id", "is_error")})
    (t,) = doc["tools"]
    assert t["id"] == rule({"name": t["name"], "description": t["description"], "parameters": t["parameters"]})
    # The floats did reach the hashed arguments (what the test is about).
    call = next(m for m in doc["messages"] if m["tool_calls"])
    assert call["tool_calls"][0]["arguments"]["threshold"] == 1e-7
