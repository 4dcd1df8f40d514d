"""SWE Arena / FastChat conversation logs, with their sandbox logs attached.

A conversation log (`logs/{date}/conv_logs/{chat_mode}/conv-log-{chat_session_id}.json`) is
JSONL, appended to as the user chats: every line carries the conversation's state at the time
in `state` (one model; SWE Arena) or `states` (both sides of a battle, with `models`; FastChat's
vote records). Writers differ in what a vote or feedback record carries (the whole history, a
shorter one, none, or placeholders for the answers), so a conversation (`conv_id`) is the
longest history its records agree on: chat records first, in order (a regeneration replaces
the last answer), then the others, which only add to it or fill a placeholder. A record whose
history contradicts it (or names another model) is another conversation logged under the same
conv_id: reported, and read as a trace of its own. The two conversations of one
`chat_session_id` are a battle: left is the side FastChat writes first (a `states` pair's order
wins), and the votes (`leftvote`, `rightvote`, `tievote`, `bothbad_vote`) are written once per
side, so a vote met twice is counted once.

Sandbox logs (`logs/{date}/sandbox_logs/sandbox-logs-{conv_id}-{chat_round}-{run_round}.json`,
one JSON object each) are found through the opened folder or archive. Each run becomes a tool
call of the conversation (`tool_use` with the code, `tool_result` with its output and error),
placed after the answers of its chat round, and a `sandbox_run` artifact. A sandbox log opened
on its own is declined by sniff: its conversation is what shows it.

Logs hold personal data: the records' client address fields (`ip`) are never copied.
"""
from __future__ import annotations

import bisect
import itertools
import posixpath
import re
from collections import Counter
from dataclasses import dataclass, field

import orjson

from parsers.model import (Artifact, Companion, Format, Message, ParsedTrace, ParseResult, Problem, Scorecard, Turn,
                           json_kind, pointer)
from parsers.io.guard import record_guard
from parsers.io.records import first_char, iter_records, looks_binary
from parsers.providers.roles import role_of
from parsers.io.source import Source
from parsers.io.times import to_epoch_ms

NAME = "arena"
VOTES = {"leftvote": "left", "rightvote": "right", "tievote": "tie", "bothbad_vote": "bothbad"}
FEEDBACK = ("upvote", "downvote", "flag")
RESPONSE_TYPES = frozenset(("chat", "chat_single", "chat_multi", "regenerate", "regenerate_single",
                            "regenerate_multi"))
RECORD_TYPES = RESPONSE_TYPES | set(VOTES) | set(FEEDBACK) | {"share"}
SAME_VOTE_SECONDS = 2.0  # the two sides' copies of one vote are written moments apart
MAX_SANDBOX_BYTES = 64 * 1024**2

_CONV_LOG_NAME = re.compile(r"^conv-log-(.+?)\.jsonl?$")
_SANDBOX_NAME = re.compile(r"^sandbox-(?:logs|records)-(.+)-(\d+)-(\d+)\.json$")
_TYPE_IN_HEAD = re.compile(rb'"type"\s*:\s*"([A-Za-z_]+)"')
# Where sandbox logs live relative to a conversation log: the documented tree first, then a
# flat folder of loose files.
_SANDBOX_DIRS = ("../../sandbox_logs", "../sandbox_logs", "sandbox_logs", ".")

# -- sniff ---------------------------------------------------------------------------------

def _is_sandbox_log(src: Source) -> bool:
    return bool(_SANDBOX_NAME.match(src.basename)) or (
        first_char(src.head) == "{" and b'"sandbox_state"' in src.head[:4096])


def sniff(src: Source) -> str | None:
    head = src.head
    if looks_binary(head):
        return "binary content"
    if _is_sandbox_log(src):
        return Companion("a sandbox log; it is attached to its conversation")
    if first_char(head) != "{":
        return "does not start with a JSON object"
    if _CONV_LOG_NAME.match(src.basename):
        return None
    first_line = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0]
    m = _TYPE_IN_HEAD.search(first_line[:4096])
    if not m or m.group(1).decode() not in RECORD_TYPES:
        return "the first record has no arena record type (chat, leftvote, ...)"
    if not any(k in first_line for k in (b'"conv_id"', b'"states"', b'"models"', b'"state"')):
        return "the first record has no conv_id, state or states"
    return None


# -- reading the log -----------------------------------------------------------------------

