"""Gemini CLI sessions (`~/.gemini/tmp/<project hash>/chats/session-*.json[l]`), and Qwen Code's
copies of the same format (`~/.qwen/tmp/...`, the model's messages typed `qwen`).

Two layouts, read by one mechanism:
- the whole-file JSON checkpoint: `{sessionId, projectHash, startTime, lastUpdated, messages}`;
- the JSON-lines log written since 2026: a first line of session metadata, then one line per
  message written each time the message changes (the last version of an `id` wins and keeps
  the place of the first), `{"$set": {...}}` lines updating metadata (a `$set.messages` replaces
  the whole history) and `{"$rewindTo": id}` lines dropping that message and everything after it.
The whole-file JSON is read as the log's first line with its `messages` set at once.

Messages are typed `user`, `gemini` (`qwen`, `model`), or `info` / `warning` / `error` (notices
of the CLI, shown as system messages). A model message carries `content` (text or Gemini parts),
`thoughts` (`[{subject, description}]`, shown as thinking), `toolCalls` (each with its `args`,
its `result` as Gemini `functionResponse` parts, `status` and `resultDisplay`, a file diff for
edits, kept as a patch artifact) and `tokens` `{input, output, cached, thoughts, tool}`: `input`
is the prompt including cached tokens, `tool` the tool-use prompt, `thoughts` reasoning output.
"""
from __future__ import annotations

import json
import posixpath
from typing import Iterator

import orjson

from parsers.model import (Artifact, Companion, Format, Message, ParsedTrace, ParseResult, Problem, Turn, json_kind,
                           pointer)
from parsers.io.guard import record_guard
from parsers.io.records import as_dict, as_text, first_char, iter_records, looks_binary
from parsers.io.source import Source
from parsers.io.times import read_time
from parsers.providers import usage as usage_mod
from parsers.providers.gemini import GeminiMessages
from parsers.providers.messages import json_text

NAME = "gemini-cli"
MODEL_TYPES = frozenset(("gemini", "qwen", "model"))
NOTICE_TYPES = frozenset(("info", "warning", "error"))
META_KEYS = ("sessionId", "projectHash", "startTime", "lastUpdated", "kind", "summary", "directories")
# The `tokens` fields are the response's usageMetadata renamed; parsers.providers.usage reads them
# under their Gemini names (`input` includes the cached tokens, `tool` is prompt apart from it).
GEMINI_USAGE = {"input": "promptTokenCount", "output": "candidatesTokenCount", "cached": "cachedContentTokenCount",
                "thoughts": "thoughtsTokenCount", "tool": "toolUsePromptTokenCount"}
WHO = "the Gemini CLI session reader"
PROMPT_LOG = "logs.json"
TITLE_CHARS = 80


# -- detection ------------------------------------------------------------------------
def sniff(src: Source) -> str | None:
    head = src.head
    if looks_binary(head):
        return "binary content"
    first = first_char(head)
    if first == "[" and b'"messageId"' in head and b'"sessionId"' in head:
        return Companion("Gemini CLI prompt log: the prompts of the sessions in chats/ beside it")
    if first != "{":
        return "does not start with a JSON object"
    if b'"sessionId"' not in head or b'"projectHash"' not in head:
        return 'no "sessionId" and "projectHash" (Gemini CLI session metadata) in the first bytes'
    return None


