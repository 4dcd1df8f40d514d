"""Codex CLI sessions: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl` (also zstandard-compressed
as `.jsonl.zst`) and the event stream of `codex exec --json`. One trace per file.

A rollout line is an envelope `{timestamp, type, payload}`:
- `session_meta`: the thread (id, cwd, cli version, provider, git, tools); a sub-agent names its
  parent in `source.subagent.thread_spawn.parent_thread_id` (or `parent_thread_id`,
  `forked_from_id`), kept as `meta["parent_session"]`; the trace's `ref` is its own thread id and
  its `parent` that thread with the call that spawned it (see below);
- `turn_context`: the model and reasoning effort of the turns that follow;
- `response_item`: what the model saw and said: messages, reasoning (its summary shown as
  thinking), function and custom tool calls, paired with their outputs by `call_id`; an
  `apply_patch` call also becomes a patch artifact (the diff Codex reported in `patch_apply_end`,
  else the call's patch turned into unified-diff form without line numbers);
- `event_msg`: `token_count` holds running totals for the thread, so a model turn's usage is the
  difference from the previous total (OpenAI semantics: input includes the cached input, output
  the reasoning); a total smaller than the one before starts the count again. Chat events
  (`user_message`, `agent_message`, `agent_reasoning`, `exec_command_end`, ...) repeat the
  response items and are read only from files that have none;
- `compacted`: the context was summarised; shown as a system message.
Rollouts written before the envelope hold the same items bare (a first line `{id, timestamp,
instructions}`, `record_type` state lines). `codex exec --json` prints `thread.started`,
`item.completed` and `turn.completed` (running usage totals, read as token_count totals); older
versions printed `{id, msg}` events, read as event_msg payloads.

A forked or sub-agent rollout starts with a copy of its parent's history: the parent's
`session_meta` (another id than the file's own), then its records, written in one burst at
the moment of the fork. Records within COPY_WINDOW_MS of that copied `session_meta` are the
parent's: they are counted in `meta["copied_from_parent"]` and not read again (the parent's
trace has them), and the copied running total becomes the baseline of the sub-agent's usage.
The copy ends while the parent runs the call that spawned the sub-agent: the one copied call
without its output names that call.
"""
from __future__ import annotations

import io
import re

import orjson
import zstandard

from parsers.io.guard import record_guard
from parsers.io.records import as_dict, as_number, as_text, first_char, iter_records, looks_binary
from parsers.io.source import MAX_MEMBER_BYTES, Source
from parsers.io.times import read_time
from parsers.model import Artifact, Format, Message, ParsedTrace, ParseResult, Problem, Turn, diff_name, json_kind
from parsers.providers.messages import json_text
from parsers.providers.openai import OpenAIMessages

NAME = "codex"
WHO = "the Codex reader"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ENVELOPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
# Response items of the Responses API as Codex stores them, bare in the oldest rollouts.
ITEM_TYPES = frozenset(("message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
                        "custom_tool_call_output", "local_shell_call", "web_search_call", "tool_search_call",
                        "tool_search_output", "image_generation_call", "agent_message", "ghost_snapshot",
                        "tool_call", "tool_result"))
CALL_ITEMS = frozenset(("function_call", "custom_tool_call", "local_shell_call", "tool_search_call", "web_search_call",
                        "image_generation_call", "tool_call"))
OUTPUT_ITEMS = frozenset(("function_call_output", "custom_tool_call_output", "tool_search_output", "tool_result"))
EXEC_EVENTS = re.compile(r"(thread|turn|item)\.[a-z_.]+")
COPY_WINDOW_MS = 1000
# What Codex itself puts in the conversation as the user's: the project's AGENTS.md, the user's
# standing instructions, the environment (folder, shell, sandbox).
INJECTED = ("# AGENTS.md instructions", "<user_instructions>", "<environment_context>", "<INSTRUCTIONS>")
# Running token totals: our name -> Codex's spellings of it (the last two from early fixtures).
TOTAL_KEYS = {"input": ("input_tokens", "prompt"), "cached": ("cached_input_tokens",),
              "cache_write": ("cache_write_input_tokens",), "output": ("output_tokens", "completion"),
              "reasoning": ("reasoning_output_tokens",)}
_HEAD_RE = re.compile(rb'\A\s*\{\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"type"\s*:\s*"(session_meta|response_item|'
                      rb'event_msg|turn_context|compacted)"')


