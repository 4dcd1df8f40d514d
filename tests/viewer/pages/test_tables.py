"""viewer.pages.tables: grid columns sized to their content."""
from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from viewer.pages import tables

# The grid's font and padding, as documented in Streamlit's theme: Source Sans at 14 px is
# about 7 px a character; a cell holds 8 px of padding a side.
LONG_TITLE = "Fix the failing unicode slug test in textkit, then explain"


def widths(df, overrides=None) -> dict:
    return {k: (v or {}).get("width") for k, v in tables.config(df, overrides).items()}


def test_a_text_column_is_as_wide_as_its_longest_cell():
    titles = ["short"] * 9 + [LONG_TITLE]  # one long title among short ones
    w = widths(pd.DataFrame({"title": titles}))["title"]
    assert w >= len(LONG_TITLE) * 7 + 16  # the whole title fits, padding included
    assert w <= tables.MAX_PX


def test_a_very_long_cell_is_bounded():
    w = widths(pd.DataFrame({"message": ["x" * 5000]}))["message"]
    assert w == tables.MAX_PX


def test_the_heading_fits_a_column_of_short_cells():
    w = widths(pd.DataFrame({"first prompt words": ["a", "b"]}))["first prompt words"]
    assert w >= len("first prompt words") * 7 + 16


def test_missing_values_take_no_room():
    gaps = pd.DataFrame({"m": [None, math.nan, pd.NA, "ab"]})
    full = pd.DataFrame({"m": ["ab"]})
    assert widths(gaps) == widths(full)


def test_wide_characters_count_double():
    narrow = widths(pd.DataFrame({"t": ["abcdefghijklmnopqrst"]}))["t"]
    wide = widths(pd.DataFrame({"t": ["漢字" * 10]}))["t"]  # as many characters, twice as wide
    assert wide >= 20 * 2 * 7 + 16 and wide > narrow * 1.7


def test_only_text_columns_are_sized_and_lists_keep_their_type():
    df = pd.DataFrame({"n": [1, 2], "when": pd.to_datetime(["2025-01-01", "2025-01-02"]),
                       "ok": [True, False], "models": [["a", "b"], ["c"]], "s": pd.array(["x", None], dtype="string")})
    conf = tables.config(df)
    assert set(conf) == {"models", "s"}
    assert "type_config" not in conf["models"]  # the grid still shows a list as a list


def test_overrides_win_and_a_new_label_keeps_the_width():
    df = pd.DataFrame({"avg_latency_ms": [1.5], "model": ["claude-sonnet-4-5-20250929"], "id": ["x"]})
    ours = widths(df)["model"]
    conf = tables.config(df, {"model": "Model", "avg_latency_ms": "avg latency", "id": None,
                              "battle": st.column_config.TextColumn("Session")})
    assert conf["model"]["label"] == "Model" and conf["model"]["width"] == ours
    assert conf["avg_latency_ms"] == {"label": "avg latency"}
    assert conf["id"] is None  # hidden
    assert conf["battle"]["label"] == "Session"
    relabelled = tables.config(df, {"model": st.column_config.TextColumn("Model")})["model"]
    assert relabelled["width"] == ours and relabelled["type_config"]["type"] == "text"
    fixed = tables.config(df, {"model": st.column_config.TextColumn("Model", width=90)})["model"]
    assert fixed["width"] == 90
