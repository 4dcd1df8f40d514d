"""The Standard Workflow Format (SWF): reading, validating against its JSON Schema, cooking.

An SWF document is one JSON object: `metadata` (tool, model, session, times, success),
`steps` (user / assistant / system messages, each with token counts and the tool calls it
made with their inputs and outputs) and `summary` (token totals, estimated cost). The
tool-export formats (parsers/swf_exports.py) are converted to it, then cooked here.

The spec's JSON Schema is kept verbatim in parsers/schema/swf.schema.json. The spec's own
examples break it in a few places; `tolerant_schema()` adds exactly those cases, each with
its reason, and is what reading, `traceview validate` and `traceview convert` check against
(`strict=True` checks the verbatim schema).
"""
from __future__ import annotations

import copy
import functools
import re
from collections import deque
from datetime import datetime, timezone
from importlib import resources
from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    import jsonschema

from parsers.providers import usage as usage_mod
from parsers.model import Artifact, Format, Message, ParsedTrace, ParseResult, Problem, Turn, ValidationError, diff_name, pointer
from parsers.io.guard import record_guard
from parsers.io.records import as_dict, as_number, as_text, not_a_json_object
from parsers.io.source import Source
from parsers.io.times import read_time, to_epoch_ms

NAME = "swf"
TITLE = "Standard Workflow Format"
STEP_ROLES = {"user_message": "user", "assistant_message": "assistant", "system_message": "system",
              # The spec's SWF example names assistant steps "assistant_response", which its
              # schema's enum lacks; both mean the same step.
              "assistant_response": "assistant"}
# "bolt44" is the schema's enum value for Bolt.new (a typo, by all appearances); the
# converters write "bolt" and both are read as Bolt.new.
BOLT_NAMES = ("bolt", "bolt44", "bolt_new", "bolt.new")
TOOL_TITLES = {"claude_code": "Claude Code", "cursor": "Cursor", "lovable": "Lovable",
               **dict.fromkeys(BOLT_NAMES, "Bolt.new")}
SUCCESS_WORDS = frozenset(("success", "succeeded", "successful", "completed", "complete", "done",
                           "resolved", "passed", "ok"))
FAILURE_WORDS = frozenset(("failure", "failed", "fail", "error", "errored", "aborted", "cancelled",
                           "canceled", "crashed", "timeout", "timed_out"))
_STEP_TYPE_RE = re.compile(rb'"type"\s*:\s*"(?:user_message|assistant_message|assistant_response|system_message)"')
_TOOL_NAME_RE = re.compile(rb'"tool_name"\s*:\s*"(?:claude_code|cursor|bolt44|bolt|lovable|other)"')


# -- schema and validation --------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def seed_schema() -> dict:
    """The specification's JSON Schema, verbatim."""
    text = resources.files("parsers.schema").joinpath("swf.schema.json").read_text("utf-8")
    return orjson.loads(text)


@functools.lru_cache(maxsize=None)
def tolerant_schema() -> dict:
    """The verbatim schema plus the cases the specification's own examples need."""
    s = copy.deepcopy(seed_schema())
    step = s["properties"]["steps"]["items"]["properties"]
    # The spec's SWF example has a step of type "assistant_response"; the enum lacks it.
    step["type"]["enum"].append("assistant_response")
    # The enum names Bolt.new "bolt44"; accept the tool's own name as well.
    tool_name = s["properties"]["metadata"]["properties"]["tool_name"]
    tool_name["enum"] += [n for n in BOLT_NAMES if n not in tool_name["enum"]]
    # Bolt.new's example records action results as strings ("success") where the schema
    # wants an object; an SWF written by copying them keeps the string.
    step["tool_calls"]["items"]["properties"]["output"] = {"type": ["object", "string"]}
    return s


_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:[Zz]|[+-]\d{2}:\d{2})$")
def _is_date_time(value) -> bool:
    if not isinstance(value, str):
        return True  # the type keyword reports non-strings
    if not _RFC3339.match(value):
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z").replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=2)
def _validator(strict: bool) -> jsonschema.Draft7Validator:
    import jsonschema  # imported when first needed: every cook imports this module

    formats = jsonschema.FormatChecker(formats=())
    formats.checks("date-time")(_is_date_time)
    return jsonschema.Draft7Validator(seed_schema() if strict else tolerant_schema(), format_checker=formats)


