"""API request logs: OpenAI chat completions, Anthropic Messages and Gemini generateContent.

A log is JSONL (or a JSON array) of records as logging proxies write them:
`{id, timestamp, duration_ms, request, response, error}`, the response either as the API
returned it or as the raw SSE lines of a stream (`{"stream": true, "sse_lines": [...]}`).
The shape is detected per record (the cook spec's Claude rules, then Gemini, else OpenAI) or
forced. One file is one trace whose requests form a forest (the cook finds the parents).
"""
from __future__ import annotations

import operator
import re
from typing import Iterator

import orjson

from . import sse
from .cook import usage as usage_mod
from .errors import Problem, json_kind, pointer
from .model import Call, Message, ParsedTrace, ParseResult
from .records import as_number, first_char, iter_records, looks_binary
from .registry import Format
from .repeats import RepeatedArrays
from .source import Source
from .timeutil import to_epoch_ms

NAME = "request-log"
SHAPES = ("openai", "claude", "gemini")
PROVIDER = {"openai": "openai", "claude": "anthropic", "gemini": "google"}
CLAUDE_EVENTS = frozenset(("message_start", "content_block_start", "content_block_delta", "message_delta", "message_stop"))
CLAUDE_BLOCKS = frozenset(("tool_use", "tool_result", "thinking"))
# Request settings worth showing; anything else (headers, metadata, keys) is never copied.
PARAM_KEYS = ("temperature", "max_tokens", "max_completion_tokens", "max_output_tokens", "top_p", "top_k",
              "stream", "tool_choice", "thinking", "reasoning_effort", "reasoning", "n", "seed",
              "response_format", "generationConfig", "toolConfig", "stop", "stop_sequences")


_CHAT_REQUEST = re.compile(rb'"request"\s*:\s*\{\s*"(?:model|messages|contents|system|systemInstruction|'
                           rb'system_instruction|tools|max_tokens|generationConfig|temperature|stream)"')


def sniff(src: Source) -> str | None:
    head = src.head
    if looks_binary(head):
        return "binary content"
    first = first_char(head)
    if first not in "{[":
        return "does not start with a JSON object or array"
    record = _first_record(head, src.size)
    if record is not None:
        if isinstance(record, dict) and isinstance(record.get("request"), dict):
            return None
        return 'the first record has no "request" object'
    # The first record is longer than the bytes sniffed: look for a chat request's start.
    if _CHAT_REQUEST.search(head):
        return None
    return 'no "request" object with messages or contents in the first record'


def _first_record(head: bytes, size: int):
    """The first record when the sniffed bytes hold it whole (a JSON line, or the whole file)."""
    candidates = [head] if size <= len(head) else []
    line = head.split(b"\n", 1)[0]
    if len(line) < len(head) or size <= len(head):
        candidates.append(line)
    for text in candidates:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, list):
            return value[0] if value else None
        return value
    return None


def parse(src: Source, shape: str | None = None) -> ParseResult:
    problems: list[Problem] = []
    trace = ParsedTrace(format=NAME, problems=problems, meta={})
    result = ParseResult(format=NAME, traces=[trace], problems=problems)
    trace.calls = _calls(src, shape, trace, result)
    return result


def _calls(src: Source, shape: str | None, trace: ParsedTrace, result: ParseResult) -> Iterator[Call]:
    problems = result.problems
    shapes_seen: set[str] = set()
    title = None
    memo: dict = {}
    # Each logged request repeats the conversation so far: its text is parsed once.
    lines = RepeatedArrays((("request",), ("messages", "contents")))
    for line, record, rec in iter_records(src, problems, lines.loads):
        result.records += 1
        where = {"line": line, "record": record}
        try:
            call, kind = convert_record(rec, shape, src.name, where, problems, memo)
        except Exception as e:  # a shape no rule foresaw: report it, keep the rest
            problems.append(Problem(src.name, f"record could not be read ({type(e).__name__}: {e}); skipped", **where))
            continue
        if call is None:
            continue
        shapes_seen.add(kind)
        if title is None:
            title = _title(call)
        yield call
    trace.title = f"{src.basename}" + (f": {title}" if title else "")
    trace.meta["api_shapes"] = sorted(shapes_seen)