@dataclass
class _Entry:
    """One conversation's state as one record carries it."""
    seq: int  # order met in the log
    state: dict
    path: str
    name: str | None  # the model the record names
    rtype: str | None
    times: tuple  # (tstamp, start, end)
    where: dict
    key: str | None = None  # the conversation it was read into


@dataclass
class _Conv:
    key: str  # the trace's ref: the conv_id, or `conv_id~n` for another conversation logged under it
    conv_id: str
    order: int
    session: str | None = None  # chat_session_id as recorded
    model: str | None = None
    chat_mode: str | None = None
    state: dict = field(default_factory=dict)  # the latest response record's (roles, offset, system)
    messages: list = field(default_factory=list)  # the longest consistent history
    origins: list = field(default_factory=list)  # (JSON path of `messages`, where) of each message
    responses: dict = field(default_factory=dict)  # completed answer index -> (timestamp, duration)
    types: Counter = field(default_factory=Counter)
    regenerations: int = 0
    feedback: dict = field(default_factory=dict)  # (type, tstamp) -> type


@dataclass
class _Pair:
    entries: list  # left first
    anony: bool | None


@dataclass
class _Vote:
    type: str
    tstamp: float | None
    convs: set
    line: int | None


def parse(src: Source) -> ParseResult:
    problems: list[Problem] = []
    entries: dict[str, list[_Entry]] = {}  # conv_id -> its states, in log order
    pairs: list[_Pair] = []  # the sides of `states` records, in their order
    votes: list[tuple[str, float | None, list[_Entry], int | None]] = []
    records = 0
    for line, record, rec in iter_records(src, problems):
        records += 1
        where = {"line": line, "record": record}
        if not isinstance(rec, dict):
            problems.append(Problem(src.name, f"expected a JSON object (one log record), found {json_kind(rec)}; "
                                              "record skipped", path="", **where))
            continue
        with record_guard(problems, src.name, "the arena log reader", **where):
            _read_record(src, rec, where, entries, pairs, votes, problems)

    convs: dict[str, _Conv] = {}
    for cid, found in entries.items():
        for conv in _conversations(src, cid, found, problems):
            convs[conv.key] = conv
    for p in pairs:
        p.entries = [e.key for e in p.entries]
    votes = [_Vote(t, ts, {e.key for e in es}, line) for t, ts, es, line in votes]

    sessions = _sessions(src, convs, pairs)
    sandbox = _sandbox_runs(src, set(entries), problems) if entries else {}
    traces: list[ParsedTrace] = []
    groups: list[dict] = []
    for sid, sides in sessions.items():
        group_votes = _dedup_votes([v for v in votes if v.convs & set(sides)])
        mode = next((convs[c].chat_mode for c in sides if convs[c].chat_mode), None) or _mode_from_path(src.name)
        battle = len(sides) >= 2
        for n, key in enumerate(sides):
            side = ("left", "right")[n] if battle and n < 2 else None
            traces.append(_trace(src, convs[key], sid, side, mode, group_votes if battle else [],
                                 sandbox.get(key, [])))
        if battle:
            anony = {"battle_anony": True, "battle_named": False}.get(mode or "")
            if anony is None:
                anony = next((p.anony for p in pairs if p.anony is not None and set(p.entries) & set(sides)), None)
            groups.append({
                "kind": "battle", "id": sid, "chat_mode": mode, "sides": list(sides),
                "models": [convs[c].model for c in sides], "anony": anony,
                "votes": [{"winner": VOTES[v.type], "type": v.type, "tstamp": to_epoch_ms(v.tstamp)}
                          for v in group_votes],
                "rounds": max(_rounds(convs[c]) for c in sides),
            })
    return ParseResult(format=NAME, traces=traces, groups=groups, problems=problems, records=records)


_SEQ = itertools.count()  # the order states are met in (only their relative order counts)