def validation_problems(doc, file: str = "", strict: bool = False) -> list[Problem]:
    """Every schema violation of `doc` as a Problem whose path points at the offending field.

    A missing required field is reported at the field's own path (e.g. /metadata/start_time)."""
    errors = sorted(_validator(strict).iter_errors(doc),
                    key=lambda e: ([str(p) for p in e.absolute_path], e.validator, e.message))
    out: list[Problem] = []
    for e in errors:
        parts = list(e.absolute_path)
        if e.validator == "required":
            missing = [k for k in e.validator_value if isinstance(e.instance, dict) and k not in e.instance]
            name = next((k for k in missing if f"{k!r} is a required property" == e.message), None)
            if name is not None:
                out.append(Problem(file, f"required field {name!r} is missing", path=pointer(*parts, name)))
                continue
        out.append(Problem(file, _message(e), path=pointer(*parts)))
    return out


def validate(doc, file: str = "", strict: bool = False) -> None:
    """Raise ValidationError listing every violation (with its JSON path) when `doc` is not valid SWF."""
    errs = validation_problems(doc, file, strict)
    if errs:
        raise ValidationError(f"{file or 'document'}: not valid {TITLE} ({len(errs)} error"
                              f"{'s' * (len(errs) != 1)})", errs)


def check(doc) -> list[tuple[str, str]]:
    """`traceview validate`'s check: (JSON pointer, message) per violation."""
    return [(p.path, p.message) for p in validation_problems(doc)]


def is_kind(doc) -> bool:
    return isinstance(doc, dict) and "steps" in doc and ("metadata" in doc or "summary" in doc) \
        and "messages" not in doc


def check_if_workflow(doc) -> list[tuple[str, str]] | None:
    """`traceview validate`'s check when `doc` is a workflow; None when it is not one."""
    return check(doc) if is_kind(doc) else None


def _message(e: jsonschema.ValidationError) -> str:
    if e.validator == "type":
        want = e.validator_value if isinstance(e.validator_value, str) else " or ".join(e.validator_value)
        return f"expected {want}, found {kind(e.instance)}"
    if e.validator == "enum":
        return f"{_short(e.instance)} is not one of {', '.join(map(str, e.validator_value))}"
    if e.validator == "format":
        return f"{_short(e.instance)} is not a {e.validator_value} (RFC 3339, e.g. 2024-01-01T10:00:00Z)"
    if e.validator == "minItems":
        return f"expected at least {e.validator_value} item{'s' * (e.validator_value != 1)}"
    msg = e.message
    return msg if len(msg) <= 200 else msg[:199] + "…"


def _short(v) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:59] + "…"


