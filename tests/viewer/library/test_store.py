"""viewer.library.store: what the server holds, cooked once per content, found only by trace id."""
from __future__ import annotations

import gc
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
