"""Timeline: one trace as a conversation, a page of messages at a time.

A page of messages is one HTML block from `viewer.render` (escaped and sanitised there).
The URL holds `trace`, `msg` (the position in the branch) and, off the main branch,
`branch`; page moves, find jumps and expansions rewrite `msg`, so a reload or a shared link
comes back to the same place.
"""
from __future__ import annotations

import streamlit as st

from viewer.analysis import conversation as conv
from viewer.render import fmt
from viewer.render import html as render
from viewer.pages import state

PAGE_SIZES = (25, 50, 100, 200)
MAX_CHARS = 4000
ROLE_LABELS = {"system": "system", "user": "user", "assistant": "assistant", "thinking": "thinking",
               "tool_use": "tool call", "tool_result": "tool result"}
PATCH_KINDS = ("patch", "diff")
MAX_PATCHES = 50


def page() -> None:
    opened = state.open_trace("Timeline")
    if opened is None:
        return
    tid, col, trace = opened
    ss = st.session_state
    if ss.get("tv_view_of") != tid:  # a different trace: start from its own URL position
        _reset_view(tid)

    # Header and filters first in the page, filled after the page of messages so that it
    # reaches the browser first. Widget values are in session state before the widgets run.
    header, controls = st.container(), st.container()

    reqs = [col.requests[r] for r in trace.get("requests") or () if r in col.requests]
    branches = col.memo(("branches", tid), lambda: conv.branches(trace, col.requests))
    by_key = {b.key: b for b in branches}
    bkey = st.query_params.get("branch") or conv.MAIN
    branch = by_key.get(bkey) or by_key[conv.MAIN]
    items = col.memo(("items", tid, branch.key), lambda: conv.build_items(branch.message_ids, col.messages, reqs))

    present = [r for r in ROLE_LABELS if any(r in conv.roles_of(it) for it in items)]
    role_of = {ROLE_LABELS[r]: r for r in present}
    roles = [role_of[r] for r in ss.get("tv_roles") or () if r in role_of]
    query = ss.get("tv_find") or ""
    visible = conv.filter_items(items, roles, ss.get("tv_hide_thinking", False), ss.get("tv_only_errors", False))
    hit_idx, occurrences = conv.find(visible, query)
    hits = ss["tv_hits"] = sorted({visible[i]["position"] for i in hit_idx})

    _reading(col, visible, len(items), len(branch.message_ids), query, hits, occurrences)
    with header:
        _header(col, trace)
    with controls:
        if len(branches) > 1:
            labels = [b.label for b in branches]
            ss["tv_branch_keys"] = {b.label: b.key for b in branches}
            st.selectbox("Branch", labels, index=labels.index(branch.label), key="tv_branch",
                         on_change=_on_branch, help="A forked log has one conversation per leaf request; "
                         "main is the trace's timeline (root to the latest leaf).")
        _filters(list(role_of), bool(hits))


@st.fragment
def _reading(col, visible: list, n_items: int, n_positions: int, query: str, hits: list, occurrences: int) -> None:
    """The page bar, the status line and the page of messages.

    A fragment: moving between pages, expanding a message or showing raw JSON reruns only
    this part (the header, the filters and the page around it stay as they are)."""
    ss = st.session_state
    page_size = ss.get("tv_page_size", 50)
    msg = _msg_param(n_positions)
    pg = conv.page_of(visible, msg, page_size)
    n_pages = conv.page_count(len(visible), page_size)
    ss["tv_page_starts"] = [visible[i]["position"] for i in range(0, len(visible), page_size)] or [0]
    ss["tv_page_index"] = pg
    page_items = visible[pg * page_size:(pg + 1) * page_size]

    bar, status, messages = st.container(), st.container(), st.container()
    with messages:
        _messages(page_items, query, msg, pg, n_pages)
    with status:
        st.caption(_status(page_items, pg * page_size, visible, n_items, query, hits, occurrences))
    with bar:
        _page_bar(col, page_items, pg, n_pages)


