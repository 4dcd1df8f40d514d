"""GitHub Copilot CLI sessions: `~/.copilot/session-state/<session id>/events.jsonl` (older
versions: `~/.copilot/session-state/<session id>.jsonl`). One trace per session and one per
sub-agent run.

Every line is an event `{type, data, id, timestamp, parentId}` (newer versions add `agentId`
on a sub-agent's events):
- `session.start` (sessionId, copilotVersion, producer, selectedModel, context with cwd,
  repository, branch), `session.resume`, `session.model_change` (newModel) and
  `session.shutdown` (how the session ended, premium requests, per-model metrics): what the
  trace says about the session;
- `user.message` (content, attachments), `system.message` (the system prompt),
  `assistant.reasoning`, `assistant.message` (content, reasoningText, toolRequests with
  toolCallId / name / arguments, outputTokens), `tool.execution_start` and
  `tool.execution_complete` (toolCallId, success, result.content or error.message): the
  conversation, each tool result paired with its call by `toolCallId`;
- `session.info` / `session.warning` / `session.error`, `abort`, `session.truncation` and
  `session.compaction_complete` (its summary): notices, shown as system messages;
- `subagent.started` / `completed` / `failed` (toolCallId of the call that started the
  sub-agent): the sub-agent's events carry that call's id as `data.parentToolCallId` (or the
  sub-agent's `agentId`); each sub-agent run is a trace linked to that call.
Other event types (hooks, notifications, routing, checkpoints) are counted and skipped.

Usage: each `assistant.message` is one model call. `assistant.usage` (model, inputTokens,
outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens, duration) gives a call's
usage when it was recorded (it is an event the SDK streams, not always written to the file);
it is matched to its message by `apiCallId`, else in order. `inputTokens` covers all input,
cached included, and `outputTokens` all output, reasoning included, so the normalised input is
inputTokens - cacheReadTokens - cacheWriteTokens. A call without a usage event counts the
`outputTokens` of its message only: the file holds no input counts for it. `cost` there is a
premium-request multiplier, not money, and is not read as a cost.
"""
from __future__ import annotations

import re

import orjson

from parsers.io.guard import record_guard
from parsers.io.records import as_dict, as_number, as_text, iter_records, not_a_json_object
from parsers.io.source import Source
from parsers.io.times import read_time
from parsers.model import Format, Message, ParsedTrace, ParseResult, Problem, Turn, json_kind
from parsers.model.parts import image_from_base64
from parsers.providers import usage as usage_mod
from parsers.providers.messages import MessageReader, json_text

NAME = "copilot-cli"
WHO = "the Copilot CLI reader"
SESSION_REF = "session"
TITLE_CHARS = 80
MAX_TOKENS = 10**15
ENVELOPE = "{type, data, id, timestamp, parentId}"
# A first line cut short still shows the envelope's start.
_HEAD_RE = re.compile(rb'\A\{\s*"type"\s*:\s*"[a-z_]+(\.[a-z_]+)+"\s*,\s*"data"\s*:\s*\{')
# assistant.usage field -> our usage kind (parsers.providers.usage), before removing cached input.
USAGE_FIELDS = {"inputTokens": "input", "outputTokens": "output", "cacheReadTokens": "cache_read",
                "cacheWriteTokens": "cache_write", "reasoningTokens": "reasoning"}
NOTICES = {"session.info": ("infoType", False), "session.warning": ("warningType", False),
           "session.error": ("errorType", True)}
SHUTDOWN_KEYS = ("shutdownType", "totalPremiumRequests", "totalApiDurationMs", "currentModel", "codeChanges",
                 "modelMetrics")


# -- detection ------------------------------------------------------------------------
def sniff(src: Source) -> str | None:
    head = src.head
    if (why := not_a_json_object(head)) is not None:
        return why
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    try:
        rec = orjson.loads(head.split(b"\n", 1)[0])
    except orjson.JSONDecodeError:
        return None if _HEAD_RE.match(head) else "the first line is not a JSON object"
    if isinstance(rec, dict) and isinstance(rec.get("type"), str) and all(k in rec for k in ("data", "id", "parentId")):
        return None
    return f"no Copilot CLI event {ENVELOPE} on the first line"


