"""Workflow exports of AI coding tools, converted to the Standard Workflow Format and cooked.

Four exports, each its own format: Claude Code's workflow export, Cursor's session log,
Bolt.new's project export and Lovable's session export, in the shapes the Standard
Workflow Format specification gives. Cursor's agent transcripts (JSON lines of
`{"role", "message": {"content": [blocks]}}`, as Cursor writes them, each sub-agent run a trace
linked to its session) and its chat stores (`store.db`, SQLite) are read as Cursor too.

Each converter follows the specification's converters (Claude Code and Cursor are given
there; Bolt.new and Lovable are written the same way) and reads defensively: a field of the
wrong type or a record that is not an object becomes a Problem naming its JSON path in the
export, and the rest converts. A converter never invents times or counts; a call id the
export lacks is made up while cooking (see parsers/swf.py).
"""
from __future__ import annotations

import re
import sqlite3
from typing import Callable, Iterator

import orjson

from parsers.formats.workflow import swf
from parsers.model import Companion, Format, ParsedTrace, ParseResult, Problem, ValidationError, pointer
from parsers.io.guard import record_guard
from parsers.io.records import as_number, as_text, iter_records, not_a_json_object
from parsers.io.source import Source

SWF_VERSION = "1.0"
CURSOR_NAME = "cursor-export"
ROLE_STEP = {"user": "user_message", "assistant": "assistant_message", "system": "system_message"}
# Fields of an action / change / tool use that describe its result rather than its input.
RESULT_KEYS = ("result", "output", "success", "error", "status", "exit_code", "is_error")


class _Reader:
    """Reads an export's fields and notes each one of the wrong type with its JSON pointer."""

    def __init__(self, file: str):
        self.file = file
        self.problems: list[Problem] = []

    def problem(self, path: str, message: str, line: int | None = None) -> None:
        self.problems.append(Problem(self.file, message, line=line, path=path))

    def get(self, obj: dict, key: str, path: str, types: tuple | type, what: str):
        """obj[key] when it has one of `types`; None (and a problem unless it is absent or null) otherwise."""
        v = obj.get(key)
        if v is None:
            return None
        if isinstance(v, bool) and bool not in (types if isinstance(types, tuple) else (types,)):
            ok = False
        else:
            ok = isinstance(v, types)
        if not ok:
            self.problem(pointer(*_parts(path), key), f"expected {what}, found {swf.kind(v)}")
            return None
        return v

    def text(self, obj: dict, key: str, path: str):
        return self.get(obj, key, path, str, "a string")

    def time(self, obj: dict, key: str, path: str):
        v = self.get(obj, key, path, (str, int, float), "a time (ISO 8601 or epoch)")
        return swf.iso_time(v) if v is not None else None

    def count(self, obj: dict, key: str, path: str):
        v = self.get(obj, key, path, (int, float), "a number of tokens")
        return int(v) if v is not None else None

    def number(self, obj: dict, key: str, path: str):
        return self.get(obj, key, path, (int, float), "a number")

    def step_type(self, role: str | None, path: str) -> str:
        """The SWF step type of a message role (the converters' `role + "_message"`)."""
        step_type = ROLE_STEP.get(role or "")
        if step_type is None:
            self.problem(f"{path}/role", f"unknown role {role!r}; kept as a system step")
            step_type = "system_message"
        return step_type

    def obj(self, obj: dict, key: str, path: str) -> dict:
        return self.get(obj, key, path, dict, "an object") or {}

    def records(self, obj: dict, key: str, path: str, what: str, required: bool = False) -> Iterator[tuple[int, dict]]:
        """(index, record) of the objects in the list obj[key]; other items are reported in turn."""
        v = obj.get(key)
        here = pointer(*_parts(path), key)
        if v is None:
            if required:
                raise ValidationError(f"{self.file}: required field {key!r} is missing",
                                      self.problems + [Problem(self.file, f"required field {key!r} is missing", path=here)])
            return
        if not isinstance(v, list):
            p = Problem(self.file, f"expected an array of {what}s, found {swf.kind(v)}", path=here)
            if required:
                raise ValidationError(f"{self.file}: {key!r} is not an array", self.problems + [p])
            self.problems.append(p)
            return
        for i, item in enumerate(v):
            if isinstance(item, dict):
                yield i, item
            else:
                self.problem(f"{here}/{i}", f"expected an object (a {what}), found {swf.kind(item)}; skipped")