def _read_record(src: Source, rec: dict, where: dict, entries: dict, pairs: list, votes: list,
                 problems: list[Problem]) -> None:
    rtype = rec.get("type")
    rtype = rtype if isinstance(rtype, str) else None
    tstamp = _stamp(src, rec, "tstamp", where, problems)
    start = _stamp(src, rec, "start_ts" if rec.get("start_ts") is not None else "start", where, problems)
    end = _stamp(src, rec, "end_ts" if rec.get("end_ts") is not None else "finish", where, problems)
    times = (tstamp, start, end)
    if isinstance(rec.get("states"), list):
        states = [(s, pointer("states", i)) for i, s in enumerate(rec["states"])]
        models = rec.get("models") if isinstance(rec.get("models"), list) else []
        names = [models[i] if i < len(models) and isinstance(models[i], str) and models[i] else None
                 for i in range(len(states))]
    elif "state" in rec:
        states = [(rec["state"], "/state")]
        names = [rec.get("model") if isinstance(rec.get("model"), str) else None]
    else:
        problems.append(Problem(src.name, "expected a `state` object (or a `states` pair); record skipped",
                                path="/state", **where))
        return
    seen: list[_Entry] = []
    for (state, path), name in zip(states, names):
        cid = _check_state(src, state, path, where, problems)
        if cid is None:
            continue
        entry = _Entry(next(_SEQ), state, path, name, rtype, times, where)
        entries.setdefault(cid, []).append(entry)
        seen.append(entry)
    if len(states) >= 2 and len(seen) == len(states):
        # Anonymous battles log the model selectors empty until the vote reveals them.
        shown = rec.get("models") if isinstance(rec.get("models"), list) else None
        pairs.append(_Pair(seen, None if not shown else not any(shown)))
    if rtype in VOTES and seen:
        votes.append((rtype, tstamp, seen, where["line"]))


def _check_state(src, state, path, where, problems) -> str | None:
    if not isinstance(state, dict):
        problems.append(Problem(src.name, f"expected a state object, found {json_kind(state)}; record skipped",
                                path=path, **where))
        return None
    cid = state.get("conv_id")
    if not isinstance(cid, str) or not cid:
        problems.append(Problem(src.name, "expected a string `conv_id`; record skipped",
                                path=path + "/conv_id", **where))
        return None
    if not isinstance(state.get("messages"), list):
        problems.append(Problem(src.name, "expected `messages`, a list of [role, text] pairs; record skipped",
                                path=path + "/messages", **where))
        return None
    return cid


def _model_of(state: dict, name) -> str | None:
    model = state.get("model_name")
    return model if isinstance(model, str) and model else name


def _is_response(rtype: str | None) -> bool:
    return rtype in RESPONSE_TYPES or rtype is None


def _conversations(src: Source, cid: str, entries: list[_Entry], problems: list[Problem]) -> list[_Conv]:
    """The conversations logged under one conv_id. Each record's state joins the first
    conversation its history agrees with (chat records first, then votes and feedback, each in
    log order); one that agrees with none is another conversation, reported."""
    convs: list[_Conv] = []
    for e in sorted(entries, key=lambda e: (not _is_response(e.rtype), e.seq)):
        conv, why = None, None
        for c in convs:
            why_not = _contradiction(c, e)
            if why_not is None:
                conv = c
                break
            why = why or why_not
        if conv is not None or not convs:
            if conv is None:
                conv = _Conv(cid, cid, e.seq)
                convs.append(conv)
            e.key = conv.key
            _take(conv, e)
            continue
        first = _at(convs[0].origins[0][1] if convs[0].origins else e.where)
        clash = f"conv_id {cid!r} holds two conversations: {first} and {_at(e.where)} have {why}; "
        if _is_response(e.rtype):  # a model answered in it: a conversation of its own
            conv = _Conv(f"{cid}~{len(convs) + 1}", cid, e.seq)
            convs.append(conv)
            e.key = conv.key
            _take(conv, e)
            clash += f"the later one is read as a trace of its own ({conv.key})"
        else:  # a vote or feedback on the conversation, with a history that is not its own
            e.key = convs[0].key
            _take(convs[0], e, history=False)
            clash += "this record's history is not used"
        problems.append(Problem(src.name, clash, path=e.path + "/conv_id", **e.where))
    return sorted(convs, key=lambda c: c.order)


def _text_of(pair) -> object:
    return pair[1] if isinstance(pair, (list, tuple)) and len(pair) >= 2 else pair


def _placeholder(pair) -> bool:
    """A message a writer left unfilled: a pending answer (None), an empty text, or only the
    streaming cursor / ellipsis FastChat shows while an answer is written."""
    text = _text_of(pair)
    return text is None or (isinstance(text, str) and not text.strip(" \t\r\n.…▌"))


def _agree(a, b) -> bool:
    if a == b:
        return True
    if not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and a and b and a[0] == b[0]):
        return False
    return _placeholder(a) or _placeholder(b)