def _title(call: Call) -> str | None:
    for m in call.request_messages:
        if m.role == "user" and m.content and m.content != "[image]":
            t = " ".join(m.content.split())
            return t[:80] + ("…" if len(t) > 80 else "")
    return None


def detect_shape(request: dict, response, memo: dict | None = None) -> str:
    """The cook spec's Claude rules; Gemini by its field names; OpenAI otherwise.

    With a `memo` (one per file), messages already found free of Anthropic blocks in the
    previous request, as the very same objects (see RepeatedArrays), are not looked at
    again: a long conversation is scanned once, not once per request."""
    if isinstance(response, dict) and response.get("stream") and isinstance(response.get("sse_lines"), list):
        for ln in response["sse_lines"][:6]:
            if isinstance(ln, str) and any(f'"{e}"' in ln or f"event: {e}" in ln for e in CLAUDE_EVENTS):
                return "claude"
    if isinstance(request.get("system"), list):
        return "claude"
    tools = request.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[0], dict) and "input_schema" in tools[0]:
        return "claude"
    msgs = request.get("messages")
    if isinstance(msgs, list):
        start = 0
        seen = memo.get("no anthropic blocks") if memo is not None else None
        if seen and msgs and all(map(operator.is_, msgs, seen)):  # up to the shorter list
            start = min(len(seen), len(msgs))
        for m in msgs[start:]:
            c = m.get("content") if isinstance(m, dict) else None
            if isinstance(c, list) and any(isinstance(b, dict) and b.get("type") in CLAUDE_BLOCKS for b in c):
                return "claude"
        if memo is not None:
            memo["no anthropic blocks"] = msgs
    if "contents" in request or "systemInstruction" in request or "system_instruction" in request:
        return "gemini"
    if isinstance(response, dict) and "candidates" in response:
        return "gemini"
    return "openai"


def convert_record(rec, shape: str | None, file: str, where: dict, problems: list[Problem],
                   memo: dict | None = None) -> tuple[Call | None, str]:
    """One log record -> Call (or None when it is skipped, with the reason in `problems`)."""
    def problem(path: str, message: str):
        problems.append(Problem(file, message, path=path, **where))

    if not isinstance(rec, dict):
        problem("", f"expected a JSON object (a logged request), found {json_kind(rec)}; skipped")
        return None, ""
    request = rec.get("request")
    if not isinstance(request, dict):
        problem("/request", f"expected an object with the API request, found {json_kind(request)}; skipped")
        return None, ""
    response = rec.get("response")
    if "messages" not in request and "contents" not in request:
        problem("/request", "not a chat call (the request has no messages or contents); skipped")
        return None, ""
    kind = shape or detect_shape(request, response, memo)
    error = _error_text(rec.get("error"))

    if isinstance(response, dict) and isinstance(response.get("sse_lines"), list):
        response, _, stream_problems = sse.rebuild_stream(response["sse_lines"])
        for idx, msg in stream_problems:
            problem(pointer("response", "sse_lines", idx) if idx is not None else "/response/sse_lines", msg)
    if response is not None and not isinstance(response, dict):
        problem("/response", f"expected an object, found {json_kind(response)}; the request is kept without its response")
        response = None
    # A request logged without its answer (no response, or only an error) is kept.
    chat = isinstance(response, dict) and _is_chat_response(response)
    if response and not chat and not error and not response.get("error"):
        keys = ", ".join(sorted(response)[:5])
        problem("/response", f"not a chat response (it has {keys}), e.g. a count_tokens call; skipped")
        return None, kind
    if response and response.get("error") and not error:
        error = _error_text(response["error"])

    conv = {"claude": ClaudeMessages, "gemini": GeminiMessages}.get(kind, OpenAIMessages)(file, where, problems, memo)
    req_msgs = conv.request_messages(request)
    resp_msgs, model, stop, usage_raw = [], None, None, None
    if chat:
        resp_msgs, stop = conv.response_messages(response)
        model = response.get("model") or response.get("modelVersion")
        usage_raw = response.get("usage") or response.get("usageMetadata")
    model = request.get("model") or model or rec.get("model")
    ts = to_epoch_ms(rec.get("timestamp"))
    if rec.get("timestamp") is not None and ts is None:
        problem("/timestamp", f"expected an ISO 8601 time or epoch number, found {rec.get('timestamp')!r}")
    params = {k: request[k] for k in PARAM_KEYS if k in request}
    rid = rec.get("id")
    return Call(
        request_messages=req_msgs, response_messages=resp_msgs,
        # The same list object while requests offer the same tools (cached by their exact
        # JSON), so the cook interns them once.
        tools=conv.cached({"tools": request.get("tools")}, lambda: conv.tools(request.get("tools"))),
        id=str(rid) if rid is not None else None, timestamp=ts, model=model, provider=PROVIDER[kind],
        duration_ms=as_number(rec.get("duration_ms")),
        usage=usage_mod.from_any(usage_raw), stop_reason=stop, error=error, params=params or None,
        line=where["line"], record=where["record"],
    ), kind


