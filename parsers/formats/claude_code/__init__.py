"""Claude Code sessions: `~/.claude/projects/<project>/<session>.jsonl`, with their sub-agents,
the `claude -p --output-format stream-json` event stream and the `{"loglines": [...]}` export.

A session file is read into one trace (see `session` for how its records become a
conversation); each sub-agent run is a trace of its own, linked to the session and to the
`Task` (or `Agent`) tool call that started it. Sub-agents are found where Claude Code writes
them, and only those that belong to the session:
- inline in the session, as `isSidechain` records (1.0);
- `agent-<id>.jsonl` beside the session whose `sessionId` is the session's (2.0);
- `<session>/subagents/agent-<id>.jsonl`, with `agent-<id>.meta.json`, and the
  `subagents/workflows/...` folders below it (2.1).
A sub-agent file read with its session declines as a companion; alone, it is read as a run.
"""
from __future__ import annotations

import json
import posixpath
import re

import orjson

from parsers.formats.claude_code.session import NAME, TITLE_KEYS, WHO, Run, read_run
from parsers.io.guard import record_guard
from parsers.io.records import as_dict, as_text, first_char, iter_records, looks_binary
from parsers.io.source import Source
from parsers.model import Companion, Format, ParsedTrace, ParseResult, Problem, json_kind

CONVERSATION = ("user", "assistant", "system")
KNOWN_TYPES = frozenset(("user", "assistant", "system", "summary", "custom-title", "ai-title", "progress",
                         "attachment", "queue-operation", "file-history-snapshot", "result", "last-prompt",
                         "agent-name"))
LINK_KEYS = (b'"sessionId"', b'"session_id"', b'"parentUuid"', b'"leafUuid"', b'"uuid"')
AGENT_FILE = re.compile(r"agent-[A-Za-z0-9_-]+\.jsonl\Z")
AGENT_META = re.compile(r"agent-[A-Za-z0-9_-]+\.meta\.json\Z")
SPAWN_TOOLS = ("Task", "Agent")
MAX_DEPTH = 4  # folders below subagents/ that are searched (workflows/<run>/...)
SESSION_REF = "session"
SNIFF_LINES = 10
COMPACTION_AGENT = "acompact"  # the agent id prefix of the run that writes a compaction summary


# -- detection ----------------------------------------------------------------------------------
def sniff(src: Source) -> str | None:
    head = src.head
    if looks_binary(head):
        return "binary content"
    base = src.basename
    if AGENT_META.match(base):
        return Companion("a Claude Code sub-agent's description; it is read with its session")
    if first_char(head) not in "[{":
        return "does not start with a JSON object or array"
    if b'"loglines"' in head[:200]:
        return None
    first = _first_record(head)
    if first is None:
        return "no JSON record in the first bytes"
    typ = first.get("type")
    if typ not in KNOWN_TYPES and not (isinstance(typ, str) and "sessionId" in first and _conversation_in(head)):
        # Record types come and go between versions: an unknown one is taken when a user or
        # assistant record follows it.
        return f"the first record's type is {str(typ)[:40]!r}, not a Claude Code record type"
    if typ == "system" and first.get("subtype") == "init" and "session_id" in first:
        return None  # stream-json
    if not any(k in head for k in LINK_KEYS):
        return "no sessionId, uuid or parentUuid in the first records"
    if typ in ("user", "assistant") and not isinstance(first.get("message"), dict):
        return "the first user or assistant record has no message object"
    if AGENT_FILE.match(base) and _session_of_agent(src, first) is not None:
        return Companion("a Claude Code sub-agent run; it is read with its session")
    return None


def _first_record(head: bytes) -> dict | None:
    """The first JSON record of a JSON-lines head, or the first element of a JSON array (read
    on its own: the rest of the array may lie past the head)."""
    if first_char(head) == "[":
        text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")[1:]
        try:
            value, _ = json.JSONDecoder().raw_decode(text.lstrip())
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    for line in head.split(b"\n")[:SNIFF_LINES]:
        rec = _loads(line)
        if rec is not None:
            return rec
    return None


def _conversation_in(head: bytes) -> bool:
    """Whether one of the first lines is a user or assistant record with its message."""
    for line in head.split(b"\n")[:SNIFF_LINES]:
        rec = _loads(line)
        if rec is not None and rec.get("type") in ("user", "assistant") and isinstance(rec.get("message"), dict):
            return True
    return False