def _contradiction(conv: _Conv, e: _Entry) -> str | None:
    """Why a record of conv_id `conv` cannot be that conversation's, or None. A conversation
    keeps its model, and its history only grows: a regenerated answer replaces the last one."""
    model = _model_of(e.state, e.name)
    if model and conv.model and model != conv.model:
        return f"models {conv.model!r} and {model!r}"
    old, new = conv.messages, e.state["messages"]
    roles = e.state.get("roles")
    n = min(len(old), len(new))
    for i in range(n):
        if _agree(old[i], new[i]):
            continue
        regenerated = (i == n - 1 and isinstance(new[i], (list, tuple)) and new[i]
                       and isinstance(old[i], (list, tuple)) and old[i]
                       and role_of(new[i][0], roles) == "assistant")
        if not regenerated:
            return f"histories that differ at message {i}"
    return None


def _take(conv: _Conv, e: _Entry, history: bool = True) -> None:
    """Read one record's state into its conversation: the history grows, never shrinks; a
    placeholder is filled by any record that has the text, and a chat record's answer (a
    regeneration) replaces the one before."""
    tstamp, start, end = e.times
    state, response = e.state, _is_response(e.rtype)
    for i, pair in enumerate(state["messages"] if history else ()):
        origin = (e.path, e.where)
        if i >= len(conv.messages):
            conv.messages.append(pair)
            conv.origins.append(origin)
        elif pair != conv.messages[i] and not _placeholder(pair) and (response or _placeholder(conv.messages[i])):
            conv.messages[i], conv.origins[i] = pair, origin
    if history and (response or not conv.state):
        conv.state = state
    if isinstance(state.get("chat_session_id"), str) and state["chat_session_id"]:
        conv.session = conv.session or state["chat_session_id"]
    conv.model = conv.model or _model_of(state, e.name)
    if isinstance(state.get("chat_mode"), str):
        conv.chat_mode = conv.chat_mode or state["chat_mode"]
    conv.types[e.rtype or "?"] += 1
    if e.rtype in FEEDBACK:
        conv.feedback[(e.rtype, tstamp)] = e.rtype
    if response:
        answers = _answers(state)
        if answers:
            stamp = start if start is not None else tstamp
            duration = round((end - start) * 1000) if start is not None and end is not None and end >= start else None
            conv.responses[answers - 1] = (to_epoch_ms(stamp), duration)
        if e.rtype and e.rtype.startswith("regenerate"):
            conv.regenerations += 1


def _at(where: dict) -> str:
    return f"line {where['line']}" if where.get("line") is not None else f"record {where.get('record')}"


def _stamp(src: Source, rec: dict, key: str, where: dict, problems: list[Problem], base: str = "") -> float | None:
    """rec[key] as epoch seconds (or ms); a value that is no readable time is reported and read as absent."""
    v = rec.get(key)
    if v is None:
        return None
    if isinstance(v, (int, float)) and not isinstance(v, bool) and to_epoch_ms(v) is not None:
        return float(v)
    shown = orjson.dumps(v).decode() if not isinstance(v, str) else repr(v)
    problems.append(Problem(src.name, f"`{key}` is not a readable time ({shown[:60]}); ignored",
                            path=f"{base}/{key}", **where))
    return None


def _num(rec: dict, *keys) -> float | None:
    for k in keys:
        v = rec.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return None


def _answers(state: dict) -> int:
    """How many answered assistant turns a state holds (the last one may still be pending)."""
    roles = state.get("roles")
    n = 0
    for pair in _visible(state):
        if isinstance(pair, (list, tuple)) and len(pair) >= 2 and pair[1] is not None \
                and role_of(pair[0], roles) == "assistant":
            n += 1
    return n


def _offset(state: dict, msgs: list) -> int:
    """Where the messages after the template's few-shot examples (`offset`) start."""
    off = state.get("offset")
    return off if isinstance(off, int) and not isinstance(off, bool) and 0 < off <= len(msgs) else 0


def _visible(state: dict, msgs: list | None = None) -> list:
    msgs = state.get("messages") or [] if msgs is None else msgs
    return msgs[_offset(state, msgs):]