def _parts(path: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]] if path else []


def _clean(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


def _step(step_id, step_type, timestamp, content, tokens=None, tool_calls=None, **extensions) -> dict:
    step = _clean({"step_id": step_id, "type": step_type, "timestamp": timestamp,
                   "content": content if content is not None else "", "tokens": tokens})
    if tool_calls:
        step["tool_calls"] = tool_calls
    step.update(_clean(extensions))
    return step


def _tokens(inp, out) -> dict | None:
    if inp is None and out is None:
        return None
    return {"input": inp or 0, "output": out or 0}


def _call(tool_name, args: dict, output, call_id=None) -> dict:
    call = {"tool_name": tool_name if isinstance(tool_name, str) else "unknown", "input": args}
    if output is not None:  # an export that records no result gives a call without output
        call["output"] = output
    if call_id is not None:
        call["call_id"] = str(call_id)
    return call


def _split_action(action: dict) -> tuple[dict, dict | None]:
    """An action's own fields -> (input, output): result fields go to the output."""
    args = {k: v for k, v in action.items() if k not in ("type", "id") and k not in RESULT_KEYS}
    return args, _output(action.get("result"), {k: action[k] for k in RESULT_KEYS if k != "result" and k in action})


def _output(result, more: dict | None = None) -> dict | None:
    """A tool call's output object from what the export records (None when it records nothing)."""
    if isinstance(result, dict):
        out = dict(result)
    elif result is None:
        if not more:
            return None
        out = {}
    else:
        # Bolt.new's example gives results as strings ("success") where the schema wants an
        # object; wrapped so that the written SWF keeps to the schema.
        out = {"result": result}
    for k, v in (more or {}).items():
        out.setdefault(k, v)
    return out


def _success(*holders: dict) -> bool:
    """What the export says of the outcome; else True, as the specification's converters
    infer it ("inferred from successful export")."""
    for h in holders:
        o = swf.outcome_of(h, {})
        if o != "unknown":
            return o == "success"
    return True


def _workflow(tool_name: str, meta: dict, steps: list, summary: dict) -> dict:
    meta = _clean({"tool_name": tool_name, **meta})
    summary = _clean(summary)
    if not isinstance(summary.get("total_tokens"), dict):
        summary["total_tokens"] = swf.step_totals(steps)
    summary.setdefault("tool_calls", swf.tool_call_counts(steps))
    return {"version": SWF_VERSION, "metadata": meta, "steps": steps, "summary": summary}


def _totals(r: _Reader, u: dict, path: str, inp: str, out: str, total: str) -> dict | None:
    i, o, t = r.count(u, inp, path), r.count(u, out, path), r.count(u, total, path)
    if i is None and o is None:
        return None
    return {"input": i or 0, "output": o or 0, "total": t if t is not None else (i or 0) + (o or 0)}


# -- Claude Code ------------------------------------------------------------------------

def claude_code_to_swf(data: dict, r: _Reader) -> dict:
    """Claude Code's workflow export -> SWF (the specification's converter, made defensive)."""
    sm = r.obj(data, "session_metadata", "")
    steps = []
    for i, msg in r.records(data, "conversation", "", "message", required=True):
        p = f"/conversation/{i}"
        role = r.text(msg, "role", p)
        step_type = r.step_type(role, p)
        calls = []
        for j, tu in r.records(msg, "tool_uses", p, "tool use"):
            q = f"{p}/tool_uses/{j}"
            args = r.get(tu, "parameters", q, dict, "an object") if "parameters" in tu else r.get(tu, "input", q, dict, "an object")
            result = tu.get("result")
            calls.append(_call(tu.get("type") or tu.get("name"), args or {},
                               _output(result, _clean({"error": tu.get("error")})), tu.get("id")))
        content = msg.get("content")
        if not isinstance(content, (str, list, type(None))):
            r.problem(f"{p}/content", f"expected a string or content blocks, found {swf.kind(content)}; kept as JSON")
        steps.append(_step(r.text(msg, "id", p) or f"step_{i + 1:03d}", step_type, r.time(msg, "timestamp", p),
                           content if isinstance(content, str) else swf.text_of(content),
                           _claude_tokens(r, msg, p, role), calls, cost=r.number(msg, "cost", p),
                           model=r.text(msg, "model", p)))
    usage = r.obj(data, "usage_summary", "")
    files = r.obj(data, "files", "")
    meta = {
        # The export carries no tool version; the specification's converter takes the export
        # format's version, and so do we.
        "tool_version": r.text(data, "export_version", "") or "unknown",
        "model_name": r.text(sm, "model", "/session_metadata"),
        "session_id": r.text(sm, "id", "/session_metadata"),
        "start_time": r.time(sm, "started_at", "/session_metadata"),
        "end_time": r.time(sm, "ended_at", "/session_metadata"),
        "success": _success(sm, data),
        "task_description": r.text(sm, "task_description", "/session_metadata"),
    }
    summary = {"total_tokens": _totals(r, usage, "/usage_summary", "total_input_tokens", "total_output_tokens", "total_tokens"),
               "estimated_cost": r.number(usage, "estimated_cost", "/usage_summary"),
               "files_created": _count(files.get("created")), "files_modified": _count(files.get("modified"))}
    return _workflow("claude_code", meta, steps, summary)


def _claude_tokens(r: _Reader, msg: dict, path: str, role: str | None) -> dict | None:
    tc = msg.get("token_count")
    if isinstance(tc, dict):
        q = f"{path}/token_count"
        return _tokens(r.count(tc, "input", q), r.count(tc, "output", q))
    if isinstance(tc, (int, float)) and not isinstance(tc, bool):
        # The specification's converter reads token_count as {input, output}, yet its own
        # example gives user messages a plain number (on which that converter crashes). A
        # plain number counts the message itself: the model's output for an assistant
        # message, input otherwise.
        return _tokens(None, int(tc)) if role == "assistant" else _tokens(int(tc), None)
    if tc is not None:
        r.problem(f"{path}/token_count", f"expected a number or an object of token counts, found {swf.kind(tc)}")
    return None


def _count(v) -> int | None:
    return len(v) if isinstance(v, list) else None


# -- Cursor -----------------------------------------------------------------------------

def cursor_to_swf(data: dict, r: _Reader) -> dict:
    """Cursor's session log -> SWF (the specification's converter, made defensive)."""
    steps = []
    for i, chat in r.records(data, "chat_history", "", "chat message", required=True):
        p = f"/chat_history/{i}"
        role = r.text(chat, "role", p)
        step_type = r.step_type(role, p)
        calls = [_action_call(a) for _, a in r.records(chat, "actions", p, "action")]
        tu = r.obj(chat, "token_usage", p)
        steps.append(_step(r.text(chat, "id", p) or f"step_{i + 1:03d}", step_type, r.time(chat, "timestamp", p),
                           r.text(chat, "message", p),
                           _tokens(r.count(tu, "prompt_tokens", f"{p}/token_usage"),
                                   r.count(tu, "completion_tokens", f"{p}/token_usage")),
                           calls, context_files=chat.get("context_files"), cost=r.number(chat, "cost_usd", p)))
    usage = r.obj(data, "total_usage", "")
    ops = [o for _, o in r.records(data, "file_operations", "", "file operation")]
    meta = {
        "tool_version": r.text(data, "agent_version", ""), "model_name": r.text(data, "model", ""),
        "session_id": r.text(data, "session_id", ""), "start_time": r.time(data, "start_time", ""),
        "end_time": r.time(data, "end_time", ""), "success": _success(data),
        "project_context": data.get("project_context") if isinstance(data.get("project_context"), dict) else None,
    }
    summary = {"total_tokens": _totals(r, usage, "/total_usage", "prompt_tokens", "completion_tokens", "total_tokens"),
               "estimated_cost": r.number(usage, "cost_usd", "/total_usage"),
               "files_created": sum(o.get("operation") == "create" for o in ops) if ops else None,
               "files_modified": sum(o.get("operation") in ("modify", "edit", "update") for o in ops) if ops else None}
    return _workflow("cursor", meta, steps, summary)


_USER_QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)
TITLE_CHARS = 80