def _loads(b: bytes) -> dict | None:
    try:
        v = orjson.loads(b)
    except orjson.JSONDecodeError:
        return None
    return v if isinstance(v, dict) else None


def _session_of_agent(src: Source, first: dict) -> Source | None:
    """The session file a sub-agent file belongs to, when it is in what was opened."""
    parts = src.name.split("/")
    if "subagents" in parts[:-1]:
        k = len(parts) - 1 - parts[::-1].index("subagents")  # the last "subagents" folder
        session = parts[k - 1] if k >= 1 else None
        if session:
            up = "/".join([".."] * (len(parts) - k))
            return src.sibling(f"{up}/{session}.jsonl")
        return None
    sid = as_text(first.get("sessionId"))
    if sid and not sid.startswith("agent-"):
        return src.sibling(f"{sid}.jsonl")
    return None


# -- reading ------------------------------------------------------------------------------------
def parse(src: Source, *options) -> ParseResult:
    problems: list[Problem] = []
    records, count = _records(src, problems)
    main, sides = _split(src.name, records)
    traces: list[ParsedTrace] = []
    with record_guard(problems, src.name, WHO):
        trace = read_run(main, problems)
        _name_run(trace, main, src.basename)
        traces.append(trace)
    if not traces:
        return ParseResult(format=NAME, traces=[], problems=problems, records=count)
    session = traces[0]
    subs: list[tuple[Run, dict]] = [(r, {}) for r in sides]
    for sib, meta_file in _agent_files(src, main):
        sub_problems: list[Problem] = []
        with record_guard(sub_problems, sib.name, WHO):
            recs, n = _records(sib, sub_problems)
            count += n
            meta = _meta_json(meta_file, sub_problems) if meta_file is not None else {}
            run, more = _split(sib.name, recs)
            for r in [run, *more]:
                if r.records:
                    r.agent_id = r.agent_id or _agent_id(sib.basename)
                    subs.append((r, {"problems": sub_problems, "agent_meta": meta}))
    filed = {r.agent_id for r, _ in subs}
    subs += [(r, {}) for agent, r in main.relayed.items() if agent not in filed]
    spawns = _spawns(session, main)
    for run, info in subs:
        with record_guard(problems, run.source, WHO):
            t = read_run(run, info.get("problems", []))
            if run.source != src.name:  # a sub-agent's own file: its lines are that file's
                t.records_file = run.source
            _link_agent(t, run, info, spawns, session)
            traces.append(t)
    return ParseResult(format=NAME, traces=traces, problems=problems, records=count)


def _records(src: Source, problems: list[Problem]) -> tuple[list, int]:
    """(where: {"line"} or {"record"}, record) of every record that is an object with a type, and
    how many records there were; the others are problems."""
    out, n = [], 0
    for line, rec_no, rec in iter_records(src, problems):
        if line is None and rec_no == 0 and isinstance(rec, dict) and isinstance(rec.get("loglines"), list):
            for i, r in enumerate(rec["loglines"]):  # the export wrapper
                n += 1
                _keep(out, src.name, None, r, problems, f"/loglines/{i}", i)
            continue
        n += 1
        _keep(out, src.name, line, rec, problems, "" if line is not None else f"/{rec_no}", rec_no)
    return out, n


def _keep(out: list, file: str, line, rec, problems: list[Problem], path: str, rec_no) -> None:
    where = {"line": line} if line is not None else {"record": rec_no}
    if not isinstance(rec, dict):
        problems.append(Problem(file, f"expected a record object, found {json_kind(rec)}; skipped", path=path, **where))
        return
    if not isinstance(rec.get("type"), str):
        problems.append(Problem(file, f"expected a record type (a string), found {json_kind(rec.get('type'))}; "
                                      "skipped", path=path + "/type", **where))
        return
    out.append((where, rec))


