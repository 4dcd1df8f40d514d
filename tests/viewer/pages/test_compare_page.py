"""The compare page (Streamlit AppTest): a battle leads with its conversation, the runs table
picks the sides, and its tables show no literal "None"."""
from __future__ import annotations

import json
from pathlib import Path

from parsers import pipeline
from viewer.pages.compare import picked_sides

from tests.viewer.pages.test_app import app, on_page

ROOT = Path(__file__).resolve().parents[3]
ARENA = ROOT / "sample_data" / "arena"


def _state(conv, model, msgs):
    return {"roles": ["user", "assistant"], "messages": msgs, "offset": 0, "chat_session_id": "s1",
            "conv_id": conv, "chat_mode": "battle_anony", "model_name": model}


def empty_vote_battle(folder: Path) -> Path:
    """A battle whose chat records hold the conversation and whose vote records hold `messages: []`."""
    msgs = {"a": [["user", "what is 2+2?"], ["assistant", "4, from A"]],
            "b": [["user", "what is 2+2?"], ["assistant", "four, from B"]]}
    recs = [{"tstamp": 1736935200.0, "type": "chat_multi", "state": _state(c, c.upper(), msgs[c])} for c in "ab"]
    recs += [{"tstamp": 1736935300.0, "type": "leftvote", "state": _state(c, c.upper(), [])} for c in "ab"]
    p = folder / "conv-log-s1.json"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return p


def test_a_battle_whose_votes_carry_no_messages_shows_its_conversation(tmp_path, monkeypatch):
    at = on_page(app([empty_vote_battle(tmp_path)], monkeypatch), "compare", battle="s1")
    assert not at.exception
    body = "\n".join(h.proto.body for h in at.html)
    assert "4, from A" in body and "four, from B" in body
    assert not any("Neither trace has any message" in i.value for i in at.info)
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "1 round" in text and "Vote: left is better (A)" in text


def test_battle_leads_with_the_rows_and_folds_the_numbers(monkeypatch):
    doc, _ = pipeline.cook_paths([ARENA])
    g = next(g for g in doc["groups"] if g["votes"])
    at = on_page(app([ARENA], monkeypatch), "compare", battle=g["id"])
    assert not at.exception
    assert not at.success  # the vote is a summary line, not a banner
    assert [e.label.split(":")[0] for e in at.expander][:1] == ["Numbers per side"]
    # the stats table sits inside the folded expander, not above the rows
    assert at.expander[0].dataframe[0].value[" "].tolist()[:2] == ["model", "outcome"]
    assert len(at.main.dataframe) == 1


def test_runs_table_has_no_none_cells(monkeypatch):
    at = on_page(app([ARENA], monkeypatch), "compare")
    assert not at.exception
    (df,) = [d.value for d in at.dataframe]
    assert not df.isna().any().any()
    assert "None" not in df.astype(str).values
    assert (df["task"] == "—").any() or df["task"].notna().all()


def test_one_selected_row_is_the_left_side_and_two_are_both():
    assert picked_sides(["x"], None, None) == ("x", None)
    assert picked_sides(["x"], "a", "b") == ("x", "b")
    assert picked_sides(["b"], "a", "b") == ("b", None)  # never a run against itself
    assert picked_sides(["x", "y"], "a", "b") == ("x", "y")
    assert picked_sides([], "a", "b") == ("a", "b")


def test_a_side_from_beyond_the_session_runs_is_among_the_choices(monkeypatch):
    """A link may open a bundled sample this session does not list: it is the left side."""
    from viewer.pages import state

    sample = ROOT / "sample_data" / "api_logs"
    state.library().index([sample], origin="sample")
    tid = pipeline.cook_paths([sample / "openai_chat.jsonl"])[0]["traces"][0]["id"]
    at = on_page(app([ARENA], monkeypatch), "compare", a=tid)
    assert not at.exception
    assert at.selectbox(key="tv_cmp_a").value == tid
    assert tid in set(at.dataframe[0].value["id"])