def kind(v) -> str:
    """How a JSON value is described in messages."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__


# -- reading JSON that may be cut off ---------------------------------------------------

def load_json(src: Source, problems: list[Problem]):
    """The JSON document in `src`; when it is broken or cut off, what came before the break
    (a Problem names the line and the JSON path where it broke). None when nothing is readable."""
    data = src.read_bytes()
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    data = data[bom:]
    if not data.strip():
        problems.append(Problem(src.name, "the file is empty"))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        text = data.decode("utf-8", errors="replace")
        problems.append(Problem(src.name, f"bytes that are not UTF-8 (the first at byte {bom + e.start}) were replaced "
                                          "with U+FFFD"))
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError as e:
        got = salvage(text, e.pos)
        where = f"line {e.lineno} column {e.colno}"
        if got is None:
            problems.append(Problem(src.name, f"not valid JSON ({e.msg} at {where}); nothing could be read",
                                    line=e.lineno))
            return None
        value, path = got
        problems.append(Problem(src.name, f"not valid JSON ({e.msg} at {where}): the file is broken or cut "
                                          f"off there; what came before was read", line=e.lineno, path=path))
        return value


_OUTSIDE = re.compile(r'[\[\]{},:"]')
_INSIDE = re.compile(r'["\\]')
_CLOSER = {"{": "}", "[": "]"}


def salvage(text: str, end: int) -> tuple[object, str] | None:
    """(value, JSON pointer of the break) for the longest prefix of text[:end] that closes into
    valid JSON, or None. Cut points are the ends of complete members and elements."""
    stack: list[list] = []  # [opener, key (objects) or index (arrays)]
    cuts: deque = deque(maxlen=32)  # (position, closing brackets)
    last_str = None
    pos = 0
    while True:
        m = _OUTSIDE.search(text, pos, end)
        if m is None:
            break
        c, i = m.group(), m.start()
        pos = i + 1
        if c == '"':
            j = pos
            while True:
                k = _INSIDE.search(text, j, end)
                if k is None or k.group() == '"':
                    break
                j = k.start() + 2
            if k is None:
                break  # the break is inside this string
            last_str, pos = (i, k.end()), k.end()
        elif c in "[{":
            stack.append([c, 0 if c == "[" else None])
            cuts.append((pos, _closers(stack)))
        elif c in "]}":
            if not stack:
                break
            stack.pop()
            if not stack:
                break
            cuts.append((pos, _closers(stack)))
        elif c == "," and stack:
            cuts.append((i, _closers(stack)))
            top = stack[-1]
            top[1] = top[1] + 1 if top[0] == "[" else None
        elif c == ":" and stack and stack[-1][0] == "{" and last_str:
            try:
                stack[-1][1] = orjson.loads(text[last_str[0]:last_str[1]])
            except orjson.JSONDecodeError:
                stack[-1][1] = None
    path = []
    for _, key in stack:
        if key is None:
            break
        path.append(key)
    for cut, closers in reversed(cuts):
        try:
            return orjson.loads(text[:cut] + closers), pointer(*path)
        except orjson.JSONDecodeError:
            continue
    return None


def _closers(stack: list[list]) -> str:
    return "".join(_CLOSER[o] for o, _ in reversed(stack))


# -- the format: sniff, parse, cook -----------------------------------------------------

def sniff(src: Source) -> str | None:
    head = src.head
    why = not_a_json_object(head)
    if why:
        return why
    if b'"steps"' not in head:
        return 'no "steps" field'
    if b'"metadata"' not in head and b'"summary"' not in head:
        return 'no "metadata" or "summary" field'
    if not _STEP_TYPE_RE.search(head) and not _TOOL_NAME_RE.search(head):
        return "no workflow step type (user_message, assistant_message, ...) or tool_name"
    return None


def parse(src: Source, *_options) -> ParseResult:
    problems: list[Problem] = []
    doc = load_json(src, problems)
    if doc is None:
        raise ValidationError(f"{src.name}: nothing readable", problems)
    if not isinstance(doc, dict):
        problems.append(Problem(src.name, f"expected a JSON object (a workflow), found {kind(doc)}"))
        raise ValidationError(f"{src.name}: not a {TITLE} document", problems)
    problems.extend(validation_problems(doc, src.name))
    if not isinstance(doc.get("steps"), list):
        raise ValidationError(f"{src.name}: the workflow has no steps to read", problems)
    return ParseResult(format=NAME, traces=[to_trace(doc, src, NAME, problems)])


def to_trace(doc: dict, src: Source, fmt: str, problems: list[Problem]) -> ParsedTrace:
    """An SWF document (as read, the tolerated variants included) -> one ParsedTrace."""
    meta = as_dict(doc.get("metadata"))
    summary = as_dict(doc.get("summary"))
    model = as_text(meta.get("model_name"))
    read = _Steps(model)
    steps = doc.get("steps") if isinstance(doc.get("steps"), list) else []
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            continue  # reported by the schema check
        with record_guard(problems, src.name, f"the {fmt} reader", record=i, path=pointer("steps", i)):
            read.step(step, i, src.name, problems)

    tool = as_text(meta.get("tool_name"))
    started, ended = (read_time(meta.get(key), problems, src.name, pointer("metadata", key), "left out")
                      for key in ("start_time", "end_time"))
    duration = as_number(meta.get("total_duration"))
    outcome = outcome_of(meta, doc)
    cost = as_number(summary.get("estimated_cost"))
    return ParsedTrace(
        format=fmt, title=_title(meta, doc, tool, src),
        task=as_text(meta.get("task_description")) or _task(read.first_user),
        messages=read.messages, turns=read.turns, models=read.models, started_at=started, ended_at=ended,
        duration_ms=duration * 1000 if duration is not None else None,
        outcome=outcome, outcome_detail=as_text(meta.get("final_output_description")),
        stated_cost=cost, artifacts=read.artifacts, meta=_meta(doc, meta, summary, tool), problems=problems)


class _Steps:
    """The messages, turns and artifacts of a workflow's steps, read one step at a time."""

    def __init__(self, model: str | None):
        self.model = model
        self.messages: list[Message] = []
        self.turns: dict[int, Turn] = {}
        self.artifacts: list[Artifact] = []
        self.models = [model] if model else []
        self.first_user: str | None = None

    def step(self, step: dict, i: int, file: str, problems: list[Problem]) -> None:
        messages = self.messages
        sid = as_text(step.get("step_id")) or f"step_{i + 1:03d}"
        ts = read_time(step.get("timestamp"), problems, file, pointer("steps", i, "timestamp"),
                       "the step is shown without a time", record=i)
        extra = {"timestamp": ts} if ts is not None else None
        role = _role(step.get("type"))
        content = text_of(step.get("content"))
        calls = [c for c in step.get("tool_calls") if isinstance(c, dict)] \
            if isinstance(step.get("tool_calls"), list) else []
        if role == "user" and self.first_user is None and content.strip():
            self.first_user = content
        start = len(messages)
        if role == "assistant" and step.get("thinking"):
            messages.append(Message("thinking", text_of(step["thinking"]), extra=extra))
        if content or not calls or role != "assistant":
            messages.append(Message(role, content, extra=extra))
        if not calls and role != "assistant":
            return
        if role != "assistant":
            start = len(messages)  # calls on another step kind (reported by the schema check) still show
        tool_use, results = _calls(calls, sid, extra, self.artifacts)
        if tool_use is not None:
            messages.append(tool_use)
        step_model = as_text(step.get("model")) or self.model
        if step_model and step_model not in self.models:
            self.models.append(step_model)
        if start < len(messages):
            self.turns[start] = Turn(model=step_model, timestamp=ts, usage=step_usage(step.get("tokens")),
                                     cost=_cost(step), duration_ms=as_number(step.get("duration_ms")))
        messages.extend(results)