def _sessions(src: Source, convs: dict[str, _Conv], pairs: list) -> dict[str, list[str]]:
    """chat_session_id -> its conversations, left side first."""
    m = _CONV_LOG_NAME.match(src.basename)
    from_name = m.group(1) if m else None
    partner: dict[str, str] = {}
    for p in pairs:
        for c in p.entries[1:]:
            partner.setdefault(c, p.entries[0])
    sid_of: dict[str, str] = {}
    for c in sorted(convs.values(), key=lambda c: c.order):
        if c.session:
            sid_of[c.key] = c.session
        elif c.key in partner and convs[partner[c.key]].session:
            sid_of[c.key] = convs[partner[c.key]].session
        else:
            sid_of[c.key] = from_name or partner.get(c.key, c.conv_id)
    sessions: dict[str, list[str]] = {}
    for c in sorted(convs.values(), key=lambda c: c.order):
        sessions.setdefault(sid_of[c.key], []).append(c.key)
    # A `states` pair says which side is left; otherwise the side written first is.
    for sid, sides in sessions.items():
        for p in pairs:
            ids = [c for c in p.entries if c in sides]
            if len(ids) >= 2:
                rest = [c for c in sides if c not in ids]
                sessions[sid] = ids + rest
                break
    return sessions


def _mode_from_path(name: str) -> str | None:
    parts = name.replace("!", "/").split("/")
    for i, part in enumerate(parts[:-1]):
        if part == "conv_logs" and i + 2 < len(parts):
            return parts[i + 1]
    return None


def _dedup_votes(votes: list[_Vote]) -> list[_Vote]:
    """One vote per click: the copies each side's line carries are merged."""
    out: list[_Vote] = []
    for v in votes:
        for u in out:
            if u.type != v.type:
                continue
            if u.tstamp == v.tstamp or (
                    not (u.convs & v.convs) and u.tstamp is not None and v.tstamp is not None
                    and abs(u.tstamp - v.tstamp) <= SAME_VOTE_SECONDS):
                u.convs |= v.convs
                break
        else:
            out.append(_Vote(v.type, v.tstamp, set(v.convs), v.line))
    return sorted(out, key=lambda v: (v.tstamp is None, v.tstamp or 0))


def _rounds(conv: _Conv) -> int:
    roles = conv.state.get("roles")
    return sum(1 for p in _visible(conv.state, conv.messages)
               if isinstance(p, (list, tuple)) and p and (role_of(p[0], roles) or "user") == "user")


# -- one conversation -> one trace ---------------------------------------------------------

def _content(value) -> tuple[str | None, int]:
    """(text, number of images) of a message's content; text None for a pending answer."""
    if value is None or isinstance(value, str):
        return value, 0
    if isinstance(value, (list, tuple)):
        text = next((v for v in value if isinstance(v, str)), "")
        images = sum(len(v) if isinstance(v, (list, tuple)) else 1 for v in value if not isinstance(v, str))
        return text, images
    return orjson.dumps(value).decode(), 0