def _user_query(text: str) -> tuple[str, str]:
    """A Cursor prompt -> (what the user typed, the context Cursor wrapped around it): the
    `<user_query>` block's text, and whatever else the prompt holds (a reminder, a time)."""
    m = _USER_QUERY.search(text)
    if m is None:
        return text, ""
    return m.group(1), (text[:m.start()] + text[m.end():]).strip()


def cursor_agent_to_swf(records: list[tuple[int | None, object]], r: _Reader, session: str,
                        meta: dict | None = None) -> dict:
    """Cursor's agent transcript (JSON lines of role + content blocks) -> SWF.

    The transcripts carry no times, ids or token counts. A tool result goes to the
    unanswered call with its id, else to the oldest unanswered call that has no id (which
    takes the result's id). `<user_query>` wrappers are unwrapped: the query is the user
    step, the rest of the prompt a system step before it. The written SWF has no times (the
    schema wants them: `convert` says so)."""
    steps: list[dict] = []
    pending: list[dict] = []
    success = None
    title = None

    def add(step_type: str, content: str, **more) -> None:
        steps.append(_step(f"step_{len(steps) + 1:03d}", step_type, None, content, **more))

    for line, rec in records:
        if not isinstance(rec, dict):
            r.problem("", f"expected an object (a transcript entry), found {swf.kind(rec)}; skipped", line)
            continue
        if rec.get("type") == "turn_ended":
            success = {"success": True, "failure": False}.get(swf.outcome_of(rec, {}))
            continue
        role, msg = rec.get("role"), rec.get("message")
        if role is None and msg is None:
            continue  # an entry of another kind: nothing to show
        blocks = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(blocks, str):
            blocks = [{"type": "text", "text": blocks}]
        if not isinstance(blocks, list):
            r.problem("/message/content", f"expected content blocks, found {swf.kind(blocks)}; skipped", line)
            continue
        texts, thinking, calls = [], [], []
        for j, b in enumerate(blocks):
            t = b.get("type") if isinstance(b, dict) else None
            if t == "text":
                texts.append(str(b.get("text") or ""))
            elif t == "thinking":
                thinking.append(str(b.get("thinking") or ""))
            elif t == "tool_use":
                args = b.get("input")
                if args is not None and not isinstance(args, dict):
                    r.problem(f"/message/content/{j}/input", f"expected an object, found {swf.kind(args)}; "
                                                             "kept as the call's text", line)
                    args = {"input": args}
                call = _call(b.get("name"), args or {}, None, b.get("id"))
                calls.append(call)
                pending.append(call)
            elif t == "tool_result":
                _answer(pending, b, r, f"/message/content/{j}", line)
            elif not isinstance(b, dict):
                r.problem(f"/message/content/{j}", f"expected a content block, found {swf.kind(b)}; skipped", line)
        if role == "user":
            if texts:
                query, context = _user_query("\n".join(texts))
                if context:
                    add("system_message", context)
                add("user_message", query)
                if title is None and query.strip():
                    title = _first_line(query)
        elif role == "assistant":
            add("assistant_message", "\n".join(texts), tool_calls=calls, thinking="\n".join(thinking) or None)
        else:
            r.problem("/role", f"unknown role {role!r}; skipped", line)
    # A transcript without a `turn_ended` record says nothing of how the run ended.
    meta = {"session_id": session, "workflow_name": title, **(meta or {}), "success": success}
    return _workflow("cursor", meta, steps, {})


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= TITLE_CHARS else line[:TITLE_CHARS - 1] + "…"


