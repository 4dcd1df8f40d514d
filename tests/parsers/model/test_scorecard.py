"""parsers.model.scorecard: score readings, plain JSON without empty parts, and the way back."""
from __future__ import annotations

import orjson
import pytest

from parsers.model import Agent, Alternative, Gate, Routing, Score, Scorecard, ToolUse, TurnScore
from parsers.model.scorecard import numeric_reading


@pytest.mark.parametrize("value, expected", [
    (0.75, 0.75), (3, 3.0), (True, 1.0), (False, 0.0),
    ("C", 1.0), ("I", 0.0), ("P", 0.5), ("N", 0.0),  # Inspect's grades, read as its value_to_float does
    ("yes", 1.0), ("False", 0.0), (" 0.25 ", 0.25),
    ("B", None), ("nan", None), ("inf", None), ("", None), (None, None), (float("nan"), None),
])
def test_numeric_reading(value, expected):
    assert numeric_reading(value) == expected


def test_a_score_keeps_its_value_and_reads_it():
    s = Score("match", "C", epoch=2, answer="No")
    assert (s.value, s.numeric, s.label) == ("C", 1.0, "correct")
    assert s.as_dict() == {"scorer": "match", "value": "C", "numeric": 1.0, "epoch": 2, "answer": "No",
                           "label": "correct"}
    # A reading or a label the format gives wins over the defaults.
    assert Score("grade", "A", numeric=0.9, label="excellent").as_dict() == {
        "scorer": "grade", "value": "A", "numeric": 0.9, "label": "excellent"}
    assert Score("verdict", "unclear").as_dict() == {"scorer": "verdict", "value": "unclear"}


def test_an_empty_scorecard_is_an_empty_object():
    assert Scorecard().as_dict() == {} and Scorecard().is_empty()
    assert Scorecard(agent=Agent(), routing=Routing()).as_dict() == {}  # nothing known about either
    assert Scorecard(votes={"won": 0, "lost": 0, "tie": 0, "bothbad": 0}).as_dict() == {
        "votes": {"won": 0, "lost": 0, "tie": 0, "bothbad": 0}}


def test_every_part_round_trips_through_plain_json():
    card = Scorecard(
        scores=[Score("overall", 0.6), Score("match", "I", epoch=1, explanation="said Yes")],
        rubric={"task": 0.5}, gates=[Gate("tests-pass", False, 0.86, 1.0, True)], gates_passed=False,
        turns=[TurnScore(1, {"reward": 0.2}, "ls"), TurnScore(2)], rewards={"total": 0.45},
        metrics={"latency_ms": 41200}, checks={"budget compliant": True}, labels={"complexity": "complex"},
        task_type="code-editing", agent=Agent("a-1", "Coder", "Claude-3"),
        routing=Routing("bandit", 0.7, "best", [Alternative("a-2", 0.5, "busy")], {"tasks": 12}),
        tools=[ToolUse("read_file", 3, 1.0, 150)], votes={"won": 1}, feedback={"upvote": 2},
        tables={"provenance": [{"metric": "aiAssisted", "value": True}]})
    d = card.as_dict()
    assert orjson.loads(orjson.dumps(d)) == d
    assert d["gates"] == [{"name": "tests-pass", "passed": False, "score": 0.86, "threshold": 1.0, "mandatory": True}]
    assert d["turns"] == [{"turn": 1, "tool": "ls", "values": {"reward": 0.2}}, {"turn": 2, "values": {}}]
    assert d["routing"]["alternatives"] == [{"agent": "a-2", "score": 0.5, "reason": "busy"}]
    assert Scorecard.from_dict(d) == card
    assert card.score("match").explanation == "said Yes" and card.score("match", epoch=3) is None
    assert card.agent.key == "a-1" and Agent(name="Coder").key == "Coder"


def test_from_dict_reads_what_it_can():
    assert Scorecard.from_dict(None) == Scorecard()
    got = Scorecard.from_dict({"scores": [{"scorer": "s", "value": 1}, "junk"], "gates": "junk",
                               "rubric": ["junk"], "tables": {"t": [{"a": 1}, 2], "u": "junk"}})
    assert got.scores == [Score("s", 1)] and got.gates == [] and got.rubric == {}
    assert got.tables == {"t": [{"a": 1}]}
