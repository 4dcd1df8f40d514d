"""Rebuild a streamed (SSE) LLM API response into the equivalent non-streamed response.

Input is the list of raw lines a logging proxy stored for one streamed response. Three
framings are accepted, also mixed within one stream:

1. ``event: NAME`` followed by ``data: {json}`` (Anthropic style);
2. bare ``data: {json}`` lines, ``data: [DONE]`` ignored (OpenAI style);
3. one JSON object per line without any framing (some SDKs record chunks like this).

The common path per line is one ``startswith`` check and one ``orjson.loads``; every
irregular line (blank, comments, CRLF, several lines in one element, one event spread over
several ``data:`` lines, garbage) goes through a slower decoder that keeps the same result.

Pure functions only: no I/O, no UI imports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import orjson

__all__ = [
    "parse_sse_events",
    "rebuild_claude",
    "rebuild_openai",
    "is_claude_stream",
    "rebuild_stream",
]

_loads = orjson.loads
_JSONDecodeError = orjson.JSONDecodeError

# SSE line terminators are exactly CRLF, CR and LF (str.splitlines would also split on
# U+2028 and friends, which orjson leaves unescaped inside JSON strings).
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# One event spread over several `data:` lines is buffered; bound the buffer so that a run of
# garbage lines cannot make the retry joins quadratic.
_MAX_FRAGMENTS = 4096

_CLAUDE_EVENT_TYPES = frozenset(
    {"message_start", "content_block_start", "content_block_delta", "message_delta", "message_stop"}
)


def _as_key(value: Any) -> Any:
    """A usable dict key for an index field that is not a plain int."""
    if value is None:
        return 0
    if isinstance(value, (str, float)) and not isinstance(value, bool):
        try:
            as_int = int(value)
        except (TypeError, ValueError, OverflowError):
            return str(value)
        return as_int if as_int == value or str(as_int) == value else str(value)
    return repr(value)


def _dumps_text(value: Any) -> str:
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return str(value)


def _snippet(text: str, limit: int = 80) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "…"


class _Decoder:
    """Slow path of :func:`parse_sse_events`: handles everything but well-formed lines."""

    __slots__ = ("events", "problems", "buf")

    def __init__(self, events: list[dict], problems: list[tuple[int, str]]) -> None:
        self.events = events
        self.problems = problems
        # (line index, payload) of `data:` lines that did not decode on their own yet.
        self.buf: list[tuple[int, str]] = []

    # -- dispatch -----------------------------------------------------------------------
    def emit(self, obj: dict) -> None:
        self.events.append(obj)

    def flush(self) -> None:
        """Give up on buffered fragments: each one is reported on its own line."""
        if self.buf:
            for index, payload in self.buf:
                self.problems.append((index, f"could not decode data line: {_snippet(payload)!r}"))
            self.buf.clear()

    def finish(self) -> None:
        self.flush()

    # -- one stored element -------------------------------------------------------------
    def feed(self, index: int, line: Any) -> None:
        if type(line) is not str:
            if isinstance(line, str):
                line = str(line)
            elif isinstance(line, (bytes, bytearray)):
                line = _decode(index, bytes(line), self.problems)
            elif isinstance(line, dict):
                # An already decoded chunk stored as an object.
                self.flush()
                self.emit(line)
                return
            else:
                self.flush()
                self.problems.append((index, f"expected a string line, got {type(line).__name__}"))
                return

        if "\n" in line or "\r" in line.rstrip("\r\n"):
            # Several lines stored in one element -- unless it is one pretty-printed object.
            head = line.lstrip()
            if not self.buf and (head.startswith("{") or head.startswith("data:")):
                payload = head[5:] if head.startswith("data:") else head
                try:
                    obj = _loads(payload)
                except _JSONDecodeError:
                    obj = None
                if type(obj) is dict:
                    self.emit(obj)
                    return
            # A terminator at the very end closes the last line; it does not start another.
            if line.endswith("\r\n"):
                line = line[:-2]
            elif line.endswith("\n") or line.endswith("\r"):
                line = line[:-1]
            for sub in _LINE_BREAK.split(line):
                self.feed(index, sub)
            return

        line = line.rstrip("\r\n")
        if line.startswith("data:"):
            payload = line[5:]
            if payload.startswith(" "):
                payload = payload[1:]
            self._data(index, payload)
            return

        stripped = line.strip()
        if not stripped:
            # Blank line ends an SSE event: whatever is still buffered will never decode.
            self.flush()
            return
        if line.startswith(":"):  # SSE comment / keep-alive
            return
        if line.startswith("event:"):
            # Every stream we read repeats the event name as the data's "type"; the line
            # only marks where the next event starts.
            self.flush()
            return
        if line.startswith("id:") or line.startswith("retry:"):
            return
        if stripped in ("data", "event", "id", "retry"):  # field names without a value
            return

        self.flush()
        if stripped.startswith("{"):
            try:
                obj = _loads(stripped)
            except _JSONDecodeError as exc:
                self.problems.append((index, f"invalid JSON ({exc}): {_snippet(stripped)!r}"))
                return
            if type(obj) is dict:
                self.emit(obj)
            else:
                self.problems.append((index, f"expected a JSON object: {_snippet(stripped)!r}"))
            return
        if stripped == "[DONE]":
            return
        self.problems.append((index, f"unrecognised line: {_snippet(stripped)!r}"))

    def _data(self, index: int, payload: str) -> None:
        buf = self.buf
        if buf:
            # Continuation of an event spread over several `data:` lines? Only worth a try
            # when this line could close the top-level object.
            if payload.rstrip().endswith("}"):
                joined = "\n".join([p for _, p in buf] + [payload])
                try:
                    obj = _loads(joined)
                except _JSONDecodeError:
                    obj = None
                if type(obj) is dict:
                    buf.clear()
                    self.emit(obj)
                    return
            # A fresh event starts at column 0 with "{"; indented lines are continuations.
            if payload.startswith("{"):
                try:
                    obj = _loads(payload)
                except _JSONDecodeError:
                    obj = None
                if type(obj) is dict:
                    self.flush()
                    self.emit(obj)
                    return
            if payload.strip() == "[DONE]":
                self.flush()
                return
            if len(buf) >= _MAX_FRAGMENTS:
                self.flush()
            buf.append((index, payload))
            return

        try:
            obj = _loads(payload)
        except _JSONDecodeError:
            text = payload.strip()
            if text and text != "[DONE]":
                buf.append((index, payload))
            return
        if type(obj) is dict:
            self.emit(obj)
        else:
            self.problems.append((index, f"expected a JSON object: {_snippet(payload)!r}"))


def _decode(index: int, data: bytes, problems: list[tuple[int, str]]) -> str:
    """Bytes as text; bytes that are not UTF-8 become U+FFFD, and a problem says so."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        problems.append((index, "bytes that are not UTF-8 were replaced with U+FFFD"))
        return data.decode("utf-8", "replace")