def _answer(pending: list[dict], block: dict, r: _Reader, path: str, line: int | None) -> None:
    c = block.get("content")
    text = c if isinstance(c, str) else swf.text_of(c)
    # One field, so that the result shows as its text; a failed call's text is its error.
    out = {"output": text} if not block.get("is_error") else {"error": text} if text else {"is_error": True}
    tid = block.get("tool_use_id")
    tid = str(tid) if isinstance(tid, (str, int)) and not isinstance(tid, bool) else None
    call = next((x for x in pending if tid is not None and x.get("call_id") == tid), None) \
        or next((x for x in pending if "call_id" not in x), None)
    if call is None:
        r.problem(path, f"a tool result (for call {tid!r}) that answers no tool call before it; skipped", line)
        return
    del pending[next(i for i, x in enumerate(pending) if x is call)]
    if tid is not None:
        call.setdefault("call_id", tid)
    call["output"] = out


# -- Bolt.new and Lovable ---------------------------------------------------------------

def _exchanges(r: _Reader, data: dict, key: str, what: str, user_key: str, text_key: str, calls_key: str,
               tokens_key: str, token_names: tuple[str, str], call_of) -> list[dict]:
    """Bolt.new's prompts and Lovable's interactions: each entry gives a user step and a
    response step (with the calls `call_of` makes of its actions)."""
    steps = []
    for i, rec in r.records(data, key, "", what, required=True):
        p = f"/{key}/{i}"
        rid = r.text(rec, "id", p) or f"{what}_{i + 1:03d}"
        ts = r.time(rec, "timestamp", p)
        steps.append(_step(f"{rid}:user", "user_message", ts, r.text(rec, user_key, p)))
        if "ai_response" not in rec:
            continue
        ai = r.obj(rec, "ai_response", p)
        q = f"{p}/ai_response"
        calls = [call_of(a) for _, a in r.records(ai, calls_key, q, calls_key.rstrip("s").replace("_", " "))]
        tok, tq = r.obj(ai, tokens_key, q), f"{q}/{tokens_key}"
        # Both exports time the exchange only; the response step takes that time (SWF wants one).
        steps.append(_step(f"{rid}:assistant", "assistant_message", r.time(ai, "timestamp", q) or ts,
                           r.text(ai, text_key, q), _tokens(r.count(tok, token_names[0], tq), r.count(tok, token_names[1], tq)),
                           calls, cost=r.number(ai, "cost", q), model=r.text(ai, "model", q)))
    return steps


