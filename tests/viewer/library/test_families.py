"""How the library stores a family's document: each request's history stored as what it adds
to its parent's conversation, read back exactly as cooked."""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from parsers import pipeline
from viewer.library import families
from viewer.library.library import Library, Scope
from viewer.library.store import Store

from tests.viewer.library.test_library import chat_log

ROOT = Path(__file__).resolve().parents[3]
CLAUDE_CODE = ROOT.parent / "shared" / "realdata" / "claude_code_session"


def request(rid, parent, sent, got):
    return {"id": rid, "parent_id": parent, "request_messages": sent, "response_messages": got, "model": "m"}


def test_a_request_keeps_what_it_repeats_of_its_parent_and_adds_the_rest():
    doc = {"messages": [], "traces": [], "requests": [
        request("a", None, ["m1", "m2"], ["m3"]),
        request("b", "a", ["m1", "m2", "m3", "m4"], ["m5"]),   # goes on from a's conversation
        request("c", "b", ["m1", "m2", "m9"], []),             # a rewind: two of b's kept
        request("d", "e", ["m1"], ["m6"]),                     # its parent comes after it
        request("e", None, ["m7"], ["m8"]),
        request("f", "e", ["x"], []),                          # shares nothing with e
        request("g", None, ["n1"], ["n2", "n3"]),
        request("h", "g", ["n1", "n2", "n9"], []),             # keeps one of g's two replies
        request("i", "g", ["n1", "q"], []),                    # parts from g at its reply
        request("j", "b", ["m1"], []),                         # shorter than what b sent
    ]}
    stored = orjson.loads(families.pack(doc))["requests"]
    assert [r["request_messages"] for r in stored] == [
        ["m1", "m2"],
        {"after": 0, "keep": 3, "add": ["m4"]},
        {"after": 1, "keep": 2, "add": ["m9"]},
        ["m1"],
        ["m7"],
        ["x"],
        ["n1"],
        {"after": 6, "keep": 2, "add": ["n9"]},
        {"after": 6, "keep": 1, "add": ["q"]},
        {"after": 1, "keep": 1, "add": []}]
    assert families.unpack(families.pack(doc)) == doc


def test_a_family_stored_whole_as_before_reads_as_it_is():
    doc = {"messages": [], "traces": [], "requests": [request("a", None, ["m1"], ["m2"]),
                                                      request("b", "a", ["m1", "m2", "m3"], [])]}
    assert families.unpack(orjson.dumps(doc)) == doc


def by_id(items):
    return {x["id"]: x for x in items}


def test_a_long_conversation_is_stored_once_and_opens_as_cooked(tmp_path):
    turns = [f"question {i}" for i in range(60)]
    log = chat_log(tmp_path / "runs" / "chat.jsonl", *turns)
    cooked, _ = pipeline.cook_paths([log])
    (trace,) = cooked["traces"]
    lib = Library(str(tmp_path / "lib.sqlite"))
    lib.index([tmp_path / "runs"], jobs=1)
    run = lib.run(trace["id"])
    raw = lib.family_stored(run)
    # Cooked, the system prompt is sent by all 60 requests; stored, each message id is written
    # where the message is, where it first went or came back, and in the timeline.
    system = cooked["requests"][0]["request_messages"][0]
    assert sum(system in r["request_messages"] for r in cooked["requests"]) == 60
    assert max(raw.count(m["id"].encode()) for m in cooked["messages"]) <= 3
    fam = lib.family(trace["id"])
    assert by_id(fam["requests"]) == by_id(cooked["requests"])
    assert by_id(fam["messages"]) == by_id(cooked["messages"])
    # A server opening it shares each repeated history's ids with the request before it.
    col, opened = Store(lib).find_trace(trace["id"], Scope(everything=True))
    reqs = [col.requests[r] for r in opened["requests"]]
    assert all(a["request_messages"][0] is b["request_messages"][0] for a, b in zip(reqs, reqs[1:]))
    lib.close()


@pytest.mark.parametrize("folder", [ROOT / "sample_data", CLAUDE_CODE], ids=["samples", "claude_code_real"])
def test_every_run_opens_from_the_library_as_the_cook_made_it(tmp_path, folder):
    if not folder.exists():
        pytest.skip(f"{folder} is not here (the shared data sits beside the repository)")
    cooked, _ = pipeline.cook_paths([folder])
    lib = Library(str(tmp_path / "lib.sqlite"))
    lib.index([folder], jobs=1)
    requests = by_id(cooked["requests"])
    for t in cooked["traces"]:
        fam = lib.family(t["id"])
        assert fam is not None, t["id"]
        got = by_id(fam["requests"])
        assert {r: got[r] for r in t["requests"]} == {r: requests[r] for r in t["requests"]}, t["id"]
    lib.close()