# -- detection ------------------------------------------------------------------------
def sniff(src: Source) -> str | None:
    head = src.head
    if head.startswith(ZSTD_MAGIC):
        try:
            head = zstandard.ZstdDecompressor().decompressobj().decompress(head)
        except zstandard.ZstdError:
            head = b""
        if not head.strip():  # damaged from the start: a rollout by its name is read to say so
            named = src.basename.lower().startswith("rollout-")
            return None if named else "a zstandard stream whose start does not decompress"
    elif looks_binary(head):
        return "binary content"
    if first_char(head) != "{":
        return "does not start with a JSON object"
    if _HEAD_RE.match(head):
        return None
    line = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    try:
        rec = orjson.loads(line)
    except orjson.JSONDecodeError:
        return "the first line is not a JSON object Codex writes"
    if not isinstance(rec, dict):
        return "the first line is not a JSON object"
    kind = rec.get("type")
    if kind in ENVELOPES and isinstance(rec.get("payload"), dict):
        return None
    if isinstance(kind, str) and EXEC_EVENTS.fullmatch(kind) and ("thread_id" in rec or kind == "thread.started"):
        return None
    if isinstance(rec.get("msg"), dict) and "id" in rec and isinstance(rec["msg"].get("type"), str):
        return None  # the {id, msg} events of older `codex exec --json`
    if "id" in rec and "timestamp" in rec and "instructions" in rec and "type" not in rec:
        return None  # the first line of a rollout written before the envelope
    return 'no Codex record (`{"timestamp", "type": "session_meta"|..., "payload"}`) on the first line'


# -- reading --------------------------------------------------------------------------
def parse(src: Source) -> ParseResult:
    problems: list[Problem] = []
    if src.head.startswith(ZSTD_MAGIC):
        src = _decompressed(src, problems)
    records = []
    try:
        for line, _, value in iter_records(src, problems):
            records.append((line, value))
    except (zstandard.ZstdError, OSError) as e:
        problems.append(Problem(src.name, f"the compressed stream is damaged ({e}); the {len(records)} lines "
                                          "before it were read"))
    reader = _Reader(src.name, problems)
    reader.read(records)
    if not reader.has_content():
        if records:
            problems.append(Problem(src.name, 'no Codex record in the file (expected lines {"timestamp", "type": '
                                              '"session_meta" | "response_item" | "event_msg" | ..., "payload"}, '
                                              'or `codex exec --json` events); nothing loaded'))
        return ParseResult(format=NAME, traces=[], problems=problems, records=len(records))
    return ParseResult(format=NAME, traces=[reader.trace], records=len(records))  # problems ride on the trace


def _decompressed(src: Source, problems: list[Problem]) -> Source:
    """The source as the contents of its zstandard frames."""
    return Source(src.name, src.size, lambda: io.BufferedReader(_Zstd(src.open(), src.name, problems)))