def _action_call(action: dict) -> dict:
    """A Cursor or Bolt.new action -> a tool call. The specification's Cursor converter keeps
    only file_path and content as the input and defaults success to false; every field of the
    action is kept here (a terminal command would be lost otherwise) and success only when
    the export states it."""
    args, out = _split_action(action)
    return _call(action.get("type"), args, out, action.get("id"))


def _change_call(change: dict) -> dict:
    args, out = _split_action(change)
    # Lovable states the size of each change, not a result: that is its output.
    for k in ("lines_added", "lines_removed"):
        if k in args:
            out = out or {}
            out[k] = args.pop(k)
    return _call(change.get("type"), args, out, change.get("id"))


def bolt_to_swf(data: dict, r: _Reader) -> dict:
    """Bolt.new's project export -> SWF."""
    steps = _exchanges(r, data, "prompt_history", "prompt", "user_input", "text", "actions", "tokens",
                       ("input", "output"), _action_call)
    stats = r.obj(data, "usage_stats", "")
    tree = r.obj(data, "file_tree", "")
    entries = [v for v in tree.values() if isinstance(v, dict)]
    meta = {
        "model_name": r.text(data, "model", ""), "session_id": r.text(data, "project_id", ""),
        "workflow_name": r.text(data, "project_name", ""),
        "start_time": r.time(data, "created_at", ""), "end_time": r.time(data, "completed_at", ""),
        "success": _success(data),
        "container_info": data.get("container_info") if isinstance(data.get("container_info"), dict) else None,
    }
    summary = {"total_tokens": _totals(r, stats, "/usage_stats", "total_input_tokens", "total_output_tokens", "total_tokens"),
               "estimated_cost": r.number(stats, "estimated_cost", "/usage_stats"),
               "files_created": sum("created" in e for e in entries) if entries else None,
               "files_modified": sum("created" not in e and "modified" in e for e in entries) if entries else None}
    # "bolt": the schema's enum says "bolt44" (read as Bolt.new too, see parsers/swf.py).
    return _workflow("bolt", meta, steps, summary)


def lovable_to_swf(data: dict, r: _Reader) -> dict:
    """Lovable's session export -> SWF."""
    steps = _exchanges(r, data, "interactions", "interaction", "user_message", "message", "code_changes",
                       "token_usage", ("input_tokens", "output_tokens"), _change_call)
    tm = r.obj(data, "total_metrics", "")
    state = r.obj(data, "project_state", "")
    duration = r.number(tm, "duration_seconds", "/total_metrics")
    meta = {
        "model_name": r.text(data, "model", ""), "session_id": r.text(data, "session_id", ""),
        "workflow_name": r.text(data, "app_name", ""),
        "start_time": r.time(data, "start_timestamp", ""), "end_time": r.time(data, "end_timestamp", ""),
        "total_duration": int(duration) if duration is not None and duration >= 0 else None,
        "success": _success(data),
    }
    summary = {"total_tokens": _totals(r, tm, "/total_metrics", "total_input_tokens", "total_output_tokens", "total_tokens"),
               "estimated_cost": r.number(tm, "cost_estimate", "/total_metrics"),
               "files_created": r.count(state, "files_created", "/project_state"),
               "files_modified": r.count(state, "files_modified", "/project_state"),
               "project_state": state or None}
    return _workflow("lovable", meta, steps, summary)


# -- detection, reading, registration ---------------------------------------------------

