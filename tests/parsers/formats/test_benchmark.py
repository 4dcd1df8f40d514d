"""BenchmarkDataPoint records: the bundled sample against its golden file, schema violations,
broken lines, agent statistics and `traceview validate`.

Regenerate the golden file with TRACEVIEW_REGEN_GOLDEN=1.
"""
from __future__ import annotations

import copy
import os
import re
from pathlib import Path

import orjson
import pytest

from parsers import pipeline
from parsers.formats import benchmark
from parsers.registry import detect
from parsers.io.source import from_bytes
from parsers.cook.schema import cooked_errors
from parsers.pipeline import validate_file

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "sample_data" / "benchmark" / "arbiter_benchmark.jsonl"
GOLDEN = Path(__file__).parent / "golden" / "benchmark_sample.json"
SEEDS = REPO.parent / "shared" / "seeds"


def sample_records() -> list[dict]:
    return [orjson.loads(line) for line in SAMPLE.read_bytes().splitlines() if line.strip()]


def cook(name: str, data: bytes) -> tuple[dict, list]:
    doc, summaries = pipeline.cook_uploads([(name, data)])
    assert cooked_errors(doc) == []
    return doc, summaries


def jsonl(records) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def projection(doc: dict) -> list[dict]:
    return [{"title": t["title"], "task": t["task"], "outcome": t["outcome"], "outcome_detail": t["outcome_detail"],
             "models": t["models"], "roles": [], "totals": t["totals"], "artifacts": [a["kind"] for a in t["artifacts"]],
             "requests": len(t["requests"]), "started_at": t["started_at"], "duration_ms": t["duration_ms"],
             "score_groups": sorted(t["scores"]), "meta": t["meta"], "problems": t["problems"]}
            for t in doc["traces"]]


def test_sample_matches_golden():
    doc, (summary,) = pipeline.cook_paths([SAMPLE.parent])
    assert cooked_errors(doc) == []
    assert all(t["timeline"] == [] for t in doc["traces"])
    got = projection(doc)
    if os.environ.get("TRACEVIEW_REGEN_GOLDEN") == "1":
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_bytes(orjson.dumps(got, option=orjson.OPT_INDENT_2) + b"\n")
    assert got == orjson.loads(GOLDEN.read_bytes())
    assert (summary.format, summary.records, summary.traces, summary.problems) == ("benchmark", 5, 5, [])


def test_scores_keep_the_records_groups_under_their_names():
    recs = sample_records()
    doc, _ = cook("points.json", orjson.dumps(recs))  # a JSON array this time
    first = doc["traces"][0]
    assert first["scores"] == {"task": recs[0]["task"], "routing": recs[0]["routing"], "execution": recs[0]["execution"],
                               "evaluation": recs[0]["evaluation"], "rl": recs[0]["rlLabels"],
                               "provenance": recs[0]["provenance"], "caws": recs[0]["caws"]}
    assert "caws" not in doc["traces"][1]["scores"]
    assert [t["outcome"] for t in doc["traces"]] == ["success", "partial", "success", "failure", "success"]
    assert doc["traces"][3]["outcome_detail"] == \
        "search tool rate-limited; overall score 0.2; a mandatory quality gate failed"
    assert first["meta"]["tokens"] == {"total": 8500, "output": 6500, "thinking": 2000}


def test_single_object_and_detection():
    rec = sample_records()[2]
    doc, _ = cook("one.json", orjson.dumps(rec, option=orjson.OPT_INDENT_2))
    (t,) = doc["traces"]
    assert (t["title"], t["task"], t["models"], t["outcome"]) == (
        "Compare three open-source vector databases on filtering support and summarise the trade-offs.",
        "TASK-2001", ["GPT-4"], "success")
    assert (t["started_at"], t["duration_ms"], t["ended_at"]) == (1741087800000, 30000, 1741087830000)
    assert detect(from_bytes("x.jsonl", SAMPLE.read_bytes())).name == "benchmark"
    assert benchmark.sniff(from_bytes("x.json", b'[{"task": {}, "routing": {}}]')) == \
        'the first record has no "execution"'


# -- broken input --------------------------------------------------------------------------
def test_schema_violations_are_reported_and_the_record_still_loads():
    recs = sample_records()[:3]
    bad = copy.deepcopy(recs[1])
    bad["task"]["type"] = "refactoring"
    bad["evaluation"]["rubricScores"]["safety"] = 1.5
    del bad["routing"]
    bad["id"] = "not-a-uuid"
    bad["timestamp"] = "yesterday"
    doc, (summary,) = cook("points.jsonl", jsonl([recs[0], bad, recs[2]]))
    assert [t["task"] for t in doc["traces"]] == ["TASK-1042", "TASK-1043", "TASK-2001"]
    loaded = doc["traces"][1]
    assert (loaded["outcome"], loaded["models"], loaded["started_at"]) == ("partial", [], None)
    got = [(p["line"], p["record"], p["path"], p["message"]) for p in loaded["problems"]]
    assert got == [
        (2, 1, "/evaluation/rubricScores/safety", "1.5 is greater than the maximum of 1"),
        (2, 1, "/id", "'not-a-uuid' is not a 'uuid'"),
        (2, 1, "/routing", "'routing' is a required property"),
        (2, 1, "/task/type", "'refactoring' is not one of ['code-editing', 'research', 'data-analysis', 'design', "
                             "'planning']"),
        (2, 1, "/timestamp", "'yesterday' is not a 'date-time'"),
    ]
    assert summary.problems == loaded["problems"]
    assert doc["traces"][0]["problems"] == doc["traces"][2]["problems"] == []