def _calls(calls: list[dict], sid: str, extra: dict | None, artifacts: list[Artifact]) -> tuple[Message | None, list[Message]]:
    """A step's tool calls -> (one tool_use message, the tool_result of each call that has an output)."""
    if not calls:
        return None, []
    tool_calls, results = [], []
    for n, call in enumerate(calls):
        # A call id made up from the step when the source gives none, so that the call and
        # its result still pair up.
        cid = as_text(call.get("call_id")) or as_text(call.get("id")) or f"{sid}:{n}"
        args = call.get("input")
        tool_calls.append({"name": as_text(call.get("tool_name")), "arguments": args if args is not None else {}, "id": cid})
        if "output" in call:
            out = call["output"]
            results.append(Message("tool_result", output_text(out), tool_use_id=cid, is_error=failed(out), extra=extra))
        artifacts.extend(_artifacts(call, sid))
    return Message("tool_use", "", tool_calls=tool_calls, extra=extra), results


def _role(step_type) -> str:
    role = STEP_ROLES.get(step_type) if isinstance(step_type, str) else None
    if role:
        return role
    # An unknown type (reported by the schema check) keeps its content, under the nearest role.
    t = step_type.lower() if isinstance(step_type, str) else ""
    return "assistant" if "assistant" in t else "user" if "user" in t else "system"


def text_of(v) -> str:
    """Content as text: strings as they are, content blocks joined, anything else as JSON."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, list) and all(isinstance(b, dict) and isinstance(b.get("text"), str) for b in v):
        return "\n".join(b["text"] for b in v)
    return json_text(v)


def json_text(v) -> str:
    return orjson.dumps(v, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS, default=str).decode()


_OUTPUT_TEXT_KEYS = ("output", "result", "stdout", "content", "text", "message", "error")


def output_text(out) -> str:
    """A tool call's output as the result's text: a lone text field as it is, else JSON."""
    if out is None:
        return ""
    if isinstance(out, str):
        return out
    if isinstance(out, dict):
        texts = [k for k in _OUTPUT_TEXT_KEYS if isinstance(out.get(k), str)]
        if len(out) == 1 and texts:
            return out[texts[0]]
    return json_text(out)


def failed(out) -> bool:
    """Does a tool call's output say it failed?"""
    if isinstance(out, str):
        w = out.strip().lower()
        return w in FAILURE_WORDS or w.startswith("error")
    if not isinstance(out, dict):
        return False
    if out.get("success") is False or out.get("is_error") is True or out.get("error"):
        return True
    for key in ("type", "status", "result"):
        v = out.get(key)
        if isinstance(v, str) and v.strip().lower() in FAILURE_WORDS:
            return True
    code = out.get("exit_code")
    return isinstance(code, int) and not isinstance(code, bool) and code != 0