def _trace(src: Source, conv: _Conv, sid: str, side: str | None, mode: str | None,
           votes: list[_Vote], runs: list[Artifact]) -> ParsedTrace:
    problems: list[Problem] = []
    state = conv.state
    roles = state.get("roles")
    messages: list[Message] = []
    turns: dict[int, Turn] = {}
    system = state.get("system_message", state.get("system"))
    if isinstance(system, str) and system.strip():
        messages.append(Message("system", system))
    msgs = conv.messages
    pending = list(runs)  # sandbox runs not yet placed: each goes after the answers of its round
    answer = rnd = 0
    for i in range(_offset(state, msgs), len(msgs)):
        pair = msgs[i]
        path, where = conv.origins[i]
        at = f"{path}/messages/{i}"
        if not isinstance(pair, (list, tuple)) or len(pair) < 2:
            problems.append(Problem(src.name, "expected a [role, text] pair; message skipped", path=at, **where))
            continue
        role = role_of(pair[0], roles)
        if role is None:
            problems.append(Problem(src.name, f"unknown role {pair[0]!r}; expected user, assistant or system "
                                              "(read as user)", path=at + "/0", **where))
            role = "user"
        text, images = _content(pair[1])
        if text is None or (role == "assistant" and not images and _placeholder(pair)):
            continue  # an answer still being generated when the line was written
        if images:
            text = (text + "\n" if text else "") + "\n".join(["[image]"] * images)
        if role == "user":
            messages += _run_messages([r for r in pending if _round(r) <= rnd])
            pending = [r for r in pending if _round(r) > rnd]
            rnd += 1
        if role == "assistant":
            stamp, duration = conv.responses.get(answer, (None, None))
            turns[len(messages)] = Turn(model=conv.model, timestamp=stamp, duration_ms=duration)
            answer += 1
        messages.append(Message(role, text))
    messages += _run_messages(pending)

    first_user = next((m.content for m in messages if m.role == "user" and m.content.strip()), None)
    title = " ".join(first_user.split()) if first_user else f"conversation {conv.conv_id}"
    title = title[:80] + ("…" if len(title) > 80 else "")

    meta = {"conv_id": conv.conv_id, "chat_session_id": sid, "chat_mode": mode, "side": side,
            "template": state.get("template_name") if isinstance(state.get("template_name"), str) else None,
            "records": dict(sorted(conv.types.items())), "regenerations": conv.regenerations,
            "sandbox_runs": len(runs)}
    card = Scorecard()
    outcome_detail = None
    if votes and side:
        tally = Counter()
        for v in votes:
            w = VOTES[v.type]
            tally["won" if w == side else "lost" if w in ("left", "right") else w] += 1
        card.votes = {k: tally.get(k, 0) for k in ("won", "lost", "tie", "bothbad")}
        last = VOTES[votes[-1].type]
        outcome_detail = ("won the vote" if last == side else "lost the vote" if last in ("left", "right")
                          else "vote: tie" if last == "tie" else "vote: both bad")
    if conv.feedback:
        fb = Counter(conv.feedback.values())
        card.feedback = {k: fb.get(k, 0) for k in FEEDBACK}
    return ParsedTrace(format=NAME, title=title, task=sid, messages=messages, turns=turns,
                       models=[conv.model] if conv.model else None, outcome_detail=outcome_detail,
                       artifacts=runs, scorecard=None if card.is_empty() else card, meta=meta, problems=problems,
                       ref=conv.key)


def _round(run: Artifact) -> float:
    r = run.details.get("chat_round")
    return r if isinstance(r, int) and r > 0 else float("inf")  # a run of no known round goes last


def _run_messages(runs: list[Artifact]) -> list[Message]:
    """One round's sandbox runs as tool calls: one `tool_use` with the code of each run (so the
    runs stay part of the answer's model turn), then each run's output and error as its
    `tool_result` (an error when the run wrote one)."""
    if not runs:
        return []
    calls, results = [], []
    for run in runs:
        d = run.details
        call_id = f"sandbox-{d['chat_round']}-{d['run_round']}"
        calls.append({"name": "sandbox", "id": call_id,
                      "arguments": {k: d[k] for k in ("code", "environment") if d.get(k) is not None}})
        results.append(Message("tool_result", "\n".join(x for x in (d.get("output"), d.get("error")) if x),
                               tool_use_id=call_id, is_error=bool(d.get("error")),
                               extra={"timestamp": d["tstamp"]} if d.get("tstamp") is not None else None))
    return [Message("tool_use", "", tool_calls=calls, extra=results[0].extra), *results]


# -- sandbox logs --------------------------------------------------------------------------

def _sandbox_runs(src: Source, conv_ids: set[str], problems: list[Problem]) -> dict[str, list[Artifact]]:
    """conv_id -> its sandbox runs, ordered by (chat_round, run_round)."""
    found: dict[str, Source] = {}
    for d in _SANDBOX_DIRS:
        entries = src.listdir(d)
        if entries is None:
            continue
        listings = [(d, entries)]
        if d.endswith("sandbox_logs"):  # some deployments file them by chat mode
            listings += [(posixpath.join(d, e.rstrip("/")), src.listdir(posixpath.join(d, e)) or [])
                         for e in entries if e.endswith("/")]
        for folder, names in listings:
            for e in _named_for(names, conv_ids):
                sib = src.sibling(posixpath.join(folder, e))
                if sib is not None:
                    found.setdefault(sib.name, sib)
    runs: dict[str, list[Artifact]] = {}
    for name in sorted(found):
        got = _sandbox_run(found[name], conv_ids, problems)
        if got is not None:
            cid, run = got
            runs.setdefault(cid, []).append(run)
    for lst in runs.values():
        lst.sort(key=lambda r: (r.details["chat_round"] or 0, r.details["run_round"] or 0, r.details["source"]))
    return runs


