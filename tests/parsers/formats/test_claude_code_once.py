"""The Claude Code reader does each line's work once: a line's time is read once (a response's
requests and messages take its first line's), and a sub-agent run is made with its first
record. Expected times are worked out from the raw records with datetime."""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path

from parsers import pipeline
from parsers.formats import claude_code
from parsers.formats.claude_code import session
from parsers.io.source import from_path

REPO = Path(__file__).resolve().parents[3]
SESSION = REPO / "sample_data" / "claude_code" / "-home-user-notes-app" / "5f0c1e2a-7b3d-4c59-9e1f-2a6b8c0d4e71.jsonl"


def epoch_ms(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def test_each_line_time_is_read_once_and_a_response_has_its_first_line_time(monkeypatch):
    reads: Counter = Counter()
    original = session.read_time

    def spy(value, problems, file, path, then="", **where):
        reads[file, where.get("line"), where.get("record")] += 1
        return original(value, problems, file, path, then, **where)

    monkeypatch.setattr(session, "read_time", spy)
    doc, _ = pipeline.cook_paths([str(SESSION)])
    assert reads and set(reads.values()) == {1}

    first: dict[str, int] = {}  # message id -> the time of the response's first line
    for line in SESSION.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        if rec.get("type") == "assistant" and rec["message"].get("model") != "<synthetic>":
            first.setdefault(rec["message"]["id"], epoch_ms(rec["timestamp"]))
    requests = {r["id"]: r for r in doc["requests"] if r["id"] in first}
    assert requests and {k: r["timestamp"] for k, r in requests.items()} == {k: first[k] for k in requests}
    messages = {m["id"]: m for m in doc["messages"]}
    for r in requests.values():
        assert {messages[m]["timestamp"] for m in r["response_messages"]} == {r["timestamp"]}


def test_a_sub_agent_run_is_made_once_not_per_record(realdata, monkeypatch):
    path = realdata / "claude_code_session" / "ccv_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    made = []

    class Run(claude_code.Run):
        def __init__(self, *args, **kwargs):
            made.append(self)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(claude_code, "Run", Run)
    problems: list = []
    records, _ = claude_code._records(from_path(path), problems)
    main, sides = claude_code._split(path.name, records)
    sidechain = sum(1 for line in path.read_text(encoding="utf-8").splitlines()
                    if line.strip() and json.loads(line).get("isSidechain") is True)
    assert len(sides) == 2 and sidechain > 2
    assert len(made) == 1 + len(sides) + len(main.relayed)