# -- reading --------------------------------------------------------------------------
def parse(src: Source, *options) -> ParseResult:
    problems: list[Problem] = []
    reader = _Reader(src.name, problems)
    count = 0
    for line, rec_no, rec in iter_records(src, problems):
        count += 1
        where = {"line": line} if line is not None else {"record": rec_no}
        with record_guard(problems, src.name, WHO, **where):
            reader.record(rec, where)
    traces = reader.traces()
    if not traces and count:
        problems.append(Problem(src.name, f"no Copilot CLI session event in the file (expected lines {ENVELOPE} "
                                          'such as "session.start", "user.message", "assistant.message"); '
                                          "nothing loaded"))
    if not traces:
        return ParseResult(format=NAME, traces=[], problems=problems, records=count)
    return ParseResult(format=NAME, traces=traces, records=count)  # the problems ride on the session's trace


class _Run:
    """The conversation of the session or of one sub-agent run, as its events build it."""

    def __init__(self, key, problems: list[Problem]):
        self.key = key  # None for the session; the starting call's id (or ("agent", id)) for a sub-agent
        self.trace = ParsedTrace(format=NAME, messages=[], problems=problems, meta={})
        self.model: str | None = None
        self.in_response = False  # the last message read belongs to a model call still being read
        self.turn: Turn | None = None  # the turn of the latest model call
        self.calls: dict[str, dict] = {}  # call id -> the call, of every call the run made
        self.waiting: list[tuple[str | None, Turn]] = []  # (apiCallId, turn) of calls not given an assistant.usage
        self.queued: list[tuple[str | None, dict]] = []  # assistant.usage read before its message
        self.prompt: str | None = None
        self.agent: dict = {}  # what subagent.* events say about this run
        self.last_ts: int | None = None

    def add(self, msg: Message, model_call: bool, ts: int | None) -> None:
        msgs = self.trace.messages
        if ts is not None:
            msg.extra = {**(msg.extra or {}), "timestamp": ts}
        if model_call and not self.in_response:
            self.turn = self.trace.turns[len(msgs)] = Turn(model=self.model, timestamp=ts)
        self.in_response = model_call
        msgs.append(msg)

    def ref(self) -> str:
        if self.key is None:
            return SESSION_REF
        return "agent " + (self.key if isinstance(self.key, str) else self.key[1])