def _json_sniff(required: bytes, any_of: tuple[bytes, ...], what: str) -> Callable[[Source], str | None]:
    def sniff(src: Source) -> str | None:
        head = src.head
        why = not_a_json_object(head)
        if why:
            return why
        if required not in head:
            return f"no {required.decode()} field"
        if not any(k in head for k in any_of):
            return f"no {' or '.join(k.decode() for k in any_of)} field beside it ({what})"
        return None
    return sniff


def _is_cursor_transcript(head: bytes) -> bool:
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    try:
        rec = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False
    if not isinstance(rec, dict) or not {"role", "message"} <= set(rec) or not set(rec) <= {"role", "message", "timestamp", "id"}:
        return False
    msg = rec["message"]
    return isinstance(msg, dict) and "content" in msg and set(msg) <= {"content", "role"} \
        and rec["role"] in ("user", "assistant")


_cursor_log_sniff = _json_sniff(b'"chat_history"', (b'"agent_version"', b'"session_id"', b'"project_context"', b'"total_usage"'), "a Cursor session log")


def _cursor_sniff(src: Source) -> str | None:
    if _is_cursor_store(src.head):
        return None
    why = _cursor_log_sniff(src)
    if why is None or why == "binary content":
        return why
    if _is_cursor_transcript(src.head):
        if _session_of_subagent(src) is not None:
            return Companion("a Cursor sub-agent transcript; it is read with its session")
        return None
    return why + "; nor a Cursor agent transcript (JSON lines of role and message)"


def _load(src: Source, r: _Reader) -> dict:
    doc = swf.load_json(src, r.problems)
    if doc is None:
        raise ValidationError(f"{src.name}: nothing readable", r.problems)
    if not isinstance(doc, dict):
        r.problem("", f"expected a JSON object, found {swf.kind(doc)}")
        raise ValidationError(f"{src.name}: not an export", r.problems)
    return doc


def _reader(convert) -> Callable[[Source], tuple[dict, list[Problem]]]:
    def to_swf(src: Source) -> tuple[dict, list[Problem]]:
        r = _Reader(src.name)
        return convert(_load(src, r), r), r.problems
    return to_swf


def _cursor_to_swf(src: Source) -> tuple[dict, list[Problem]]:
    if _is_cursor_store(src.head) or _is_cursor_transcript(src.head):
        doc, problems, _ = _cursor_agent_doc(src)
        return doc, problems
    return _reader(cursor_to_swf)(src)


def _cursor_agent_doc(src: Source) -> tuple[dict, list[Problem], int]:
    """An agent transcript or chat store as SWF, its problems and how many entries it had."""
    r = _Reader(src.name)
    if _is_cursor_store(src.head):
        records, meta = _store_records(src, r.problems)
    else:
        records = [(line, rec) for line, _, rec in iter_records(src, r.problems)]
        meta = {}
    stem = src.basename.rsplit(".", 1)[0]
    return cursor_agent_to_swf(records, r, stem, meta), r.problems, len(records)


# -- Cursor agent sessions: sub-agents --------------------------------------------------
# `agent-transcripts/<session>/<session>.jsonl` with its sub-agents in
# `agent-transcripts/<session>/subagents/<id>.jsonl` (and `<session>.jsonl` beside a
# `<session>/subagents/` folder). Each sub-agent run is a trace linked to the session.
SESSION_REF = "session"
SUBAGENTS = "subagents"


def _session_of_subagent(src: Source) -> Source | None:
    """The session a sub-agent transcript belongs to, when it is in what was opened."""
    parts = src.name.split("/")
    if len(parts) < 3 or parts[-2] != SUBAGENTS:
        return None
    session = parts[-3]
    return src.sibling(f"../{session}.jsonl") or src.sibling(f"../../{session}.jsonl")


def _subagent_files(src: Source) -> Iterator[Source]:
    stem = src.basename.rsplit(".", 1)[0]
    parts = src.name.split("/")
    folders = [f"{stem}/{SUBAGENTS}"]
    if len(parts) >= 2 and parts[-2] == stem:
        folders.append(SUBAGENTS)
    for folder in folders:
        for entry in sorted(src.listdir(folder) or ()):
            sib = src.sibling(f"{folder}/{entry}") if entry.endswith(".jsonl") else None
            if sib is not None and _is_cursor_transcript(sib.head):
                yield sib