def _shared_prefix(a: list, b: list) -> int:
    """The length of the longest common prefix of two lists of JSON values (slice
    comparisons run in C and stop at the first difference)."""
    n = min(len(a), len(b))
    if not n or a[0] != b[0]:
        return 0
    if a[:n] != b[:n]:
        lo, hi = 1, n - 1  # a[:lo] == b[:lo]; a[:hi + 1] != b[:hi + 1]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if a[:mid] == b[:mid]:
                lo = mid
            else:
                hi = mid - 1
        n = lo
    # Python's == takes 1, 1.0 and true for the same; JSON does not. Elements reused by
    # RepeatedArrays are the same objects; any other pair is checked by its JSON text.
    if not all(map(operator.is_, a[:n], b[:n])):
        for i in range(n):
            if a[i] is not b[i] and orjson.dumps(a[i]) != orjson.dumps(b[i]):
                return i
    return n


def _is_chat_response(r: dict) -> bool:
    return any(k in r for k in ("content", "choices", "candidates"))


def _error_text(err) -> str | None:
    if err in (None, "", False):
        return None
    if isinstance(err, dict):
        inner = err.get("error") if isinstance(err.get("error"), dict) else err
        msg = inner.get("message") or inner.get("msg")
        typ = inner.get("type") or inner.get("code") or inner.get("status")
        if msg:
            return f"{typ}: {msg}" if typ else str(msg)
        return orjson.dumps(err).decode()
    return str(err)




def _json_text(v) -> str:
    return orjson.dumps(v).decode()


class MessageReader:
    name = ""

    def __init__(self, file: str, where: dict, problems: list[Problem], memo: dict | None = None):
        self.file, self.where, self.problems = file, where, problems
        self.memo = memo if memo is not None else {}

    def cached(self, raw, convert) -> list[Message]:
        """Converted messages of one raw message, reused when the same raw message recurs.

        Logged requests repeat the whole history, so most messages of a request were seen
        in the previous one; converting (and later hashing) each only once keeps cooking
        close to the cost of parsing the JSON. The key is the raw message's exact JSON."""
        try:
            key = orjson.dumps(raw)
        except TypeError:
            return convert()
        key = self.name.encode() + key
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = convert()
        return hit

    def convert_history(self, raws: list, convert_one) -> list[Message]:
        """Converted messages of a request's history.

        Most requests repeat an earlier request's history (usually the previous one's; a
        side call may come between) and add a little: the longest prefix shared with one of
        the last few histories is found by list comparisons (in C; identity checks when the
        lines were read by `RepeatedArrays`) and its conversion reused, flattened list
        included (so the cook can spot the shared prefix by identity); only the rest goes
        through `cached`."""
        recent = self.memo.setdefault(("recent histories", self.name), [])
        best, k = None, 0
        for h in recent:
            n = _shared_prefix(raws, h[0])
            if n > k:
                best, k = h, n
                if n == len(h[0]):
                    break
        if best is not None:
            flat, ends = best[1][:best[2][k - 1]], best[2][:k]
        else:
            flat, ends = [], []
        for i in range(k, len(raws)):
            raw = raws[i]
            flat.extend(self.cached(raw, lambda: convert_one(raw, i)))
            ends.append(len(flat))
        recent.insert(0, (raws, flat, ends))
        del recent[4:]
        return list(flat)

    def problem(self, path: str, message: str):
        self.problems.append(Problem(self.file, message, path=path, **self.where))

    def parse_arguments(self, raw, path: str, name: str | None):
        """OpenAI arguments are a JSON string: parsed to an object; kept raw when unparsable."""
        if raw is None:
            return {}
        if not isinstance(raw, str):
            return raw
        if not raw.strip():
            return {}
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.problem(path, f"arguments of tool call {name!r} are not valid JSON; kept as text")
            return raw