def parse_sse_events(lines: Iterable[str]) -> tuple[list[dict], list[tuple[int, str]]]:
    """Return (events, problems).

    events: the decoded JSON objects in order. problems: (line index, message) for lines
    that could not be decoded. A line index is the position of the element in ``lines``
    (an element holding several lines reports all of them under its own index).
    """
    if isinstance(lines, str):
        lines = [lines]
    events: list[dict] = []
    problems: list[tuple[int, str]] = []
    if isinstance(lines, (bytes, bytearray)):
        lines = [_decode(0, bytes(lines), problems)]

    dec = _Decoder(events, problems)
    append = events.append
    loads = _loads
    decode_error = _JSONDecodeError
    pending = dec.buf  # same list object for the whole run (only cleared, never replaced)

    for i, line in enumerate(lines):
        if pending or type(line) is not str:
            dec.feed(i, line)
        elif line.startswith("data:"):
            try:
                obj = loads(line[5:])  # orjson skips the space after the colon and a trailing \r
            except decode_error:
                dec.feed(i, line)
                continue
            if type(obj) is dict:
                append(obj)
            else:
                dec.feed(i, line)
        elif line.startswith("event:"):
            # The name repeats the data's "type"; only a line holding more than one line
            # needs the slow path.
            if "\n" in line or "\r" in line:
                dec.feed(i, line)
        elif line.startswith("{"):
            try:
                obj = loads(line)
            except decode_error:
                dec.feed(i, line)
                continue
            if type(obj) is dict:
                append(obj)
            else:
                dec.feed(i, line)
        else:
            dec.feed(i, line)
    dec.finish()
    return events, problems


