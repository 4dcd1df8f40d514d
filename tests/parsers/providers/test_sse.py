"""Tests for parsers.providers.sse: rebuilding streamed responses from stored SSE lines."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers.providers.sse import (
    is_claude_stream,
    parse_sse_events,
    rebuild_claude,
    rebuild_openai,
    rebuild_stream,
)

REALDATA = Path(__file__).resolve().parents[4] / "shared" / "realdata"
CHUNKS_FILE = REALDATA / "raw_api_sse" / "vercel-ai_anthropic-json-tool.1.chunks.txt"
CLAUDE_CODE_FILE = REALDATA / "llm_trace_raw" / "claude-code.first25.jsonl"


def _need(path: Path) -> Path:
    if not REALDATA.is_dir():
        pytest.skip(f"shared real-data folder not present: {REALDATA}")
    if not path.is_file():
        pytest.skip(f"real-data file not present: {path}")
    return path


def _dumps(obj) -> str:
    return orjson.dumps(obj).decode()


# -- small hand-written streams -------------------------------------------------------------

CLAUDE_EVENTS = [
    {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                          "content": [], "model": "claude-x", "stop_reason": None,
                                          "stop_sequence": None,
                                          "usage": {"input_tokens": 10, "output_tokens": 1,
                                                    "cache_read_input_tokens": 3,
                                                    "cache_creation_input_tokens": 2}}},
    {"type": "content_block_start", "index": 0,
     "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "think."}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "c2ln"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "ping"},
    {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Hel"}},
    {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "lo ✓"}},
    {"type": "content_block_stop", "index": 1},
    {"type": "content_block_start", "index": 2,
     "content_block": {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": '{"comm'}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": 'and": "ls'}},
    {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ' -la"}'}},
    {"type": "content_block_stop", "index": 2},
    {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
     "usage": {"output_tokens": 42}},
    {"type": "message_stop"},
]

CLAUDE_EXPECTED = {
    "id": "msg_1",
    "model": "claude-x",
    "role": "assistant",
    "content": [
        {"type": "thinking", "thinking": "Let me think.", "signature": "c2ln"},
        {"type": "text", "text": "Hello ✓"},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls -la"}},
    ],
    "stop_reason": "tool_use",
    "stop_sequence": None,
    "usage": {"input_tokens": 10, "output_tokens": 42, "cache_read_input_tokens": 3,
              "cache_creation_input_tokens": 2},
}

OPENAI_CHUNKS = [
    {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-x",
     "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]},
    {"id": "chatcmpl-1", "model": "gpt-x",
     "choices": [{"index": 0, "delta": {"content": "Hello"}, "finish_reason": None}]},
    {"id": "chatcmpl-1", "model": "gpt-x",
     "choices": [{"index": 0, "delta": {"content": " world"}, "finish_reason": None}]},
    {"id": "chatcmpl-1", "model": "gpt-x",
     "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    {"id": "chatcmpl-1", "model": "gpt-x", "choices": [],
     "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}},
]

OPENAI_EXPECTED = {
    "id": "chatcmpl-1",
    "model": "gpt-x",
    "choices": [{"index": 0,
                 "message": {"role": "assistant", "content": "Hello world", "tool_calls": None},
                 "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
}


def test_framing_event_and_data_lines():
    lines = []
    for ev in CLAUDE_EVENTS:
        lines += [f"event: {ev['type']}", f"data: {_dumps(ev)}"]
    response, kind, problems = rebuild_stream(lines)
    assert (response, kind, problems) == (CLAUDE_EXPECTED, "claude", [])


def test_framing_bare_data_lines_with_done():
    lines = [f"data: {_dumps(c)}" for c in OPENAI_CHUNKS] + ["data: [DONE]"]
    response, kind, problems = rebuild_stream(lines)
    assert (response, kind, problems) == (OPENAI_EXPECTED, "openai", [])


def test_framing_unframed_json_lines():
    response, kind, problems = rebuild_stream([_dumps(ev) for ev in CLAUDE_EVENTS])
    assert (response, kind, problems) == (CLAUDE_EXPECTED, "claude", [])


def test_tolerated_line_shapes_mixed():
    ev = [_dumps(e) for e in CLAUDE_EVENTS]
    pretty = orjson.dumps(CLAUDE_EVENTS[2], option=orjson.OPT_INDENT_2).decode().split("\n")
    lines = [
        ": keep-alive comment",
        "retry: 3000",
        "event: message_start\r",
        f"data: {ev[0]}\r",  # CRLF endings
        "\r",
        "id: 7",
        f"data:{ev[1]}",  # no space after the colon
        "",
        "event: content_block_delta",
        *[f"data: {p}" for p in pretty],  # one event over several data: lines
        "",
        f"{ev[3]}\n{ev[4]}\nevent: content_block_stop\ndata: {ev[5]}",  # several lines in one element
        *ev[6:],  # unframed
        "data: [DONE]",
    ]
    response, kind, problems = rebuild_stream(lines)
    assert (response, kind, problems) == (CLAUDE_EXPECTED, "claude", [])


def test_parse_returns_decoded_objects_in_order():
    lines = ["event: ping", 'data: {"type":"ping"}', "", "data: [DONE]", '{"a": 1}']
    assert parse_sse_events(lines) == ([{"type": "ping"}, {"a": 1}], [])


def test_whole_stream_as_one_string():
    text = "\n\n".join(f"data: {_dumps(c)}" for c in OPENAI_CHUNKS) + "\n\ndata: [DONE]\n\n"
    response, kind, problems = rebuild_stream([text])
    assert (response, kind, problems) == (OPENAI_EXPECTED, "openai", [])


# -- real recordings ----------------------------------------------------------------------


def test_real_unframed_chunks_file():
    lines = _need(CHUNKS_FILE).read_text(encoding="utf-8").split("\n")
    response, kind, problems = rebuild_stream(lines)
    assert kind == "claude"
    assert problems == []
    assert response["id"] == "msg_01K2JbSUMYhez5RHoK9ZCj9U"
    assert response["model"] == "claude-haiku-4-5-20251001"
    assert response["stop_reason"] == "tool_use"
    assert response["usage"]["input_tokens"] == 849
    assert response["usage"]["output_tokens"] == 47  # message_delta overrides message_start's 10
    assert response["usage"]["cache_creation"] == {"ephemeral_5m_input_tokens": 0,
                                                   "ephemeral_1h_input_tokens": 0}
    assert response["content"] == [{
        "type": "tool_use",
        "id": "toolu_01KFbKqPYSuAKujiL6mTfzYA",
        "name": "json",
        "input": {"elements": [{"location": "San Francisco", "temperature": 58, "condition": "sunny"}]},
    }]


def _claude_code_records() -> list[dict]:
    with _need(CLAUDE_CODE_FILE).open("rb") as fh:
        return [orjson.loads(line) for line in fh if line.strip()]


def test_real_claude_code_records_first_few():
    records = _claude_code_records()

    r0, kind, problems = rebuild_stream(records[0]["response"]["sse_lines"])
    assert (kind, problems) == ("claude", [])
    assert r0["id"] == "021771603133578868b2df7cad200b62b2bc44e6de10221e8ceef"
    assert r0["model"] == "doubao-seed-code"
    assert r0["content"] == [{"type": "text", "text": '{"isNewTopic": true, "title": "磁盘可用空间"}'}]
    assert r0["stop_reason"] == "end_turn"
    assert r0["usage"] == {"input_tokens": 154, "output_tokens": 15, "cache_read_input_tokens": 0}

    r1, kind, problems = rebuild_stream(records[1]["response"]["sse_lines"])
    assert (kind, problems) == ("claude", [])
    assert r1["model"] == "glm-4-7"
    assert [b["type"] for b in r1["content"]] == ["thinking", "tool_use"]
    assert r1["content"][0]["thinking"].startswith("用户询问的是电脑磁盘的可用空间。")
    assert r1["content"][1] == {"type": "tool_use", "id": "call_t83i82lsbpr8il6zrgbeyu5v", "name": "Bash",
                                "input": {"command": "df -h", "description": "Check disk space usage"}}
    assert r1["stop_reason"] == "tool_use"
    assert r1["usage"]["output_tokens"] == 63

    r3, kind, problems = rebuild_stream(records[3]["response"]["sse_lines"])
    assert (kind, problems) == ("claude", [])
    assert r3["content"] == [
        {"type": "thinking",
         "thinking": "The main disk has 38Gi available space. The main data volume is at 83% capacity."},
        {"type": "text", "text": "你电脑的主磁盘可用空间为 **38 GiB**，使用率为 83%。"},
    ]

    # A thinking block followed by a text block that received no deltas at all.
    r4, _, problems = rebuild_stream(records[4]["response"]["sse_lines"])
    assert problems == []
    assert [b["type"] for b in r4["content"]] == ["thinking", "text"]
    assert r4["content"][1] == {"type": "text", "text": ""}
    assert len(r4["content"][0]["thinking"]) == 728


def test_real_claude_code_records_all_rebuild():
    records = _claude_code_records()
    streamed = [(i, r) for i, r in enumerate(records) if (r.get("response") or {}).get("sse_lines")]
    assert len(streamed) == 24  # one record is a non-streamed count_tokens call
    for i, record in streamed:
        response, kind, problems = rebuild_stream(record["response"]["sse_lines"])
        assert kind == "claude", i
        assert response["stop_reason"] in ("end_turn", "tool_use"), i
        assert response["content"], i
        if i == 19:
            # The proxy streamed a web_search call whose input is just "{": kept raw, reported.
            block = response["content"][1]
            assert (block["name"], block["input"]) == ("web_search", "{")
            assert len(problems) == 1 and problems[0][0] is None and "not valid JSON" in problems[0][1]
            continue
        assert problems == [], i
        for block in response["content"]:
            if block["type"] == "tool_use":
                assert isinstance(block["input"], dict), i


# -- OpenAI specifics ---------------------------------------------------------------------


def _chunk(delta=None, finish=None, **extra):
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"choices": choices, **extra}


def test_openai_parallel_tool_calls_interleaved():
    chunks = [
        _chunk({"role": "assistant", "content": None}, id="c-9", model="gpt-4o"),
        _chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                                "function": {"name": "get_weather", "arguments": ""}}]}),
        _chunk({"tool_calls": [{"index": 1, "id": "call_b", "type": "function",
                                "function": {"name": "get_time", "arguments": '{"tz'}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"city": '}}]}),
        _chunk({"tool_calls": [{"index": 1, "function": {"arguments": '": "UTC"}'}}]}),
        _chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
        _chunk({}, finish="tool_calls"),
        _chunk(None, usage={"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}),
    ]
    response, kind, problems = rebuild_stream([f"data: {_dumps(c)}" for c in chunks] + ["data: [DONE]"])
    assert (kind, problems) == ("openai", [])
    assert response == {
        "id": "c-9",
        "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_a", "type": "function",
                 "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
                {"id": "call_b", "type": "function",
                 "function": {"name": "get_time", "arguments": '{"tz": "UTC"}'}},
            ],
        }}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    }


def test_openai_reasoning_and_late_id():
    chunks = [
        _chunk({"role": "assistant"}),
        _chunk({"reasoning_content": "Hmm, "}, id="c-2", model="deepseek"),
        _chunk({"reasoning": "ok."}),
        _chunk({"content": "Answer"}, finish=None, usage=None),
        _chunk({}, finish="stop"),
    ]
    response, problems = rebuild_openai(chunks)
    assert problems == []
    assert (response["id"], response["model"], response["usage"]) == ("c-2", "deepseek", None)
    assert response["choices"][0]["message"] == {
        "role": "assistant", "content": "Answer", "tool_calls": None, "reasoning_content": "Hmm, ok."}


# -- problems -------------------------------------------------------------------------------


def test_malformed_data_line_reported_rest_rebuilds():
    lines = [f"data: {_dumps(c)}" for c in OPENAI_CHUNKS]
    lines.insert(2, 'data: {"choices": [{"delta": {"content": "tru')
    response, kind, problems = rebuild_stream(lines)
    assert response == OPENAI_EXPECTED and kind == "openai"
    assert len(problems) == 1 and problems[0][0] == 2
    assert "could not decode" in problems[0][1]


def test_malformed_lines_each_reported():
    lines = ["data: {nope", "data: {also nope", "event: x", "garbage text", "[1, 2]", "data: 3",
             'data: {"type": "ping"}']
    events, problems = parse_sse_events(lines)
    assert events == [{"type": "ping"}]
    assert [i for i, _ in problems] == [0, 1, 3, 4, 5]


def test_claude_error_event():
    lines = [f"event: {e['type']}\ndata: {_dumps(e)}" for e in CLAUDE_EVENTS[:4]]
    lines += ["event: error",
              'data: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}']
    response, kind, problems = rebuild_stream(lines)
    assert kind == "claude"
    assert response["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert response["content"] == [{"type": "thinking", "thinking": "Let me think.", "signature": ""}]
    assert problems == [(None, "error event: overloaded_error: Overloaded")]


def test_openai_error_chunk():
    lines = [f"data: {_dumps(OPENAI_CHUNKS[1])}", 'data: {"error": {"message": "rate limited", "type": "rate"}}']
    response, kind, problems = rebuild_stream(lines)
    assert kind == "openai"
    assert response["error"] == {"message": "rate limited", "type": "rate"}
    assert response["choices"][0]["message"]["content"] == "Hello"
    assert problems == [(None, "error chunk: rate: rate limited")]


def test_claude_invalid_tool_json_kept_and_missing_start():
    events = [
        {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {"input_tokens": 1}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": '{"a": '}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": {}}},
        {"type": "message_stop"},
    ]
    response, problems = rebuild_claude(events)
    assert response["content"] == [
        {"type": "text", "text": "hi"},
        {"type": "tool_use", "id": None, "name": None, "input": '{"a": '},
    ]
    assert len(problems) == 3
    assert "not valid JSON" in problems[2]


def test_claude_truncated_stream_reported():
    response, problems = rebuild_claude(CLAUDE_EVENTS[:9])
    assert response["content"][1] == {"type": "text", "text": "Hel"}
    assert problems == ["stream ended without message_stop (truncated?)"]


def test_detection():
    assert is_claude_stream([{"type": "ping"}, {"type": "content_block_delta"}])
    assert not is_claude_stream([{"type": "ping"}] + OPENAI_CHUNKS)
    _, kind, problems = rebuild_stream([])
    assert kind == "openai" and problems[0] == (None, "no events found in the stream")


# -- property: any chunking and framing rebuilds the same response ----------------------------

texts = st.text(max_size=30)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)
claude_blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, texts),
    st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s},
              texts, st.text(alphabet="ABCDEFabcdef0123456789+/=", max_size=24)),
    st.builds(lambda i, n, inp: {"type": "tool_use", "id": "toolu_" + i, "name": n, "input": inp},
              names, names, json_objects),
)
tokens = st.integers(0, 10**6)


def _split(draw, s: str) -> list[str]:
    cuts = sorted(set(draw(st.lists(st.integers(0, len(s)), max_size=6))))
    bounds = [0, *cuts, len(s)]
    return [s[a:b] for a, b in zip(bounds, bounds[1:])]


def _render(draw, events: list[dict], event_name) -> list[str]:
    """Render events as stored lines with a random framing per event plus SSE noise."""
    crlf = draw(st.booleans())
    lines: list[str] = []
    for ev in events:
        framing = draw(st.sampled_from(["event+data", "data", "data-nospace", "json", "multiline"]))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from([": keep-alive", "id: 12", "retry: 1000"])))
        body = _dumps(ev)
        if framing == "event+data":
            lines += [f"event: {event_name(ev)}", f"data: {body}"]
        elif framing == "data":
            lines.append(f"data: {body}")
        elif framing == "data-nospace":
            lines.append(f"data:{body}")
        elif framing == "json":
            lines.append(body)
        else:
            pretty = orjson.dumps(ev, option=orjson.OPT_INDENT_2).decode()
            lines += [f"data: {part}" for part in pretty.split("\n")]
        if framing != "json" and draw(st.booleans()):
            lines.append("")
    if draw(st.booleans()):
        lines.append("data: [DONE]")
    if crlf:
        lines = [line + "\r" for line in lines]
    # Randomly store several consecutive lines in one element.
    joins = draw(st.lists(st.booleans(), min_size=len(lines), max_size=len(lines)))
    grouped: list[str] = []
    for line, join in zip(lines, joins):
        if join and grouped:
            grouped[-1] += "\n" + line
        else:
            grouped.append(line)
    return grouped


@st.composite
def claude_streams(draw):
    blocks = draw(st.lists(claude_blocks, max_size=4))
    msg_id, model = "msg_" + draw(names), draw(names)
    usage_in = {"input_tokens": draw(tokens), "output_tokens": 1,
                "cache_read_input_tokens": draw(tokens), "cache_creation_input_tokens": draw(tokens)}
    output_tokens = draw(tokens)
    stop_reason = draw(st.sampled_from(["end_turn", "tool_use", "max_tokens"]))

    events = [{"type": "message_start", "message": {
        "id": msg_id, "type": "message", "role": "assistant", "content": [], "model": model,
        "stop_reason": None, "stop_sequence": None, "usage": usage_in}}]
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in _split(draw, block["text"])]
        elif kind == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in _split(draw, block["thinking"])]
            deltas += [{"type": "signature_delta", "signature": p} for p in _split(draw, block["signature"])]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            if not block["input"] and draw(st.booleans()):
                parts = draw(st.sampled_from([[], [""]]))
            else:
                parts = _split(draw, _dumps(block["input"]))
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in parts]
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        for delta in deltas:
            events.append({"type": "content_block_delta", "index": index, "delta": delta})
            if draw(st.integers(0, 19)) == 0:
                events.append({"type": "ping"})
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                   "usage": {"output_tokens": output_tokens}})
    events.append({"type": "message_stop"})

    expected = {
        "id": msg_id, "model": model, "role": "assistant", "content": blocks,
        "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {**usage_in, "output_tokens": output_tokens},
    }
    return _render(draw, events, lambda ev: ev["type"]), expected


@st.composite
def openai_streams(draw):
    resp_id, model = "chatcmpl-" + draw(names), draw(names)
    content = draw(st.none() | texts)
    reasoning = draw(st.none() | texts)
    reasoning_key = draw(st.sampled_from(["reasoning_content", "reasoning"]))
    calls = draw(st.lists(st.tuples(names, names, st.text(max_size=30)), max_size=3))
    finish = draw(st.sampled_from(["stop", "tool_calls", "length"]))
    usage = draw(st.none() | st.fixed_dictionaries(
        {"prompt_tokens": tokens, "completion_tokens": tokens, "total_tokens": tokens}))

    queues = []
    if content is not None:
        queues.append([{"content": p} for p in _split(draw, content)])
    if reasoning is not None:
        queues.append([{reasoning_key: p} for p in _split(draw, reasoning)])
    for k, (call_id, name, args) in enumerate(calls):
        queue = [{"tool_calls": [{"index": k, "id": "call_" + call_id, "type": "function",
                                  "function": {"name": name, "arguments": ""}}]}]
        queue += [{"tool_calls": [{"index": k, "function": {"arguments": p}}]} for p in _split(draw, args)]
        queues.append(queue)
    rnd = draw(st.randoms(use_true_random=False))
    deltas = []
    while queues:  # random interleaving that keeps each stream's own order
        queue = rnd.choice(queues)
        deltas.append(queue.pop(0))
        if not queue:
            queues.remove(queue)

    null_usage = draw(st.booleans())

    def chunk(delta, finish_reason=None):
        c = {"id": resp_id, "object": "chat.completion.chunk", "created": 1, "model": model,
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
        if null_usage:
            c["usage"] = None
        return c

    chunks = [chunk({"role": "assistant"})] + [chunk(d) for d in deltas] + [chunk({}, finish)]
    if usage is not None:
        chunks.append({"id": resp_id, "model": model, "choices": [], "usage": usage})

    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [{"id": "call_" + i, "type": "function", "function": {"name": n, "arguments": a}}
                       for i, n, a in calls] or None,
    }
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    expected = {"id": resp_id, "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}
    return _render(draw, chunks, lambda ev: "completion"), expected


_PROPERTY = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_PROPERTY
@given(claude_streams())
def test_property_claude_any_chunking_and_framing(case):
    lines, expected = case
    response, kind, problems = rebuild_stream(lines)
    assert problems == []
    assert kind == "claude"
    assert response == expected


@_PROPERTY
@given(openai_streams())
def test_property_openai_any_chunking_and_framing(case):
    lines, expected = case
    response, kind, problems = rebuild_stream(lines)
    assert problems == []
    assert kind == "openai"
    assert response == expected
