"""SWE Arena / FastChat conversation logs, with their sandbox logs attached.

A conversation log (`logs/{date}/conv_logs/{chat_mode}/conv-log-{chat_session_id}.json`) is
JSONL, appended to as the user chats: every line carries the whole conversation so far in
`state` (one model; SWE Arena) or `states` (both sides of a battle, with `models`; FastChat's
vote records). A conversation (`conv_id`) is therefore its latest line. The two conversations
of one `chat_session_id` are a battle: left is the side FastChat writes first (a `states`
pair's order wins), and the votes (`leftvote`, `rightvote`, `tievote`, `bothbad_vote`) are
written once per side, so a vote met twice is counted once.

Sandbox logs (`logs/{date}/sandbox_logs/sandbox-logs-{conv_id}-{chat_round}-{run_round}.json`,
one JSON object each) are found through the opened folder or archive and become the
conversation's `sandbox_run` artifacts. A sandbox log opened on its own is declined by sniff:
its conversation is what shows it.

Logs hold personal data: `ip` fields are never copied, and IPv4 / IPv6 addresses in message
text and sandbox output are masked.
"""
from __future__ import annotations

import bisect
import ipaddress
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

# Role names of chat templates, lower-cased with everything but letters removed
# ("<|user|>" -> "user", "### Human:" -> "human", "<start_of_turn>model" -> "startofturnmodel").
# -- personal data -------------------------------------------------------------------------

IP_MASK = "[ip redacted]"
_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?!\.?\w)")
_IPV6 = re.compile(r"(?<![\w:.])[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}(?![\w:])")


def _masked(address: str) -> str:
    # Loopback and "any" addresses (127.0.0.1, 0.0.0.0, ::1) say nothing about anyone.
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    return address if ip.is_loopback or ip.is_unspecified else IP_MASK


def _v4(m: re.Match) -> str:
    return _masked(m.group(0))


def _v6(m: re.Match) -> str:
    # Python slices (`a[1::2]`) and C++ scopes (`std::`) look like short addresses: a real one
    # has at least three groups and a digit.
    s = m.group(0)
    if sum(1 for g in s.split(":") if g) < 3 or not any(c.isdigit() for c in s):
        return s
    return _masked(s)


def mask_ip_addresses(text: str) -> str:
    """IPv4 and IPv6 addresses in free text replaced by a mask."""
    if "." in text:
        text = _IPV4.sub(_v4, text)
    if "::" in text or text.count(":") >= 7:
        text = _IPV6.sub(_v6, text)
    return text


def _clean(text: str) -> str:
    # API keys in the text are masked by the cook, with every other trace's.
    return mask_ip_addresses(text)


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
class _Conv:
    conv_id: str
    order: int
    session: str | None = None  # chat_session_id as recorded
    model: str | None = None
    chat_mode: str | None = None
    state: dict = field(default_factory=dict)  # the latest
    line: int | None = None
    record: int | None = None
    path: str = "/state"
    responses: dict = field(default_factory=dict)  # completed answer index -> (timestamp, duration)
    types: Counter = field(default_factory=Counter)
    regenerations: int = 0
    feedback: dict = field(default_factory=dict)  # (type, tstamp) -> type
    clash: bool = False  # another conversation's record was met under this conv_id (reported)


@dataclass
class _Pair:
    convs: list[str]  # left first
    anony: bool | None


@dataclass
class _Vote:
    type: str
    tstamp: float | None
    convs: set
    line: int | None


