"""viewer.conversation: branches, view items (calls with their results), filters, find, pages."""
from __future__ import annotations

from pathlib import Path

import pytest

from parsers import pipeline
from parsers.cook.schema import cooked_errors
from viewer.analysis import conversation as conv

SAMPLES = Path(__file__).resolve().parents[3] / "sample_data" / "api_logs"


def msgs(*specs) -> dict:
    out = {}
    for i, spec in enumerate(specs):
        m = {"id": f"m{i}", "role": spec[0], "content": spec[1] if len(spec) > 1 else "",
             "tool_calls": None, "tool_use_id": None, "is_error": None}
        if len(spec) > 2:
            m.update(spec[2])
        out[m["id"]] = m
    return out


def call(cid, name="run"):
    return {"id": cid, "name": name, "arguments": {"x": 1}}


def test_a_call_gets_its_result_even_when_it_arrives_later():
    m = msgs(("user", "go"),
             ("tool_use", "", {"tool_calls": [call("a")]}),
             ("assistant", "meanwhile"),
             ("tool_result", "A done", {"tool_use_id": "a"}))
    items = conv.build_items(list(m), m)
    assert [it["position"] for it in items] == [0, 1, 2]  # the answered result is not listed again
    assert items[1]["result"]["content"] == "A done"
    assert not any(it["unmatched"] for it in items)


def test_unmatched_calls_and_results_are_marked():
    m = msgs(("tool_result", "orphan", {"tool_use_id": "zzz"}),
             ("tool_use", "", {"tool_calls": [call("b")]}),
             ("tool_result", "wrong id", {"tool_use_id": "c"}))
    items = conv.build_items(list(m), m)
    assert [(it["position"], it["unmatched"], it["result"]) for it in items] == [
        (0, True, None), (1, True, None), (2, True, None)]


def test_a_result_before_its_call_does_not_match():
    m = msgs(("tool_result", "early", {"tool_use_id": "a"}),
             ("tool_use", "", {"tool_calls": [call("a")]}))
    items = conv.build_items(list(m), m)
    assert [it["unmatched"] for it in items] == [True, True]


def test_several_calls_in_one_message_each_get_their_result():
    m = msgs(("assistant", "two things", {"tool_calls": [call("a", "one"), call("b", "two")]}),
             ("tool_result", "B", {"tool_use_id": "b"}),
             ("tool_result", "A", {"tool_use_id": "a"}))
    items = conv.build_items(list(m), m)
    assert len(items) == 2
    assert [it["message"]["tool_calls"][0]["name"] for it in items] == ["one", "two"]
    assert [it["result"]["content"] for it in items] == ["A", "B"]
    assert items[0]["message"]["content"] == "two things" and items[1]["message"]["content"] == ""
    assert {it["position"] for it in items} == {0}
    assert m["m0"]["tool_calls"][1]["name"] == "two"  # the cooked message is not modified


def test_images_go_through_with_their_message_once():
    img = {"media_type": "image/png", "data_uri": "data:image/png;base64,AAAA", "url": None,
           "digest": "0" * 64, "size": 3, "note": None}
    m = msgs(("user", "[image]", {"images": [img]}),
             ("tool_use", "see [image]", {"tool_calls": [call("a"), call("b")], "images": [img]}),
             ("tool_result", "shot\n[image]", {"tool_use_id": "a", "images": [img]}))
    items = conv.build_items(list(m), m)
    assert items[0]["message"]["images"] == [img]
    assert items[1]["message"]["images"] == [img] and items[1]["result"]["images"] == [img]
    assert "images" not in items[2]["message"]  # the second call of the message: no repeat
    assert m["m1"]["images"] == [img]


def test_calls_without_ids_pair_with_the_next_result_without_id():
    m = msgs(("tool_use", "", {"tool_calls": [{"name": "ls", "arguments": "", "id": None}]}),
             ("tool_result", "file.txt"),
             ("tool_use", "", {"tool_calls": [{"name": "cat", "arguments": "", "id": None}]}))
    items = conv.build_items(list(m), m)
    assert items[0]["result"]["content"] == "file.txt"
    assert items[1]["unmatched"] is True and items[1]["position"] == 2


def test_failed_requests_show_where_they_happened():
    m = msgs(("system", "s"), ("user", "u"), ("assistant", "partial"), ("user", "again"), ("assistant", "ok"))
    ids = list(m)
    requests = [
        {"id": "r1", "request_messages": ["m0", "m1"], "response_messages": [], "error": "overloaded_error: busy", "model": "x"},
        {"id": "r2", "request_messages": ["m0", "m1"], "response_messages": ["m2"], "error": "stream cut"},
        {"id": "r3", "request_messages": ["m0", "m9"], "response_messages": [], "error": "not on this branch"},
        {"id": "r4", "request_messages": ids[:4], "response_messages": ["m4"], "error": None},
    ]
    items = conv.build_items(ids, m, requests)
    errs = [(it["position"], it["message"]["id"], it["error"]) for it in items if it["error"]]
    assert errs == [(1, "request:r1", "overloaded_error: busy"), (2, "m2", "stream cut")]
    assert conv.filter_items(items, only_errors=True) == [it for it in items if it["error"]]


