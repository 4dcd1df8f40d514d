"""mini-swe-agent trajectories (`*.traj.json`), with the files a batch run writes beside them.

A trajectory is `{info, messages, trajectory_format, instance_id?}`; `trajectory_format` is
`mini-swe-agent-1` (1.x) or `mini-swe-agent-1.1` (2.x). Early versions wrote the bare list of
messages. `messages` are OpenAI chat messages with an `extra` object:
- an assistant message is one model call: `extra.response` is the raw response (its `usage`
  and `model`), `extra.cost` and `extra.timestamp` (2.x); `extra.actions` are the commands it
  asked for, each with the `tool_call_id` of a native tool call or, parsed from the text, none;
  without `extra.actions` (1.x and earlier) the command is the reply's one ```bash block (or
  ```mswea_bash_command), as mini-swe-agent parses it: a reply with none or several asked for
  nothing;
- `tool` messages answer native tool calls; without them the observation is the next `user`
  message (a format error is a `user` message with `extra.interrupt_type`);
- the `exit` message ends a 2.x run (`extra.exit_status`, `extra.submission`); after a
  command whose output ended the run (the submission) it is that command's result;
- with the OpenAI Responses API a model call is the Response object itself (`object:
  "response"`, its `output` items: reasoning, message, function_call; `usage`), and tool
  results are `function_call_output` items.
`info` holds `exit_status`, `submission` (the patch), `model_stats` (`instance_cost`,
`api_calls`), `config.model.model_name` and `mini_version`. A batch run writes `preds.json`
(`{instance_id: {model_name_or_path, model_patch}}`) and `exit_statuses_<time>.yaml`
(`instances_by_exit_status`) beside the instances' folders; they are companions, read with the
trajectories, and fill in a patch or exit status the trajectory lacks. Problem paths are JSON
pointers.
"""
from __future__ import annotations

import fnmatch
import functools
import io
import re
from collections import Counter

import ijson
import orjson

from parsers.io.guard import record_guard
from parsers.io.records import as_dict, as_number, as_text, first_char, looks_binary, loads_once, object_at, read_json
from parsers.io.source import Source
from parsers.io.times import to_epoch_ms
from parsers.model import (Artifact, Companion, Format, Message, ParsedTrace, ParseResult, Problem, Scorecard, Turn,
                           json_kind)
from parsers.providers import usage as usage_mod
from parsers.providers.messages import result_content
from parsers.providers.openai import OpenAIMessages

NAME = "mini-swe-agent"
SUFFIX = ".traj.json"
WHO = "the mini-swe-agent reader"
PREDS = "*preds.json"
EXIT_STATUSES = "*exit_statuses_*.yaml"
TOP_KEYS = frozenset(("info", "messages", "trajectory_format", "instance_id"))
MESSAGE_KEYS = frozenset(("role", "content", "extra", "tool_calls", "tool_call_id", "function_call",
                          "provider_specific_fields", "reasoning_content", "reasoning", "name", "type", "annotations",
                          "audio", "refusal", "thinking_blocks", "images", "call_id", "output"))
# mini-swe-agent's action_regex: 1.x ```bash blocks, 2.x text-based models ```mswea_bash_command blocks.
ACTION_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)


# -- detection ------------------------------------------------------------------------
def sniff(src: Source) -> str | None:
    name = src.basename.lower()
    if fnmatch.fnmatchcase(name, PREDS):
        return Companion("the predictions of a mini-swe-agent or SWE-agent batch run, read with its trajectories")
    if fnmatch.fnmatchcase(name, EXIT_STATUSES):
        return Companion("the exit statuses of a mini-swe-agent batch run, read with its trajectories")
    head = src.head
    if looks_binary(head):
        return "binary content"
    if name.endswith(SUFFIX) and first_char(head) in "[{":
        return None
    if b'"trajectory_format"' in head and b'"mini-swe-agent' in head:
        return None
    return 'not a .traj.json file, and no "trajectory_format": "mini-swe-agent…" in the first bytes'


# -- reading --------------------------------------------------------------------------
def parse(src: Source) -> ParseResult:
    problems: list[Problem] = []
    data = _load(src, problems)
    if data is None:
        return ParseResult(format=NAME, traces=[], problems=problems)
    doc = {"messages": data} if isinstance(data, list) else data
    if not isinstance(doc, dict):
        problems.append(Problem(src.name, f"expected a mini-swe-agent trajectory object, found {json_kind(data)}"))
        return ParseResult(format=NAME, traces=[], problems=problems)
    trace = ParsedTrace(format=NAME, messages=[], problems=problems, meta={})
    with record_guard(problems, src.name, WHO):
        _read(src, doc, "" if isinstance(data, list) else "/messages", trace)
    msgs = doc.get("messages")
    return ParseResult(format=NAME, traces=[trace], problems=problems, records=len(msgs) if isinstance(msgs, list) else 0)