class ClaudeMessages(MessageReader):
    name = "claude"
    def request_messages(self, req: dict) -> list[Message]:
        out: list[Message] = []
        system = req.get("system")
        if isinstance(system, str):
            if system:
                out.append(Message("system", system))
        elif isinstance(system, list):
            out.extend(self.cached({"system": system}, lambda: self.system_blocks(system)))
        msgs = req.get("messages")
        if not isinstance(msgs, list):
            self.problem("/request/messages", f"expected an array of messages, found {json_kind(msgs)}")
            return out
        out.extend(self.convert_history(msgs, lambda m, i: self.message(m, pointer("request", "messages", i))))
        return out

    def system_blocks(self, system: list) -> list[Message]:
        out = []
        for i, b in enumerate(system):
            if isinstance(b, dict) and b.get("type", "text") == "text":
                out.append(Message("system", str(b.get("text", ""))))
            elif isinstance(b, str):
                out.append(Message("system", b))
            else:
                self.problem(pointer("request", "system", i), "expected a text block; kept as JSON text")
                out.append(Message("system", _json_text(b)))
        return out

    def message(self, m, path: str) -> list[Message]:
        if not isinstance(m, dict):
            self.problem(path, f"expected a message object, found {json_kind(m)}; skipped")
            return []
        role = m.get("role")
        if role not in ("user", "assistant", "system"):
            self.problem(path + "/role", f"expected user or assistant, found {role!r}; read as user")
            role = "user"
        return self.blocks(role, m.get("content"), path + "/content")

    def blocks(self, role: str, content, path: str) -> list[Message]:
        if content is None:
            return []
        if isinstance(content, str):
            return [Message(role, content)]
        if not isinstance(content, list):
            self.problem(path, f"expected a string or an array of content blocks, found {json_kind(content)}")
            return [Message(role, _json_text(content))]
        out: list[Message] = []
        calls: list[dict] = []
        for i, b in enumerate(content):
            if not isinstance(b, dict):
                if isinstance(b, str):
                    out.append(Message(role, b))
                else:
                    self.problem(f"{path}/{i}", f"expected a content block object, found {json_kind(b)}; skipped")
                continue
            t = b.get("type")
            if t == "text":
                out.append(Message(role, str(b.get("text") or "")))
            elif t == "thinking":
                if b.get("thinking"):  # signature-only blocks carry nothing to read
                    out.append(Message("thinking", str(b["thinking"])))
            elif t == "redacted_thinking":
                out.append(Message("thinking", "[redacted thinking]"))
            elif t in ("tool_use", "server_tool_use", "mcp_tool_use"):
                # A string input only arises from a stream whose JSON did not parse; the
                # stream rebuild already reported it and kept the text.
                args = b.get("input")
                calls.append({"name": b.get("name"), "arguments": args if args is not None else {}, "id": b.get("id")})
            elif t == "tool_result" or (isinstance(t, str) and t.endswith("_tool_result")):
                out.append(Message("tool_result", _result_text(b.get("content")),
                                   tool_use_id=b.get("tool_use_id"), is_error=bool(b.get("is_error", False))))
            elif t == "image":
                out.append(Message(role, "[image]"))
            elif t == "document":
                out.append(Message(role, "[document]"))
            else:
                out.append(Message(role, _json_text(b)))
        if calls:  # all tool_use blocks of a message form one tool_use message, after the rest
            out.append(Message("tool_use", "", tool_calls=calls))
        return out

    def response_messages(self, r: dict) -> tuple[list[Message], str | None]:
        return self.blocks("assistant", r.get("content"), "/response/content"), r.get("stop_reason")

    def tools(self, tools) -> list[dict]:
        out = []
        for t in tools or []:
            if not isinstance(t, dict):
                continue
            if "function" in t and isinstance(t["function"], dict):  # OpenAI-shaped tool in a Claude call
                f = t["function"]
                out.append({"name": f.get("name"), "description": f.get("description"), "parameters": f.get("parameters")})
            else:
                params = t.get("input_schema")
                if params is None and t.get("type") and t.get("type") != "custom":
                    params = {k: v for k, v in t.items() if k not in ("name", "description")}  # server tools
                out.append({"name": t.get("name"), "description": t.get("description"), "parameters": params})
        return out


