"""The battles and leaderboard pages (Streamlit AppTest): one model under names that differ in
case or spacing is one model; tables show no literal "None"."""
from __future__ import annotations

import json
from pathlib import Path

from tests.viewer.pages.test_app import app, on_page

# (session, left model, right model, vote); "GPT-4" is the common spelling (3 of 4)
BATTLES = [("s1", "GPT-4", "claude-3", "leftvote"), ("s2", "claude-3", "gpt-4", "rightvote"),
           ("s3", "GPT-4", "claude-3", "tievote"), ("s4", "GPT-4", "claude-3", "leftvote")]


def battle_logs(folder: Path) -> Path:
    for sid, left, right, vote in BATTLES:
        recs = []
        for n, model in enumerate((left, right)):
            state = {"roles": ["user", "assistant"], "messages": [["user", "hi"], ["assistant", f"hello {n}"]],
                     "offset": 0, "chat_session_id": sid, "conv_id": f"{sid}-{n}", "model_name": model}
            recs += [{"tstamp": 1736935200.0, "type": "chat_multi", "state": state},
                     {"tstamp": 1736935300.0, "type": vote, "state": state}]
        (folder / f"conv-log-{sid}.json").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return folder


def test_battles_table_names_one_model_once_and_has_no_none_cells(tmp_path, monkeypatch):
    at = on_page(app([battle_logs(tmp_path)], monkeypatch), "battles")
    assert not at.exception
    df = at.dataframe[0].value
    assert set(df["left model"]) | set(df["right model"]) == {"GPT-4", "claude-3"}
    assert "None" not in df.astype(str).values and not df.isna().any().any()


def test_leaderboard_has_one_row_per_model(tmp_path, monkeypatch):
    at = on_page(app([battle_logs(tmp_path)], monkeypatch), "leaderboard")
    assert not at.exception
    board = at.dataframe[0].value
    assert sorted(board["model"]) == ["GPT-4", "claude-3"]
    assert board.set_index("model")["battles"].to_dict() == {"GPT-4": len(BATTLES), "claude-3": len(BATTLES)}


def test_a_battle_in_two_copies_of_its_logs_counts_once(tmp_path, monkeypatch):
    logs, copy = tmp_path / "logs", tmp_path / "copy"
    logs.mkdir()
    copy.mkdir()
    for f in battle_logs(logs).iterdir():
        (copy / f.name).write_bytes(f.read_bytes())
    at = on_page(app([tmp_path], monkeypatch), "battles")
    assert not at.exception
    assert sorted(at.dataframe[0].value["battle"]) == sorted(sid for sid, *_ in BATTLES)
    at = on_page(app([tmp_path], monkeypatch), "leaderboard")
    assert not at.exception
    assert at.dataframe[0].value.set_index("model")["battles"].to_dict() == {"GPT-4": len(BATTLES),
                                                                             "claude-3": len(BATTLES)}