class _Zstd(io.RawIOBase):
    """Decompresses a zstandard stream of one or more frames as it is read, at most
    MAX_MEMBER_BYTES of it, in small steps (a bomb cannot fill memory); a stream that is cut off
    in a frame, or inflates past the limit, is a problem and ends there."""

    STEP = 4096  # compressed bytes per step: at most a few hundred MB out of one, even for a bomb

    def __init__(self, raw, name: str, problems: list[Problem]):
        self.raw, self.name, self.problems = raw, name, problems
        self.frame = zstandard.ZstdDecompressor().decompressobj()
        self.pending = b""
        self.left = MAX_MEMBER_BYTES
        self.done = False

    def readable(self):
        return True

    def readinto(self, b):
        while not self.pending and not self.done:
            chunk = self.raw.read(self.STEP)
            if not chunk:
                self.done = True
                if not self.frame.eof and self.left < MAX_MEMBER_BYTES:
                    self.problems.append(Problem(self.name, "the compressed stream is damaged: it ends in the "
                                                            "middle of a frame; the lines before the cut were read"))
                break
            out = self.frame.decompress(chunk)
            while self.frame.eof and self.frame.unused_data:  # the next frame
                rest, self.frame = self.frame.unused_data, zstandard.ZstdDecompressor().decompressobj()
                out += self.frame.decompress(rest)
            if len(out) > self.left:
                out, self.done = out[: self.left], True
                self.problems.append(Problem(self.name, f"decompressed past {MAX_MEMBER_BYTES} bytes; "
                                                        "the rest was not read"))
            self.left -= len(out)
            self.pending = out
        n = min(len(b), len(self.pending))
        b[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n

    def close(self):
        self.raw.close()
        super().close()


def _envelope(rec: dict) -> tuple[str, object, str]:
    """(kind, payload, its JSON pointer) of one record, whichever generation of Codex wrote it."""
    kind = rec.get("type")
    if "payload" in rec and kind in ENVELOPES:
        return kind, rec["payload"], "/payload"
    if isinstance(kind, str):
        if kind in ITEM_TYPES:
            return "response_item", rec, ""
        if EXEC_EVENTS.fullmatch(kind) or kind == "error":
            return "exec", rec, ""
        return "unknown", None, ""
    if isinstance(rec.get("msg"), dict):
        return "event_msg", rec["msg"], "/msg"
    if "record_type" in rec:
        return "state", None, ""
    if "id" in rec and "timestamp" in rec and ("instructions" in rec or "git" in rec):
        return "session_meta", rec, ""  # the first line of a rollout written before the envelope
    return "unknown", None, ""


class _Reader:
    """Builds one trace from a file's records, in order."""

    def __init__(self, file: str, problems: list[Problem]):
        self.file, self.problems = file, problems
        self.trace = ParsedTrace(format=NAME, messages=[], problems=problems, meta={"provider": "openai"})
        self.shape = OpenAIMessages(file, {}, problems)
        self.line: int | None = None
        self.ts: int | None = None
        self.model: str | None = None
        self.effort: str | None = None
        self.models: list[str] = []
        self.in_response = False  # the last message read was the model's, in a response not yet accounted
        self.pending: Turn | None = None  # the turn the next usage belongs to
        self.totals: dict | None = None  # the last running token totals
        self.own_id: str | None = None
        self.forked = False
        self.copy_from: int | None = None  # time of the copied parent session_meta while reading copies
        self.copy_done = False
        self.copied = 0
        self.copied_open: dict[str, None] = {}  # ids of the copied parent's calls without output
        self.unanswered: dict[str, str] = {}  # call id -> tool name, of calls without output yet
        self.patches: list[dict] = []  # apply_patch calls: {"id", "name", "text", "step"}
        self.applied: dict[str, dict] = {}  # call id -> patch_apply_end payload
        self.skipped: dict[str, int] = {}
        self.from_items = False
        self.first_prompt: str | None = None
        self.last_ts: int | None = None

    # -- the pass over the file ------------------------------------------------------
    def read(self, records: list) -> None:
        envelopes = []
        for line, rec in records:
            if not isinstance(rec, dict):
                self.problems.append(Problem(self.file, f"expected a JSON object, found {json_kind(rec)}; line skipped",
                                             line=line))
                continue
            kind, payload, base = _envelope(rec)
            envelopes.append((line, rec, kind, payload, base))
            self.from_items = self.from_items or kind == "response_item"
        for line, rec, kind, payload, base in envelopes:
            self.line = line
            with record_guard(self.problems, self.file, WHO, line=line):
                self.record(rec, kind, payload, base)
        self.finish()

    def record(self, rec: dict, kind: str, payload, base: str) -> None:
        if kind == "unknown" and "type" in rec and not isinstance(rec["type"], str):
            self.problem("/type", f'expected "type" naming the kind of record, found {json_kind(rec["type"])}; '
                                  "line skipped")
            return
        if kind in ("unknown", "state"):
            self.skip(rec.get("type") or ("state" if kind == "state" else "untyped"))
            return
        if not isinstance(payload, dict):
            self.problem(base, f"expected an object, found {json_kind(payload)}; line skipped")
            return
        if kind in ("response_item", "event_msg", "exec") and not isinstance(payload.get("type"), str):
            self.problem(base + "/type", f'expected "type" naming the kind of {kind}, found '
                                         f'{json_kind(payload.get("type"))}; line skipped')
            return
        self.ts = read_time(rec.get("timestamp"), self.problems, self.file, "/timestamp",
                            "the line is shown without a time", line=self.line) if "timestamp" in rec else None
        if self.copying(kind, payload):
            return
        if self.ts is not None:
            self.last_ts = self.ts
            if self.trace.started_at is None:
                self.trace.started_at = self.ts
        if kind == "session_meta":
            self.session_meta(payload, base)
        elif kind == "turn_context":
            self.model = as_text(payload.get("model")) or self.model
            self.effort = as_text(payload.get("effort")) or self.effort
        elif kind == "response_item":
            self.item(payload, base)
        elif kind == "event_msg":
            self.event(payload, base)
        elif kind == "compacted":
            self.compacted(payload, base)
        else:
            self.exec_event(payload)

    def copying(self, kind: str, payload: dict) -> bool:
        """Whether this record is part of the parent's history a fork copied (then counted only)."""
        if self.copy_done:
            return False
        if self.copy_from is None:
            if kind == "session_meta" and self.forked and self.own_id is not None and \
                    _text_id(payload.get("id")) not in (None, self.own_id) and self.ts is not None:
                self.copy_from = self.ts
                self.copied += 1
                return True
            return False
        if self.ts is not None and 0 <= self.ts - self.copy_from <= COPY_WINDOW_MS:
            self.copied += 1
            if kind == "response_item":
                self.copied_call(payload)
            if kind == "event_msg" and payload.get("type") == "token_count":
                total = self.running_total(as_dict(payload.get("info")).get("total_token_usage"), "")
                self.totals = total or self.totals  # the sub-agent's totals go on from the parent's
            return True
        self.copy_done = True
        return False

    def copied_call(self, p: dict) -> None:
        """Follows the copied parent's calls: the parent forked this thread while running the
        call that spawned it, so that call is the one left without output in the copy."""
        cid = _text_id(p.get("call_id"))
        if cid is None:
            return
        if p.get("type") in CALL_ITEMS:
            self.copied_open[cid] = None
        elif p.get("type") in OUTPUT_ITEMS:
            self.copied_open.pop(cid, None)

    # -- session ---------------------------------------------------------------------
    def session_meta(self, p: dict, base: str) -> None:
        sid = _text_id(p.get("id")) or _text_id(p.get("session_id"))
        if sid is None and p.get("id") is not None:
            self.problem(base + "/id", f"expected the thread id as a string, found {json_kind(p['id'])}")
        meta = self.trace.meta
        if self.own_id is not None:
            if sid != self.own_id:
                self.skip("session_meta of another thread")
            return
        self.own_id = sid
        if sid:
            meta["session_id"] = sid
        for key in ("cwd", "originator", "cli_version", "model_provider"):
            if as_text(p.get(key)):
                meta[key] = p[key]
        if isinstance(p.get("git"), dict):
            meta["git"] = p["git"]
        if as_text(p.get("model_provider")):
            meta["provider"] = p["model_provider"]
        started = read_time(p.get("timestamp"), self.problems, self.file, base + "/timestamp",
                            "the session start is taken from the line", line=self.line)
        if started is not None:
            self.trace.started_at = started
        source = p.get("source")
        sub = as_dict(source).get("subagent")
        spawn = as_dict(as_dict(sub).get("thread_spawn"))
        parent = _text_id(spawn.get("parent_thread_id")) or _text_id(p.get("parent_thread_id"))
        forked_from = _text_id(p.get("forked_from_id"))
        if sub is not None:
            meta["subagent"] = sub
        if parent or forked_from:
            meta["parent_session"] = parent or forked_from
        if forked_from and forked_from != meta["parent_session"]:
            meta["forked_from"] = forked_from
        self.forked = bool(sub is not None or parent or forked_from)
        tools = p.get("dynamic_tools")
        tools = tools if isinstance(tools, list) else as_dict(tools).get("tools")
        for t in tools if isinstance(tools, list) else ():
            if isinstance(t, dict) and as_text(t.get("name")):
                self.trace.tools.append({"name": t["name"], "description": as_text(t.get("description")),
                                         "parameters": t.get("inputSchema") or t.get("parameters")})

    # -- messages --------------------------------------------------------------------
    def add(self, msg: Message, model_turn: bool) -> None:
        msgs = self.trace.messages
        extra = dict(msg.extra or {})
        if self.ts is not None:
            extra["timestamp"] = self.ts
        if model_turn and not self.in_response:
            turn = Turn(model=self.model, timestamp=self.ts)
            self.trace.turns[len(msgs)] = turn
            self.pending = turn
            if self.model and self.model not in self.models:
                self.models.append(self.model)
            if self.effort:
                extra["effort"] = self.effort
        self.in_response = model_turn
        msg.extra = extra or None
        msgs.append(msg)

    def item(self, p: dict, base: str) -> None:
        typ = p.get("type")
        if typ == "message":
            role = p.get("role")
            if role not in ("user", "assistant", "developer", "system"):
                self.problem(base + "/role", f"expected user, assistant, developer or system, found {role!r}; "
                                             "read as user")
                role = "user"
            role = "system" if role == "developer" else role
            msg = self.parts(role, p.get("content"), base + "/content")
            if role == "user" and msg.content.lstrip().startswith(INJECTED):
                msg.extra = {**(msg.extra or {}), "injected": True}  # hidden until asked for, as the harness's
            elif role == "user" and self.first_prompt is None and not msg.content.lstrip().startswith(("<", "#")):
                self.first_prompt = msg.content
            self.add(msg, role == "assistant")
        elif typ == "reasoning":
            text = "\n\n".join(_texts(p.get("summary")) or _texts(p.get("content")))
            if text:
                self.add(Message("thinking", text), True)
        elif typ in CALL_ITEMS:
            self.tool_call(p, base, typ)
        elif typ in OUTPUT_ITEMS:
            self.tool_output(p, base)
        elif typ == "agent_message":
            msg = self.parts("user", p.get("content"), base + "/content")
            msg.extra = {k: p[k] for k in ("author", "recipient") if as_text(p.get(k))} or None
            self.add(msg, False)
        else:
            self.skip(f"response_item {typ}")

    def parts(self, role: str, content, path: str) -> Message:
        """One message of a content array's parts (text parts joined, images kept)."""
        self.shape.where = {"line": self.line}
        if isinstance(content, list):  # encrypted parts are not for reading
            content = [c for c in content if not (isinstance(c, dict) and c.get("type") == "encrypted_content")]
        got = self.shape.content(role, content, path)
        images = [im for m in got for im in m.images or ()]
        return Message(role, "\n".join(m.content for m in got if m.content), images=images or None)

    def tool_call(self, p: dict, base: str, typ: str) -> None:
        name = p.get("name")
        if typ == "tool_call":  # a shape some session readers' fixtures use: {function: {name}, arguments}
            name = as_dict(p.get("function")).get("name")
        if name is None:
            name = typ.removesuffix("_call")
        if not isinstance(name, str):
            self.problem(base + "/name", f"expected the tool's name as a string, found {json_kind(name)}")
            name = json_text(name)
        ns = as_text(p.get("namespace"))
        cid = self.call_id(p, base)
        if "arguments" in p and typ in ("function_call", "tool_call"):
            self.shape.where = {"line": self.line}
            args = self.shape.parse_arguments(p.get("arguments"), base + "/arguments", name)
        elif typ == "custom_tool_call":
            args = p.get("input")
            if not isinstance(args, str):
                self.problem(base + "/input", f"expected the tool's input as a string, found {json_kind(args)}")
                args = json_text(args)
        else:
            args = {k: v for k, v in p.items() if k in ("action", "arguments", "query", "revised_prompt")}
        if cid is None:
            cid = f"line-{self.line}"
        self.unanswered[cid] = name
        call = {"name": f"{ns}.{name}" if ns else name, "arguments": args, "id": cid}
        self.add(Message("tool_use", "", tool_calls=[call]), True)
        text = _patch_text(name, args)
        if text is not None:
            self.patches.append({"id": cid, "name": name, "text": text, "step": len(self.trace.messages) - 1})

    def tool_output(self, p: dict, base: str) -> None:
        cid = self.call_id(p, base)
        name = as_text(p.get("name"))
        if cid is None:  # no id: the latest call of that name still waiting
            cid = next((c for c, n in reversed(self.unanswered.items()) if name is None or n == name), None)
        self.unanswered.pop(cid, None)
        out = p.get("output", p.get("result", p.get("tools")))
        text, is_error, images = self.output(out, base + "/output")
        if p.get("success") is False or as_dict(out).get("success") is False:
            is_error = True
        msg = Message("tool_result", text, tool_use_id=cid, is_error=is_error, images=images)
        if name:
            msg.extra = {"name": name}
        self.add(msg, False)

    def output(self, out, path: str) -> tuple[str, bool, list | None]:
        """A tool output's text, whether it failed, and its images."""
        if isinstance(out, str):
            try:
                parsed = orjson.loads(out) if out.startswith("{") else None
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):  # {output, metadata}
                code = as_dict(parsed.get("metadata")).get("exit_code")
                return parsed["output"], as_number(code) not in (None, 0), None
            return out, False, None
        if isinstance(out, dict) and "content" in out and "type" not in out:  # {content, success}
            return self.output(out["content"], path + "/content")
        if isinstance(out, (list, dict)):
            msg = self.parts("tool_result", out if isinstance(out, list) else [out], path)
            return msg.content, False, msg.images
        if out is None:
            return "", False, None
        self.problem(path, f"expected the output as text or content parts, found {json_kind(out)}")
        return json_text(out), False, None

    def call_id(self, p: dict, base: str) -> str | None:
        cid = p.get("call_id", p.get("id") if p.get("type") in ("web_search_call", "image_generation_call") else None)
        if cid is None or isinstance(cid, str):
            return cid or None
        if isinstance(cid, int) and not isinstance(cid, bool):
            return str(cid)
        self.problem(base + "/call_id", f"expected the call id as a string, found {json_kind(cid)}; "
                                        "read as if it had none")
        return None

    def compacted(self, p: dict, base: str) -> None:
        summary = p.get("message")
        if summary is not None and not isinstance(summary, str):
            self.problem(base + "/message", f"expected the summary as a string, found {json_kind(summary)}")
            summary = json_text(summary)
        history = p.get("replacement_history")
        kept = len(history) if isinstance(history, list) else 0
        # The marker the timeline draws where the context was compacted, and the summary that
        # replaced it (folded), as for Claude Code.
        self.add(Message("system", f"Context compacted ({kept} item{'s' * (kept != 1)} kept)",
                         extra={"compaction": {"replacement_items": kept}}), False)
        if summary:
            self.add(Message("system", summary, extra={"compaction_summary": True}), False)

    # -- events ----------------------------------------------------------------------
    def event(self, p: dict, base: str) -> None:
        typ = p.get("type")
        if typ == "token_count":
            info = p.get("info", p if "input_tokens" in p else None)  # before 0.40 the counts sat in the event
            if info is None:
                return  # rate limits only
            if not isinstance(info, dict):
                self.problem(base + "/info", f"expected an object of token totals, found {json_kind(info)}")
                return
            if "total_token_usage" in info:
                self.usage(self.running_total(info["total_token_usage"], base + "/info/total_token_usage"))
            elif "last_token_usage" in info:
                last = self.running_total(info["last_token_usage"], base + "/info/last_token_usage")
                if last is not None:
                    prev = self.totals or dict.fromkeys(TOTAL_KEYS, 0)
                    self.usage({k: prev[k] + last[k] for k in TOTAL_KEYS})
            else:
                self.usage(self.running_total(info, base + "/info"))
        elif typ in ("turn.completed", "turn_completed"):
            if "usage" in p:
                self.usage(self.running_total(p["usage"], base + "/usage"))
        elif typ == "patch_apply_end":
            cid = self.call_id(p, base)
            if cid is not None:
                self.applied[cid] = p
        elif typ == "task_started":
            self.in_response = False
        elif typ in ("turn_aborted", "error", "turn.failed") or (typ == "task_complete" and p.get("error")):
            err = as_dict(p.get("error")).get("message") or p.get("message") or p.get("reason") or typ
            self.add(Message("system", f"[{typ}] {err if isinstance(err, str) else json_text(err)}", is_error=True),
                     False)
        elif not self.from_items and typ in ("user_message", "agent_message", "agent_reasoning"):
            text = p.get("message", p.get("text"))
            role = {"user_message": "user", "agent_message": "assistant", "agent_reasoning": "thinking"}[typ]
            if not isinstance(text, str):
                self.problem(base + "/message", f"expected the message as a string, found {json_kind(text)}")
                text = json_text(text)
            if role == "user" and self.first_prompt is None:
                self.first_prompt = text
            self.add(Message(role, text), role != "user")
        elif typ == "user_message" and self.first_prompt is None and isinstance(p.get("message"), str):
            self.first_prompt = p["message"]
        elif not self.from_items and typ in ("exec_command_end", "mcp_tool_call_end"):
            self.event_tool(p, base, typ)
        else:
            self.skip(f"event_msg {typ}")

    def event_tool(self, p: dict, base: str, typ: str) -> None:
        """A tool run reported by an event (files without response items): the call and its result."""
        cid = self.call_id(p, base) or f"line-{self.line}"
        if typ == "exec_command_end":
            name, args = "exec_command", {k: p[k] for k in ("command", "cwd") if k in p}
            text = p.get("aggregated_output") or "\n".join(s for s in (p.get("stdout"), p.get("stderr"))
                                                          if isinstance(s, str) and s)
            failed = as_number(p.get("exit_code")) not in (None, 0)
        else:
            inv = as_dict(p.get("invocation"))
            name, args = f"{inv.get('server')}.{inv.get('tool')}", inv.get("arguments")
            result = as_dict(p.get("result"))  # {"Ok": {content, isError}} or {"Err": message}
            ok = as_dict(result.get("Ok"))
            text = json_text(ok.get("content", result.get("Err", result)))
            failed = "Err" in result or bool(ok.get("isError"))
        self.add(Message("tool_use", "", tool_calls=[{"name": name, "arguments": args, "id": cid}]), True)
        self.add(Message("tool_result", text if isinstance(text, str) else json_text(text), tool_use_id=cid,
                         is_error=failed), False)

    def exec_event(self, p: dict) -> None:
        """A `codex exec --json` event."""
        typ = p.get("type")
        if typ == "thread.started":
            if _text_id(p.get("thread_id")):
                self.own_id = self.trace.meta["session_id"] = _text_id(p["thread_id"])
        elif typ in ("turn.completed", "turn.failed", "error"):
            self.event(p, "")
        elif typ == "item.completed":
            self.exec_item(p.get("item"))
        else:
            self.skip(str(typ))

    def exec_item(self, item) -> None:
        if not isinstance(item, dict):
            self.problem("/item", f"expected an item object, found {json_kind(item)}; skipped")
            return
        typ = item.get("type")
        if not isinstance(typ, str):
            self.problem("/item/type", f"expected the item's type as a string, found {json_kind(typ)}; skipped")
            return
        text = item.get("text")
        cid = _text_id(item.get("id")) or f"line-{self.line}"
        if typ in ("agent_message", "reasoning"):
            self.add(Message("assistant" if typ == "agent_message" else "thinking",
                             text if isinstance(text, str) else json_text(text)), True)
        elif typ == "error":
            self.add(Message("system", f"[error] {item.get('message')}", is_error=True), False)
        elif typ in ("command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list"):
            name = f"{item.get('server')}.{item.get('tool')}" if typ == "mcp_tool_call" else typ
            args = {k: v for k, v in item.items() if k in ("command", "changes", "arguments", "query", "items")}
            self.add(Message("tool_use", "", tool_calls=[{"name": name, "arguments": args, "id": cid}]), True)
            if typ not in ("web_search", "todo_list"):
                out = item.get("aggregated_output", item.get("result", item.get("error", item.get("status"))))
                failed = as_number(item.get("exit_code")) not in (None, 0) or item.get("status") == "failed"
                self.add(Message("tool_result", out if isinstance(out, str) else json_text(out), tool_use_id=cid,
                                 is_error=failed), False)
        else:
            self.skip(f"item {typ}")

    # -- usage -----------------------------------------------------------------------
    def running_total(self, u, path: str) -> dict | None:
        """Codex's running totals as {input, cached, cache_write, output, reasoning}; None when unreadable."""
        if not isinstance(u, dict):
            if path:
                self.problem(path, f"expected an object of token counts, found {json_kind(u)}")
            return None
        out = {}
        for kind, keys in TOTAL_KEYS.items():
            key = next((k for k in keys if k in u), None)
            v = u.get(key) if key else 0
            n = as_number(v)
            if n is None or not 0 <= n <= 1e15 or n != int(n):
                if path:
                    self.problem(f"{path}/{key}", f"expected a whole number of tokens, found {v!r}; "
                                                  "the counts of this line are not used")
                return None
            out[kind] = int(n)
        return out

    def usage(self, total: dict | None) -> None:
        """A new running total: the difference from the last one is the usage of the response since."""
        if total is None:
            return
        prev = self.totals
        self.totals = total
        if prev is not None and all(total[k] >= prev[k] for k in TOTAL_KEYS):
            d = {k: total[k] - prev[k] for k in TOTAL_KEYS}
        else:
            d = dict(total)  # the first total, or a count that started again
        if not any(d.values()):
            return  # repeated (Codex sends the same totals again with rate-limit updates)
        usage = {"input": max(d["input"] - d["cached"] - d["cache_write"], 0), "output": d["output"],
                 "cache_read": d["cached"], "cache_write": d["cache_write"], "reasoning": d["reasoning"]}
        if self.pending is None or self.pending.usage is not None:
            self.add(Message("assistant", ""), True)  # a response that left no item: keep its accounting
        self.pending.usage = usage
        self.in_response = False

    # -- the end ---------------------------------------------------------------------
    def finish(self) -> None:
        t = self.trace
        t.models = self.models or None
        if self.first_prompt:
            first = self.first_prompt.strip().split("\n", 1)[0]
            t.title = t.task = first[:200] or None
        t.ended_at = self.last_ts if self.last_ts is not None and t.started_at is not None and \
            self.last_ts >= t.started_at else None
        if t.ended_at is not None:
            t.duration_ms = float(t.ended_at - t.started_at)
        if self.copied:
            t.meta["copied_from_parent"] = {"records": self.copied, "thread": t.meta.get("parent_session")}
        t.ref = t.session = self.own_id
        if t.meta.get("parent_session"):
            # The spawning call, when the copy shows which one it was (one call left running).
            spawn = next(iter(self.copied_open)) if len(self.copied_open) == 1 else None
            t.parent = (t.meta["parent_session"], spawn)
        if self.skipped:
            t.meta["skipped_records"] = dict(sorted(self.skipped.items()))
        for patch in self.patches:
            t.artifacts.append(self.patch_artifact(patch))

    def patch_artifact(self, patch: dict) -> Artifact:
        applied = self.applied.get(patch["id"])
        changes = as_dict(applied.get("changes")) if applied else {}
        reported = [_file_diff(path, c) for path, c in changes.items()]
        if reported and None not in reported:  # the diff Codex applied, with its line numbers
            content, files = "".join(reported), list(changes)
        else:
            content, files = apply_patch_to_diff(patch["text"])
        # `tool_use_id` names the call: the timeline shows the diff in the call's place.
        details = {"tool": patch["name"], "call_id": patch["id"], "tool_use_id": patch["id"], "step": patch["step"],
                   "files": files}
        if applied is not None and isinstance(applied.get("success"), bool):
            details["applied"] = applied["success"]
        return Artifact("patch", f"{patch['name']}: {', '.join(files) or 'no files'}", content, "unified-diff", details)

    def has_content(self) -> bool:
        return bool(self.trace.messages) or self.own_id is not None

    def skip(self, what: str) -> None:
        self.skipped[what] = self.skipped.get(what, 0) + 1

    def problem(self, path: str, message: str) -> None:
        self.problems.append(Problem(self.file, message, line=self.line, path=path))


