"""Battles: every arena battle in the logs this server shows (session, models, vote, rounds, date);
selecting one opens it side by side on the compare page."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from viewer.render import fmt

from viewer.analysis import compare as cd
from viewer.analysis import ratings
from viewer.pages import nav
from viewer.pages import state
from viewer.pages import tables


def page() -> None:
    st.title("Battles")
    state.start_indexing_and_wait()
    scope = state.scope()
    groups = cd.battles(state.library().groups(scope))
    # Each side's title and start time, from the library's stubs of just those runs.
    ids = {s for g in groups for s in g.get("sides") or () if isinstance(s, str)}
    sides = {t["id"]: t for t in state.library().stubs(scope, ids=ids)}
    rows = [cd.battle_row(g, sides) for g in groups]
    # One model under names that differ in case or spacing shows under one spelling.
    names = ratings.display_names(r[k] for r in rows for k in ("left model", "right model"))
    for r in rows:
        for k in ("left model", "right model", "mode", "first prompt"):
            r[k] = names.get(r[k], r[k]) or "—"
    if not rows:
        st.info("No arena battle here yet. Open SWE Arena logs (a `logs/` folder or a zip of it) to see "
                "battles, their votes and sandbox runs.", icon=":material/info:")
        nav.link("open", "Open traces", icon=":material/folder_open:")
        return
    df = pd.DataFrame(rows).sort_values(["date", "battle"], kind="stable")
    f1, f2 = st.columns([3, 2])
    text = f1.text_input("Filter", placeholder="model, session, prompt…", key="tv_battles_text")
    votes = f2.multiselect("Vote", ["left", "right", "tie", "both bad", "no vote"], key="tv_battles_vote")
    view = df
    if text:
        hay = df[["battle", "left model", "right model", "first prompt", "mode"]].fillna("").astype(str).agg(
            " ".join, axis=1).str.lower()
        view = view[hay.str.contains(text.lower(), regex=False)]
    if votes:
        keys = {"left": "left is better", "right": "right is better", "tie": "tie", "both bad": "both are bad",
                "no vote": "no vote"}
        view = view[view["vote"].apply(lambda v: any(keys[k] in v for k in votes))]
    voted = int((df["vote"] != "no vote").sum())
    st.caption(f"{len(df)} battle{'s' * (len(df) != 1)}, {voted} with a vote. Select a row to open the battle "
               "side by side.")
    shown = fmt.visible_frame(view)
    ev = st.dataframe(shown, key="tv_battles", hide_index=True, on_select="rerun",
                      selection_mode="single-row",
                      column_order=["date", "left model", "right model", "vote", "rounds", "first prompt", "mode",
                                    "battle"],
                      column_config=tables.config(shown, {"battle": st.column_config.TextColumn("Session")}))
    sel = ev.selection.rows if ev is not None else []
    if sel:
        nav.go("compare", battle=view.iloc[sel[0]]["battle"])
    nav.link("leaderboard", "Leaderboard from these votes", icon=":material/leaderboard:")