def _filters(role_labels: list[str], any_hits: bool) -> None:
    c_roles, c_think, c_err, c_find, c_prev, c_next = st.columns([2.6, 1.5, 1.5, 2.6, 0.8, 0.8],
                                                                 vertical_alignment="bottom")
    chosen = st.session_state.get("tv_roles") or []
    if any(r not in role_labels for r in chosen):  # another branch may lack a chosen role
        st.session_state["tv_roles"] = [r for r in chosen if r in role_labels]
    c_roles.multiselect("Roles", role_labels, key="tv_roles", placeholder="all roles")
    c_think.toggle("Hide thinking", key="tv_hide_thinking")
    c_err.toggle("Only errors", key="tv_only_errors")
    c_find.text_input("Find in trace", key="tv_find", placeholder="text, tool name, id…")
    c_prev.button("Prev", key="tv_prev", help="previous match", on_click=_on_step, args=(False,),
                  disabled=not any_hits, width="stretch")
    c_next.button("Next", key="tv_next", help="next match", on_click=_on_step, args=(True,),
                  disabled=not any_hits, width="stretch")


def _page_bar(col, page_items: list, pg: int, n_pages: int) -> None:
    ss = st.session_state
    bar = st.columns([4, 3, 3, 1.4], vertical_alignment="bottom")
    with bar[0]:
        if ss.get("tv_page") != pg + 1:  # `msg` moved (a find jump, a link): follow it
            ss["tv_page"] = pg + 1
        st.pagination(n_pages, key="tv_page", on_change=_on_page, max_visible_pages=9)
    long_ids = ss["tv_expand_options"] = _long_messages(page_items, ss.get("tv_expanded", set()))
    bar[1].selectbox("Expand a long message", list(long_ids), index=None, key="tv_expand",
                     on_change=_on_expand, placeholder=(
                         f"{len(long_ids)} shortened on this page" if long_ids else "nothing shortened here"),
                     disabled=not long_ids)
    raw_opts = _raw_options(page_items)
    raw = bar[2].selectbox("Raw JSON of", list(raw_opts), index=None, key="tv_raw",
                           placeholder="a message on this page")
    bar[3].selectbox("Per page", PAGE_SIZES, key="tv_page_size", index=PAGE_SIZES.index(50),
                     on_change=_on_page_size)
    if raw:
        _raw(col, raw_opts[raw], raw)


def _status(page_items, before: int, visible, n_items: int, query, hits, occurrences) -> str:
    if not page_items:
        out = "No message matches these filters."
    else:
        out = (f"Messages #{page_items[0]['position']}–#{page_items[-1]['position']} · entries "
               f"{before + 1}–{before + len(page_items)} of {len(visible)}")
        if len(visible) != n_items:
            out += f" (filtered from {n_items})"
        if any(it.get("result") for it in page_items):
            out += " · tool results sit with their calls"
    if query:
        at = st.session_state.get("tv_focus")
        k = f"match {hits.index(at) + 1} of " if at in hits else ""
        out += (f" · find: {k}{len(hits)} message{'s' * (len(hits) != 1)}, {occurrences} hit{'s' * (occurrences != 1)}"
                if hits else " · find: no match")
    return out


def _messages(page_items: list, query: str, msg: int, pg: int, n_pages: int) -> None:
    """The page of messages as one HTML block, the focused one outlined, then page buttons."""
    ss = st.session_state
    if not page_items:
        return
    body = render.render_messages(page_items, max_chars=MAX_CHARS, query=query or None,
                                  expanded=frozenset(ss.get("tv_expanded", ())))
    st.html(state.themed(body))
    focus = ss.get("tv_focus")
    if focus is not None and any(it["position"] == focus for it in page_items):
        st.html(f"<style>.tv-root #msg-{int(focus)} {{ outline: 2px solid #fb8500; outline-offset: 3px; }}</style>")
    if ss.pop("tv_scroll", False):
        target = msg if focus is None else focus
        # Messages off the screen are laid out only when they come near it (content-visibility
        # in the stylesheet), so their heights are estimates until then: the ones above the
        # target are laid out for real, or the scroll would land off the mark.
        above = [int(it["position"]) for it in page_items if it["position"] < target]
        if above:
            st.html("<style>%s { content-visibility: visible; }</style>"
                    % ", ".join(f".tv-root #msg-{p}" for p in above))
        _scroll_to(target)
    if n_pages > 1:
        b1, b2, _ = st.columns([1, 1, 6])
        b1.button("Previous page", key="tv_prev_page", on_click=_on_page_step, args=(-1,),
                  disabled=pg == 0, icon=":material/chevron_left:")
        b2.button("Next page", key="tv_next_page", on_click=_on_page_step, args=(1,),
                  disabled=pg >= n_pages - 1, icon=":material/chevron_right:")


