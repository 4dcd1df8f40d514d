"""BenchmarkDataPoint records: one routed task execution of an agent orchestrator each.

Records come as JSONL, a JSON array or a single object. Each is validated against the
format's own JSON Schema (schema/benchmark_datapoint.schema.json, Draft 7, with the `uuid`
and `date-time` formats checked); every violation is a Problem with the record index and
the JSON pointer of the offending value. A record that violates the schema still loads as
far as it is readable; only a record that is not an object, or that has neither `id` nor
`task.id` to name it, is skipped.

A data point holds no conversation: it becomes a trace with no messages whose scores carry
the record's groups under the seed's field names (task, routing, execution, evaluation,
rl = rlLabels, provenance, caws). `agent_statistics` aggregates them the way the format's
`agent_statistics` table does.
"""
from __future__ import annotations

import functools
import json
import re
import uuid
from datetime import datetime
from importlib import resources

import jsonschema

from parsers.model import Format, ParsedTrace, ParseResult, Problem, json_kind, pointer
from parsers.io.guard import record_guard
from parsers.io.records import as_dict, as_number, as_text, first_char, iter_records, looks_binary

from parsers.io.source import Source
from parsers.io.times import to_epoch_ms

NAME = "benchmark"
TITLE = "BenchmarkDataPoint records"
# scores key -> the record's own field
SCORE_GROUPS = (("task", "task"), ("routing", "routing"), ("execution", "execution"),
                ("evaluation", "evaluation"), ("rl", "rlLabels"), ("provenance", "provenance"), ("caws", "caws"))
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


# -- the schema -------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def schema() -> dict:
    return json.loads(resources.files("parsers.schema").joinpath("benchmark_datapoint.schema.json").read_text("utf-8"))


_FORMATS = jsonschema.FormatChecker()


@_FORMATS.checks("uuid")
def _is_uuid(value) -> bool:
    if not isinstance(value, str):
        return True
    try:
        return str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


@_FORMATS.checks("date-time")
def _is_date_time(value) -> bool:
    if not isinstance(value, str):
        return True
    if not _RFC3339.fullmatch(value):
        return False
    try:
        datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=None)
def _validator() -> jsonschema.Draft7Validator:
    return jsonschema.Draft7Validator(schema(), format_checker=_FORMATS)


def record_errors(rec) -> list[tuple[str, str]]:
    """(JSON pointer, message) for every schema violation of one record, in document order.

    A missing required property is reported at the property's own path."""
    out = []
    for e in _validator().iter_errors(rec):
        path = list(e.absolute_path)
        if e.validator == "required":
            missing = re.match(r"'(.*)' is a required property", e.message)
            if missing:
                path.append(missing.group(1))
        out.append((pointer(*path), e.message))
    return sorted(out)


# -- detection and reading ----------------------------------------------------------------
def sniff(src: Source) -> str | None:
    head = src.head
    if looks_binary(head):
        return "binary content"
    if first_char(head) not in "[{":
        return "does not start with a JSON object or array"
    missing = [k for k in (b'"task"', b'"routing"', b'"execution"') if k not in head]
    if missing:
        return "the first record has no " + ", ".join(k.decode() for k in missing)
    return None


def parse(src: Source) -> ParseResult:
    problems: list[Problem] = []
    traces = []
    index = -1
    for index, (line, _, rec) in enumerate(iter_records(src, problems)):
        with record_guard(problems, src.name, "the benchmark record reader", line=line, record=index) as guard:
            found = [Problem(src.name, msg, line=line, record=index, path=path) for path, msg in record_errors(rec)]
            trace, why = to_trace(rec)
        if guard.failed:
            continue
        if trace is None:
            problems.extend(found)
            problems.append(Problem(src.name, why, line=line, record=index))
            continue
        trace.problems = found
        traces.append(trace)
    return ParseResult(format=NAME, traces=traces, problems=problems, records=index + 1)


def to_trace(rec) -> tuple[ParsedTrace | None, str | None]:
    """A trace from one data point, or (None, why it was skipped)."""
    if not isinstance(rec, dict):
        return None, f"expected a BenchmarkDataPoint object, found {json_kind(rec)}; skipped"
    task, routing, execution = as_dict(rec.get("task")), as_dict(rec.get("routing")), as_dict(rec.get("execution"))
    evaluation, rl = as_dict(rec.get("evaluation")), as_dict(rec.get("rlLabels"))
    rid, task_id = as_text(rec.get("id")), as_text(task.get("id"))
    if rid is None and task_id is None:
        return None, 'expected "id" or "task.id" to name the data point; skipped'
    agent = as_dict(routing.get("selectedAgent"))
    model = as_text(agent.get("modelFamily")) or as_text(agent.get("name")) or as_text(agent.get("id"))
    started = to_epoch_ms(rec.get("timestamp"))
    latency = as_number(execution.get("latencyMs"))
    outcome, detail = _outcome(execution, evaluation, rl)
    meta = {"id": rid, "tenantId": rec.get("tenantId"), "task_type": task.get("type"),
            "complexity": task.get("complexity"), "agent": agent or None,
            "tokens": {"total": execution.get("tokensUsed"), "output": execution.get("outputTokens"),
                       "thinking": execution.get("thinkingTokens")}}
    return ParsedTrace(
        format=NAME, title=_one_line(task.get("description")) or task_id or rid,
        task=task_id or as_text(task.get("type")), messages=[], models=[model] if model else None,
        started_at=started, duration_ms=latency,
        ended_at=started + int(latency) if started is not None and latency is not None else None,
        outcome=outcome, outcome_detail=detail,
        scores={key: rec[field] for key, field in SCORE_GROUPS if field in rec},
        meta={k: v for k, v in meta.items() if v is not None},
    ), None