class _Reader:
    """Reads a file's events in order into the session's run and its sub-agents' runs."""

    def __init__(self, file: str, problems: list[Problem]):
        self.file, self.problems = file, problems
        self.main = _Run(None, problems)
        self.subs: dict = {}  # key -> _Run
        self.agents: dict[str, str] = {}  # agentId -> the call that started it
        self.skipped: dict[str, int] = {}
        self.started = False
        self.current = ""  # the type of the event being read
        self.where: dict = {}
        self.ts: int | None = None
        self.args = MessageReader(file, {}, problems)  # reads tool-call arguments given as JSON text

    # -- one line ------------------------------------------------------------------------
    def record(self, rec, where: dict) -> None:
        self.where = self.args.where = where
        if not isinstance(rec, dict):
            self.problem("", f"expected an event object {ENVELOPE}, found {json_kind(rec)}; skipped")
            return
        typ = rec.get("type")
        if not isinstance(typ, str):
            self.problem("/type", f"expected the event type as a string, found {json_kind(typ)}; skipped")
            return
        handler, self.current = HANDLERS.get(typ), typ
        if handler is None:
            self.skipped[typ] = self.skipped.get(typ, 0) + 1
            return
        data = rec.get("data", {})
        if not isinstance(data, dict):
            self.problem("/data", f"expected the {typ} event's data as an object, found {json_kind(data)}; skipped")
            return
        self.ts = read_time(rec.get("timestamp"), self.problems, self.file, "/timestamp",
                            "the event is shown without a time", **where)
        run = self.run_of(rec, data)
        if self.ts is not None:
            run.last_ts = self.ts
            self.main.last_ts = self.ts
            if run.trace.started_at is None:
                run.trace.started_at = self.ts
        handler(self, run, data)

    def run_of(self, rec: dict, data: dict) -> _Run:
        parent, agent = as_text(data.get("parentToolCallId")), as_text(rec.get("agentId"))
        if parent and agent:
            self.agents.setdefault(agent, parent)
        key = parent or (self.agents.get(agent) if agent else None) or (("agent", agent) if agent else None)
        return self.main if key is None else self.sub(key)

    def sub(self, key) -> _Run:
        run = self.subs.get(key)
        if run is None:
            run = self.subs[key] = _Run(key, [])
        return run

    def problem(self, path: str, message: str) -> None:
        self.problems.append(Problem(self.file, message, path=path, **self.where))

    def text(self, data: dict, key: str, base: str = "/data") -> str:
        v = data.get(key)
        if v is None or isinstance(v, str):
            return v or ""
        self.problem(f"{base}/{key}", f"expected {key} as a string, found {json_kind(v)}; shown as JSON")
        return json_text(v)

    def tokens(self, data: dict, key: str) -> int | None:
        v = data.get(key)
        n = as_number(v)
        if v is None or (n is not None and 0 <= n <= MAX_TOKENS and n == int(n)):
            return None if v is None else int(n)
        self.problem(f"/data/{key}", f"expected a whole number of tokens, found {json_text(v)[:60]}; not counted")
        return None

    # -- the session ---------------------------------------------------------------------
    def session_start(self, run: _Run, data: dict) -> None:
        self.started = True
        meta = run.trace.meta
        for ours, theirs in (("session_id", "sessionId"), ("copilot_version", "copilotVersion"),
                             ("producer", "producer")):
            if as_text(data.get(theirs)):
                meta[ours] = data[theirs]
        self.context(run, data)
        run.model = as_text(data.get("selectedModel")) or run.model
        started = read_time(data.get("startTime"), self.problems, self.file, "/data/startTime",
                            "the session start is taken from the event", **self.where)
        if started is not None:
            run.trace.started_at = started

    def session_resume(self, run: _Run, data: dict) -> None:
        self.started = True
        run.trace.meta["resumed"] = run.trace.meta.get("resumed", 0) + 1
        self.context(run, data)
        run.model = as_text(data.get("selectedModel")) or run.model

    def context(self, run: _Run, data: dict) -> None:
        context = {k: v for k, v in as_dict(data.get("context")).items() if isinstance(v, str)}
        if context:
            run.trace.meta["context"] = context

    def model_change(self, run: _Run, data: dict) -> None:
        run.model = as_text(data.get("newModel")) or run.model

    def shutdown(self, run: _Run, data: dict) -> None:
        run.trace.meta["shutdown"] = {k: data[k] for k in SHUTDOWN_KEYS if k in data}
        if data.get("shutdownType") == "error":
            run.trace.outcome, run.trace.outcome_detail = "failure", "the session ended with an error"

    def turn_start(self, run: _Run, data: dict) -> None:
        run.model = as_text(data.get("model")) or run.model

    def turn_end(self, run: _Run, data: dict) -> None:
        run.in_response = False

    # -- the conversation ----------------------------------------------------------------
    def user_message(self, run: _Run, data: dict) -> None:
        text = self.text(data, "content")
        names, images = [], []
        attachments = data.get("attachments")
        for a in attachments if isinstance(attachments, list) else ():
            a = as_dict(a)
            if a.get("type") == "blob":
                images.append(image_from_base64(a.get("mimeType"), a.get("data")))
            name = as_text(a.get("displayName")) or as_text(a.get("path")) or as_text(a.get("filePath"))
            if name:
                names.append(name)
        extra = {k: v for k, v in (("attachments", names), ("source", as_text(data.get("source")))) if v}
        run.add(Message("user", _with_images(text, images), images=images or None, extra=extra or None),
                False, self.ts)
        if run.prompt is None and text.strip():
            run.prompt = text

    def system_message(self, run: _Run, data: dict) -> None:
        extra = {k: data[k] for k in ("role", "name") if as_text(data.get(k))}
        run.add(Message("system", self.text(data, "content"), extra=extra or None), False, self.ts)

    def reasoning(self, run: _Run, data: dict) -> None:
        text = self.text(data, "content")
        if text:
            run.add(Message("thinking", text), True, self.ts)

    def assistant_message(self, run: _Run, data: dict) -> None:
        run.model = as_text(data.get("model")) or run.model
        last = run.trace.messages[-1] if run.trace.messages and run.in_response else None
        thinking = as_text(data.get("reasoningText"))
        if thinking and not (last is not None and last.role == "thinking" and last.content == thinking):
            run.add(Message("thinking", thinking), True, self.ts)
        text = self.text(data, "content")
        calls = self.tool_requests(run, data.get("toolRequests"))
        if text or not calls:  # an empty answer is still a model call: kept for its accounting
            run.add(Message("assistant", text), True, self.ts)
        if calls:
            run.add(Message("tool_use", "", tool_calls=calls), True, self.ts)
        turn = run.turn
        turn.model = run.model or turn.model
        output = self.tokens(data, "outputTokens")
        if output is not None:
            turn.usage = {**usage_mod.empty(), "output": output}
        self.account(run, as_text(data.get("apiCallId")), turn)
        run.in_response = False

    def tool_requests(self, run: _Run, raw) -> list[dict]:
        path = "/data/toolRequests"
        if raw is None:
            return []
        if not isinstance(raw, list):
            self.problem(path, f"expected an array of tool requests, found {json_kind(raw)}; the calls are not shown")
            return []
        calls = []
        for i, r in enumerate(raw):
            if not isinstance(r, dict):
                self.problem(f"{path}/{i}", f"expected a tool request object, found {json_kind(r)}; skipped")
                continue
            calls.append(self.call(run, r.get("toolCallId"), r.get("name"), r.get("arguments"), f"{path}/{i}",
                                   ("toolCallId", "name")))
        return calls

    def call(self, run: _Run, cid, name, args, path: str, keys: tuple[str, str]) -> dict:
        """One tool call, noted as the run's; an id or name of the wrong type is a problem."""
        if not isinstance(name, str) or not name:
            self.problem(f"{path}/{keys[1]}", f"expected the tool's name as a string, found {json_kind(name)}")
            name = json_text(name) if name is not None else "tool"
        if not isinstance(cid, str) or not cid:
            self.problem(f"{path}/{keys[0]}", f"expected the call id as a string, found {json_kind(cid)}; "
                                              "its result cannot be paired with it")
            cid = f"line {self.where.get('line', self.where.get('record'))}: {path}"
        call = {"name": name, "arguments": self.args.parse_arguments(args, f"{path}/arguments", name), "id": cid}
        run.calls.setdefault(cid, call)
        return call

    def tool_start(self, run: _Run, data: dict) -> None:
        """A tool the model did not ask for in this run (one the user ran): shown as its call."""
        cid = as_text(data.get("toolCallId"))
        if cid is not None and cid in run.calls:
            return
        call = self.call(run, data.get("toolCallId"), data.get("toolName"), data.get("arguments"), "/data",
                         ("toolCallId", "toolName"))
        run.add(Message("tool_use", "", tool_calls=[call]), True, self.ts)
        run.in_response = False

    def tool_complete(self, run: _Run, data: dict) -> None:
        cid = data.get("toolCallId")
        if not isinstance(cid, str) or not cid:
            self.problem("/data/toolCallId", f"expected the call id as a string, found {json_kind(cid)}; the result "
                                             "is shown without its call")
            cid = None
        res, images = data.get("result"), []
        if isinstance(res, dict):
            text = self.text(res, "content", "/data/result") if "content" in res else None
            blocks = res.get("contents")
            for b in blocks if isinstance(blocks, list) else ():
                if isinstance(b, dict) and b.get("type") == "image":
                    images.append(image_from_base64(b.get("mimeType"), b.get("data")))
        elif isinstance(res, str) or res is None:
            text = res
        else:
            self.problem("/data/result", f"expected a result object {{content}}, found {json_kind(res)}; shown as JSON")
            text = json_text(res)
        err = data.get("error")
        if text is None and err is not None:
            text = as_text(as_dict(err).get("message")) or json_text(err)
        success = data.get("success")
        failed = success is False or (success is not True and err is not None)
        run.model = as_text(data.get("model")) or run.model  # the model that made the call
        name = run.calls.get(cid, {}).get("name") if cid else None
        run.add(Message("tool_result", _with_images(text or "", images), tool_use_id=cid, is_error=failed,
                        images=images or None, extra={"name": name} if name else None), False, self.ts)

    # -- notices -------------------------------------------------------------------------
    def notice(self, run: _Run, kind: str, text: str, is_error: bool = False, **more) -> None:
        extra = {"kind": kind, **{k: v for k, v in more.items() if v is not None}}
        run.add(Message("system", text, is_error=is_error or None, extra=extra), False, self.ts)

    def session_notice(self, run: _Run, data: dict) -> None:
        typ = self.current
        key, is_error = NOTICES[typ]
        label = as_text(data.get(key)) or typ.split(".")[1]
        self.notice(run, typ.split(".")[1], f"[{label}] {self.text(data, 'message')}", is_error,
                    status=as_number(data.get("statusCode")))

    def abort(self, run: _Run, data: dict) -> None:
        self.notice(run, "abort", f"[aborted] {self.text(data, 'reason')}".rstrip())

    def truncation(self, run: _Run, data: dict) -> None:
        msgs, tokens = as_number(data.get("messagesRemovedDuringTruncation")), \
            as_number(data.get("tokensRemovedDuringTruncation"))
        said = ", ".join(f"{int(n):,} {what} removed" for n, what in ((msgs, "messages"), (tokens, "tokens"))
                         if n is not None)
        self.notice(run, "truncation", "[context truncated]" + (f" {said}" if said else ""),
                    messages_removed=msgs, tokens_removed=tokens, token_limit=as_number(data.get("tokenLimit")))

    def compaction(self, run: _Run, data: dict) -> None:
        if data.get("success") is False:
            self.notice(run, "compaction", f"[compaction failed] {self.text(data, 'error')}".rstrip(), True)
            return
        summary = self.text(data, "summaryContent")
        self.notice(run, "compaction", "[context compacted]" + (f"\n\n{summary}" if summary else ""),
                    pre_tokens=as_number(data.get("preCompactionTokens")),
                    post_tokens=as_number(data.get("postCompactionTokens")),
                    usage=data.get("compactionTokensUsed") if isinstance(data.get("compactionTokensUsed"), dict)
                    else None)

    # -- sub-agents ----------------------------------------------------------------------
    def subagent(self, run: _Run, data: dict) -> None:
        cid = as_text(data.get("toolCallId"))
        if cid is None:
            self.problem("/data/toolCallId", f"expected the id of the call that started the sub-agent, found "
                                             f"{json_kind(data.get('toolCallId'))}; the event is skipped")
            return
        info = self.sub(cid).agent
        info.update({k: v for k, v in data.items() if v is not None})
        info["status"] = self.current.split(".")[1]

    # -- usage ---------------------------------------------------------------------------
    def usage(self, run: _Run, data: dict) -> None:
        counts = usage_mod.empty()
        for key, kind in USAGE_FIELDS.items():
            n = self.tokens(data, key)
            if n is None and data.get(key) is not None:
                return  # a count that cannot be true makes the whole event doubtful
            counts[kind] = n or 0
        counts["input"] = max(counts["input"] - counts["cache_read"] - counts["cache_write"], 0)
        found = {"usage": counts, "model": as_text(data.get("model")), "duration": as_number(data.get("duration")),
                 "ts": self.ts}
        api = as_text(data.get("apiCallId"))
        turn = _take(run.waiting, api)
        if turn is not None:
            _apply(turn, found)
        else:
            run.queued.append((api, found))

    def account(self, run: _Run, api: str | None, turn: Turn) -> None:
        """A model call read from its message: given the assistant.usage read before it, else waiting for one."""
        found = _take(run.queued, api)
        if found is not None:
            _apply(turn, found)
        else:
            run.waiting.append((api, turn))

    # -- the traces ------------------------------------------------------------------------
    def traces(self) -> list[ParsedTrace]:
        runs = [self.main, *(r for r in self.subs.values() if r.trace.messages or r.queued)]
        if not self.started and not any(r.trace.messages or r.queued for r in runs):
            return []
        owner = {}  # call id -> the ref of the run that made the call
        for run in runs:
            for cid in run.calls:
                owner.setdefault(cid, run.ref())
        out = []
        sid = as_text(next((r.trace.meta.get("session_id") for r in runs if r.key is None), None))
        for run in runs:
            for _, found in run.queued:  # usage of a call whose message is not in the file
                run.in_response = False
                run.add(Message("assistant", ""), True, found["ts"])
                _apply(run.turn, found)
            t = run.trace
            t.ref = run.ref()
            t.session = sid if sid is None or run.key is None else f"{sid}/{t.ref}"
            if run.key is not None:
                self.describe_sub(run, owner)
            models = [turn.model for turn in t.turns.values() if turn.model]
            t.models = list(dict.fromkeys(models)) or ([run.model] if run.model else None)
            t.ended_at = run.last_ts if run.last_ts is not None and t.started_at is not None \
                and run.last_ts >= t.started_at else None
            if t.ended_at is not None and t.duration_ms is None:
                t.duration_ms = float(t.ended_at - t.started_at)
            if run.prompt and run.key is None:
                t.task = run.prompt
                first = run.prompt.strip().splitlines()[0]
                t.title = first if len(first) <= TITLE_CHARS else first[:TITLE_CHARS - 1] + "…"
            out.append(t)
        if self.skipped:
            self.main.trace.meta["skipped_events"] = dict(sorted(self.skipped.items()))
        return out

    def describe_sub(self, run: _Run, owner: dict) -> None:
        t, info = run.trace, run.agent
        cid = run.key if isinstance(run.key, str) else None
        t.parent = (owner.get(cid, SESSION_REF), cid)
        call = next((r.calls[cid] for r in (self.main, *self.subs.values()) if cid in r.calls), None)
        prompt = as_dict(call["arguments"]).get("prompt") if call else None
        t.task = as_text(prompt) or as_text(info.get("agentDescription"))
        t.title = as_text(info.get("agentDisplayName")) or as_text(info.get("agentName")) or "sub-agent"
        for turn in t.turns.values():  # the model the sub-agent ran with, for calls that do not name theirs
            turn.model = turn.model or as_text(info.get("model"))
        status = info.get("status")
        if status in ("completed", "failed"):
            t.outcome = "success" if status == "completed" else "failure"
            t.outcome_detail = as_text(info.get("error")) or status
        if as_number(info.get("durationMs")) is not None:
            t.duration_ms = float(info["durationMs"])
        t.meta["sub_agent"] = {k: info[k] for k in ("agentName", "agentDisplayName", "agentDescription", "model",
                                                     "totalToolCalls", "totalTokens", "durationMs") if k in info}
        if cid:
            t.meta["sub_agent"]["call"] = cid
        else:
            t.meta["sub_agent"]["agent_id"] = run.key[1]