def parse(src: Source) -> ParseResult:
    problems: list[Problem] = []
    convs: dict[str, _Conv] = {}
    pairs: list[_Pair] = []  # the sides of `states` records, in their order
    votes: list[_Vote] = []
    records = 0
    for line, record, rec in iter_records(src, problems):
        records += 1
        where = {"line": line, "record": record}
        if not isinstance(rec, dict):
            problems.append(Problem(src.name, f"expected a JSON object (one log record), found {json_kind(rec)}; "
                                              "record skipped", path="", **where))
            continue
        with record_guard(problems, src.name, "the arena log reader", **where):
            _read_record(src, rec, where, convs, pairs, votes, problems)

    sessions = _sessions(src, convs, pairs)
    sandbox = _sandbox_runs(src, set(convs), problems) if convs else {}
    traces: list[ParsedTrace] = []
    groups: list[dict] = []
    for sid, sides in sessions.items():
        group_votes = _dedup_votes([v for v in votes if v.convs & set(sides)])
        mode = next((convs[c].chat_mode for c in sides if convs[c].chat_mode), None) or _mode_from_path(src.name)
        battle = len(sides) >= 2
        for n, cid in enumerate(sides):
            side = ("left", "right")[n] if battle and n < 2 else None
            traces.append(_trace(src, convs[cid], sid, side, mode, group_votes if battle else [],
                                 sandbox.get(cid, [])))
        if battle:
            anony = {"battle_anony": True, "battle_named": False}.get(mode or "")
            if anony is None:
                anony = next((p.anony for p in pairs if p.anony is not None and set(p.convs) & set(sides)), None)
            groups.append({
                "kind": "battle", "id": sid, "chat_mode": mode, "sides": list(sides),
                "models": [convs[c].model for c in sides], "anony": anony,
                "votes": [{"winner": VOTES[v.type], "type": v.type, "tstamp": to_epoch_ms(v.tstamp)}
                          for v in group_votes],
                "rounds": max(_rounds(convs[c]) for c in sides),
            })
    return ParseResult(format=NAME, traces=traces, groups=groups, problems=problems, records=records)