def _outcome(execution: dict, evaluation: dict, rl: dict) -> tuple[str, str | None]:
    success = execution.get("success")
    reason = as_text(execution.get("failureReason"))
    if success is True:
        outcome = "success"
    elif success is False:
        outcome = "partial" if execution.get("partialSuccess") is True else "failure"
    else:
        final = rl.get("finalOutcome")
        outcome = final if final in ("success", "failure", "partial") else "unknown"
    parts = [reason] if reason and outcome != "success" else []
    if outcome == "partial" and not reason:
        parts.append("partial success")
    score = as_number(evaluation.get("overallScore"))
    if score is not None:
        parts.append(f"overall score {score:g}")
    if evaluation.get("passedAllMandatory") is False:
        parts.append("a mandatory quality gate failed")
    return outcome, "; ".join(parts) or None





def _one_line(v, limit: int = 100) -> str | None:
    if not isinstance(v, str) or not v.strip():
        return None
    s = " ".join(v.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


# -- statistics ---------------------------------------------------------------------------
def agent_statistics(items, by_task_type: bool = True) -> list[dict]:
    """Per agent (and task type) totals as the format's `agent_statistics` table holds them.

    `items` may be cooked traces (dicts with "scores"), ParsedTraces, their scores dicts or
    raw BenchmarkDataPoint records. Averages skip missing values (None when there are none);
    rounding follows the table's column types: success_rate to 4 places, avg_quality to 2,
    avg_latency and avg_tokens to integers. The table's time buckets are left out."""
    groups: dict[tuple, dict] = {}
    for item in items:
        s = _scores_of(item)
        agent = as_dict(as_dict(s.get("routing")).get("selectedAgent"))
        agent_id = as_text(agent.get("id")) or as_text(agent.get("name"))
        if agent_id is None:
            continue
        execution = as_dict(s.get("execution"))
        task_type = as_dict(s.get("task")).get("type") if by_task_type else None
        g = groups.setdefault((agent_id, task_type), {
            "agent_id": agent_id, "agent_name": agent.get("name"), "task_type": task_type,
            "total_tasks": 0, "successful_tasks": 0, "_quality": [], "_latency": [], "_tokens": []})
        g["total_tasks"] += 1
        g["successful_tasks"] += execution.get("success") is True
        for key, v in (("_quality", as_dict(s.get("evaluation")).get("overallScore")),
                       ("_latency", execution.get("latencyMs")), ("_tokens", execution.get("tokensUsed"))):
            if as_number(v) is not None:
                g[key].append(v)
    rows = []
    for key in sorted(groups, key=lambda k: (k[0], k[1] or "")):
        g = groups[key]
        rows.append({
            "agent_id": g["agent_id"], "agent_name": g["agent_name"], "task_type": g["task_type"],
            "total_tasks": g["total_tasks"], "successful_tasks": g["successful_tasks"],
            "success_rate": round(g["successful_tasks"] / g["total_tasks"], 4),
            "avg_quality": _mean(g["_quality"], 2), "avg_latency": _mean(g["_latency"], None),
            "avg_tokens": _mean(g["_tokens"], None),
        })
    return rows


def _scores_of(item) -> dict:
    scores = getattr(item, "scores", None)
    if scores is None and isinstance(item, dict):
        scores = item.get("scores") if "scores" in item and "routing" not in item else item
    return as_dict(scores)


def _mean(values: list, places: int | None):
    if not values:
        return None
    return round(sum(values) / len(values), places)


# -- `traceview validate` -----------------------------------------------------------------
def _is_datapoints(doc) -> bool:
    first = doc[0] if isinstance(doc, list) and doc else doc
    return isinstance(first, dict) and "routing" in first and "execution" in first and "requests" not in first


def validate_document(doc) -> list[tuple[str, str]] | None:
    """Schema violations of a JSON array of records, or of one record; None when `doc` is
    not made of benchmark records."""
    if not _is_datapoints(doc):
        return None
    if isinstance(doc, list):
        return [(f"/{i}{path}", msg) for i, rec in enumerate(doc) for path, msg in record_errors(rec)]
    return record_errors(doc)


FORMAT = Format(
    name=NAME, title=TITLE,
    description="agent orchestration benchmark data points (task, routing, execution, evaluation, RL labels), "
                "validated against their JSON Schema",
    sniff=sniff, parse=parse, priority=30, validate=validate_document,
)