def _load(src: Source, problems: list[Problem]):
    """The file's JSON. A file cut off keeps its complete messages (and, for an object, the
    complete values before them)."""
    data, raw, error = read_json(src, problems)
    if raw is None:
        return data
    listed = first_char(raw[:64]) == "["
    data = {} if listed else dict(_complete(ijson.kvitems(io.BytesIO(raw), "", use_float=True)))
    msgs = data.get("messages")
    if not isinstance(msgs, list):
        msgs = data["messages"] = _complete(ijson.items(io.BytesIO(raw), "item" if listed else "messages.item",
                                                        use_float=True))
    if not msgs:
        problems.append(Problem(src.name, f"not valid JSON ({error}); nothing loaded"))
        return None
    problems.append(Problem(src.name, f"not valid JSON ({error}); the file looks cut off: its {len(msgs)} complete "
                                      "messages (and the values before them) were loaded"))
    return msgs if listed else data


def _complete(values) -> list:
    """The values an ijson iterator gives before the document breaks off."""
    out = []
    try:
        for v in values:
            out.append(v)
    except (ijson.JSONError, ValueError):
        pass
    return out


def _read(src: Source, doc: dict, base: str, trace: ParsedTrace) -> None:
    file, problems = src.name, trace.problems
    unknown: Counter = Counter(f"/{k}" for k in doc if k not in TOP_KEYS)
    info = object_at(doc, "info", file, problems)
    config = as_dict(info.get("config"))
    model = as_text(as_dict(config.get("model")).get("model_name"))
    stem = src.basename[: -len(SUFFIX)] if src.basename.lower().endswith(SUFFIX) else src.basename
    task = as_text(doc.get("instance_id")) or stem
    trace.title, trace.task = task, task
    for key, value in (("trajectory_format", doc.get("trajectory_format")), ("mini_version", info.get("mini_version")),
                       ("agent_type", config.get("agent_type")), ("model_type", config.get("model_type"))):
        if isinstance(value, str):
            trace.meta[key] = value
    msgs = doc.get("messages")
    reader = _Messages(file, problems, trace, model, unknown)
    if isinstance(msgs, list):
        reader.read(msgs, base)
    else:
        problems.append(Problem(file, f"expected the messages as an array, found {json_kind(msgs)}; the run has no "
                                      "conversation", path="/messages"))
    trace.models = reader.models or ([model] if model else None)
    if reader.times:
        trace.started_at, trace.ended_at = min(reader.times), max(reader.times)
        trace.duration_ms = float(trace.ended_at - trace.started_at)
    _run_end(src, info, reader.exit, task, trace)
    if unknown:
        trace.meta["unknown_fields"] = dict(sorted(unknown.items()))