def _result_text(content) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict):
                if b.get("type") == "text":
                    parts.append(str(b.get("text") or ""))
                elif b.get("type") in ("image", "image_url"):
                    parts.append("[image]")
                else:
                    parts.append(_json_text(b))
            else:
                parts.append(str(b))
        return "\n".join(parts)
    return _json_text(content)


class OpenAIMessages(MessageReader):
    name = "openai"
    def request_messages(self, req: dict) -> list[Message]:
        msgs = req.get("messages")
        if not isinstance(msgs, list):
            self.problem("/request/messages", f"expected an array of messages, found {json_kind(msgs)}")
            return []
        return self.convert_history(msgs, lambda m, i: self.message(m, pointer("request", "messages", i)))

    def content(self, role: str, content, path: str) -> list[Message]:
        if content is None:
            return []
        if isinstance(content, str):
            return [Message(role, content)]
        if isinstance(content, list):
            out = []
            for i, p in enumerate(content):
                if isinstance(p, str):
                    out.append(Message(role, p))
                elif isinstance(p, dict):
                    t = p.get("type")
                    if t in ("text", "input_text", "output_text"):
                        out.append(Message(role, str(p.get("text") or "")))
                    elif t in ("image_url", "input_image", "image"):
                        out.append(Message(role, "[image]"))
                    elif t in ("input_audio", "audio"):
                        out.append(Message(role, "[audio]"))
                    elif t == "file":
                        out.append(Message(role, "[file]"))
                    else:
                        out.append(Message(role, _json_text(p)))
                else:
                    self.problem(f"{path}/{i}", f"expected a content part, found {json_kind(p)}; skipped")
            return out
        self.problem(path, f"expected a string or an array of parts, found {json_kind(content)}")
        return [Message(role, _json_text(content))]

    def message(self, m, path: str) -> list[Message]:
        if not isinstance(m, dict):
            self.problem(path, f"expected a message object, found {json_kind(m)}; skipped")
            return []
        role = m.get("role")
        if role in ("system", "developer"):
            return self.content("system", m.get("content"), path + "/content")
        if role == "user":
            return self.content("user", m.get("content"), path + "/content")
        if role in ("tool", "function"):
            msg = Message("tool_result", _result_text(m.get("content")),
                          tool_use_id=m.get("tool_call_id"), is_error=bool(m.get("is_error", False)))
            if m.get("name"):
                msg.extra = {"name": m["name"]}
            return [msg]
        if role == "assistant":
            return self.assistant(m, path)
        self.problem(path + "/role", f"expected system, user, assistant or tool, found {role!r}; read as user")
        return self.content("user", m.get("content"), path + "/content")

    def assistant(self, m: dict, path: str) -> list[Message]:
        out: list[Message] = []
        reasoning = m.get("reasoning_content") or m.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            out.append(Message("thinking", reasoning))
        raw_calls = m.get("tool_calls")
        if not raw_calls and isinstance(m.get("function_call"), dict):
            raw_calls = [{"function": m["function_call"]}]
        if raw_calls:
            calls = []
            for i, c in enumerate(raw_calls):
                if not isinstance(c, dict):
                    self.problem(f"{path}/tool_calls/{i}", f"expected a tool call object, found {json_kind(c)}; skipped")
                    continue
                f = c.get("function") if isinstance(c.get("function"), dict) else {}
                name = f.get("name")
                calls.append({"name": name,
                              "arguments": self.parse_arguments(f.get("arguments"), f"{path}/tool_calls/{i}/function/arguments", name),
                              "id": c.get("id")})
            texts = self.content("assistant", m.get("content"), path + "/content")
            out.append(Message("tool_use", "\n".join(t.content for t in texts), tool_calls=calls))
            return out
        out.extend(self.content("assistant", m.get("content"), path + "/content"))
        return out

    def response_messages(self, r: dict) -> tuple[list[Message], str | None]:
        choices = r.get("choices")
        if not isinstance(choices, list) or not choices:
            return [], None
        c = choices[0] if isinstance(choices[0], dict) else {}
        msg = c.get("message") or c.get("delta") or {}
        if not isinstance(msg, dict):
            self.problem("/response/choices/0/message", f"expected an object, found {json_kind(msg)}")
            return [], c.get("finish_reason")
        return self.assistant(msg, "/response/choices/0/message"), c.get("finish_reason")

    def tools(self, tools) -> list[dict]:
        out = []
        for t in tools or []:
            if not isinstance(t, dict):
                continue
            f = t.get("function") if isinstance(t.get("function"), dict) else t
            out.append({"name": f.get("name"), "description": f.get("description"), "parameters": f.get("parameters")})
        return out