def _split(name: str, records: list) -> tuple[Run, list[Run]]:
    """The main run and the inline sidechain runs (grouped by agent id, else by their root)."""
    main = Run(name)
    sides: dict = {}
    side_of: dict[str, object] = {}
    whole_agent = _all_sidechain(records)
    for where, rec in records:
        typ = rec["type"]
        uid, parent = rec.get("uuid"), rec.get("parentUuid")
        if isinstance(uid, str):
            main.links[uid] = parent if isinstance(parent, str) else None
        if typ in TITLE_KEYS:
            text = as_text(rec.get(TITLE_KEYS[typ]))
            if text:
                main.titles[typ] = text
            continue
        if typ == "result":
            main.result = rec
            continue
        if typ == "system" and rec.get("subtype") == "init":
            main.model = as_text(rec.get("model")) or main.model
            tools = rec.get("tools")
            if isinstance(tools, list):
                main.tools = [t for t in tools if isinstance(t, str)]
            continue
        if typ == "progress" and _agent_progress(main, rec, where):
            continue
        if typ == "attachment":
            rec = _queued_prompt(rec)
            typ = rec["type"]
        if typ not in CONVERSATION:
            main.skipped[typ] = main.skipped.get(typ, 0) + 1
            continue
        if typ == "system" and not (rec.get("subtype") == "compact_boundary" or as_text(rec.get("content"))
                                    or isinstance(rec.get("error"), dict)):
            key = f"system/{rec.get('subtype')}"
            main.skipped[key] = main.skipped.get(key, 0) + 1
            continue
        spawned_by = as_text(rec.get("parent_tool_use_id"))
        if spawned_by:  # stream-json: a sub-agent's events carry the call that started it
            run = _run_of(sides, spawned_by, main, spawned_by)
            main.agents.setdefault(spawned_by, (spawned_by, None))
            run.records.append((where, rec))
            continue
        if rec.get("isSidechain") is True and not whole_agent:
            key = as_text(rec.get("agentId")) or side_of.get(parent) or uid
            if isinstance(uid, str):
                side_of[uid] = key
            run = _run_of(sides, key, main, as_text(rec.get("agentId")))
            run.records.append((where, rec))
            continue
        if whole_agent and main.agent_id is None:
            main.agent_id = _agent_id(posixpath.basename(name)) or as_text(rec.get("agentId"))
        main.records.append((where, rec))
    return main, list(sides.values())


def _run_of(runs: dict, key, main: Run, agent_id: str | None) -> Run:
    """The sub-agent run under `key`, made with its first record (not one for every record)."""
    run = runs.get(key)
    if run is None:
        run = runs[key] = Run(main.source, links=main.links, agent_id=agent_id)
    return run


def _queued_prompt(rec: dict) -> dict:
    """A prompt the user typed while the model worked (`queued_command`), as the user line the
    model is given; any other attachment as it is."""
    att = rec.get("attachment")
    if not isinstance(att, dict) or att.get("type") != "queued_command" or not as_text(att.get("prompt")):
        return rec
    return {**rec, "type": "user", "queued": True, "message": {"role": "user", "content": att["prompt"]}}


def _agent_progress(main: Run, rec: dict, where: dict) -> bool:
    """A sub-agent's message relayed to the session as it runs (`agent_progress`): kept, so that
    a sub-agent whose own file is not there is still shown."""
    data = rec.get("data")
    if not isinstance(data, dict) or data.get("type") != "agent_progress":
        return False
    agent, msg = as_text(data.get("agentId")), data.get("message")
    if agent is None or not isinstance(msg, dict) or msg.get("type") not in ("user", "assistant"):
        return False
    run = _run_of(main.relayed, agent, main, agent)
    run.records.append((where, msg))
    call = as_text(rec.get("parentToolUseID"))
    if call:
        main.agents.setdefault(agent, (call, None))
    return True


def _name_run(t: ParsedTrace, run: Run, basename: str) -> None:
    """The file's run is referred to by its session id; a sub-agent file read on its own by its
    agent id, pointing at the session it names (the call that started it is in the session)."""
    named = [sid for _, rec in run.records
             if (sid := as_text(rec.get("sessionId")) or as_text(rec.get("session_id")))]
    stem = basename.rsplit(".", 1)[0]
    session = stem if stem in named else (named[0] if named else None)
    if run.agent_id is None:
        t.ref = session or SESSION_REF
        # A file of sidechain lines only, without an agent id, is not its session's own run.
        t.session = f"{session or ''}/{stem}" if _all_sidechain(run.records) else session
    else:
        t.ref = run.agent_id
        t.parent = (session, None) if session else None
        t.session = f"{session or ''}/agent-{run.agent_id}"


def _all_sidechain(records: list) -> bool:
    """A sub-agent file: every conversation line is a sidechain; read as one run."""
    return all(rec.get("isSidechain") is True for _, rec in records if rec["type"] in ("user", "assistant"))


def _agent_id(basename: str) -> str | None:
    m = re.match(r"agent-(.+?)\.jsonl\Z", basename)
    return m.group(1) if m else None