class _Messages(OpenAIMessages):
    """The messages in one pass: each model call a Turn; calls parsed from text get the id
    `action-<message>-<n>` and the next user messages as their results."""

    name = "mini-swe-agent"

    def __init__(self, file: str, problems: list[Problem], trace: ParsedTrace, model: str | None, unknown: Counter):
        super().__init__(file, {}, problems)
        self.trace, self.model, self.unknown = trace, model, unknown
        self.models: list[str] = []
        self.times: list[int] = []
        self.waiting: list[str] = []
        self.open: list[str] = []  # the last model call's calls still without a result
        self.exit: dict = {}

    def read(self, msgs: list, base: str) -> None:
        for k, m in enumerate(msgs):
            with record_guard(self.problems, self.file, WHO, path=f"{base}/{k}"):
                self.message_of_run(m, k, f"{base}/{k}")

    def message_of_run(self, m, k: int, path: str) -> None:
        out = self.trace.messages
        if not isinstance(m, dict):
            self.problem(path, f"expected a message object, found {json_kind(m)}; skipped")
            return
        if m.get("object") != "response":  # a Response object's own fields are the API's
            self.unknown.update(f"/messages/*/{key}" for key in m if key not in MESSAGE_KEYS)
        extra = m.get("extra")
        if extra is not None and not isinstance(extra, dict):
            self.problem(path + "/extra", f"expected an object, found {json_kind(extra)}; ignored")
        extra = as_dict(extra)
        ts = to_epoch_ms(extra.get("timestamp"))
        if ts is not None:
            self.times.append(ts)
        role, kind = m.get("role"), m.get("type")
        if m.get("object") == "response":
            self.turn(k, extra, m, ts, lambda: self.response_output(m.get("output"), path + "/output"),
                      extra.get("actions"))
        elif role == "assistant":
            acts = extra.get("actions")
            if acts is None and not m.get("tool_calls"):
                acts = _text_actions(m.get("content"))
            self.turn(k, extra, as_dict(extra.get("response")), ts, lambda: self.chat_turn(m, path), acts)
        elif role == "tool" or kind == "function_call_output":
            text, images = result_content(m.get("content") if role == "tool" else m.get("output"))
            self.result(text, as_text(m.get("tool_call_id") or m.get("call_id")), extra, images)
        elif role == "user" and self.waiting and "interrupt_type" not in extra:
            text, images = result_content(m.get("content"))
            self.result(text, self.waiting.pop(0), extra, images)
        elif role == "exit":
            self.exit = extra
            content, note = str(m.get("content") or ""), {"exit_status": extra.get("exit_status")}
            if self.open:  # the run ended on the output of its last command (the submission): that call's result
                self.result(content, self.open[0], extra, None, note)
            else:
                out.append(Message("system", content, extra=note))
        elif role in ("system", "user", "developer"):
            self.waiting = []
            out.extend(self.content("system" if role == "developer" else role, m.get("content"), path + "/content"))
        elif isinstance(role, str) or (role is None and isinstance(kind, str)):
            self.unknown[f"role {role!r}" if role is not None else f"type {kind!r}"] += 1
        else:
            self.problem(path + ("/role" if "role" in m else ""), f"expected a message with a role, found "
                                                                  f"{json_kind(role)}; skipped")

    def turn(self, k: int, extra: dict, response: dict, ts: int | None, read, acts) -> None:
        """One model call: its messages (an empty reply keeps its place), the commands it asked
        for in text (`acts`) and its accounting."""
        out = self.trace.messages
        start = len(out)
        read()
        parsed = [as_dict(a) for a in acts if not as_dict(a).get("tool_call_id")] if isinstance(acts, list) else []
        self.waiting = [f"action-{k}-{n}" for n in range(len(parsed))]
        if parsed:
            out.append(Message("tool_use", "", tool_calls=[
                {"name": "bash", "arguments": {"command": str(a.get("command", ""))}, "id": call_id}
                for call_id, a in zip(self.waiting, parsed)]))
        if len(out) == start:
            out.append(Message("assistant", ""))
        self.open = [c.get("id") for msg in out[start:] for c in msg.tool_calls or ()]
        model = as_text(response.get("model")) or self.model
        if model and model not in self.models:
            self.models.append(model)
        self.trace.turns[start] = Turn(model=model, timestamp=ts or to_epoch_ms(response.get("created")
                                                                                or response.get("created_at")),
                                       usage=usage_mod.from_any(response.get("usage")), cost=as_number(extra.get("cost")))

    def result(self, text: str, call_id: str | None, extra: dict, images, note: dict | None = None) -> None:
        self.open = [c for c in self.open if c != call_id]
        self.trace.messages.append(Message("tool_result", text, tool_use_id=call_id, images=images, extra=note,
                                           is_error=bool(extra.get("exception_info")) or None))

    def chat_turn(self, m: dict, path: str) -> None:
        """A chat message of the model: thinking, its text, then its native tool calls."""
        out = self.trace.messages
        for msg in self.assistant(m, path):
            if msg.role == "tool_use" and msg.content:
                out.append(Message("assistant", msg.content, images=msg.images))
                msg = Message("tool_use", "", tool_calls=msg.tool_calls)
            out.append(msg)

    def response_output(self, items, path: str) -> None:
        """The output items of a Responses API call."""
        out = self.trace.messages
        if not isinstance(items, list):
            self.problem(path, f"expected an array of output items, found {json_kind(items)}")
            return
        calls = []
        for i, it in enumerate(items):
            it = as_dict(it)
            kind = it.get("type")
            if kind == "reasoning":
                parts = [as_text(as_dict(s).get("text")) for s in it.get("summary") or () if isinstance(s, dict)]
                if any(parts):
                    out.append(Message("thinking", "\n\n".join(p for p in parts if p)))
            elif kind == "message":
                out.extend(self.content("assistant", it.get("content"), f"{path}/{i}/content"))
            elif kind == "function_call":
                name = as_text(it.get("name"))
                calls.append({"name": name, "id": as_text(it.get("call_id") or it.get("id")),
                              "arguments": self.parse_arguments(it.get("arguments"), f"{path}/{i}/arguments", name)})
            else:
                self.unknown[f"output item {kind!r}"] += 1
        if calls:
            out.append(Message("tool_use", "", tool_calls=calls))


