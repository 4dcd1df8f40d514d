"""viewer.library.store: what the server holds, cooked once per content, found only by trace id."""
from __future__ import annotations

import gc
import json
import shutil
import weakref
from pathlib import Path

import pytest

from parsers.cook.schema import cooked_errors
from viewer.library import store as store_mod
from viewer.library.store import Store

SAMPLES = Path(__file__).resolve().parents[3] / "sample_data" / "api_logs"


def test_paths_cook_once_and_their_traces_are_found(tmp_path):
    shutil.copy(SAMPLES / "openai_chat.jsonl", tmp_path / "a.jsonl")
    s = Store()
    col = s.add_paths([tmp_path])
    assert cooked_errors(col.doc) == []
    assert s.add_paths([tmp_path]) is col  # a re-run of the page does not parse again
    (tid,) = col.traces
    assert s.find_trace(tid) == (col, col.traces[tid])
    # A changed file is a new collection.
    with open(tmp_path / "a.jsonl", "a") as f:
        f.write("\n")
    assert s.add_paths([tmp_path]) is not col


def test_the_same_bytes_give_the_same_trace_id_as_the_cli_cook(tmp_path):
    from parsers import pipeline

    data = (SAMPLES / "anthropic_messages.jsonl").read_bytes()
    s = Store()
    up = s.add_uploads([("log.jsonl", data)])
    assert s.add_uploads([("log.jsonl", data)]) is up
    doc, _ = pipeline.cook_paths([SAMPLES / "anthropic_messages.jsonl"])
    assert set(up.traces) == {t["id"] for t in doc["traces"]}


@pytest.mark.parametrize("bad", [None, "", "../../etc/passwd", "/etc/passwd", "ABCDEF0123456789",
                                 "0123456789abcdef0", "0123456789abcde", "0123456789abcdeg", 12])
def test_nothing_but_a_loaded_trace_id_finds_anything(bad):
    s = Store()
    s.add_uploads([("x.jsonl", (SAMPLES / "openai_chat.jsonl").read_bytes())])
    assert s.find_trace(bad) is None


def test_old_uploads_are_let_go(monkeypatch):
    """Past the bounds the oldest uploads leave the store: not found by key or by trace id,
    and nothing in the store keeps them alive. Paths and samples are never let go, and a trace
    another collection also holds stays found there."""
    monkeypatch.setattr(store_mod, "MAX_UPLOAD_COLLECTIONS", 2)
    data = (SAMPLES / "openai_chat.jsonl").read_bytes()
    s = Store()
    keep = s.add_paths([SAMPLES / "openai_chat.jsonl"], origin="sample")
    (shared,) = keep.traces
    # The sample's own bytes (the same trace as `keep`), then three different uploads.
    cols = [s.add_uploads([("same.jsonl", data)])]
    cols += [s.add_uploads([(f"{i}.jsonl", data + b"\n" * i)]) for i in (1, 2, 3)]
    assert s.find_trace(shared)[0] is keep
    first_trace = next(iter(cols[1].traces))
    assert first_trace != shared
    keys = [c.key for c in cols]
    gone = [weakref.ref(c) for c in cols[:2]]
    kept = cols[2:]
    del cols
    gc.collect()
    assert [c.key for c in s.collections.values()] == [keep.key, keys[2], keys[3]]
    assert s.get(keys[0]) is None and s.get(keys[1]) is None
    assert [ref() for ref in gone] == [None, None]  # the store holds nothing of them
    assert s.find_trace(first_trace) is None
    for col in kept:
        (tid,) = col.traces
        assert s.find_trace(tid)[0] is col

    # The byte bound lets go of the oldest too: three uploads of about len(data) each, room for two.
    monkeypatch.setattr(store_mod, "MAX_UPLOAD_COLLECTIONS", 100)
    monkeypatch.setattr(store_mod, "MAX_UPLOAD_BYTES", 2 * len(data) + 10)
    big = s.add_uploads([("big.jsonl", data + b"\n" * 20)])
    assert [c.key for c in s.collections.values()] == [keep.key, big.key]
    assert all(s.find_trace(next(iter(c.traces))) is None for c in kept)
    assert s.find_trace(shared)[0] is keep


def test_bad_input_gives_problems_not_errors():
    s = Store()
    col = s.add_uploads([("broken.jsonl", b'{"request": {"messages": []}, "response": 5}\nnot json\n')])
    probs = [p for inp in col.inputs for p in inp["problems"]]
    assert probs and all(p["file"] == "broken.jsonl" for p in probs)
    assert any(p["line"] == 2 for p in probs)