def step_usage(tokens) -> dict | None:
    """An SWF step's token counts -> normalised usage; None when it states none."""
    if not isinstance(tokens, dict):
        return None
    u, found = usage_mod.empty(), False
    for k in usage_mod.KINDS:
        v = tokens.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0:
            u[k] = int(v)
            found = True
    return u if found else None


def outcome_of(meta: dict, doc: dict) -> str:
    for holder in (meta, doc):
        for key in ("status", "outcome"):
            v = holder.get(key)
            if isinstance(v, str):
                w = v.strip().lower()
                if w in SUCCESS_WORDS:
                    return "success"
                if w in FAILURE_WORDS:
                    return "failure"
                if w == "partial":
                    return "partial"
    s = meta.get("success")
    if isinstance(s, bool):
        return "success" if s else "failure"
    return "unknown"


def _cost(step: dict) -> float | None:
    for key in ("cost", "estimated_cost", "cost_usd"):
        v = as_number(step.get(key))
        if v is not None and v >= 0:
            return v
    return None


def _artifacts(call: dict, sid: str) -> list[Artifact]:
    """Files a tool call wrote (with their content) and line edits it made (as a patch)."""
    args = call.get("input")
    if not isinstance(args, dict):
        return []
    path = next((args[k] for k in ("path", "file_path", "filename") if isinstance(args.get(k), str)), None)
    if path is None:
        return []
    body = next((args[k] for k in ("content", "file_text", "new_content") if isinstance(args.get(k), str)), None)
    if body is not None:
        return [Artifact("file", path, body, details={"step": sid, "tool": as_text(call.get("tool_name"))})]
    changes = args.get("changes")
    if isinstance(changes, list) and changes and all(isinstance(c, dict) for c in changes):
        hunks = []
        for c in changes:
            line = c.get("line")
            hunks.append(f"@@ line {line} @@" if line is not None else "@@")
            hunks += [f"-{ln}" for ln in str(c.get("old") or "").splitlines()]
            hunks += [f"+{ln}" for ln in str(c.get("new") or "").splitlines()]
        patch = f"--- {diff_name('a', path)}\n+++ {diff_name('b', path)}\n" + "\n".join(hunks) + "\n"
        return [Artifact("patch", path, patch, details={"step": sid, "tool": as_text(call.get("tool_name"))})]
    return []


def _title(meta: dict, doc: dict, tool: str | None, src: Source) -> str:
    name = next((v for v in (meta.get("workflow_name"), meta.get("name"), meta.get("title"), doc.get("name"),
                             meta.get("session_id")) if isinstance(v, str) and v.strip()), None)
    base = name or src.basename
    tool_title = TOOL_TITLES.get(tool or "")
    return f"{tool_title}: {base}" if tool_title else base


def _task(text: str | None) -> str | None:
    if not text:
        return None
    t = " ".join(text.split())
    return t[:200] + ("…" if len(t) > 200 else "")


_MAPPED = ("tool_name", "model_name", "start_time", "end_time", "total_duration", "success",
           "task_description", "final_output_description")


def _meta(doc: dict, meta: dict, summary: dict, tool: str | None) -> dict:
    out = {"tool": TOOL_TITLES.get(tool or "", tool), "tool_name": tool, "swf_version": as_text(doc.get("version"))}
    out.update({k: v for k, v in meta.items() if k not in _MAPPED})
    if summary:
        out["summary"] = summary
    if isinstance(doc.get("validation"), dict):
        out["validation"] = doc["validation"]
    return out





# -- normalising (what `traceview convert --to swf` writes) -----------------------------