def _text_id(v) -> str | None:
    if isinstance(v, str) and v:
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return None


def _texts(parts) -> list[str]:
    """The texts of reasoning summary or content parts."""
    if isinstance(parts, str):
        return [parts] if parts else []
    if not isinstance(parts, list):
        return []
    return [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str) and p["text"]]


# -- apply_patch ----------------------------------------------------------------------
def _patch_text(name: str, args) -> str | None:
    """The apply_patch text of a call: the custom tool's input, or `shell ["apply_patch", text]`."""
    if name == "apply_patch":
        if isinstance(args, dict):
            args = args.get("input") or args.get("patch")
        return args if isinstance(args, str) and "*** Begin Patch" in args else None
    cmd = args.get("command") if isinstance(args, dict) else None
    if isinstance(cmd, list) and len(cmd) == 2 and cmd[0] == "apply_patch" and isinstance(cmd[1], str):
        return cmd[1]
    return None


def _file_diff(path: str, change) -> str | None:
    """One file of a patch Codex applied (`update` with its hunks, `add` or `delete` with the
    file's content) as a unified diff; None for a change of another shape."""
    change = as_dict(change)
    kind, body, content = change.get("type"), change.get("unified_diff"), change.get("content")
    if kind == "update" and isinstance(body, str):
        moved = as_text(change.get("move_path"))
        head = f"--- {diff_name('a', path)}\n+++ {diff_name('b', moved or path)}\n"
    elif kind in ("add", "delete") and isinstance(content, str):
        lines = content.splitlines()
        if kind == "add":
            head, span, sign = f"--- /dev/null\n+++ {diff_name('b', path)}\n", f"-0,0 +1,{len(lines)}", "+"
        else:
            head, span, sign = f"--- {diff_name('a', path)}\n+++ /dev/null\n", f"-1,{len(lines)} +0,0", "-"
        body = f"@@ {span} @@\n" + "".join(f"{sign}{line}\n" for line in lines)
    else:
        return None
    return head + body + ("" if body.endswith("\n") or not body else "\n")