def _with_images(text: str, images: list) -> str:
    """A message's text with the `[image]` placeholder of each image it carries."""
    return "\n".join(filter(None, [text, *["[image]"] * len(images)]))


def _take(pending: list, api: str | None):
    """The first of `pending` ((apiCallId, item) pairs, in file order) that goes with the call
    `api`: the same id, or one of the two without an id; taken out of the list. None if none."""
    for i, (other, item) in enumerate(pending):
        if api == other or api is None or other is None:
            del pending[i]
            return item
    return None


def _apply(turn: Turn, found: dict) -> None:
    turn.usage = found["usage"]
    turn.model = found["model"] or turn.model
    turn.duration_ms = found["duration"]


HANDLERS = {
    "session.start": _Reader.session_start, "session.resume": _Reader.session_resume,
    "session.model_change": _Reader.model_change, "session.shutdown": _Reader.shutdown,
    **dict.fromkeys(NOTICES, _Reader.session_notice),
    "abort": _Reader.abort, "session.truncation": _Reader.truncation,
    "session.compaction_complete": _Reader.compaction,
    "system.message": _Reader.system_message, "user.message": _Reader.user_message,
    "assistant.turn_start": _Reader.turn_start, "assistant.turn_end": _Reader.turn_end,
    "assistant.reasoning": _Reader.reasoning, "assistant.message": _Reader.assistant_message,
    "assistant.usage": _Reader.usage,
    "tool.user_requested": _Reader.tool_start, "tool.execution_start": _Reader.tool_start,
    "tool.execution_complete": _Reader.tool_complete,
    **dict.fromkeys(("subagent.started", "subagent.completed", "subagent.failed"), _Reader.subagent),
}


FORMAT = Format(
    name=NAME, title="Copilot CLI session",
    description="GitHub Copilot CLI session events (~/.copilot/session-state/<id>/events.jsonl, older <id>.jsonl): "
                "messages, reasoning as thinking, tool calls paired with their results, notices, compactions, "
                "per-call usage, sub-agent runs linked to the call that started them",
    sniff=sniff, parse=parse, patterns=("events.jsonl",), priority=30,
)