def test_records_without_identity_are_skipped():
    recs = sample_records()[:2]
    nameless = copy.deepcopy(recs[1])
    del nameless["id"], nameless["task"]["id"]
    doc, (summary,) = cook("points.json", orjson.dumps([recs[0], nameless, "text", recs[1]]))
    assert len(doc["traces"]) == 2 and summary.records == 4
    got = [(p["record"], p["path"], p["message"]) for p in summary.problems]
    assert got == [
        (1, "/id", "'id' is a required property"),
        (1, "/task/id", "'id' is a required property"),
        (1, "", 'expected "id" or "task.id" to name the data point; skipped'),
        (2, "", "'text' is not of type 'object'"),
        (2, "", "expected a BenchmarkDataPoint object, found a string; skipped"),
    ]


def test_truncated_line_is_skipped_and_the_rest_loads():
    data = jsonl(sample_records())
    lines = data.splitlines(keepends=True)
    broken = b"".join(lines[:2]) + lines[2][:200] + b"\n" + b"".join(lines[3:])
    doc, (summary,) = cook("points.jsonl", broken)
    assert [t["task"] for t in doc["traces"]] == ["TASK-1042", "TASK-1043", "TASK-2002", "TASK-1050"]
    (p,) = summary.problems
    assert p["line"] == 3 and p["message"].startswith("not valid JSON (") and p["message"].endswith("; line skipped")


# -- statistics ----------------------------------------------------------------------------
def test_agent_statistics_by_agent_and_task_type():
    # Hand-checked from the sample: AST Coder did two code edits (one success; quality 0.9
    # and 0.6; latency 12500 and 41200; tokens 8500 and 21000). Researcher did two research
    # tasks (0.85 and 0.2; 30000 and 8000; 12000 and 2000) and one code edit (0.97; 4100; 1500).
    doc, _ = pipeline.cook_paths([SAMPLE])
    expected = [
        {"agent_id": "agent-ast-coder", "agent_name": "AST Coder", "task_type": "code-editing", "total_tasks": 2,
         "successful_tasks": 1, "success_rate": 0.5, "avg_quality": 0.75, "avg_latency": 26850, "avg_tokens": 14750},
        {"agent_id": "agent-researcher", "agent_name": "Researcher", "task_type": "code-editing", "total_tasks": 1,
         "successful_tasks": 1, "success_rate": 1.0, "avg_quality": 0.97, "avg_latency": 4100, "avg_tokens": 1500},
        {"agent_id": "agent-researcher", "agent_name": "Researcher", "task_type": "research", "total_tasks": 2,
         "successful_tasks": 1, "success_rate": 0.5, "avg_quality": 0.53, "avg_latency": 19000, "avg_tokens": 7000},
    ]
    assert benchmark.agent_statistics(doc["traces"]) == expected
    assert benchmark.agent_statistics(sample_records()) == expected  # raw records work too
    assert benchmark.agent_statistics([t["scores"] for t in doc["traces"]]) == expected


def test_agent_statistics_per_agent_and_missing_values():
    recs = sample_records()
    recs[4]["execution"].pop("latencyMs")
    recs[3]["evaluation"].pop("overallScore")
    rows = benchmark.agent_statistics(recs + [{"routing": {}}], by_task_type=False)
    assert rows == [
        {"agent_id": "agent-ast-coder", "agent_name": "AST Coder", "task_type": None, "total_tasks": 2,
         "successful_tasks": 1, "success_rate": 0.5, "avg_quality": 0.75, "avg_latency": 26850, "avg_tokens": 14750},
        {"agent_id": "agent-researcher", "agent_name": "Researcher", "task_type": None, "total_tasks": 3,
         "successful_tasks": 2, "success_rate": 0.6667, "avg_quality": 0.91, "avg_latency": 19000, "avg_tokens": 5167},
    ]
    assert benchmark.agent_statistics([]) == []


# -- the schema and `traceview validate` ---------------------------------------------------------
def test_schema_file_is_the_formats_own():
    if not SEEDS.is_dir():
        pytest.skip(f"shared format documents not present: {SEEDS}")
    (doc,) = [p for p in SEEDS.glob("*.txt") if "interface BenchmarkDataPoint" in p.read_text("utf-8")]
    block = re.search(r"### JSON Schema for Validation\s+```json\n(.*?)```", doc.read_text("utf-8"), re.S).group(1)
    assert benchmark.schema() == orjson.loads(block)


def test_traceview_validate(tmp_path):
    good = tmp_path / "good.json"
    good.write_bytes(orjson.dumps(sample_records()))
    assert validate_file(str(good)) == ("BenchmarkDataPoint records", [])
    recs = sample_records()
    recs[2]["task"]["complexity"] = "hard"
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(recs))
    assert validate_file(str(bad)) == ("BenchmarkDataPoint records",
                                       [("/2/task/complexity", "'hard' is not one of ['trivial', 'standard', 'complex']")])
    one = tmp_path / "one.json"
    one.write_bytes(orjson.dumps(recs[2]))
    assert validate_file(str(one))[1] == [("/task/complexity", "'hard' is not one of ['trivial', 'standard', 'complex']")]
