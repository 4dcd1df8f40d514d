"""The cook's door looks at each message object once: a trace's timeline and its requests hold
the same messages, and what passed is not checked again."""
from __future__ import annotations

from collections import Counter

from parsers.cook import intake as intake_mod
from parsers.cook.builder import DocumentBuilder
from parsers.model import Call, Message, ParsedTrace, ParseResult


def _trace(messages, calls) -> ParsedTrace:
    return ParsedTrace(format="test", messages=messages, calls=calls, problems=[], meta={})


def _checked(monkeypatch) -> Counter:
    """id() of each message Intake.message looks at -> how often."""
    seen: Counter = Counter()
    original = intake_mod.Intake.message

    def spy(self, where, m):
        seen[id(m)] += 1
        return original(self, where, m)

    monkeypatch.setattr(intake_mod.Intake, "message", spy)
    return seen


def test_a_timeline_message_a_request_repeats_is_checked_once(monkeypatch):
    seen = _checked(monkeypatch)
    user = Message("user", "fix it", extra={"timestamp": 1_700_000_000_000, "line": 1})
    call = Message("tool_use", "", tool_calls=[{"name": "Edit", "id": "t1", "arguments": {"path": "a.py"}}])
    result = Message("tool_result", "done", tool_use_id="t1", is_error=False)
    answer = Message("assistant", "fixed")
    calls = [Call(request_messages=[user], response_messages=[call], model="m"),
             Call(request_messages=[user, call, result], response_messages=[answer], model="m")]
    doc_builder = DocumentBuilder()
    doc_builder.add_result("in.jsonl", "d", 1, ParseResult(format="test", traces=[_trace([user, call, result, answer],
                                                                                         calls)]))
    doc = doc_builder.document()
    assert set(seen.values()) == {1} and len(seen) == 4
    assert [m["content"] for m in doc["messages"]] == ["fix it", "", "done", "fixed"]
    assert doc["inputs"][0]["problems"] == [] and doc["traces"][0]["problems"] == []


def test_a_message_left_out_is_reported_wherever_it_is_given():
    # Left out of the timeline and of the request: each place says so (as when every list
    # is checked on its own).
    bad = Message("narrator", "hello")
    good = Message("user", "hi")
    problems: list = []
    door = intake_mod.Intake("in.jsonl", problems)
    t = _trace([good, bad], [])
    door.trace(t)
    c = door.call(Call(request_messages=[good, bad], response_messages=[Message("assistant", "yes")]))
    assert t.messages == [good] and c.request_messages == [good]
    assert [p.message.split(":")[0] for p in problems] == ["a message role", "a message role"]
