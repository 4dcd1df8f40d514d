"""An arena battle whose vote records carry less than the chat records (no messages, a shorter
history with placeholder answers), opened in a real browser against `traceview serve`: both
rounds of both sides show, and the battles table counts its rounds."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import start_server

TIMEOUT_MS = 60_000
SESSION = "b7e1c0de5e55104"
ROUNDS = {"left": [("Write fizzbuzz in Python", "LEFT-ANSWER-1 for i in range(1, 101): ..."),
                   ("Now make it a function", "LEFT-ANSWER-2 def fizzbuzz(n): ...")],
          "right": [("Write fizzbuzz in Python", "RIGHT-ANSWER-1 print('\\n'.join(...))"),
                    ("Now make it a function", "RIGHT-ANSWER-2 def fizzbuzz(limit=100): ...")]}


def _state(side: str, msgs: list) -> dict:
    return {"roles": ["user", "assistant"], "messages": msgs, "offset": 0, "chat_session_id": SESSION,
            "conv_id": f"conv-{side}", "chat_mode": "battle_anony", "model_name": f"model-{side}"}


def _history(side: str, rounds: int) -> list:
    return [m for q, a in ROUNDS[side][:rounds] for m in (["user", q], ["assistant", a])]


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("arena") / "conv_logs" / "battle_anony"
    d.mkdir(parents=True)
    recs = []
    for n in (1, 2):
        recs += [{"tstamp": 1736935200.0 + 60 * n, "type": "chat_multi", "state": _state(s, _history(s, n))}
                 for s in ("left", "right")]
    # one writer's vote: no messages; another's: the first round only, answers as placeholders
    recs.append({"tstamp": 1736935400.0, "type": "leftvote", "models": ["", ""],
                 "states": [_state("left", []), _state("right", [])]})
    recs += [{"tstamp": 1736935500.0, "type": "tievote",
              "state": _state(s, [["user", ROUNDS[s][0][0]], ["assistant", "…"]])} for s in ("left", "right")]
    (d / f"conv-log-{SESSION}.json").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return d.parent.parent


@pytest.fixture(scope="module")
def server(logs):
    srv = start_server([logs], logs.parent)
    yield srv.url
    srv.stop()


@pytest.mark.parametrize("size", [(1400, 1000), (1280, 720)], ids=["1400x1000", "1280x720"])
def test_a_battle_keeps_both_rounds_whatever_its_votes_carry(server, browser, shots_dir, size):
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    try:
        page.goto(f"{server}/compare?battle={SESSION}")
        page.wait_for_selector(".tv-cmp")
        assert page.locator("[data-testid='stException']").count() == 0
        time.sleep(1.0)
        page.screenshot(path=str(shots_dir / f"battle_short_votes_{size[0]}x{size[1]}.png"), full_page=True)
        cells = page.locator(".tv-cmp").inner_text()
        for side in ROUNDS.values():
            for question, answer in side:
                assert question in cells and answer in cells
        assert "Neither trace has any message" not in page.locator("[data-testid='stMain']").inner_text()
        summary = page.locator("[data-testid='stMarkdown']", has_text="Vote:").inner_text()
        assert "2 rounds" in summary and "left is better" in summary and "tie" in summary
    finally:
        ctx.close()


def test_the_battles_table_counts_both_rounds(server, page, shots_dir):
    page.goto(f"{server}/battles")
    grid = page.locator("[data-testid='stDataFrame'] [role='gridcell']")
    grid.first.wait_for(state="attached")
    cells = grid.all_inner_texts()
    assert "model-left" in cells and "model-right" in cells and "2" in cells
    assert "None" not in cells
    page.screenshot(path=str(shots_dir / "battles_short_votes.png"))