def _text_actions(content) -> list[dict]:
    """The command of a reply without `extra.actions`: its one action block, else none."""
    found = ACTION_BLOCK.findall(content) if isinstance(content, str) else []
    return [{"command": found[0].strip()}] if len(found) == 1 else []


# -- the run's end and the files beside it -------------------------------------------------
def _run_end(src: Source, info: dict, exit_msg: dict, task: str, trace: ParsedTrace) -> None:
    file, problems = src.name, trace.problems
    stats = object_at(info, "model_stats", file, problems, "/info")
    trace.stated_cost = as_number(stats.get("instance_cost"))
    calls = as_number(stats.get("api_calls"))
    for key in ("instance_cost", "api_calls"):
        if stats.get(key) is not None and as_number(stats[key]) is None:
            problems.append(Problem(file, f"expected a number, found {json_kind(stats[key])}; ignored",
                                    path=f"/info/model_stats/{key}"))
    pred, listed = _beside(src, task, problems)
    exit_status = as_text(info.get("exit_status")) or as_text(exit_msg.get("exit_status")) or listed
    if exit_status:
        trace.meta["exit_status"] = exit_status
        trace.outcome_detail = f"exit status: {exit_status}"
    patch = info.get("submission")
    if patch is not None and not isinstance(patch, str):
        problems.append(Problem(file, f"expected the submitted patch as text, found {json_kind(patch)}; ignored",
                                path="/info/submission"))
    patch = next((p for p in (patch, exit_msg.get("submission"), pred.get("model_patch"))
                  if isinstance(p, str) and p.strip()), None)
    if patch is not None:
        trace.artifacts.append(Artifact("patch", "submission", patch, "unified-diff"))
    if trace.models is None and as_text(pred.get("model_name_or_path")):
        trace.models = [pred["model_name_or_path"]]
    if calls is not None:
        trace.scorecard = Scorecard(metrics={"api_calls": calls})


def _beside(src: Source, task: str, problems: list[Problem]) -> tuple[dict, str | None]:
    """(this instance's entry in preds.json, its status in exit_statuses_*.yaml), from the run's
    files beside the trajectory or one folder up (a batch run gives each instance a folder)."""
    pred, status = {}, None
    for folder in (".", ".."):
        for entry in _run_files(tuple(src.listdir(folder) or ())):
            low = entry.lower()
            if fnmatch.fnmatchcase(low, PREDS):
                pred = as_dict(as_dict(_companion(src, f"{folder}/{entry}", orjson.loads, problems)).get(task)) or pred
            elif fnmatch.fnmatchcase(low, EXIT_STATUSES):
                by_status = as_dict(as_dict(_companion(src, f"{folder}/{entry}", _yaml, problems))
                                    .get("instances_by_exit_status"))
                status = next((str(s) for s, ids in by_status.items() if isinstance(ids, list) and task in ids), status)
    return pred, status


@functools.lru_cache(maxsize=64)
def _run_files(entries: tuple[str, ...]) -> tuple[str, ...]:
    """The run's files among a folder's entries (a folder of 500 trajectories is looked
    through once, not once per trajectory)."""
    return tuple(e for e in entries if fnmatch.fnmatchcase(e.lower(), PREDS) or fnmatch.fnmatchcase(e.lower(), EXIT_STATUSES))


class InvalidYAML(ValueError):
    """A companion that is not a YAML document (a ValueError, like a JSON companion's)."""


def _yaml(raw: bytes):
    """A YAML document (the YAML library is imported here, by the few runs that have one)."""
    import yaml

    try:
        return yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as e:
        raise InvalidYAML(str(e)) from None


def _companion(src: Source, rel: str, loads, problems: list[Problem]):
    sib = src.sibling(rel)
    if sib is None:
        return None
    try:
        return loads_once(loads, sib.read_bytes())
    except (OSError, ValueError) as e:
        problems.append(Problem(sib.name, f"not read ({type(e).__name__}: {e}); the run loads without it"))
        return None


FORMAT = Format(
    name=NAME, title="mini-swe-agent trajectory",
    description="mini-swe-agent .traj.json files (mini-swe-agent-1 and -1.1, and the early bare message lists): "
                "messages with tool calls and their results, per-call usage and cost, the submitted patch, exit "
                "status; preds.json and exit_statuses_*.yaml beside them",
    sniff=sniff, parse=parse, patterns=("*" + SUFFIX, PREDS, EXIT_STATUSES), priority=20,
)