class GeminiMessages(MessageReader):
    name = "gemini"
    def request_messages(self, req: dict) -> list[Message]:
        out: list[Message] = []
        sys_ = req.get("systemInstruction") or req.get("system_instruction")
        if isinstance(sys_, dict):
            for p in sys_.get("parts") or []:
                if isinstance(p, dict) and "text" in p:
                    out.append(Message("system", str(p["text"])))
        elif isinstance(sys_, str):
            out.append(Message("system", sys_))
        contents = req.get("contents")
        if isinstance(contents, dict):
            contents = [contents]
        if not isinstance(contents, list):
            self.problem("/request/contents", f"expected an array of contents, found {json_kind(contents)}")
            return out
        out.extend(self.convert_history(contents, self.content))
        return out

    def content(self, c, i: int) -> list[Message]:
        path = pointer("request", "contents", i)
        if not isinstance(c, dict):
            self.problem(path, f"expected a content object, found {json_kind(c)}; skipped")
            return []
        role = "assistant" if c.get("role") == "model" else "user"
        return self.parts(role, c.get("parts"), path + "/parts")

    def parts(self, role: str, parts, path: str) -> list[Message]:
        if not isinstance(parts, list):
            return []
        out: list[Message] = []
        calls: list[dict] = []
        for i, p in enumerate(parts):
            if not isinstance(p, dict):
                self.problem(f"{path}/{i}", f"expected a part object, found {json_kind(p)}; skipped")
                continue
            if "functionCall" in p or "function_call" in p:
                fc = p.get("functionCall") or p.get("function_call") or {}
                calls.append({"name": fc.get("name"), "arguments": fc.get("args") or {}, "id": fc.get("id")})
            elif "functionResponse" in p or "function_response" in p:
                fr = p.get("functionResponse") or p.get("function_response") or {}
                resp = fr.get("response")
                msg = Message("tool_result", resp if isinstance(resp, str) else _json_text(resp),
                              tool_use_id=fr.get("id"), is_error=bool(isinstance(resp, dict) and "error" in resp))
                msg.extra = {"name": fr.get("name")}
                out.append(msg)
            elif "text" in p:
                out.append(Message("thinking" if p.get("thought") else role, str(p.get("text") or "")))
            elif "inlineData" in p or "inline_data" in p:
                out.append(Message(role, "[image]"))
            elif "fileData" in p or "file_data" in p:
                out.append(Message(role, "[file]"))
            elif p.get("thoughtSignature") and len(p) == 1:
                continue
            else:
                out.append(Message(role, _json_text({k: v for k, v in p.items() if k != "thoughtSignature"})))
        if calls:
            out.append(Message("tool_use", "", tool_calls=calls))
        return out

    def response_messages(self, r: dict) -> tuple[list[Message], str | None]:
        cands = r.get("candidates")
        if not isinstance(cands, list) or not cands or not isinstance(cands[0], dict):
            return [], None
        c = cands[0]
        content = c.get("content") or {}
        return self.parts("assistant", content.get("parts"), "/response/candidates/0/content/parts"), c.get("finishReason")

    def tools(self, tools) -> list[dict]:
        out = []
        for t in tools or []:
            if not isinstance(t, dict):
                continue
            decls = t.get("functionDeclarations") or t.get("function_declarations")
            if isinstance(decls, list):
                for d in decls:
                    if isinstance(d, dict):
                        out.append({"name": d.get("name"), "description": d.get("description"),
                                    "parameters": d.get("parameters", d.get("parametersJsonSchema"))})
            else:
                for k, v in t.items():  # built-in tools such as googleSearch
                    out.append({"name": k, "description": None, "parameters": v or None})
        return out


FORMAT = Format(
    name=NAME, title="API request logs (OpenAI, Anthropic, Gemini)",
    description="JSONL of logged API calls {request, response, ...}; streamed responses as SSE lines",
    sniff=sniff, parse=parse, aliases=SHAPES, extensions=(".jsonl", ".json"), priority=90,
)