_PATCH_FILE = re.compile(r"\*\*\* (Add|Delete|Update) File: (.+)")


def apply_patch_to_diff(text: str) -> tuple[str, list[str]]:
    """An apply_patch text (`*** Begin Patch`, `*** Update File: x`, `@@ context`, +/- lines) in
    unified-diff form, and the files it touches. The format has no line numbers, so a hunk of a
    changed file gives its line counts and context line only (`@@ -0,3 +0,4 @@ def f():`); an
    added file's single hunk is exact (`@@ -0,0 +1,5 @@`)."""
    out: list[str] = []
    files: list[str] = []
    hunk: list[str] = []
    header = kind = ""

    def flush():
        if hunk:
            old = sum(1 for h in hunk if h[:1] in (" ", "-"))
            new = sum(1 for h in hunk if h[:1] in (" ", "+"))
            span = f"-0,0 +1,{new}" if kind == "Add" else f"-0,{old} +0,{new}"
            out.append(f"@@ {span} @@{(' ' + header) if header else ''}")
            out.extend(hunk)
            hunk.clear()

    for raw in text.replace("\r\n", "\n").split("\n"):
        m = _PATCH_FILE.fullmatch(raw)
        if m:
            flush()
            kind, path = m.group(1), m.group(2).strip()
            files.append(path)
            header = ""
            out.append(f"--- {'/dev/null' if kind == 'Add' else diff_name('a', path)}")
            out.append(f"+++ {'/dev/null' if kind == 'Delete' else diff_name('b', path)}")
        elif raw.startswith("*** Move to: ") and out:
            out[-1] = "+++ " + diff_name("b", raw[len("*** Move to: "):].strip())
        elif raw.startswith("@@"):
            flush()
            header = raw[2:].strip()
        elif raw.startswith("***"):
            continue  # Begin/End Patch, End of File
        elif files and raw[:1] in (" ", "+", "-"):
            hunk.append(raw)
    flush()
    return "\n".join(out) + ("\n" if out else ""), files


FORMAT = Format(
    name=NAME, title="Codex CLI session",
    description="Codex CLI rollouts (rollout-*.jsonl, .jsonl.zst) and `codex exec --json` output: messages, "
                "reasoning summaries, tool calls with their outputs, apply_patch diffs, per-turn token usage "
                "from the running totals, compactions, sub-agent parent links",
    sniff=sniff, parse=parse, patterns=("rollout-*.jsonl", "rollout-*.jsonl.zst"), priority=25,
)
