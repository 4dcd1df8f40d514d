"""Leaderboard: ratings from every vote in the arena logs this server shows.

Online Elo and Bradley-Terry with bootstrap intervals, a win-fraction matrix and battle
counts per pair, computed by `viewer.ratings` (FastChat's conventions, stated on the page).
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from viewer.pages import nav

from viewer.analysis import compare as cd
from viewer.analysis import ratings

from viewer.pages import state
from viewer.pages import tables

from viewer.render import fmt

ROUNDS = (100, 200, 500, 1000)
LABEL_CHARS = 60  # model names on an axis, cut so that a long one cannot push the chart away
HEATMAP_LABEL_CHARS = 32  # on both axes of a square


@st.cache_data(show_spinner="Bootstrapping the ratings…", max_entries=16)
def _board(battles: tuple, rounds: int) -> list[dict]:
    return ratings.leaderboard(list(battles), rounds=rounds, seed=0)


def page() -> None:
    st.title("Leaderboard")
    state.start_indexing_and_wait()
    groups = cd.battles(state.library().groups(state.scope()))
    battles, skipped = ratings.battles_from_groups(groups)
    if not battles:
        st.info("No vote in the arena logs here yet: the leaderboard is computed from the votes of "
                "SWE Arena battles.", icon=":material/info:")
        nav.link("battles", "Battles", icon=":material/sports_kabaddi:")
        return
    models = ratings.models_of(battles)
    c1, c2 = st.columns([4, 1], vertical_alignment="bottom")
    c1.caption(f"{len(battles)} vote{'s' * (len(battles) != 1)} from {len(groups)} battle"
               f"{'s' * (len(groups) != 1)}, {len(models)} models.")
    rounds = c2.selectbox("Bootstrap rounds", ROUNDS, index=1, key="tv_lb_rounds")
    if skipped:
        with st.expander(f"{len(skipped)} vote{'s' * (len(skipped) != 1)} not counted", icon=":material/warning:"):
            why = fmt.visible_frame(pd.DataFrame({"why": skipped}))
            st.dataframe(why, hide_index=True, column_config=tables.config(why))
    rows = _board(tuple(battles), rounds)

    table = pd.DataFrame([{
        "rank": r["rank"], "model": r["model"],
        "Bradley-Terry": round(r["bt"]), "BT 95% CI": f"{r['bt_lower']:.0f} – {r['bt_upper']:.0f}",
        "online Elo": round(r["elo"]), "Elo 95% CI": f"{r['elo_lower']:.0f} – {r['elo_upper']:.0f}",
        "battles": r["battles"], "wins": r["wins"], "losses": r["losses"], "ties": r["ties"]} for r in rows])
    table = fmt.visible_frame(table)
    st.dataframe(table, hide_index=True, width="stretch", column_config=tables.config(table))
    st.caption(
        "Conventions of FastChat's arena (`elo_analysis.py`). **Online Elo**: votes in time order, K = 4, "
        "base 10, scale 400, every model starts at 1000; a tie and a both-bad vote each count as half a win "
        "for both sides. **Bradley-Terry**: maximum-likelihood fit on the same scale, a win weighted twice "
        "and a tie (either kind) once for each side, centred so that the mean rating is 1000; when some "
        f"model never lost (or never won) the maximum does not exist and {ratings.FALLBACK_PRIOR} virtual "
        "ties per pair that met keep it finite. **95% CI**: 2.5th–97.5th percentiles over "
        f"{rounds} bootstrap resamples of the votes. Left is `model_a`, right `model_b`.")

    order = [r["model"] for r in rows]
    st.subheader("Ratings with 95% intervals")
    st.plotly_chart(_ratings_chart(rows), width="stretch")
    wf = ratings.win_fraction(battles)
    counts = ratings.pair_counts(battles)
    left, right = st.columns(2)
    with left:
        st.subheader("Win fraction (row beats column)")
        st.plotly_chart(_heatmap(order, wf, "%{z:.0%}", "Blues", zmax=1.0), width="stretch")
        st.caption("Battles the row model won against the column model, over all their battles "
                   "(ties count as played, not won).")
    with right:
        st.subheader("Battles per pair")
        st.plotly_chart(_heatmap(order, counts, "%{z}", "Greens"), width="stretch")
    with st.expander("Win fraction and battle counts as a table"):
        pairs = pd.DataFrame([{"model": a, "opponent": b, "battles": n, "win fraction": round(wf[(a, b)], 3)}
                              for (a, b), n in sorted(counts.items())])
        pairs = fmt.visible_frame(pairs)
        st.dataframe(pairs, hide_index=True, column_config=tables.config(pairs))
    nav.link("battles", "All battles", icon=":material/sports_kabaddi:")


def _ratings_chart(rows: list[dict]) -> go.Figure:
    models = fmt.chart_labels([r["model"] for r in rows], LABEL_CHARS)[::-1]
    fig = go.Figure()
    for key, name, color, shift in (("bt", "Bradley-Terry", "#0969da", 0.15), ("elo", "online Elo", "#d4760a", -0.15)):
        rs = rows[::-1]
        fig.add_trace(go.Scatter(
            x=[r[key] for r in rs], y=[i + shift for i in range(len(rs))], mode="markers", name=name,
            marker=dict(color=color, size=9),
            error_x=dict(type="data", symmetric=False, array=[r[f"{key}_upper"] - r[key] for r in rs],
                         arrayminus=[r[key] - r[f"{key}_lower"] for r in rs]),
            customdata=[[fmt.chart_text(r["model"]), r[f"{key}_lower"], r[f"{key}_upper"]] for r in rs],
            hovertemplate="%{customdata[0]}: %{x:.0f} (%{customdata[1]:.0f} – %{customdata[2]:.0f})<extra>"
                          + name + "</extra>"))
    fig.update_layout(height=max(260, 44 * len(models) + 120), margin=dict(l=10, r=10, t=10, b=10),
                      yaxis=dict(tickmode="array", tickvals=list(range(len(models))), ticktext=models),
                      xaxis_title="rating", legend=dict(orientation="h", y=1.08))
    return fig


def _heatmap(order: list[str], values: dict, template: str, scale: str, zmax: float | None = None) -> go.Figure:
    z = [[values.get((a, b)) if a != b else None for b in order] for a in order]
    labels = fmt.chart_labels(order, HEATMAP_LABEL_CHARS)
    fig = go.Figure(go.Heatmap(z=z, x=labels, y=labels, colorscale=scale, zmin=0, zmax=zmax, texttemplate=template,
                               hovertemplate="%{y} vs %{x}: " + template + "<extra></extra>", showscale=False))
    fig.update_layout(height=max(300, 48 * len(order) + 140), margin=dict(l=10, r=10, t=10, b=10),
                      yaxis=dict(autorange="reversed"), xaxis=dict(side="top"))
    return fig