def test_filters_by_role_thinking_and_errors():
    m = msgs(("user", "u"), ("thinking", "hmm"),
             ("tool_use", "", {"tool_calls": [call("a")]}),
             ("tool_result", "boom", {"tool_use_id": "a", "is_error": True}),
             ("assistant", "done"))
    items = conv.build_items(list(m), m)
    pos = lambda its: [it["position"] for it in its]  # noqa: E731
    assert pos(conv.filter_items(items, roles=["tool_result"])) == [2]  # the call carrying it
    assert pos(conv.filter_items(items, roles=["user", "assistant"])) == [0, 4]
    assert pos(conv.filter_items(items, hide_thinking=True)) == [0, 2, 4]
    assert pos(conv.filter_items(items, only_errors=True)) == [2]


def test_find_counts_messages_and_hits_and_steps_around():
    m = msgs(("user", "Find the needle. NEEDLE!"), ("assistant", "no"),
             ("tool_use", "", {"tool_calls": [{"id": "a", "name": "needle_tool", "arguments": {"q": "x"}}]}),
             ("tool_result", "a needle", {"tool_use_id": "a"}))
    items = conv.build_items(list(m), m)
    idx, total = conv.find(items, "needle")
    assert [items[i]["position"] for i in idx] == [0, 2]
    assert total == 4  # two in the user message, the tool name, the result
    assert conv.find(items, "  ") == ([], 0)
    assert conv.find(items, "(.*") == ([], 0)  # a query is text, not a pattern
    hits = [0, 2, 7]
    assert conv.step_hit(hits, 2, True) == 7 and conv.step_hit(hits, 7, True) == 0
    assert conv.step_hit(hits, 0, False) == 7 and conv.step_hit(hits, 5, False) == 2
    assert conv.step_hit([], 3, True) is None


def test_pages():
    items = [{"position": p} for p in (0, 2, 3, 5, 8, 9)]
    assert conv.page_of(items, 0, 2) == 0
    assert conv.page_of(items, 5, 2) == 1
    assert conv.page_of(items, 4, 2) == 1  # hidden by a filter: the page of the next one shown
    assert conv.page_of(items, 99, 2) == 2
    assert conv.page_of([], 3, 2) == 0
    assert conv.page_count(0, 50) == 1 and conv.page_count(101, 50) == 3


@pytest.fixture(scope="module")
def anthropic_sample():
    doc, _ = pipeline.cook_paths([SAMPLES / "anthropic_messages.jsonl"])
    assert cooked_errors(doc) == []
    return doc


def test_the_sample_log_forks_and_every_call_finds_its_result(anthropic_sample):
    doc = anthropic_sample
    (trace,) = doc["traces"]
    requests = {r["id"]: r for r in doc["requests"]}
    messages = {m["id"]: m for m in doc["messages"]}
    brs = conv.branches(trace, requests)
    assert brs[0].key == conv.MAIN and list(brs[0].message_ids) == trace["timeline"]
    # The rewound attempt and the side call are the other leaves.
    assert len(brs) == 3
    models = {requests[b.key]["model"] for b in brs[1:]}
    assert any("haiku" in m for m in models) and any("sonnet" in m for m in models)
    items = conv.build_items(trace["timeline"], messages, [requests[r] for r in trace["requests"]])
    calls = [it for it in items if it["message"]["role"] == "tool_use"]
    assert len(calls) == 5 and all(it["result"] is not None and not it["unmatched"] for it in calls)
    assert not [it for it in items if it["message"]["role"] == "tool_result"]


def test_the_rewound_branch_ends_with_its_rejected_edit(anthropic_sample):
    doc = anthropic_sample
    (trace,) = doc["traces"]
    requests = {r["id"]: r for r in doc["requests"]}
    messages = {m["id"]: m for m in doc["messages"]}
    sonnet = [b for b in conv.branches(trace, requests)[1:] if "sonnet" in requests[b.key]["model"]]
    items = conv.build_items(sonnet[0].message_ids, messages)
    last = items[-1]
    assert last["message"]["role"] == "tool_use" and last["unmatched"]  # the result never came back


def test_a_trajectory_has_one_branch():
    # The last synthetic request of a trajectory stops before the trailing messages.
    trace = {"timeline": ["m0", "m1", "m2", "m3"], "requests": ["a", "b"]}
    requests = {"a": {"id": "a", "parent_id": None, "request_messages": ["m0"], "response_messages": ["m1"]},
                "b": {"id": "b", "parent_id": "a", "request_messages": ["m0", "m1", "m2"], "response_messages": []}}
    assert [b.key for b in conv.branches(trace, requests)] == [conv.MAIN]