# -- reading --------------------------------------------------------------------------
class _Session:
    """The session as the records leave it: metadata and the messages by id, in order.
    Each message is kept with where its last version was read: (message, line, JSON path)."""

    def __init__(self, file: str, problems: list[Problem]):
        self.file, self.problems = file, problems
        self.meta: dict = {}
        self.messages: dict[str, tuple[dict, int | None, str]] = {}
        self.skipped = 0  # records of a kind this reader does not know

    def problem(self, message: str, line: int | None, path: str = "") -> None:
        self.problems.append(Problem(self.file, message, line=line, path=path))

    def record(self, rec, line: int | None) -> None:
        if not isinstance(rec, dict):
            self.problem(f"expected a JSON object (session metadata, a message, $set or $rewindTo), "
                         f"found {json_kind(rec)}; skipped", line)
        elif "$rewindTo" in rec:
            self.rewind(rec["$rewindTo"], line)
        elif "$set" in rec:
            if isinstance(rec["$set"], dict):
                self.update(rec["$set"], line, "/$set")
            else:
                self.problem(f"expected an object of fields to set, found {json_kind(rec['$set'])}; skipped",
                             line, "/$set")
        elif "sessionId" in rec or "messages" in rec:
            self.update(rec, line, "")
        elif "type" in rec:
            self.upsert(rec, line, "", fallback_id=f"line {line}")
        else:
            self.skipped += 1

    def update(self, fields: dict, line: int | None, path: str) -> None:
        self.meta.update({k: v for k, v in fields.items() if k in META_KEYS})
        if "messages" not in fields:
            return
        msgs = fields["messages"]
        if not isinstance(msgs, list):
            self.problem(f"expected an array of messages, found {json_kind(msgs)}; the history is kept as it was",
                         line, path + "/messages")
            return
        self.messages = {}
        for i, m in enumerate(msgs):
            where = f"{path}/messages/{i}"
            if isinstance(m, dict):
                self.upsert(m, line, where, fallback_id=f"message {i}")
            else:
                self.problem(f"expected a message object, found {json_kind(m)}; skipped", line, where)

    def upsert(self, m: dict, line: int | None, path: str, fallback_id: str) -> None:
        mid = m.get("id")
        if not isinstance(mid, str) or not mid:
            if mid is not None:
                self.problem(f"expected a message id (a non-empty string), found {json_kind(mid)}; read as a message "
                             "of its own",
                             line, path + "/id")
            mid = fallback_id
        self.messages[mid] = (m, line, path)

    def rewind(self, target, line: int | None) -> None:
        if not isinstance(target, str):
            self.problem(f"expected the id of the message to rewind to, found {json_kind(target)}; skipped",
                         line, "/$rewindTo")
            return
        ids = list(self.messages)
        if target in self.messages:
            keep = ids[:ids.index(target)]
        else:
            keep = []
            self.problem(f"rewinds to message {target[:80]!r}, which is not in the history; the history before "
                         "it is dropped, as Gemini CLI does", line, "/$rewindTo")
        self.messages = {k: self.messages[k] for k in keep}


def parse(src: Source) -> ParseResult:
    problems: list[Problem] = []
    session = _Session(src.name, problems)
    records = 0
    for line, rec in _records(src, problems):
        records += 1
        with record_guard(problems, src.name, WHO, line=line):
            session.record(rec, line)
    if not records or (not session.meta and not session.messages):
        if records:
            problems.append(Problem(src.name, "expected Gemini CLI session records (metadata with sessionId and "
                                              "projectHash, then messages); nothing loaded"))
        return ParseResult(format=NAME, traces=[], problems=problems, records=records)
    return ParseResult(format=NAME, traces=[_trace(src, session)], records=records)  # its problems are the trace's


def _records(src: Source, problems: list[Problem]) -> Iterator[tuple[int | None, object]]:
    """(line, record) of a JSON-lines log, or (None, document) of a whole-file session. A
    pretty-printed document cut short gives the fields and messages that are complete."""
    first = src.head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    try:
        orjson.loads(first)
    except orjson.JSONDecodeError:
        if first.strip()[:1] == b"{" and not looks_binary(src.head):
            yield from _document(src, problems)
            return
    for line, _, rec in iter_records(src, problems):
        yield line, rec


def _document(src: Source, problems: list[Problem]) -> Iterator[tuple[None, object]]:
    raw = src.read_bytes()
    try:
        yield None, orjson.loads(raw)
        return
    except orjson.JSONDecodeError as e:
        error = e
    text = raw.decode("utf-8", "replace")
    if text.encode("utf-8") != raw:
        problems.append(Problem(src.name, "bytes that are not UTF-8 were replaced with U+FFFD"))
        try:
            yield None, orjson.loads(text)
            return
        except orjson.JSONDecodeError as e:
            error = e
    fields, broken = _complete_fields(text)
    kept = len(fields.get("messages") or ())
    problems.append(Problem(src.name, f"not valid JSON ({error}); the file looks cut short: "
                                      f"what comes before the break is read ({kept} complete message(s))",
                            path=broken))
    if fields:
        yield None, fields


def _complete_fields(text: str) -> tuple[dict, str]:
    """The top-level fields of a JSON object that parse completely, up to where the text breaks
    (an array field broken inside keeps its complete elements), and the JSON pointer of the break."""
    decoder, out = json.JSONDecoder(), {}
    i = text.find("{") + 1
    while True:
        i, key = _skip(text, i, " \t\r\n,"), None
        try:
            key, i = decoder.raw_decode(text, i)
            i = _skip(text, i, " \t\r\n")
            if not isinstance(key, str) or text[i:i + 1] != ":":
                return out, ""
            i = _skip(text, i + 1, " \t\r\n")
            out[key], i = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):
            if text[i:i + 1] == "[" and isinstance(key, str):
                out[key] = _complete_elements(decoder, text, i + 1)
                return out, pointer(key, len(out[key]))
            return out, pointer(key) if isinstance(key, str) else ""