@pytest.mark.parametrize("private", [True, False])
def test_private_uploads_are_found_only_by_the_session_that_uploaded_them(private):
    data = (SAMPLES / "openai_chat.jsonl").read_bytes()
    s = Store(private_uploads=private)
    sample = s.add_paths([SAMPLES / "anthropic_messages.jsonl"], origin="sample")
    (sample_tid,) = sample.traces
    col = s.add_uploads([("mine.jsonl", data)], owner="session-a")
    (tid,) = col.traces
    assert s.find_trace(tid, "session-a") == (col, col.traces[tid])
    if private:
        assert s.find_trace(tid, "session-b") is None
        assert s.find_trace(tid) is None  # no session at all: nothing private either
        assert not s.visible(col, "session-b")
    else:
        assert s.find_trace(tid, "session-b")[0] is col
        assert s.find_trace(tid)[0] is col
    # Paths and samples stay visible to every session.
    assert s.find_trace(sample_tid, "session-b")[0] is sample
    # Session b uploading the same bytes gets the same collection, and then finds it too.
    assert s.add_uploads([("mine.jsonl", data)], owner="session-b") is col
    assert s.find_trace(tid, "session-b")[0] is col
    assert (s.find_trace(tid, "session-c") is None) is private


def test_a_trace_also_in_a_sample_stays_visible_when_its_upload_is_private():
    data = (SAMPLES / "openai_chat.jsonl").read_bytes()
    s = Store(private_uploads=True)
    up = s.add_uploads([("same.jsonl", data)], owner="session-a")
    sample = s.add_paths([SAMPLES / "openai_chat.jsonl"], origin="sample")
    (tid,) = up.traces
    assert tid in sample.traces
    assert s.find_trace(tid, "session-b")[0] is sample


def test_uploads_are_bounded_by_the_memory_of_their_cooked_documents(monkeypatch):
    """The estimate counts what the cooked document holds (far more than its JSON text), the
    oldest uploads go when the estimates pass the bound, and the newest is always kept."""
    import json

    data = (SAMPLES / "anthropic_messages.jsonl").read_bytes()
    s = Store()
    first = s.add_uploads([("0.jsonl", data)])
    assert first.memory > len(json.dumps(first.doc))
    assert first.memory == store_mod.memory_estimate(first.doc)
    monkeypatch.setattr(store_mod, "MAX_UPLOAD_MEMORY", int(first.memory * 2.5))
    cols = [first] + [s.add_uploads([(f"{i}.jsonl", data + b"\n" * i)]) for i in (1, 2, 3)]
    held = [c.key for c in s.collections.values()]
    assert held == [cols[2].key, cols[3].key]
    assert s.find_trace(next(iter(cols[0].traces))) is None
    # One upload larger than the whole bound is still opened (alone).
    monkeypatch.setattr(store_mod, "MAX_UPLOAD_MEMORY", 10)
    last = s.add_uploads([("4.jsonl", data + b"\n" * 4)])
    assert [c.key for c in s.collections.values()] == [last.key]
    assert s.find_trace(next(iter(last.traces)))[0] is last


def test_memory_estimate_counts_shared_objects_once():
    text = "x" * 10_000
    one = store_mod.memory_estimate({"a": text})
    assert store_mod.memory_estimate({"a": text, "b": text}) < one + 1000
    assert store_mod.memory_estimate({"a": text, "b": "y" * 10_000}) > one + 9000


def test_derived_views_count_towards_an_uploads_memory():
    s = Store()
    col = s.add_uploads([("a.jsonl", (SAMPLES / "openai_chat.jsonl").read_bytes())])
    before = col.memory
    view = col.memo("big", lambda: ["v" * 100_000])
    assert col.memo("big", lambda: pytest.fail("made twice")) is view
    assert col.memory >= before + 100_000


def test_an_inputs_problems_include_those_found_inside_its_traces(tmp_path):
    doc = json.loads((Path(__file__).resolve().parents[3] / "sample_data" / "workflow" / "chart_component.swf.json")
                      .read_text("utf-8"))
    doc["steps"][1]["type"] = ["tool_call"]
    bad = tmp_path / "bad.swf.json"
    bad.write_text(json.dumps(doc), "utf-8")
    col = Store().add_paths([bad])
    (entry,) = col.inputs
    assert entry["problems"] == []  # the cooked input lists what its reader said of the file itself
    problems = col.input_problems(entry)
    assert "/steps/1/type" in [p["path"] for p in problems]
