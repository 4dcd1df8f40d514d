"""Open: upload files, a folder or a zip; pick bundled samples; see each input's problems;
choose the trace to read from the runs table."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from viewer.render import fmt

from viewer.pages import nav

from viewer.pages import state

MAX_PROBLEM_PANELS = 30


def page() -> None:
    st.title("Open traces")
    st.caption("Request logs (OpenAI, Anthropic, Gemini), trajectories and arena logs: drop files, "
               "a folder or a zip. Everything stays on this server.")
    _uploads()
    _samples()
    cols = state.loaded()
    _runs(cols)
    _inputs(cols)


# -- adding inputs ---------------------------------------------------------------------
def _uploads() -> None:
    left, right = st.columns(2)
    with left:
        files = st.file_uploader("Files or zip archives", accept_multiple_files=True, key="tv_up_files")
    with right:
        folder = st.file_uploader("A folder", accept_multiple_files="directory", key="tv_up_folder")
    seen = st.session_state.setdefault("tv_upload_keys", {})  # file ids -> collection key
    batches = [[f] for f in files or []]  # each file alone: the same file is never cooked twice
    if folder:
        batches.append(list(folder))  # a folder together: its files may refer to each other
    for batch in batches:
        ids = tuple(sorted(f.file_id for f in batch))
        if ids in seen:
            # Cooked already: held, or let go by the server to bound its memory. A let-go upload
            # is never cooked again behind the user's back (the uploader still holds its files);
            # the page says so below and offers to read it again.
            continue
        with st.spinner(f"Reading {len(batch)} file{'s' * (len(batch) != 1)}…"):
            col = state.add_upload([(f.name, f.getvalue()) for f in batch])
        seen[ids] = col.key
    _let_go(seen, batches)


def _let_go(seen: dict, batches: list) -> None:
    gone = state.let_go()
    if not gone:
        return
    names = ", ".join(fmt.md_text(label, 60) for label in gone.values())
    st.info(f"Let go to bound the server's memory: {names}. The oldest uploads are let go when "
            "newer ones need the room; read one again to reopen it.", icon=":material/memory:")
    by_key = {key: ids for ids, key in seen.items()}
    current = {tuple(sorted(f.file_id for f in b)): b for b in batches}
    with st.container(horizontal=True):
        for key, label in gone.items():
            ids = by_key.get(key)
            batch = current.get(ids) if ids else None
            if batch is None:  # no longer in the uploader: nothing to read again
                continue
            if st.button(f"Read {fmt.md_text(label, 60)} again", key=f"tv_reread_{key}", icon=":material/refresh:"):
                with st.spinner(f"Reading {len(batch)} file{'s' * (len(batch) != 1)}…"):
                    col = state.add_upload([(f.name, f.getvalue()) for f in batch])
                seen[ids] = col.key
                if col.key != key:
                    state.forget_let_go(key)
                st.rerun()


def _samples() -> None:
    dirs = state.sample_dirs()
    if not dirs:
        return
    loaded_keys = {c.label for c in state.loaded()}
    missing = [p for p in dirs if state.sample_label(p) not in loaded_keys]
    if not missing:
        return
    with st.expander("Bundled samples", expanded=not state.loaded()):
        cols = st.columns(min(4, len(missing)))
        for i, p in enumerate(missing):
            if cols[i % len(cols)].button(f"Open {p.name}", key=f"tv_sample_{p.name}", icon=":material/add:"):
                state.add_loaded(state.load_sample(p))
                st.rerun()


# -- the runs table ----------------------------------------------------------------------
def runs_frame(cols) -> pd.DataFrame:
    rows = []
    for c in cols:
        for t in c.doc["traces"]:
            tot = t.get("totals") or {}
            rows.append({
                "id": t["id"], "title": t.get("title") or t["id"], "format": t.get("format"),
                "model": ", ".join(t.get("models") or []) or None,
                "messages": tot.get("messages"), "requests": tot.get("requests"),
                "tokens": fmt.total_tokens(tot), "cost": tot.get("cost"),
                "outcome": t.get("outcome"), "duration_s": (t["duration_ms"] / 1000) if t.get("duration_ms") is not None else None,
                "errors": tot.get("errors"), "source": c.label,
            })
    return pd.DataFrame(rows, columns=["id", "title", "format", "model", "messages", "requests", "tokens",
                                       "cost", "outcome", "duration_s", "errors", "source"])


def _runs(cols) -> None:
    df = runs_frame(cols)
    current = state.current_trace_id()
    if df.empty:
        st.info("Nothing is open yet: upload a trace or open a bundled sample.")
        return
    if len(df) == 1:
        row = df.iloc[0]
        st.subheader("Trace")
        nav.link("timeline", f"Read {fmt.md_text(row['title'], 120)}", trace=row["id"], icon=":material/forum:")
        return
    st.subheader(f"Runs · {len(df)}")
    f1, f2, f3 = st.columns([3, 2, 2])
    text = f1.text_input("Filter", placeholder="title, model, source…", key="tv_runs_text")
    formats = f2.multiselect("Format", sorted(df["format"].dropna().unique()), key="tv_runs_fmt")
    outcomes = f3.multiselect("Outcome", sorted(df["outcome"].dropna().unique()), key="tv_runs_outcome")
    view = df
    if text:
        hay = (df["title"].fillna("") + " " + df["model"].fillna("") + " " + df["source"].fillna("")).str.lower()
        view = view[hay.str.contains(text.lower(), regex=False)]
    if formats:
        view = view[view["format"].isin(formats)]
    if outcomes:
        view = view[view["outcome"].isin(outcomes)]
    st.caption("Select a row to read it as a timeline. Click a column header to sort.")
    event = st.dataframe(
        fmt.visible_frame(view), key="tv_runs", hide_index=True, on_select="rerun", selection_mode="single-row",
        column_order=["title", "format", "model", "messages", "requests", "tokens", "cost", "outcome",
                      "duration_s", "errors", "source"],
        column_config={
            "title": st.column_config.TextColumn("Title", width="medium"),
            "format": st.column_config.TextColumn("Format", width="small"),
            "model": st.column_config.TextColumn("Model", width="small"),
            "messages": st.column_config.NumberColumn("Messages", width="small"),
            "requests": st.column_config.NumberColumn("Requests", width="small"),
            "tokens": st.column_config.NumberColumn("Tokens", format="compact", width="small"),
            "cost": st.column_config.NumberColumn("Cost", format="$%.4f", width="small"),
            "outcome": st.column_config.TextColumn("Outcome", width="small"),
            "duration_s": st.column_config.NumberColumn("Duration (s)", format="%.1f", width="small"),
            "errors": st.column_config.NumberColumn("Errors", width="small"),
            "source": st.column_config.TextColumn("Opened as", width="small"),
        },
    )
    rows = event.selection.rows if event is not None else []
    if rows:
        nav.go("timeline", trace=view.iloc[rows[0]]["id"])
    if current and current in set(df["id"]):
        nav.link("timeline", "Back to the trace being read", trace=current, icon=":material/forum:")


# -- inputs and their problems ------------------------------------------------------------
def _inputs(cols) -> None:
    rows = []
    for c in cols:
        for inp in c.inputs:
            rows.append({"input": inp["name"], "opened as": c.label, "format": inp.get("format") or "not read",
                         "size": fmt.size(inp.get("size")), "traces": len(inp.get("traces") or []),
                         "problems": len(inp.get("problems") or [])})
    if not rows:
        return
    st.subheader(f"Inputs · {len(rows)}")
    with st.container(horizontal=True):
        for c in cols:
            if st.button(fmt.md_text(c.label, 60), key=f"tv_close_{c.key}", icon=":material/close:",
                         help="close: remove from this list (links to its traces keep working)"):
                state.remove_loaded(c.key)
                st.rerun()
    st.dataframe(fmt.visible_frame(pd.DataFrame(rows)), hide_index=True)
    bad = [(c, inp) for c in cols for inp in c.inputs if inp.get("problems")]
    for c, inp in bad[:MAX_PROBLEM_PANELS]:
        probs = inp["problems"]
        title = (f"{fmt.md_text(inp['name'], 120)} · {len(probs)} problem{'s' * (len(probs) != 1)}"
                 + (" · nothing loaded" if not inp.get("traces") else ""))
        with st.expander(title, icon=":material/warning:"):
            st.dataframe(fmt.visible_frame(problems_frame(probs)), hide_index=True)
    if len(bad) > MAX_PROBLEM_PANELS:
        rest = [p for _, inp in bad[MAX_PROBLEM_PANELS:] for p in inp["problems"]]
        with st.expander(f"{len(bad) - MAX_PROBLEM_PANELS} more inputs with problems", icon=":material/warning:"):
            st.dataframe(fmt.visible_frame(problems_frame(rest)), hide_index=True)


def problems_frame(problems: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{"file": p.get("file"), "line": p.get("line"), "record": p.get("record"),
                          "path": p.get("path") or "", "message": p.get("message")} for p in problems],
                        columns=["file", "line", "record", "path", "message"])