def _complete_elements(decoder: json.JSONDecoder, text: str, i: int) -> list:
    out = []
    while True:
        i = _skip(text, i, " \t\r\n,")
        try:
            value, i = decoder.raw_decode(text, i)
        except (ValueError, RecursionError):
            return out
        out.append(value)


def _skip(text: str, i: int, chars: str) -> int:
    while i < len(text) and text[i] in chars:
        i += 1
    return i


def _trace(src: Source, session: _Session) -> ParsedTrace:
    meta = session.meta
    problems = session.problems
    trace = ParsedTrace(format=NAME, messages=[], problems=problems)
    started = read_time(meta.get("startTime"), problems, src.name, "/startTime", "the session start is not shown")
    ended = read_time(meta.get("lastUpdated"), problems, src.name, "/lastUpdated", "the session end is not shown")
    reader = _Messages(src.name, problems, trace)
    for m, line, path in session.messages.values():
        with record_guard(problems, src.name, WHO, line=line, path=path):
            reader.message(m, line, path)
    trace.task = reader.first_user
    # The session's summary, else the first line of its first prompt (the file name says nothing).
    first = reader.first_user.strip().splitlines()[0] if reader.first_user else None
    trace.title = as_text(meta.get("summary")) or (
        first if first is None or len(first) <= TITLE_CHARS else first[:TITLE_CHARS - 1] + "…")
    trace.models = reader.models or None
    trace.started_at = started if started is not None else reader.first_time
    trace.ended_at = ended if ended is not None else reader.last_time
    if trace.started_at is not None and trace.ended_at is not None and trace.ended_at >= trace.started_at:
        trace.duration_ms = trace.ended_at - trace.started_at
    problems.sort(key=lambda p: p.line or 0)  # those met reading and converting, in the file's order
    trace.meta = {k: meta[k] for k in ("sessionId", "projectHash", "kind", "directories") if k in meta}
    trace.session = as_text(meta.get("sessionId"))
    if session.skipped:
        trace.meta["records_skipped"] = session.skipped
    logged = _logged_prompts(src, meta.get("sessionId"), problems)
    if logged is not None:
        trace.meta["logged_prompts"] = logged
    return trace


def _logged_prompts(src: Source, session_id, problems: list[Problem]) -> int | None:
    """How many prompts the project's prompt log (`logs.json` beside `chats/`) holds for this
    session (it keeps the prompts a rewind dropped from the session); None without the log."""
    if posixpath.basename(posixpath.dirname(src.name)) != "chats" or not isinstance(session_id, str):
        return None
    log = src.sibling("../" + PROMPT_LOG)
    if log is None:
        return None
    n = 0
    for line, record, entry in iter_records(log, problems):
        if isinstance(entry, dict):
            n += entry.get("sessionId") == session_id and entry.get("type") == "user"
        else:
            problems.append(Problem(log.name, f"expected a prompt {{sessionId, messageId, type, message, timestamp}}, "
                                              f"found {json_kind(entry)}; not counted", line=line, record=record))
    return n