def _agent_files(src: Source, main: Run):
    """(sub-agent file, its .meta.json or None) of every sub-agent file of this session."""
    stem = src.basename[:-len(".jsonl")] if src.basename.endswith(".jsonl") else None
    if stem is None or AGENT_FILE.match(src.basename):
        return
    sid = next((as_text(rec.get("sessionId")) for _, rec in main.records if as_text(rec.get("sessionId"))), stem)
    for entry in src.listdir(".") or ():
        if AGENT_FILE.match(entry):
            sib = src.sibling(entry)
            first = _first_record(sib.head) if sib is not None else None
            if first is not None and first.get("sessionId") == sid:
                yield sib, None
    yield from _subagent_folder(src, f"{stem}/subagents", 0)


def _subagent_folder(src: Source, folder: str, depth: int):
    entries = src.listdir(folder) or ()
    for entry in entries:
        if entry.endswith("/") and depth < MAX_DEPTH:
            yield from _subagent_folder(src, f"{folder}/{entry[:-1]}", depth + 1)
        elif AGENT_FILE.match(entry):
            sib = src.sibling(f"{folder}/{entry}")
            if sib is None:
                continue
            yield sib, src.sibling(f"{folder}/{entry[:-len('.jsonl')]}.meta.json")


def _meta_json(m: Source, problems: list[Problem]) -> dict:
    try:
        value = orjson.loads(m.read_bytes())
    except (orjson.JSONDecodeError, OSError) as e:
        problems.append(Problem(m.name, f"the sub-agent's description was not read ({e}); the run is shown without it"))
        return {}
    if not isinstance(value, dict):
        problems.append(Problem(m.name, f"expected an object, found {json_kind(value)}; the run is shown without it"))
    return as_dict(value)


# -- sub-agent links ----------------------------------------------------------------------------
def _spawns(session: ParsedTrace, main: Run) -> dict:
    """How the session started its sub-agents: {"agent": {agent id: call id}, "prompt": {prompt
    text: [call ids]}, "input": {call id: call input}, "status": {call id: how the run ended}}."""
    out = {"agent": {}, "prompt": {}, "input": {}, "status": {}}
    for m in session.messages or ():
        for tc in m.tool_calls or ():
            if tc.get("name") in SPAWN_TOOLS and isinstance(tc.get("arguments"), dict):
                cid = tc.get("id")
                out["input"][cid] = tc["arguments"]
                prompt = as_text(tc["arguments"].get("prompt"))
                if prompt:
                    out["prompt"].setdefault(prompt.strip(), []).append(cid)
    for agent, (cid, status) in main.agents.items():
        out["agent"][agent] = cid
        out["status"][cid] = status
    return out


def _link_agent(t: ParsedTrace, run: Run, info: dict, spawns: dict, session: ParsedTrace) -> None:
    """A sub-agent run: linked to the call that started it (named by the session's results, else
    by the same prompt), titled by that call's description; named within the session by its
    agent id, as when its file is read alone."""
    agent = run.agent_id
    if agent:
        t.session = f"{session.session or ''}/agent-{agent}"
    session_ref = session.ref
    cid = spawns["agent"].get(agent) if agent else None
    if cid is None and t.task:
        ids = spawns["prompt"].get(t.task.strip())
        if ids:
            cid = ids.pop(0)
    call = spawns["input"].get(cid, {})
    meta = info.get("agent_meta") or {}
    t.parent = (session_ref, cid)
    kind = as_text(call.get("subagent_type")) or as_text(meta.get("agentType"))
    if agent and agent.startswith(COMPACTION_AGENT):
        kind = kind or "compaction"
        t.title = None  # its prompt is the harness's instructions
    t.title = as_text(call.get("description")) or as_text(meta.get("description")) or t.title \
        or f"{kind or 'a'} sub-agent"
    t.meta["sub_agent"] = {k: v for k, v in (("agent_id", agent), ("type", kind), ("call", cid)) if v}
    if meta:
        t.meta["agent_meta"] = meta
    status = spawns["status"].get(cid)
    if status is not None:
        t.outcome = "success" if status == "completed" else "failure"
        t.outcome_detail = status


FORMAT = Format(
    name=NAME, title="Claude Code session",
    description="Claude Code session logs (~/.claude/projects/<project>/<session>.jsonl) with their sub-agents, "
                "the `claude -p --output-format stream-json` event stream and the {\"loglines\": [...]} export",
    sniff=sniff, parse=parse, priority=40,
)

__all__ = ["FORMAT", "parse", "sniff"]
