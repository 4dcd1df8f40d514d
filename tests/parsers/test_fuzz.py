"""Type fuzzing over every bundled sample and real file: a value at a random JSON path is
replaced by a value of another type, and the batch must still cook.

What must hold for every mutation: nothing escapes `cook_uploads`; another input of the same
batch still cooks as it does alone; the mutated record is either reported as a problem or
still cooks (the input's traces and requests are not fewer than before);
and, for formats whose records stand alone, every message the other records give is still
there (checked against the same input with the mutated record left out).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers.pipeline import cook_uploads

REPO = Path(__file__).resolve().parents[2]
SHARED_REAL = REPO.parent / "shared" / "realdata"
# Formats whose records are read one by one, each independent of the others.
INDEPENDENT_RECORDS = {"request-log", "benchmark", "sharegpt", "trials"}
CONTROL = REPO / "sample_data" / "api_logs" / "openai_chat.jsonl"
REPLACEMENTS = [None, [], {}, "", "x", 2**70, -(2**63) - 7, -5, -1.5, 1e308, "NaN", "-Infinity",
                "1e999", True, False, [None, {"a": [1, "b"]}], {"type": {"nested": [[]]}}, [[[[0]]]]]


@dataclass(frozen=True)
class Input:
    name: str
    data: bytes
    kind: str  # "lines" (JSON lines), "array" (a JSON array of records) or "document"
    records: tuple  # parsed records (lines / elements), or (the document,)
    record_lines: tuple  # for "lines": the line number (1-based) of each record


def _inputs() -> list[Path]:
    roots = [REPO / "sample_data"] + ([SHARED_REAL] if SHARED_REAL.exists() else [])
    return [p for root in roots for p in sorted(root.rglob("*"))
            if p.is_file() and p.suffix in (".json", ".jsonl") and p.stat().st_size < 4_000_000]


@lru_cache(maxsize=None)
def load(path: Path) -> Input | None:
    data = path.read_bytes()
    try:
        whole = orjson.loads(data)
    except orjson.JSONDecodeError:
        whole = None
    if whole is not None:
        if isinstance(whole, list) and whole:
            return Input(path.name, data, "array", tuple(whole), ())
        return Input(path.name, data, "document", (whole,), ())
    recs, lines = [], []
    for n, line in enumerate(data.split(b"\n"), 1):
        try:
            recs.append(orjson.loads(line))
            lines.append(n)
        except orjson.JSONDecodeError:
            continue
    return Input(path.name, data, "lines", tuple(recs), tuple(lines)) if recs else None


@lru_cache(maxsize=None)
def cooked(name: str, data: bytes):
    return cook_uploads([(name, data)])


def cookable() -> list[Path]:
    """Inputs that give at least one trace today (the others have nothing to lose)."""
    out = []
    for p in _inputs():
        inp = load(p)
        if inp is not None and cooked(inp.name, inp.data)[0]["traces"]:
            out.append(p)
    return out


def rebuild(inp: Input, index: int, value, drop: bool = False) -> bytes:
    if inp.kind == "document":
        return dumps(value)
    if inp.kind == "array":
        recs = list(inp.records)
        if drop:
            del recs[index]
        else:
            recs[index] = value
        return dumps(recs)
    lines = inp.data.split(b"\n")
    n = inp.record_lines[index] - 1
    if drop:
        lines[n] = b""
    else:
        lines[n] = dumps(value)
    return b"\n".join(lines)


def dumps(value) -> bytes:
    # Python's json writes what orjson refuses (integers past 64 bits).
    return json.dumps(value, ensure_ascii=False).encode()


def mutate(value, draw, depth: int = 0):
    """`value` with one sub-value (chosen by walking down at random) replaced; (new, path)."""
    children = list(value.items()) if isinstance(value, dict) else list(enumerate(value)) \
        if isinstance(value, list) else []
    if children and (depth == 0 or draw(st.integers(0, 3)) > 0):
        k = draw(st.integers(0, len(children) - 1))
        key, child = children[k]
        new_child, path = mutate(child, draw, depth + 1)
        copy = dict(value) if isinstance(value, dict) else list(value)
        copy[key] = new_child
        return copy, f"/{key}{path}"
    replacement = draw(st.sampled_from([r for r in REPLACEMENTS if type(r) is not type(value)]))
    return replacement, ""


def counts(doc: dict) -> tuple[int, int]:
    return len(doc["traces"]), len(doc["requests"])


def mentions(problems: list[dict], inp: Input, index: int, whole_file: bool) -> bool:
    """Whether a problem names the mutated record (or, when `whole_file`, the input)."""
    if inp.kind == "document":
        return bool(problems)
    if whole_file and any(p.get("line") is None and p.get("record") is None for p in problems):
        return True
    if inp.kind == "lines":
        return any(p.get("line") == inp.record_lines[index] for p in problems)
    return any(p.get("record") == index for p in problems)


FILES = cookable()
# 300 fixed examples in the suite; TRACEVIEW_FUZZ_EXAMPLES=N draws N random ones for a longer search.
EXAMPLES = int(os.environ.get("TRACEVIEW_FUZZ_EXAMPLES", "300"))


@pytest.mark.skipif(not FILES, reason="no input to fuzz")
@settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES == 300, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_a_wrong_type_anywhere_is_reported_and_loses_nothing_else(data):
    path = data.draw(st.sampled_from(FILES))
    inp = load(path)
    index = data.draw(st.integers(0, len(inp.records) - 1))
    new, where = mutate(inp.records[index], data.draw)
    raw = rebuild(inp, index, new)
    note = f"{path.name} record {index} at {where or '/'} -> {str(new)[:60]}"

    control = "control-" + CONTROL.name  # another input of the batch
    control_doc, _ = cooked(control, CONTROL.read_bytes())
    doc, summaries = cook_uploads([(inp.name, raw), (control, CONTROL.read_bytes())])  # never raises
    mutated = next(s for s in summaries if s.name == inp.name)
    control_ids = {m["id"] for m in control_doc["messages"]}
    assert control_ids <= {m["id"] for m in doc["messages"]}, note
    assert any(s.name == control and s.traces == 1 for s in summaries), note

    before, _ = cooked(inp.name, inp.data)
    alone, _ = cook_uploads([(inp.name, raw)])
    fmt = before["inputs"][0]["format"]
    independent = fmt in INDEPENDENT_RECORDS and inp.kind != "document"
    if not mentions(mutated.problems, inp, index, whole_file=not independent):
        assert counts(alone) >= counts(before), f"lost without a problem: {note}"
    if independent:
        rest, _ = cook_uploads([(inp.name, rebuild(inp, index, None, drop=True))])
        missing = {m["id"] for m in rest["messages"]} - {m["id"] for m in alone["messages"]}
        assert not missing, f"{len(missing)} messages of untouched records lost: {note}"