def is_claude_stream(events: Iterable[dict]) -> bool:
    """True when any event has an Anthropic Messages stream type."""
    types = _CLAUDE_EVENT_TYPES
    for ev in events:
        if ev.get("type") in types:
            return True
    return False


# -- Anthropic Messages ---------------------------------------------------------------------

# delta type -> (field it accumulates into, block type to create when the start is missing)
_CLAUDE_DELTAS: dict[str, tuple[str, str]] = {
    "text_delta": ("text", "text"),
    "thinking_delta": ("thinking", "thinking"),
    "signature_delta": ("signature", "thinking"),
    "input_json_delta": ("partial_json", "tool_use"),
}


def _merge_usage(usage: dict, update: Any) -> None:
    if isinstance(update, dict):
        for key, value in update.items():
            if value is not None:  # later values win, but a null never erases a count
                usage[key] = value


def _error_text(err: Any) -> str:
    if isinstance(err, dict):
        kind = err.get("type") or err.get("code") or "error"
        message = err.get("message")
        return f"{kind}: {message}" if message is not None else str(kind)
    return str(err)


def rebuild_claude(events: list[dict]) -> tuple[dict, list[str]]:
    """Anthropic Messages stream -> the non-streamed message plus problem strings.

    Result: {"id", "model", "role": "assistant", "content": [blocks in index order],
    "stop_reason", "stop_sequence", "usage": {...merged...}} and "error": {...} when the
    stream carried an ``error`` event.
    """
    problems: list[str] = []
    result: dict[str, Any] = {
        "id": None,
        "model": None,
        "role": "assistant",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {},
    }
    usage: dict = result["usage"]
    # Blocks in arrival order as [index, block, {field: [parts]}]; `current` maps an index
    # to its live entry (a repeated content_block_start opens a new entry, keeping the old).
    entries: list[list] = []
    current: dict[Any, list] = {}
    saw_start = saw_stop = False

    for ev in events:
        etype = ev.get("type")
        if etype == "content_block_delta":
            index = ev.get("index", 0)
            if type(index) is not int:
                index = _as_key(index)
            delta = ev.get("delta")
            if not isinstance(delta, dict):
                problems.append(f"content_block_delta without a delta object at index {index}")
                continue
            spec = _CLAUDE_DELTAS.get(delta.get("type"))
            if spec is None:
                # citations_delta and future delta types carry nothing we rebuild.
                continue
            field, block_type = spec
            entry = current.get(index)
            if entry is None:
                problems.append(
                    f"content_block_delta ({delta.get('type')}) for index {index} without content_block_start"
                )
                block: dict[str, Any] = {"type": block_type}
                if block_type == "tool_use":
                    block.update(id=None, name=None, input={})
                entry = current[index] = [index, block, {}]
                entries.append(entry)
            piece = delta.get(field)
            if piece:
                parts = entry[2].get(field)
                if parts is None:
                    entry[2][field] = [piece]
                else:
                    parts.append(piece)
            elif field not in entry[2]:
                entry[2][field] = []  # an (empty) delta still marks the field as streamed
        elif etype == "content_block_start":
            index = ev.get("index", 0)
            if type(index) is not int:
                index = _as_key(index)
            cb = ev.get("content_block")
            block = dict(cb) if isinstance(cb, dict) else {"type": None}
            if index in current:
                problems.append(f"repeated content_block_start for index {index}")
            entry = current[index] = [index, block, {}]
            entries.append(entry)
        elif etype == "message_start":
            if saw_start:
                problems.append("repeated message_start; later values win")
            saw_start = True
            msg = ev.get("message")
            if isinstance(msg, dict):
                for key in ("id", "model", "stop_reason", "stop_sequence"):
                    if msg.get(key) is not None:
                        result[key] = msg[key]
                _merge_usage(usage, msg.get("usage"))
        elif etype == "message_delta":
            delta = ev.get("delta")
            if isinstance(delta, dict):
                if delta.get("stop_reason") is not None:
                    result["stop_reason"] = delta["stop_reason"]
                if delta.get("stop_sequence") is not None:
                    result["stop_sequence"] = delta["stop_sequence"]
            _merge_usage(usage, ev.get("usage"))
        elif etype == "message_stop":
            saw_stop = True
        elif etype == "error":
            err = ev.get("error", ev)
            result["error"] = err
            problems.append(f"error event: {_error_text(err)}")
        # ping, content_block_stop and unknown types need no work.

    entries.sort(key=_entry_order)
    content = result["content"]
    for index, block, fields in entries:
        for field, parts in fields.items():
            try:
                joined = "".join(parts)
            except TypeError:  # a non-string piece from a misbehaving proxy
                joined = "".join(p if isinstance(p, str) else _dumps_text(p) for p in parts)
            if field == "partial_json":
                if not joined.strip():
                    if not isinstance(block.get("input"), dict):
                        block["input"] = {}
                    continue
                try:
                    block["input"] = _loads(joined)
                except _JSONDecodeError as exc:
                    block["input"] = joined
                    problems.append(
                        f"tool input of block {index} ({block.get('name')}) is not valid JSON ({exc}); kept as text"
                    )
            else:
                prefix = block.get(field)
                block[field] = prefix + joined if isinstance(prefix, str) and prefix else joined
        content.append(block)

    if saw_start and not saw_stop and "error" not in result:
        problems.append("stream ended without message_stop (truncated?)")
    return result, problems