def _read_record(src: Source, rec: dict, where: dict, convs: dict, pairs: list, votes: list,
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
    seen: list[str] = []
    for (state, path), name in zip(states, names):
        cid = _check_state(src, state, path, where, problems)
        if cid is None:
            continue
        conv = convs.get(cid)
        if conv is None:
            conv = convs[cid] = _Conv(cid, len(convs))
        elif not conv.clash:
            clash = _clash(conv, state, name)
            if clash:
                conv.clash = True
                first = _at({"line": conv.line, "record": conv.record})
                problems.append(Problem(src.name, f"conv_id {cid!r} holds two conversations: {first} and "
                                                  f"{_at(where)} have {clash}; their records are merged into one "
                                                  "trace showing the latest record's history",
                                        path=path + "/conv_id", **where))
        _apply(conv, state, path, name, rtype, times, where)
        seen.append(cid)
    if len(states) >= 2 and len(seen) == len(states):
        # Anonymous battles log the model selectors empty until the vote reveals them.
        shown = rec.get("models") if isinstance(rec.get("models"), list) else None
        pairs.append(_Pair(seen, None if not shown else not any(shown)))
    if rtype in VOTES and seen:
        votes.append(_Vote(rtype, tstamp, set(seen), where["line"]))


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


def _clash(conv: _Conv, state: dict, name) -> str | None:
    """Why a record of conv_id `conv` cannot be the same conversation's, or None. A conversation
    keeps its model, and its history only grows: a regenerated answer replaces the last one."""
    model = _model_of(state, name)
    if model and conv.model and model != conv.model:
        return f"models {conv.model!r} and {model!r}"
    old, new = _visible(conv.state), _visible(state)
    if not isinstance(new, list) or not isinstance(old, list):
        return None
    n = min(len(old), len(new))
    for i in range(n):
        if old[i] == new[i]:
            continue
        last_answer = (i == n - 1 and isinstance(new[i], (list, tuple)) and new[i]
                       and isinstance(old[i], (list, tuple)) and old[i]
                       and role_of(new[i][0], state.get("roles")) == "assistant")
        if not last_answer:
            return f"histories that differ at message {i}"
    return None


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


def _apply(conv: _Conv, state: dict, path: str, name, rtype, times: tuple, where: dict) -> None:
    tstamp, start, end = times
    conv.state, conv.path, conv.line, conv.record = state, path, where["line"], where["record"]
    if isinstance(state.get("chat_session_id"), str) and state["chat_session_id"]:
        conv.session = state["chat_session_id"]
    conv.model = _model_of(state, name) or conv.model
    if isinstance(state.get("chat_mode"), str):
        conv.chat_mode = state["chat_mode"]
    conv.types[rtype or "?"] += 1
    if rtype in FEEDBACK:
        conv.feedback[(rtype, tstamp)] = rtype
    if rtype in RESPONSE_TYPES or rtype is None:
        answers = _answers(state)
        if answers:
            stamp = start if start is not None else tstamp
            duration = round((end - start) * 1000) if start is not None and end is not None and end >= start else None
            conv.responses[answers - 1] = (to_epoch_ms(stamp), duration)
        if rtype and rtype.startswith("regenerate"):
            conv.regenerations += 1


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


def _visible(state: dict) -> list:
    """Messages after the template's few-shot examples (`offset`)."""
    msgs = state.get("messages") or []
    off = state.get("offset")
    return msgs[off:] if isinstance(off, int) and 0 < off <= len(msgs) else msgs


def _sessions(src: Source, convs: dict[str, _Conv], pairs: list) -> dict[str, list[str]]:
    """chat_session_id -> its conversations, left side first."""
    m = _CONV_LOG_NAME.match(src.basename)
    from_name = m.group(1) if m else None
    partner: dict[str, str] = {}
    for p in pairs:
        for c in p.convs[1:]:
            partner.setdefault(c, p.convs[0])
    sid_of: dict[str, str] = {}
    for c in sorted(convs.values(), key=lambda c: c.order):
        if c.session:
            sid_of[c.conv_id] = c.session
        elif c.conv_id in partner and convs[partner[c.conv_id]].session:
            sid_of[c.conv_id] = convs[partner[c.conv_id]].session
        else:
            sid_of[c.conv_id] = from_name or partner.get(c.conv_id, c.conv_id)
    sessions: dict[str, list[str]] = {}
    for c in sorted(convs.values(), key=lambda c: c.order):
        sessions.setdefault(sid_of[c.conv_id], []).append(c.conv_id)
    # A `states` pair says which side is left; otherwise the side written first is.
    for sid, sides in sessions.items():
        for p in pairs:
            ids = [c for c in p.convs if c in sides]
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
    return sum(1 for p in _visible(conv.state)
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
           votes: list[_Vote], runs: list[dict]) -> ParsedTrace:
    problems: list[Problem] = []
    where = {"line": conv.line, "record": conv.record}
    state = conv.state
    roles = state.get("roles")
    messages: list[Message] = []
    turns: dict[int, Turn] = {}
    system = state.get("system_message", state.get("system"))
    if isinstance(system, str) and system.strip():
        messages.append(Message("system", _clean(system)))
    msgs = state.get("messages") or []
    off = state.get("offset") if isinstance(state.get("offset"), int) and 0 < state["offset"] <= len(msgs) else 0
    answer = 0
    for i in range(off, len(msgs)):
        pair = msgs[i]
        at = f"{conv.path}/messages/{i}"
        if not isinstance(pair, (list, tuple)) or len(pair) < 2:
            problems.append(Problem(src.name, "expected a [role, text] pair; message skipped", path=at, **where))
            continue
        role = role_of(pair[0], roles)
        if role is None:
            problems.append(Problem(src.name, f"unknown role {pair[0]!r}; expected user, assistant or system "
                                              "(read as user)", path=at + "/0", **where))
            role = "user"
        text, images = _content(pair[1])
        if text is None:
            continue  # an answer still being generated when the line was written
        if images:
            text = (text + "\n" if text else "") + "\n".join(["[image]"] * images)
        if role == "assistant":
            stamp, duration = conv.responses.get(answer, (None, None))
            turns[len(messages)] = Turn(model=conv.model, timestamp=stamp, duration_ms=duration)
            answer += 1
        messages.append(Message(role, _clean(text)))

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
                       ref=conv.conv_id)


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
                return _clean(v)
            if v is not None:
                return _clean(orjson.dumps(v).decode())
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
                "same logs folder or zip are attached as sandbox runs. IP addresses are masked.",
    sniff=sniff, parse=parse, patterns=("conv-log-*.json", "conv-log-*.jsonl", "sandbox-logs-*.json", "sandbox-records-*.json"),
    priority=30,
)
