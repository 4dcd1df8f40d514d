"""Each appearance of a message the document stores once is shown at its own time: in the
timeline's items (which the pages and the exports read) and in the Markdown transcript.
Expected times are read from the raw records (see the cook's tests)."""
from __future__ import annotations

from viewer.analysis import conversation as conv
from viewer.analysis.transcript import Family, markdown
from tests.parsers.cook.test_occurrences import GEMINI, TURNS_A, TURNS_B, cook_gemini, ms, two_sessions


def shown(doc: dict, trace: dict) -> list[tuple[str, str, int | None]]:
    """(role, text, time) of each item of the run's timeline."""
    return [(it["message"]["role"], it["message"]["content"], it["message"].get("timestamp"))
            for it in Family(doc).items(trace)]


def expected(turns) -> list[tuple[str, str, int]]:
    return [(role, text, ms(when)) for ut, user, at, answer in turns
            for role, text, when in (("user", user, ut), ("assistant", answer, at))]


def test_two_sessions_show_each_prompt_at_its_own_time():
    doc = two_sessions()
    runs = {shown(doc, t)[1][1]: t for t in doc["traces"]}
    assert shown(doc, runs["Step one done."]) == expected(TURNS_A)
    assert shown(doc, runs["Something else."]) == expected(TURNS_B)


def test_the_markdown_transcript_heads_each_message_with_its_own_time():
    doc = two_sessions()
    for t, turns in ((t, TURNS_A if len(t["timeline"]) == 6 else TURNS_B) for t in doc["traces"]):
        text = markdown(Family(doc), t).replace("\\", "")  # Markdown's escapes are not what a reader sees
        for ut, user, at, answer in turns:
            assert f"{ut[:10]} {ut[11:19]} UTC" in text  # the user's time, as the raw line says it


def test_a_trajectory_shows_each_time():
    doc = cook_gemini()
    (t,) = doc["traces"]
    assert [(text, when) for _, text, when in shown(doc, t)] == [
        (m["content"], ms(m["timestamp"])) for m in GEMINI["messages"]]


def test_the_kth_appearance_is_at_the_kth_time_and_past_the_end_at_the_last():
    msgs = [{"id": "x", "timestamp": 1}, {"id": "y", "timestamp": 2}, {"id": "x", "timestamp": 1},
            {"id": "x", "timestamp": 1}]
    ids = ["x", "y", "x", "x"]
    out = conv.at_their_times(ids, msgs, {"x": [5, 9], "y": []})
    assert [m.get("timestamp") for m in out] == [5, None, 9, 9]
    assert [m["timestamp"] for m in msgs] == [1, 2, 1, 1]  # the shared messages are not changed
    assert conv.at_their_times(ids, msgs, None) is msgs
