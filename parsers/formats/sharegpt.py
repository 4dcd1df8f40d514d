"""ShareGPT conversations: `[{id, conversations: [{from, value}]}]`, as FastChat trains on them.

A JSON array (or JSONL) of records, each one conversation: `from` is `human` / `gpt` /
`system` (and, in tool-use variants, `function_call` / `observation`), `value` the text.
Each record becomes a trace of its own, named by its `id`.
"""
from __future__ import annotations

from typing import Iterator

from parsers.providers.roles import role_of
from parsers.model import Format, Message, ParsedTrace, ParseResult, Problem, pointer
from parsers.io.guard import record_guard
from parsers.io.records import first_char, iter_records, looks_binary
from parsers.io.source import Source

NAME = "sharegpt"
# Tool-use variants of the format name these turns beside the chat roles.
_TOOL_ROLES = {"function_call": "assistant", "tool_call": "assistant", "observation": "tool_result",
               "function_response": "tool_result", "tool": "tool_result", "function": "tool_result"}


def sniff(src: Source) -> str | None:
    head = src.head
    if looks_binary(head):
        return "binary content"
    if first_char(head) not in "[{":
        return "does not start with a JSON array or object"
    if b'"conversations"' not in head:
        return 'no "conversations" field in the first record'
    if b'"from"' not in head or b'"value"' not in head:
        return 'the first conversation has no {"from", "value"} turns'
    return None


def parse(src: Source) -> ParseResult:
    problems: list[Problem] = []
    result = ParseResult(format=NAME, traces=[], problems=problems)
    result.traces = _traces(src, result)
    return result


def _traces(src: Source, result: ParseResult) -> Iterator[ParsedTrace]:
    problems = result.problems
    for line, record, rec in iter_records(src, problems):
        result.records += 1
        where = {"line": line, "record": record}
        if not isinstance(rec, dict):
            problems.append(Problem(src.name, "expected an object {id, conversations}; record skipped", **where))
            continue
        turns = rec.get("conversations")
        if not isinstance(turns, list):
            problems.append(Problem(src.name, "expected `conversations`, a list of {from, value} turns; "
                                              "record skipped", path="/conversations", **where))
            continue
        with record_guard(problems, src.name, "the ShareGPT reader", **where) as guard:
            trace = _trace(src, rec, turns, where)
        if guard.failed:
            continue
        if trace.messages:
            yield trace
        else:
            problems.extend(trace.problems)
            problems.append(Problem(src.name, "the conversation has no readable turn; record skipped",
                                    path="/conversations", **where))


def _trace(src: Source, rec: dict, turns: list, where: dict) -> ParsedTrace:
    problems: list[Problem] = []
    messages: list[Message] = []
    if isinstance(rec.get("system"), str) and rec["system"].strip():
        messages.append(Message("system", rec["system"]))
    for i, turn in enumerate(turns):
        at = pointer("conversations", i)
        if not isinstance(turn, dict) or not isinstance(turn.get("value"), str):
            problems.append(Problem(src.name, "expected a turn {from, value} with a string value; turn skipped",
                                    path=at, **where))
            continue
        who = turn.get("from", turn.get("role"))
        role = _TOOL_ROLES.get(who) if isinstance(who, str) else None
        role = role or role_of(who)
        if role is None:
            problems.append(Problem(src.name, f"unknown speaker {who!r}; expected human, gpt or system "
                                              "(read as user)", path=at + "/from", **where))
            role = "user"
        messages.append(Message(role, turn["value"]))
    rid = rec.get("id")
    rid = str(rid) if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None
    first = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    title = " ".join(first.split()) if first else (rid or "conversation")
    title = title[:80] + ("…" if len(title) > 80 else "")
    model = rec.get("model") if isinstance(rec.get("model"), str) and rec["model"] else None
    return ParsedTrace(format=NAME, title=title, task=rid, messages=messages,
                       models=[model] if model else None, problems=problems, ref=rid,
                       meta={"id": rid} if rid else {})


FORMAT = Format(
    name=NAME, title="ShareGPT conversations",
    description="ShareGPT / FastChat training conversations ([{id, conversations: [{from, value}]}], "
                "a JSON array or JSON lines): one trace per conversation.",
    sniff=sniff, parse=parse, priority=40,
)