def _agent_trace(src: Source) -> tuple[ParsedTrace, int]:
    doc, problems, count = _cursor_agent_doc(src)
    trace = swf.to_trace(doc, src, CURSOR_NAME, problems)
    # The sessions list no tools; those the agent called were offered to it.
    names = dict.fromkeys(c.get("name") for m in trace.messages or () for c in m.tool_calls or ())
    trace.tools = [{"name": n, "description": None, "parameters": None} for n in names if isinstance(n, str)]
    return trace, count


def _spawning_call(session: ParsedTrace, sub: ParsedTrace) -> str | None:
    """The session's tool call whose arguments hold the sub-agent's prompt, if one does."""
    prompt = next((m.content for m in sub.messages or () if m.role == "user"), None)
    if not prompt:
        return None
    want = " ".join(prompt.split())
    for m in session.messages or ():
        for c in m.tool_calls or ():
            args = c.get("arguments")
            values = args.values() if isinstance(args, dict) else ()
            if any(isinstance(v, str) and " ".join(v.split()) == want for v in values):
                return c.get("id")
    return None


def _cursor_parse(src: Source, *_options) -> ParseResult:
    if not (_is_cursor_store(src.head) or _is_cursor_transcript(src.head)):
        return _one_trace(CURSOR_NAME, _reader(cursor_to_swf))(src)
    session, count = _agent_trace(src)
    session.ref = SESSION_REF
    traces = [session]
    for sub in _subagent_files(src):
        with record_guard(session.problems, sub.name, "the Cursor sub-agent reader"):
            trace, n = _agent_trace(sub)
            trace.parent = (SESSION_REF, _spawning_call(session, trace))
            traces.append(trace)
            count += n
    return ParseResult(format=CURSOR_NAME, traces=traces, records=count)


# -- Cursor chat stores (`~/.cursor/chats/<workspace>/<session>/store.db`) ----------------
# SQLite: table `meta` holds at key "0" the session's description as hex-encoded JSON
# (agentId, name, createdAt, lastUsedModel, latestRootBlobId); table `blobs` holds the
# conversation as protobuf messages named by their SHA-256: the root blob lists its turns
# (field 8), a turn holds the agent's turn (1) with the user's message blob (1) and its steps
# (2), a user message its text (1), a step the assistant's message (1) whose text is field 1.
_STORE_TABLE = re.compile(rb'CREATE TABLE\s+(?:IF NOT EXISTS\s+)?["`]?(blobs|meta)["`]?\s*\(', re.I)
SQLITE_MAGIC = b"SQLite format 3\x00"


def _is_cursor_store(head: bytes) -> bool:
    return head.startswith(SQLITE_MAGIC) and {m.group(1) for m in _STORE_TABLE.finditer(head)} == {b"blobs", b"meta"}


def _fields(data: bytes | None, number: int) -> list[bytes]:
    """The length-delimited values of one field of a protobuf message (no schema needed);
    DecodeError when the bytes are not a protobuf message."""
    if not data:
        return []
    from google.protobuf import empty_pb2
    from google.protobuf.unknown_fields import UnknownFieldSet

    msg = empty_pb2.Empty()
    msg.ParseFromString(data)
    return [f.data for f in UnknownFieldSet(msg) if f.field_number == number and f.wire_type == 2]