# -- header --------------------------------------------------------------------------------
def _header(col, trace: dict) -> None:
    tot = trace.get("totals") or {}
    st.subheader(fmt.md_text(trace.get("title") or trace["id"], 200))
    bits = [trace.get("format"), ", ".join(trace.get("models") or []) or None, trace.get("source"),
            fmt.when(trace.get("started_at")) if trace.get("started_at") else None]
    st.caption(" · ".join(fmt.md_text(b, 160) for b in bits if b))
    unpriced = tot.get("unpriced_requests") or 0
    errors = tot.get("errors") or 0
    stats = [f"**{tot.get('requests', 0):,}** requests", f"**{tot.get('messages', 0):,}** messages",
             f"**{fmt.tokens(fmt.total_tokens(tot))}** tokens (in {fmt.tokens(tot.get('input'))}, "
             f"out {fmt.tokens(tot.get('output'))}, cache read {fmt.tokens(tot.get('cache_read'))}, "
             f"cache write {fmt.tokens(tot.get('cache_write'))})",
             f"**{fmt.cost(tot.get('cost'))}**" + (f" ({unpriced} unpriced)" if unpriced else ""),
             f"**{fmt.duration(trace.get('duration_ms'))}**",
             f"outcome **{trace.get('outcome') or 'unknown'}**",
             f":red[**{errors:,}** error{'s' * (errors != 1)}]" if errors else "no errors"]
    st.markdown(" · ".join(stats))
    if trace.get("outcome_detail"):
        st.caption(fmt.md_text(trace["outcome_detail"], 400))
    probs = trace.get("problems") or []
    if probs:
        with st.expander(f"{len(probs)} problem{'s' * (len(probs) != 1)} while reading this trace",
                         icon=":material/warning:"):
            from viewer.pages.open import problems_frame  # pandas only when there are problems

            st.dataframe(fmt.visible_frame(problems_frame(probs)), hide_index=True)
    patches = [a for a in trace.get("artifacts") or []
               if isinstance(a, dict) and a.get("kind") in PATCH_KINDS and isinstance(a.get("content"), str)]
    if len(patches) == 1:
        st.html(state.themed(render.render_patch(patches[0]["content"], patches[0].get("title") or "patch")))
    elif patches:
        with st.expander(f"{len(patches)} patches", icon=":material/difference:"):
            for a in patches[:MAX_PATCHES]:
                st.html(state.themed(render.render_patch(a["content"], a.get("title") or "patch")))
            if len(patches) > MAX_PATCHES:
                st.caption(f"and {len(patches) - MAX_PATCHES} more")


# -- state changes (callbacks run before the page is drawn again) ---------------------------
def _reset_view(tid: str) -> None:
    ss = st.session_state
    ss["tv_view_of"] = tid
    ss["tv_expanded"] = set()
    ss["tv_focus"] = None
    for k in ("tv_raw", "tv_find", "tv_roles", "tv_hide_thinking", "tv_only_errors", "tv_branch"):
        ss.pop(k, None)
    # A link naming a message scrolls there once.
    if st.query_params.get("msg"):
        ss["tv_scroll"] = True
        ss["tv_focus"] = _int(st.query_params.get("msg"))


def _msg_param(n: int) -> int:
    m = _int(st.query_params.get("msg"))
    return min(max(m or 0, 0), max(n - 1, 0))


def _int(v) -> int | None:
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _set_msg(pos: int, *, focus: bool, scroll: bool = True) -> None:
    st.query_params["msg"] = str(pos)
    st.session_state["tv_focus"] = pos if focus else None
    st.session_state["tv_scroll"] = scroll


