"""A trace's error count: each distinct failed tool result in its timeline or in any request,
whether a request continues the one before (only its new messages are looked at) or not."""
from __future__ import annotations

from parsers.cook.builder import DocumentBuilder
from parsers.model import Call, Message, ParsedTrace, ParseResult


def _err(text: str) -> Message:
    return Message("tool_result", text, tool_use_id="t", is_error=True)


def test_failed_results_in_continued_and_restarted_histories_count_once_each():
    u1, u2 = Message("user", "one"), Message("user", "two")
    a1, a2, a3 = Message("assistant", "a1"), Message("assistant", "a2"), Message("assistant", "a3")
    e1, e2, e3 = _err("first failure"), _err("second failure"), _err("third failure")
    calls = [
        Call(request_messages=[u1], response_messages=[a1], model="m", timestamp=1),
        Call(request_messages=[u1, a1, e1], response_messages=[a2], model="m", timestamp=2),  # continues
        Call(request_messages=[u2, e2], response_messages=[a3], model="m", timestamp=3),  # a fresh history
        Call(request_messages=[u2, e2, a3, e3, e1], response_messages=[a1], model="m", timestamp=4),
        Call(request_messages=[u1, a1, e1], response_messages=[a2], model="m", timestamp=5),  # e1 again
    ]
    b = DocumentBuilder()
    trace = ParsedTrace(format="test", messages=[u1], calls=calls, problems=[], meta={})
    b.add_result("in.jsonl", "d", 1, ParseResult(format="test", traces=[trace]))
    doc = b.document()
    totals = doc["traces"][0]["totals"]
    assert totals["requests"] == 5
    assert totals["errors"] == 3  # e1, e2, e3: one each, however often a history repeats them