def _store_records(src: Source, problems: list[Problem]) -> tuple[list[tuple[None, dict]], dict]:
    """A chat store's conversation as transcript entries, and its metadata for the SWF."""
    from google.protobuf.message import DecodeError  # imported by the few inputs that are stores

    con = sqlite3.connect(":memory:")
    missing = []
    try:
        con.deserialize(src.read_bytes())
        row = con.execute("SELECT value FROM meta WHERE key = '0'").fetchone()
        info = orjson.loads(bytes.fromhex(row[0])) if row and isinstance(row[0], str) else None
        if not isinstance(info, dict):
            raise ValueError("its meta table has no hex-encoded JSON object at key '0'")

        def blob(key: bytes | str) -> bytes | None:
            found = con.execute("SELECT data FROM blobs WHERE id = ?",
                                (key.hex() if isinstance(key, bytes) else key,)).fetchone()
            data = found[0] if found else None
            if data is None:
                missing.append(key)
            return data.encode() if isinstance(data, str) else data if isinstance(data, bytes) else None

        what = f"a Cursor chat store (SQLite) of the agent session {info.get('name') or info.get('agentId')!r}"
        root_id = info.get("latestRootBlobId")
        root = blob(root_id) if isinstance(root_id, str) else None
        records: list[tuple[None, dict]] = []
        for turn_id in _fields(root, 8):
            try:
                agent = next(iter(_fields(blob(turn_id), 1)), None)
                turn = [_entry("user", _fields(blob(user_id), 1)) for user_id in _fields(agent, 1)[:1]]
                for step_id in _fields(agent, 2):
                    said = next(iter(_fields(blob(step_id), 1)), None)
                    turn.append(_entry("assistant", _fields(said, 1)))
            except DecodeError:
                missing.append(turn_id)  # a blob that is not a protobuf message: the turn is left out
                continue
            records.extend(turn)
        blobs = con.execute("SELECT count(*) FROM blobs").fetchone()[0]
    except (sqlite3.Error, ValueError, DecodeError) as e:
        raise ValidationError(f"{src.name}: not a readable Cursor chat store",
                              [Problem(src.name, f"an SQLite database with Cursor's meta and blobs tables that "
                                                 f"cannot be read ({e})")]) from None
    finally:
        con.close()
    records = [(line, rec) for line, rec in records if rec["message"]["content"]]
    if records and missing:
        problems.append(Problem(src.name, f"{len(missing)} of the blobs its conversation names are missing or not "
                                          "readable; those parts are left out"))
    if not records:
        raise ValidationError(f"{src.name}: no conversation", [Problem(
            src.name, f"{what}, holding no conversation to show: its latest root blob {root_id!r} "
                      f"{'lists no readable turn' if root else 'is not among its ' + str(blobs) + ' blobs'}")])
    meta = {"workflow_name": as_text(info.get("name")), "session_id": as_text(info.get("agentId")),
            "model_name": as_text(info.get("lastUsedModel")) if info.get("lastUsedModel") != "default" else None,
            "start_time": swf.iso_time(info["createdAt"]) if as_number(info.get("createdAt")) else None,
            "subagent_info": info.get("subagentInfo") if isinstance(info.get("subagentInfo"), dict) else None}
    return records, _clean(meta)


def _entry(role: str, texts: list[bytes]) -> tuple[None, dict]:
    content = [{"type": "text", "text": t.decode("utf-8", "replace")} for t in texts[:1] if t]
    return None, {"role": role, "message": {"content": content}}


# Format name -> reader of a file into (SWF document as read, problems), before normalising.
TO_SWF: dict[str, Callable[[Source], tuple[dict, list[Problem]]]] = {}


def _one_trace(name: str, to_swf) -> Callable[..., ParseResult]:
    def parse(src: Source, *_options) -> ParseResult:
        doc, problems = to_swf(src)
        return ParseResult(format=name, traces=[swf.to_trace(doc, src, name, problems)])
    return parse


def _format(name: str, title: str, description: str, sniff, to_swf, parse=None) -> Format:
    TO_SWF[name] = to_swf
    return Format(name=name, title=title, description=description, sniff=sniff, parse=parse or _one_trace(name, to_swf),
                  priority=40, convert=swf.converter(to_swf, check_output=True))


CLAUDE_CODE = _format(
    "claude-code-export", "Claude Code workflow export",
    "Claude Code's workflow export (session_metadata, conversation with tool_uses, usage_summary)",
    _json_sniff(b'"session_metadata"', (b'"conversation"', b'"export_version"', b'"usage_summary"'), "a Claude Code export"),
    _reader(claude_code_to_swf))
CURSOR = _format(
    CURSOR_NAME, "Cursor session log",
    "Cursor's session log (chat_history with actions, total_usage), agent transcripts (JSON lines, with "
    "their sub-agents) and chat stores (store.db)",
    _cursor_sniff, _cursor_to_swf, _cursor_parse)
BOLT = _format(
    "bolt-export", "Bolt.new project export",
    "Bolt.new's project export (prompt_history with actions, file_tree, container_info, usage_stats)",
    _json_sniff(b'"prompt_history"', (b'"project_id"', b'"project_name"', b'"file_tree"', b'"container_info"', b'"usage_stats"'), "a Bolt.new export"),
    _reader(bolt_to_swf))
LOVABLE = _format(
    "lovable-export", "Lovable session export",
    "Lovable's session export (interactions with code_changes, project_state, total_metrics)",
    _json_sniff(b'"interactions"', (b'"app_name"', b'"project_state"', b'"total_metrics"', b"lovable"), "a Lovable export"),
    _reader(lovable_to_swf))

FORMATS = (CLAUDE_CODE, CURSOR, BOLT, LOVABLE)