def _entry_order(entry: list) -> tuple:
    index = entry[0]
    return (0, index, "") if isinstance(index, int) else (1, 0, str(index))


# -- OpenAI chat completions -------------------------------------------------------------------


def _text_piece(value: Any) -> str:
    """Some providers stream content as a list of parts instead of a string."""
    if isinstance(value, list):
        return "".join(
            (p.get("text") or "") if isinstance(p, dict) else str(p) for p in value
        )
    return str(value)


def rebuild_openai(events: list[dict]) -> tuple[dict, list[str]]:
    """OpenAI chat-completions stream -> the non-streamed response plus problem strings.

    Result: {"id", "model", "choices": [{"index": 0, "message": {"role": "assistant",
    "content": str|None, "tool_calls": [...]|None, "reasoning_content"?: str},
    "finish_reason"}], "usage": {...}|None} and "error": {...} when a chunk carried one.
    """
    problems: list[str] = []
    resp_id = model = finish_reason = usage = error = None
    content: list[str] | None = None
    reasoning: list[str] | None = None
    calls: dict[Any, dict] = {}  # index -> tool call being built
    call_args: dict[Any, list[str]] = {}
    other_choices = False

    for ev in events:
        if resp_id is None and ev.get("id") is not None:
            resp_id = ev["id"]
        if model is None and ev.get("model") is not None:
            model = ev["model"]
        u = ev.get("usage")
        if u is not None:
            usage = u
        choices = ev.get("choices")
        if not choices:
            if ev.get("error") is not None:
                error = ev["error"]
                problems.append(f"error chunk: {_error_text(error)}")
            continue
        for choice in choices:
            if not isinstance(choice, dict):
                continue
            if choice.get("index", 0) not in (0, None):
                other_choices = True
                continue
            fr = choice.get("finish_reason")
            if fr is not None:
                finish_reason = fr
            delta = choice.get("delta")
            if type(delta) is not dict:
                continue
            c = delta.get("content")
            if c is not None:
                if type(c) is not str:
                    c = _text_piece(c)
                if content is None:
                    content = [c]
                else:
                    content.append(c)
            r = delta.get("reasoning_content")
            if r is None:
                r = delta.get("reasoning")
            if r is not None:
                if type(r) is not str:
                    r = _text_piece(r)
                if reasoning is None:
                    reasoning = [r]
                else:
                    reasoning.append(r)
            tcs = delta.get("tool_calls")
            if tcs:
                for tc in tcs:
                    _accumulate_tool_call(tc, calls, call_args)

    tool_calls = None
    if calls:
        tool_calls = []
        for key in sorted(calls, key=_call_order):
            call = calls[key]
            call["function"]["arguments"] = "".join(call_args[key])
            tool_calls.append(call)
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(content) if content is not None else None,
        "tool_calls": tool_calls,
    }
    if reasoning is not None:
        message["reasoning_content"] = "".join(reasoning)
    if other_choices:
        problems.append("choices with index > 0 were ignored")
    if events and not any("choices" in ev for ev in events) and error is None:
        problems.append("no event has 'choices': not an OpenAI chat-completions stream?")
    elif finish_reason is None and error is None and any(ev.get("choices") for ev in events):
        problems.append("stream ended without a finish_reason (truncated?)")
    result: dict[str, Any] = {
        "id": resp_id,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": usage,
    }
    if error is not None:
        result["error"] = error
    return result, problems