def normalise(doc: dict) -> dict:
    """A copy written the canonical way: assistant steps as "assistant_message", tool outputs
    as objects, RFC 3339 times, and the summary's totals, tool-call counts and the
    duration filled in from the steps when missing."""
    doc = copy.deepcopy(doc)
    meta = doc.get("metadata")
    steps = doc.get("steps")
    for step in steps if isinstance(steps, list) else []:
        if not isinstance(step, dict):
            continue
        if step.get("type") == "assistant_response":
            step["type"] = "assistant_message"
        if "timestamp" in step:
            step["timestamp"] = iso_time(step["timestamp"])
        for call in step.get("tool_calls") or [] if isinstance(step.get("tool_calls"), list) else []:
            if isinstance(call, dict) and isinstance(call.get("output"), str):
                call["output"] = {"result": call["output"]}
    if isinstance(meta, dict):
        for key in ("start_time", "end_time"):
            if key in meta:
                meta[key] = iso_time(meta[key])
        if "total_duration" not in meta:
            a, b = to_epoch_ms(meta.get("start_time")), to_epoch_ms(meta.get("end_time"))
            if a is not None and b is not None and b >= a:
                meta["total_duration"] = round((b - a) / 1000)
    summary = doc.setdefault("summary", {})
    if isinstance(summary, dict) and isinstance(steps, list):
        if not isinstance(summary.get("total_tokens"), dict):
            summary["total_tokens"] = step_totals(steps)
        if "tool_calls" not in summary:
            summary["tool_calls"] = tool_call_counts(steps)
    return doc


def step_totals(steps: list) -> dict:
    """Token totals of the model's steps. User steps' counts are left out: they count the
    message itself, which the next assistant step's input counts again (as in the spec's example)."""
    tot = {"input": 0, "output": 0}
    for s in steps:
        if isinstance(s, dict) and _role(s.get("type")) == "assistant":
            u = step_usage(s.get("tokens")) or {}
            tot["input"] += u.get("input", 0)
            tot["output"] += u.get("output", 0)
    tot["total"] = tot["input"] + tot["output"]
    return tot


def tool_call_counts(steps: list) -> dict:
    by: dict[str, int] = {}
    for s in steps:
        calls = s.get("tool_calls") if isinstance(s, dict) else None
        for c in calls if isinstance(calls, list) else []:
            if isinstance(c, dict):
                name = c.get("tool_name") if isinstance(c.get("tool_name"), str) else "unknown"
                by[name] = by.get(name, 0) + 1
    return {"total": sum(by.values()), "by_type": by}


def iso_time(v):
    """An RFC 3339 time for what the sources give (ISO strings, epoch seconds or ms); values
    that cannot be read are kept as they are so that validation names them."""
    if isinstance(v, str) and _is_date_time(v):
        return v
    ms = to_epoch_ms(v)
    if ms is None:
        return v
    dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return dt.isoformat(timespec="milliseconds" if ms % 1000 else "seconds").replace("+00:00", "Z")


def converter(read_doc, check_output: bool):
    """A format's `convert`: its reader's document normalised; for a tool export (not an SWF
    file, whose violations its reader lists) the written document is checked too."""
    def convert(src: Source) -> tuple[dict, list[Problem]]:
        doc, problems = read_doc(src)
        doc = normalise(doc)
        if check_output:
            problems = problems + [Problem(src.name, f"the written {TITLE} breaks its schema at "
                                                     f"{p.path or '/'}: {p.message}")
                                   for p in validation_problems(doc)]
        return doc, problems
    return convert


def read(src: Source) -> tuple[dict, list[Problem]]:
    """An SWF file for conversion: the document as read and its problems (ValidationError when
    nothing usable is there)."""
    problems: list[Problem] = []
    doc = load_json(src, problems)
    if not isinstance(doc, dict):
        if doc is not None:
            problems.append(Problem(src.name, f"expected a JSON object (a workflow), found {kind(doc)}"))
        raise ValidationError(f"{src.name}: not a {TITLE} document", problems)
    problems.extend(validation_problems(doc, src.name))
    return doc, problems


FORMAT = Format(
    name=NAME, title=TITLE,
    description="Workflows of AI coding tools in the Standard Workflow Format: metadata, steps with "
                "token counts and tool calls, summary (validated against its JSON Schema)",
    sniff=sniff, parse=parse, priority=40, validate=check_if_workflow, convert=converter(read, check_output=False))
