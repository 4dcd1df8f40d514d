"""A trace as a conversation to read: branches, view items, filters, find, pages.

Pure functions over the cooked document (no Streamlit). A view item is what
`viewer.render.render_messages` draws: {"message", "position", "result", "unmatched",
"error"}, where `position` is the message's index in the branch being read (for the main
branch, the trace's `timeline`), `result` the tool_result answering the item's tool call.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

MAIN = "main"


# -- branches -----------------------------------------------------------------------
@dataclass(frozen=True)
class Branch:
    key: str  # MAIN, or the id of the leaf request
    label: str
    message_ids: tuple


def branches(trace: dict, requests: dict) -> list[Branch]:
    """The main branch (the trace's timeline) and every other leaf of its request forest.

    A branch is the conversation a leaf request saw and got back: its request_messages then
    its response_messages. Leaves whose conversation is the timeline (or a start of it, as the
    last model turn of a trajectory is) belong to the main branch."""
    main = tuple(trace.get("timeline") or ())
    out = [Branch(MAIN, f"main · {len(main)} messages", main)]
    reqs = [requests[r] for r in trace.get("requests") or () if r in requests]
    parents = {r.get("parent_id") for r in reqs}
    seen = {main}
    for n, r in enumerate(reqs, 1):
        if r["id"] in parents:
            continue
        ids = tuple(r.get("request_messages") or ()) + tuple(r.get("response_messages") or ())
        if ids in seen or ids == main[:len(ids)]:  # nothing the main branch does not show
            continue
        seen.add(ids)
        bits = [f"request {n}", r.get("model") or "unknown model", f"{len(ids)} messages"]
        if r.get("error"):
            bits.append("failed")
        out.append(Branch(r["id"], " · ".join(bits), ids))
    return out


# -- view items ---------------------------------------------------------------------
def build_items(message_ids, messages: dict, requests=()) -> list[dict]:
    """View items for a branch, each tool call with the result that answers it.

    A result answers a call when its `tool_use_id` equals the call's id and it comes later
    (however much later). A call without an id takes the next later result without one.
    A message with several calls gives one item per call, so each call sits with its own
    result; the message text stays on the first. Answered results are not listed again.
    Calls and results that find no partner are marked `unmatched`.
    Failed requests whose messages lie on the branch mark their response with the error, or,
    when nothing came back, add an item of their own after the last message they sent.
    """
    ids = list(message_ids)
    msgs = [messages.get(mid) or {"id": mid, "role": "assistant", "content": "(message missing from the document)"}
            for mid in ids]
    # Pair every call with a later result: by id, else positionally for id-less ones.
    pending_by_id: dict[str, list[tuple[int, int]]] = {}
    pending_anon: list[tuple[int, int]] = []
    answer: dict[tuple[int, int], int] = {}  # (position, call index) -> result position
    consumed: set[int] = set()
    for pos, m in enumerate(msgs):
        role = m.get("role")
        if role == "tool_result":
            tuid = m.get("tool_use_id")
            queue = pending_by_id.get(tuid) if tuid else pending_anon
            if queue:
                answer[queue.pop(0)] = pos
                consumed.add(pos)
        for ci, call in enumerate(_calls(m)):
            cid = call.get("id") if isinstance(call, dict) else None
            if cid:
                pending_by_id.setdefault(cid, []).append((pos, ci))
            else:
                pending_anon.append((pos, ci))

    errors_after, errors_on = _request_errors(ids, requests)
    items: list[dict] = []
    for pos, m in enumerate(msgs):
        calls = _calls(m)
        err = errors_on.get(pos)
        if pos in consumed:
            pass
        elif len(calls) > 1:
            for ci, call in enumerate(calls):
                part = dict(m, tool_calls=[call])
                if ci:
                    part["content"] = ""
                    part.pop("images", None)  # the text and images stay on the first call
                items.append(_item(part, pos, messages_at(msgs, answer.get((pos, ci))),
                                   (pos, ci) not in answer, err if ci == 0 else None))
        elif calls:
            items.append(_item(m, pos, messages_at(msgs, answer.get((pos, 0))), (pos, 0) not in answer, err))
        else:
            unmatched = m.get("role") == "tool_result"  # a result nobody asked for (or before its call)
            items.append(_item(m, pos, None, unmatched, err))
        for req in errors_after.get(pos, ()):
            items.append(_item({"id": f"request:{req['id']}", "role": "assistant", "content": "",
                                "name": req.get("model")}, pos, None, False, req["error"]))
    return items


def messages_at(msgs: list[dict], pos: int | None) -> dict | None:
    return msgs[pos] if pos is not None else None


def _item(message, position, result, unmatched, error) -> dict:
    return {"message": message, "position": position, "result": result,
            "unmatched": bool(unmatched), "error": error}


def _calls(m: dict) -> list:
    calls = m.get("tool_calls")
    return calls if isinstance(calls, list) else []


def _request_errors(ids: list, requests) -> tuple[dict, dict]:
    """Failed requests that lie on this branch: where their error shows.

    Returns ({position: [request with nothing back, shown after that position]},
             {position: error of the request whose first response sits there})."""
    after: dict[int, list] = {}
    on: dict[int, str] = {}
    for r in requests:
        if not r.get("error"):
            continue
        sent = list(r.get("request_messages") or ())
        got = list(r.get("response_messages") or ())
        if len(sent) > len(ids) or ids[:len(sent)] != sent:
            continue
        if got and ids[len(sent):len(sent) + len(got)] == got:
            on.setdefault(len(sent), str(r["error"]))
        elif not got:
            after.setdefault(len(sent) - 1, []).append(r)
    return after, on


# -- filters and find -----------------------------------------------------------------
def roles_of(item: dict) -> set[str]:
    roles = {item["message"].get("role")}
    if item.get("result") is not None:
        roles.add("tool_result")
    return roles


def is_error(item: dict) -> bool:
    r = item.get("result")
    return bool(item["message"].get("is_error") or item.get("error") or (r and r.get("is_error")))


def filter_items(items: list[dict], roles=None, hide_thinking: bool = False, only_errors: bool = False) -> list[dict]:
    roles = set(roles) if roles else None
    out = []
    for it in items:
        rs = roles_of(it)
        if roles is not None and not (rs & roles):
            continue
        if hide_thinking and it["message"].get("role") == "thinking":
            continue
        if only_errors and not is_error(it):
            continue
        out.append(it)
    return out


def item_text(item: dict) -> str:
    """Everything find looks at in an item: contents, call names and arguments, errors."""
    parts = []
    for m in (item["message"], item.get("result")):
        if not m:
            continue
        c = m.get("content")
        parts.append(c if isinstance(c, str) else orjson.dumps(c).decode() if c is not None else "")
        for call in _calls(m):
            if isinstance(call, dict):
                parts.append(str(call.get("name") or ""))
                a = call.get("arguments")
                parts.append(a if isinstance(a, str) else orjson.dumps(a, option=orjson.OPT_NON_STR_KEYS).decode())
    if item.get("error"):
        parts.append(str(item["error"]))
    return "\n".join(parts)


def find(items: list[dict], query: str) -> tuple[list[int], int]:
    """Indexes (into `items`) of the items containing `query` (any case), and the count of
    occurrences over all of them."""
    if not query or not query.strip():
        return [], 0
    rx = re.compile(re.escape(query), re.IGNORECASE)
    hits, total = [], 0
    for i, it in enumerate(items):
        n = sum(1 for _ in rx.finditer(item_text(it)))
        if n:
            hits.append(i)
            total += n
    return hits, total


def step_hit(hit_positions: list[int], current: int | None, forward: bool) -> int | None:
    """The next (or previous) hit position after (before) `current`, wrapping around."""
    if not hit_positions:
        return None
    if current is None:
        return hit_positions[0] if forward else hit_positions[-1]
    if forward:
        later = [p for p in hit_positions if p > current]
        return later[0] if later else hit_positions[0]
    earlier = [p for p in hit_positions if p < current]
    return earlier[-1] if earlier else hit_positions[-1]


# -- pages ------------------------------------------------------------------------------
def page_of(items: list[dict], position: int | None, page_size: int) -> int:
    """0-based page showing `position` (or the first item after it) among `items`."""
    if not items or position is None:
        return 0
    for i, it in enumerate(items):
        if it["position"] >= position:
            return i // page_size
    return (len(items) - 1) // page_size


def page_count(n_items: int, page_size: int) -> int:
    return max(1, -(-n_items // page_size))
