"""The guard around every input and record: an exception inside a reader or the cook is a
problem naming the file (and the record), never a lost batch."""
from __future__ import annotations

from pathlib import Path

import orjson

from parsers.pipeline import cook_paths, cook_uploads

REPO = Path(__file__).resolve().parents[2]
GOOD = REPO / "sample_data" / "api_logs" / "openai_chat.jsonl"

# A plug-in whose reader fails in the ways real bugs do, chosen by the file's first line.
FAULTY = '''
from parsers.model import Call, Format, Message, ParsedTrace, ParseResult

def sniff(src):
    if src.head.startswith(b"#sniff-crash"):
        raise KeyError("sniffing went wrong")
    return None if src.head.startswith(b"#faulty") else "not faulty"

def _traces(src, mode):
    yield ParsedTrace(format="faulty", title="first", messages=[Message("user", "one")])
    if mode == "late":
        raise ValueError("broke after the first trace")
    yield ParsedTrace(format="faulty", title="second", calls=_calls(mode))

def _calls(mode):
    yield Call([Message("user", "q1")], [Message("assistant", "a1")], model=["not", "a", "string"],
               timestamp=10**20, usage={"input": -3, "output": 5}, line=2)
    yield Call([Message("user", "q2")], [Message("assistant", "a2")], model="m", cost=float("nan"), line=3)
    if mode == "calls":
        raise RuntimeError("broke inside the calls")
    yield Call([Message("user", "q3")], [Message("assistant", "a3")], model="m", line=4)

def parse(src):
    mode = src.head.split(b"\\n", 1)[0].split(b" ")[-1].decode()
    if mode == "early":
        raise ZeroDivisionError("division by zero")
    return ParseResult(format="faulty", traces=_traces(src, mode))

FORMAT = Format(name="faulty", title="Faulty log", description="fails on purpose", sniff=sniff,
                parse=parse, priority=1)
'''


def batch(*files):
    return cook_uploads([*files, ("good.jsonl", GOOD.read_bytes())])


def good_ids():
    doc, _ = cook_paths([GOOD])
    return {m["id"] for m in doc["messages"]}


def summary_of(summaries, name):
    return next(s for s in summaries if s.name == name)


def test_a_reader_that_fails_at_once_loses_only_its_input(plugin):
    plugin("tv_test_faulty", FAULTY, {"faulty": "tv_test_faulty:FORMAT"})
    doc, summaries = batch(("a.log", b"#faulty early\n"))
    (p,) = summary_of(summaries, "a.log").problems
    assert p["file"] == "a.log" and p["message"].startswith(
        "internal error in the Faulty log reader (ZeroDivisionError: division by zero)")
    assert good_ids() <= {m["id"] for m in doc["messages"]}
    assert summary_of(summaries, "good.jsonl").traces == 1


def test_a_reader_that_fails_part_way_keeps_what_it_read(plugin):
    plugin("tv_test_faulty", FAULTY, {"faulty": "tv_test_faulty:FORMAT"})
    doc, summaries = batch(("b.log", b"#faulty late\n"))
    s = summary_of(summaries, "b.log")
    assert s.traces == 1 and [t["title"] for t in doc["traces"] if t["source"] == "b.log"] == ["first"]
    assert any("ValueError: broke after the first trace" in p["message"] for p in s.problems)
    assert summary_of(summaries, "good.jsonl").traces == 1


def test_wrong_types_are_left_out_at_the_cooks_door_and_the_record_still_cooks(plugin):
    plugin("tv_test_faulty", FAULTY, {"faulty": "tv_test_faulty:FORMAT"})
    doc, summaries = batch(("c.log", b"#faulty calls\n"))
    s = summary_of(summaries, "c.log")
    second = next(t for t in doc["traces"] if t["title"] == "second")
    reqs = [r for r in doc["requests"] if r["trace"] == second["id"]]
    # Two calls were given before the reader broke: both cook, the bad values left out.
    assert sorted((r["line"], r["model"], r["timestamp"]) for r in reqs) == [(2, None, None), (3, "m", None)]
    first = next(r for r in reqs if r["line"] == 2)
    assert first["usage"] is None and first["cost"] is None  # a negative count: no usage summed or priced
    assert next(r for r in reqs if r["line"] == 3)["cost"] is None
    by_line = {}
    for p in s.problems:
        by_line.setdefault(p["line"], []).append(p["message"])
    assert any(m.startswith("the model: expected a string, found an array") for m in by_line[2])
    assert any(m.startswith("the request time: expected a time") for m in by_line[2])
    assert any(m.startswith("usage input: expected a whole number of tokens") and "-3" in m for m in by_line[2])
    assert any(m.startswith("the cost: expected a number") and "nan" in m for m in by_line[3])
    assert any("RuntimeError: broke inside the calls" in m for m in by_line[None])
    assert orjson.dumps(doc)  # the written document is valid JSON (no NaN, no huge numbers)


def test_a_sniff_that_crashes_does_not_hide_the_file_from_other_formats(plugin):
    plugin("tv_test_faulty", FAULTY, {"faulty": "tv_test_faulty:FORMAT"})
    doc, summaries = batch(("d.log", b"#sniff-crash\n"))
    s = summary_of(summaries, "d.log")
    assert s.traces == 0 and "faulty: internal error while sniffing (KeyError" in s.problems[0]["message"]
    doc, summaries = cook_paths([GOOD])  # the other formats still detect their files
    assert summaries[0].format == "request-log"


def test_the_reported_exceptions_of_request_logs_and_trials_are_problems_now():
    rec = orjson.loads(GOOD.read_bytes().splitlines()[0])
    rec["request"]["model"] = ["gpt-4o", "gpt-4o-mini"]
    rec["response"]["model"] = {"name": "x"}
    doc, summaries = batch(("models.jsonl", orjson.dumps(rec) + b"\n" + b"\n".join(GOOD.read_bytes().splitlines()[1:])))
    s = summary_of(summaries, "models.jsonl")
    assert s.requests == 5 and any(p["line"] == 1 and "the model" in p["message"] for p in s.problems)

    trials = orjson.loads((REPO / "sample_data" / "trials" /
                           "claude-4-sonnet_claude-cli_demo_2025-01-10.trials.json").read_bytes())
    trials[0]["tools"] = 1
    doc, summaries = batch(("x.trials.json", orjson.dumps(trials)))
    assert summary_of(summaries, "x.trials.json").traces == len(trials)