def _named_for(names: list[str], conv_ids: set[str]) -> list[str]:
    """The sandbox log names of these conversations in a sorted listing (bisected: a day's
    folder holds thousands)."""
    out = []
    for cid in sorted(conv_ids):
        for kind in ("logs", "records"):
            prefix = f"sandbox-{kind}-{cid}-"
            i = bisect.bisect_left(names, prefix)
            while i < len(names) and names[i].startswith(prefix):
                m = _SANDBOX_NAME.match(names[i])
                if m and m.group(1) == cid:
                    out.append(names[i])
                i += 1
    return out


def _sandbox_run(sbx: Source, conv_ids: set[str], problems: list[Problem]) -> tuple[str, Artifact] | None:
    m = _SANDBOX_NAME.match(sbx.basename)
    if sbx.size > MAX_SANDBOX_BYTES:
        problems.append(Problem(sbx.name, f"sandbox log not attached: larger than {MAX_SANDBOX_BYTES} bytes"))
        return None
    try:
        raw = sbx.read_bytes()
    except OSError as e:
        problems.append(Problem(sbx.name, f"sandbox log not attached: not readable ({e})"))
        return None
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        # Read leniently, as conversation logs are: the run is still worth showing.
        problems.append(Problem(sbx.name, f"bytes that are not UTF-8 (the first at byte {e.start}) were replaced "
                                          "with U+FFFD"))
        raw = raw.decode("utf-8", "replace").encode("utf-8")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as e:
        problems.append(Problem(sbx.name, f"sandbox log not attached: not valid JSON ({e})"))
        return None
    if not isinstance(data, dict):
        problems.append(Problem(sbx.name, f"expected a JSON object with `sandbox_state`, found {json_kind(data)}; "
                                          "sandbox log not attached"))
        return None
    st = data.get("sandbox_state", data)
    if not isinstance(st, dict):
        problems.append(Problem(sbx.name, f"expected an object, found {json_kind(st)}; sandbox log not attached",
                                path="/sandbox_state"))
        return None
    cid = st.get("conv_id") if st.get("conv_id") in conv_ids else m.group(1)

    def text(*keys) -> str | None:
        for k in keys:
            v = st.get(k)
            if isinstance(v, str):
                return v
            if v is not None:
                return orjson.dumps(v).decode()
        return None

    def rnd(from_name: str, key: str) -> int | None:
        v = st.get(key)
        return int(from_name) if from_name else (v if isinstance(v, int) else None)

    env = st.get("auto_selected_sandbox_environment") or st.get("sandbox_environment")
    chat_round, run_round = rnd(m.group(2), "enabled_round"), rnd(m.group(3), "sandbox_run_round")
    records = data.get("user_interaction_records")
    none: dict = {"line": None, "record": None}
    key = "tstamp" if st is not data and st.get("tstamp") is not None else "timestamp"
    tstamp = (_stamp(sbx, data, "tstamp", none, problems)
              or _stamp(sbx, st, key, none, problems, "/sandbox_state" if st is not data else ""))
    if tstamp is None and isinstance(records, list):
        tstamp = next((_num(r, "tstamp", "timestamp", "time") for r in records
                       if isinstance(r, dict) and _num(r, "tstamp", "timestamp", "time") is not None), None)
    error = text("sandbox_error", "error", "stderr")
    details = {
        "chat_round": chat_round, "run_round": run_round,
        "code": text("code_to_execute", "code"), "output": text("sandbox_output", "output", "stdout") or None,
        "error": error or None, "sandbox_id": st.get("sandbox_id") if isinstance(st.get("sandbox_id"), str) else None,
        "tstamp": to_epoch_ms(tstamp), "source": sbx.name,
    }
    if isinstance(st.get("code_language"), str):
        details["language"] = st["code_language"]
    if isinstance(env, str):
        details["environment"] = env
    if isinstance(records, list):
        details["interactions"] = len(records)
    title = f"Sandbox run, round {chat_round}, run {run_round}" + (f" ({env})" if isinstance(env, str) else "")
    return cid, Artifact("sandbox_run", title, details=details)


FORMAT = Format(
    name=NAME, title="SWE Arena logs",
    description="SWE Arena / FastChat conversation logs (conv-log-*.json, one JSON record per line): "
                "each conversation a trace, each battle a group with its votes; sandbox logs in the "
                "same logs folder or zip are attached as tool calls and sandbox runs. Client IP fields are not copied.",
    sniff=sniff, parse=parse, patterns=("conv-log-*.json", "conv-log-*.jsonl", "sandbox-logs-*.json", "sandbox-records-*.json"),
    priority=30,
)