class _Messages:
    """Session messages -> trace messages, turns and patch artifacts."""

    def __init__(self, file: str, problems: list[Problem], trace: ParsedTrace):
        self.file, self.problems, self.trace = file, problems, trace
        self.parts = GeminiMessages(file, {}, problems)
        self.models: list[str] = []
        self.first_user: str | None = None
        self.first_time: int | None = None
        self.last_time: int | None = None
        # Calls and results already shown, by call id: a history rewritten by `$set.messages`
        # holds them twice, as the message's `toolCalls` and again as Gemini parts.
        self.calls_seen: set[str] = set()
        self.results_seen: set[str] = set()

    def problem(self, message: str, line: int | None, path: str) -> None:
        self.problems.append(Problem(self.file, message, line=line, path=path))

    def message(self, m: dict, line: int | None, path: str) -> None:
        self.parts.where = {"line": line} if line is not None else {}
        typ = m.get("type")
        typ = typ if isinstance(typ, str) else None  # the checks below take a string
        ts = read_time(m.get("timestamp"), self.problems, self.file, path + "/timestamp",
                       "the message is shown without a time", **self.parts.where)
        if ts is not None:
            self.first_time = ts if self.first_time is None else self.first_time
            self.last_time = ts
        extra = {"timestamp": ts} if ts is not None else None
        if typ in MODEL_TYPES:
            self.model_message(m, line, path, ts, extra)
        elif typ == "user":
            out = self.content("user", m, line, path, extra)
            text = "\n".join(x.content for x in out if x.role == "user" and x.content.strip())
            if self.first_user is None and text:
                self.first_user = text
            self.trace.messages.extend(out)
        elif typ in NOTICE_TYPES:
            text = "\n".join(x.content for x in self.content("system", m, line, path, None))
            self.trace.messages.append(Message("system", text, is_error=True if typ == "error" else None,
                                               extra={**(extra or {}), "name": typ}))
        else:
            found = m.get("type")
            shown = repr(found[:60]) if isinstance(found, str) else json_kind(found)
            self.problem(f"expected a message type of user, gemini, info, warning or error, found {shown}; skipped",
                         line, path + "/type")

    def content(self, role: str, m: dict, line: int | None, path: str, extra: dict | None) -> list[Message]:
        """The message's `content` (or `parts`): a string, a part or a list of parts."""
        key = "content" if "content" in m or "parts" not in m else "parts"
        c = m.get(key)
        if c is None or c == "":
            return []
        if isinstance(c, str):
            out = [Message(role, c)]
        elif isinstance(c, (dict, list)):
            items = c if isinstance(c, list) else [c]
            parts = [{"text": p} if isinstance(p, str) else p for p in items]
            out = [x for x in self.parts.parts(role, parts, f"{path}/{key}") if self.first_time_shown(x)]
        else:
            self.problem(f"expected text or an array of parts, found {json_kind(c)}; not shown", line, f"{path}/{key}")
            return []
        for x in out:
            x.extra = {**(x.extra or {}), **(extra or {})} or None
        return out

    def first_time_shown(self, x: Message) -> bool:
        """Whether a converted part is new (tool calls and results are shown once per call id)."""
        if x.role == "tool_use" and x.tool_calls:
            x.tool_calls = [c for c in x.tool_calls if not (c.get("id") and c["id"] in self.calls_seen)]
            self.calls_seen.update(c["id"] for c in x.tool_calls if c.get("id"))
            return bool(x.tool_calls)
        if x.role == "tool_result" and x.tool_use_id:
            if x.tool_use_id in self.results_seen:
                return False
            self.results_seen.add(x.tool_use_id)
        return True

    def model_message(self, m: dict, line: int | None, path: str, ts: int | None, extra: dict | None) -> None:
        msgs = self.trace.messages
        start = len(msgs)
        msgs.extend(self.thoughts(m.get("thoughts"), line, path, extra))
        msgs.extend(self.content("assistant", m, line, path, extra))
        results = self.tool_calls(m.get("toolCalls"), line, path, extra)
        usage = self.usage(m.get("tokens"), line, path + "/tokens")
        model = as_text(m.get("model"))
        if model and model not in self.models:
            self.models.append(model)
        if len(msgs) == start and usage is not None:
            msgs.append(Message("assistant", "", extra=extra))  # keeps the accounting of an empty response
        if len(msgs) > start:
            self.trace.turns[start] = Turn(model=model, timestamp=ts, usage=usage)
        msgs.extend(results)

    def thoughts(self, thoughts, line: int | None, path: str, extra: dict | None) -> list[Message]:
        if thoughts is None:
            return []
        if not isinstance(thoughts, list):
            self.problem(f"expected an array of thoughts, found {json_kind(thoughts)}; not shown", line, path + "/thoughts")
            return []
        out = []
        for i, t in enumerate(thoughts):
            if isinstance(t, str):
                text = t
            elif isinstance(t, dict):
                text = "\n".join(s for s in (as_text(t.get("subject")), as_text(t.get("description"))) if s)
            else:
                self.problem(f"expected a thought {{subject, description}}, found {json_kind(t)}; not shown",
                             line, f"{path}/thoughts/{i}")
                continue
            if text:
                out.append(Message("thinking", text, extra=extra))
        return out

    def tool_calls(self, calls, line: int | None, path: str, extra: dict | None) -> list[Message]:
        """Adds the tool_use message of the calls; returns the results (they follow the turn)."""
        if calls is None:
            return []
        if not isinstance(calls, list):
            self.problem(f"expected an array of tool calls, found {json_kind(calls)}; not shown", line,
                         path + "/toolCalls")
            return []
        uses, results = [], []
        for i, call in enumerate(calls):
            where = f"{path}/toolCalls/{i}"
            if not isinstance(call, dict):
                self.problem(f"expected a tool call object, found {json_kind(call)}; skipped", line, where)
                continue
            cid = as_text(call.get("id")) or f"{where}"
            name = as_text(call.get("name"))
            if name is None:
                self.problem(f"expected the tool's name (a string), found {json_kind(call.get('name'))}", line,
                             where + "/name")
            args = call.get("args")
            if cid not in self.calls_seen:
                self.calls_seen.add(cid)
                uses.append({"name": name, "arguments": args if args is not None else {}, "id": cid})
            result = self.result(call, cid, name, line, where, extra)
            if result is not None and cid not in self.results_seen:
                self.results_seen.add(cid)
                results.append(result)
        if uses:
            self.trace.messages.append(Message("tool_use", "", tool_calls=uses, extra=extra))
        return results

    def result(self, call: dict, cid: str, name: str | None, line: int | None, where: str,
               extra: dict | None) -> Message | None:
        raw, display, status = call.get("result"), call.get("resultDisplay"), call.get("status")
        texts, images, failed = [], [], status == "error"
        if isinstance(raw, (dict, str)):
            raw = [raw]
        if isinstance(raw, list):
            for i, p in enumerate(raw):
                if isinstance(p, dict) and "functionResponse" in p:
                    fr = p["functionResponse"]
                    if not isinstance(fr, dict):
                        self.problem(f"expected a functionResponse object, found {json_kind(fr)}; not shown", line,
                                     f"{where}/result/{i}/functionResponse")
                        continue
                    text, err = _response_text(fr.get("response"))
                    texts.append(text)
                    failed = failed or err
                    continue
                for x in self.parts.parts("tool_result", [{"text": p} if isinstance(p, str) else p], f"{where}/result/{i}"):
                    texts.append(x.content)
                    images.extend(x.images or ())
        elif raw is not None:
            self.problem(f"expected the result as Gemini parts, found {json_kind(raw)}; not shown", line,
                         where + "/result")
        diff = self.diff(display, cid, name, line, where)
        if not any(t.strip() for t in texts) and isinstance(display, str):
            texts = [display]
        if diff:
            texts.append(diff)
        if raw is None and not texts:
            return None  # not run yet (or its result was never recorded)
        return Message("tool_result", "\n\n".join(t for t in texts if t), tool_use_id=cid, is_error=failed,
                       extra={**(extra or {}), "name": name}, images=images or None)

    def diff(self, display, cid: str, name: str | None, line: int | None, where: str) -> str | None:
        """A file diff in `resultDisplay` becomes a patch artifact; returns its text."""
        if not isinstance(display, dict) or "fileDiff" not in display:
            return None
        text = display.get("fileDiff")
        if not isinstance(text, str):
            self.problem(f"expected the file diff as text, found {json_kind(text)}; not shown", line,
                         where + "/resultDisplay/fileDiff")
            return None
        title = as_text(display.get("filePath")) or as_text(display.get("fileName"))
        details = {"tool": name, "call_id": cid}
        if isinstance(display.get("isNewFile"), bool):
            details["new_file"] = display["isNewFile"]
        self.trace.artifacts.append(Artifact("patch", title, text, "unified-diff", details))
        return text

    def usage(self, tokens, line: int | None, path: str) -> dict | None:
        if tokens is None:
            return None
        if not isinstance(tokens, dict):
            self.problem(f"expected token counts {{input, output, cached, thoughts, tool}}, found {json_kind(tokens)}; "
                         "the turn has no usage", line, path)
            return None
        counts = {}
        for k in GEMINI_USAGE:
            v = tokens.get(k)
            if v is None:
                v = 0
            elif isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
                self.problem(f"expected a token count (a number of 0 or more), found {json_text(v)[:40]}; read as 0",
                             line, f"{path}/{k}")
                v = 0
            counts[k] = v
        return usage_mod.from_gemini({GEMINI_USAGE[k]: v for k, v in counts.items()})


def _response_text(resp) -> tuple[str, bool]:
    """A functionResponse's `response` as text, and whether it reports an error."""
    if isinstance(resp, str):
        return resp, False
    r = as_dict(resp)
    if "error" in r:
        err = r["error"]
        return (err if isinstance(err, str) else json_text(err)), True
    if set(r) == {"output"} and isinstance(r["output"], str):
        return r["output"], False
    return json_text(resp), False


FORMAT = Format(
    name=NAME, title="Gemini CLI session",
    description="Gemini CLI (and Qwen Code) chat recordings: the whole-file JSON session or the JSON-lines log "
                "with $set / $rewindTo records; messages with thoughts, tool calls and results, file diffs, "
                "token counts",
    sniff=sniff, parse=parse, patterns=("session-*.json", "session-*.jsonl"), priority=30,
)