def _on_page() -> None:
    starts = st.session_state.get("tv_page_starts") or [0]
    n = min(max(int(st.session_state.get("tv_page") or 1), 1), len(starts))
    _set_msg(starts[n - 1], focus=False)


def _on_page_step(delta: int) -> None:
    starts = st.session_state.get("tv_page_starts") or [0]
    cur = st.session_state.get("tv_page_index") or 0
    _set_msg(starts[min(max(cur + delta, 0), len(starts) - 1)], focus=False)


def _on_page_size() -> None:
    st.session_state["tv_scroll"] = True


def _on_step(forward: bool) -> None:
    ss = st.session_state
    hits = ss.get("tv_hits") or []
    cur = ss.get("tv_focus")
    if cur is None:  # start from the page being read
        cur = _int(st.query_params.get("msg")) or 0
        cur = cur - 1 if forward else cur + 1
    pos = conv.step_hit(hits, cur, forward)
    if pos is not None:
        _set_msg(pos, focus=True)


def _on_expand() -> None:
    ss = st.session_state
    choice = (ss.get("tv_expand_options") or {}).get(ss.get("tv_expand"))
    if choice:
        ids, pos = choice
        ss.setdefault("tv_expanded", set()).update(ids)
        _set_msg(pos, focus=True)
    ss["tv_expand"] = None


def _on_branch() -> None:
    key = (st.session_state.get("tv_branch_keys") or {}).get(st.session_state.get("tv_branch")) or conv.MAIN
    if key == conv.MAIN:
        st.query_params.pop("branch", None)
    else:
        st.query_params["branch"] = key
    st.query_params["msg"] = "0"
    st.session_state["tv_focus"] = None


# -- helpers ----------------------------------------------------------------------------------
def _long_messages(page_items, expanded) -> dict:
    """Options for "expand": label -> (ids to show in full, position), for the items the
    render shortens (content or result beyond MAX_CHARS) that are not expanded yet."""
    out = {}
    for it in page_items:
        m, r = it["message"], it.get("result")
        big = [x for x in (m, r) if x and render.message_size(x) > MAX_CHARS and x.get("id") not in expanded]
        if not big:
            continue
        size = sum(render.message_size(x) for x in big)
        label = _unique(out, f"#{it['position']} {ROLE_LABELS.get(m.get('role'), 'message')} · {size:,} chars")
        out[label] = ([x["id"] for x in big], it["position"])
    return out


def _raw_options(page_items) -> dict:
    """Options for "raw JSON": label -> message id (or request:<id> for a failed request)."""
    out, seen = {}, set()
    for it in page_items:
        for x, role in ((it["message"], None), (it.get("result"), "tool_result")):
            if x and x["id"] not in seen:
                seen.add(x["id"])
                out[_unique(out, f"#{it['position']} {ROLE_LABELS.get(role or x.get('role'), 'message')}")] = x["id"]
    return out


def _unique(taken: dict, label: str) -> str:
    n, out = 1, label
    while out in taken:
        n += 1
        out = f"{label} ({n})"
    return out


def _raw(col, mid: str, label: str) -> None:
    if mid.startswith("request:"):
        obj = col.requests.get(mid.split(":", 1)[1])
    else:
        obj = col.messages.get(mid)
    if obj is None:
        return
    with st.expander(f"Raw JSON · {label}", expanded=True):
        st.html(state.themed(render.render_raw(obj)))


def _scroll_to(pos: int) -> None:
    # Our own constant script (no trace content): bring the focused message into view. No "<"
    # inside it: the sanitiser drops scripts whose text looks like markup.
    nonce = st.session_state["tv_nonce"] = st.session_state.get("tv_nonce", 0) + 1
    st.html(
        "<script>(function(){var n=0;function go(){var e=document.getElementById('msg-%d');"
        "if(e){e.scrollIntoView({block:'start'});}else if(40>n++){setTimeout(go,50);}}go();})();"
        "/*%d*/</script>" % (int(pos), nonce),
        unsafe_allow_javascript=True,
    )
