"""Request ids in the cooked document: a record's own id when it is unique in the document,
else prefixed with its trace id, and `~2`, `~3`, ... after a prefixed id met again."""
from __future__ import annotations

from parsers.cook.builder import DocumentBuilder
from parsers.model import Call, Message, ParsedTrace, ParseResult


def _doc(traces: list[list[str | None]]) -> dict:
    """A document of one input holding a trace per list, a call per id in it."""
    b = DocumentBuilder()
    parsed = [ParsedTrace(format="test", messages=None, problems=[], meta={},
                          calls=[Call(request_messages=[Message("user", f"q{t}.{n}")],
                                      response_messages=[Message("assistant", f"a{t}.{n}")],
                                      id=own, model="m", timestamp=n)
                                 for n, own in enumerate(ids)])
              for t, ids in enumerate(traces)]
    b.add_result("in.jsonl", "d", 1, ParseResult(format="test", traces=parsed))
    return b.document()


def test_ids_met_again_are_numbered_in_order_and_stay_unique():
    repeats = 3000  # a log of retries that all carry one id (the bad inputs hold 5,325 of them)
    doc = _doc([["same"] * repeats + ["own", None], ["same", "x"]])
    first, second = (t["id"] for t in doc["traces"])
    ids = [r["id"] for r in doc["requests"]]
    expected = ([f"{first}:same"] + [f"{first}:same~{k}" for k in range(2, repeats + 1)]
                + ["own", f"{first}:{repeats + 1}", f"{second}:same", "x"])
    assert ids == expected
    assert len(set(ids)) == len(ids)