def _accumulate_tool_call(tc: Any, calls: dict, call_args: dict) -> None:
    if not isinstance(tc, dict):
        return
    index = tc.get("index")
    if index is not None and type(index) is not int:
        index = _as_key(index)
    if index is None:
        # Providers that omit the index: a new id opens a new call, otherwise continue the last.
        tc_id = tc.get("id")
        if not calls or (tc_id is not None and all(c["id"] != tc_id for c in calls.values())):
            index = len(calls)
            while index in calls:
                index += 1
        else:
            index = next(reversed(calls))
    call = calls.get(index)
    if call is None:
        call = calls[index] = {"id": None, "type": None, "function": {"name": None, "arguments": ""}}
        call_args[index] = []
    if call["id"] is None and tc.get("id") is not None:
        call["id"] = tc["id"]
    if call["type"] is None and tc.get("type") is not None:
        call["type"] = tc["type"]
    fn = tc.get("function")
    if isinstance(fn, dict):
        if call["function"]["name"] is None and fn.get("name") is not None:
            call["function"]["name"] = fn["name"]
        args = fn.get("arguments")
        if args:
            if type(args) is not str:
                args = _dumps_text(args)
            call_args[index].append(args)
    if call["type"] is None and fn is not None:
        call["type"] = "function"


def _call_order(key: Any) -> tuple:
    return (0, key, "") if isinstance(key, int) else (1, 0, str(key))


# -- entry point ---------------------------------------------------------------------------


def rebuild_stream(lines: Iterable[str]) -> tuple[dict, str, list[tuple[int | None, str]]]:
    """Detect the provider and rebuild; returns (response, "claude"|"openai", problems).

    Problems from line decoding keep their line index; problems from rebuilding have None.
    """
    events, line_problems = parse_sse_events(lines)
    problems: list[tuple[int | None, str]] = list(line_problems)
    if is_claude_stream(events):
        response, rebuild_problems = rebuild_claude(events)
        kind = "claude"
    else:
        response, rebuild_problems = rebuild_openai(events)
        kind = "openai"
    if not events:
        problems.append((None, "no events found in the stream"))
    problems.extend((None, p) for p in rebuild_problems)
    return response, kind, problems
