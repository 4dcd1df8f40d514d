"""BenchmarkDataPoint records: one routed task execution of an agent orchestrator each.

Records come as JSONL, a JSON array or a single object. Each is validated against the
format's own JSON Schema (schema/benchmark_datapoint.schema.json, Draft 7, with the `uuid`
and `date-time` formats checked); every violation is a Problem with the record index and
the JSON pointer of the offending value. A record that violates the schema still loads as
far as it is readable; only a record that is not an object, or that has neither `id` nor
`task.id` to name it, is skipped.

A data point holds no conversation: it becomes a trace with no messages, one request that
carries the execution's accounting (its model family, latency and token counts: `tokensUsed`
in all, of which `outputTokens` and `thinkingTokens` were generated, the rest read), and a scorecard
(parsers.model.scorecard): the overall score and the success verdict, the rubric, quality
gates, per-turn RL labels, the total reward, execution metrics, tool use, the routing
decision with its alternatives, and the CAWS, minimal-diff and provenance figures as tables.
"""
from __future__ import annotations

import functools
import json
import re
import uuid
from datetime import datetime
from importlib import resources
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import jsonschema

from parsers.model import (Agent, Alternative, Call, Format, Gate, ParsedTrace, ParseResult, Problem, Routing, Score,
                           Scorecard, ToolUse, TurnScore, json_kind, pointer)
from parsers.io.guard import record_guard
from parsers.io.records import as_dict, as_number, as_text, iter_records, not_a_json_object

from parsers.io.source import Source
from parsers.io.times import to_epoch_ms

NAME = "benchmark"
TITLE = "BenchmarkDataPoint records"
# The seed's rubric criteria, in its order (others follow in the record's order).
RUBRIC = ("format", "tool", "task", "minimal", "cost", "safety")
# rlLabels.turns[] field -> turn series of the scorecard
TURN_SERIES = (("turnReward", "reward"), ("taskProgress", "progress"), ("informationGain", "information_gain"),
               ("formatCorrectness", "format_correctness"), ("safetyScore", "safety"))
# execution field -> scorecard metric
METRICS = (("latencyMs", "latency_ms"), ("tokensUsed", "tokens"), ("thinkingTokens", "thinking_tokens"),
           ("outputTokens", "output_tokens"), ("toolCallCount", "tool_calls"),
           ("toolCallSuccessRate", "tool_success_rate"), ("timeToFirstAction", "time_to_first_action_ms"),
           ("tokenEfficiency", "token_efficiency"))
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")


# -- the schema -------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def schema() -> dict:
    return json.loads(resources.files("parsers.schema").joinpath("benchmark_datapoint.schema.json").read_text("utf-8"))


def _is_uuid(value) -> bool:
    if not isinstance(value, str):
        return True
    try:
        return str(uuid.UUID(value)) == value.lower()
    except ValueError:
        return False


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
    import jsonschema  # imported when first needed: every cook imports this module

    formats = jsonschema.FormatChecker()
    formats.checks("uuid")(_is_uuid)
    formats.checks("date-time")(_is_date_time)
    return jsonschema.Draft7Validator(schema(), format_checker=formats)


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
    if (why := not_a_json_object(head, or_array=True)) is not None:
        return why
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
        for call in trace.calls:
            call.line, call.record = line, index
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
        calls=[Call([], [], id=rid or task_id, timestamp=started, model=model, duration_ms=latency,
                    usage=_usage(execution))],
        task=task_id or as_text(task.get("type")), messages=[], models=[model] if model else None,
        started_at=started, duration_ms=latency,
        ended_at=started + int(latency) if started is not None and latency is not None else None,
        outcome=outcome, outcome_detail=detail,
        scorecard=scorecard(rec),
        meta={k: v for k, v in meta.items() if v is not None},
    ), None


def _usage(execution: dict) -> dict | None:
    """Normalised usage of an execution, or None when it states no token count.

    `tokensUsed` is every token; `outputTokens` and `thinkingTokens` are the generated ones
    (normalised output includes reasoning); the rest were read (input)."""
    total, out, thinking = (as_number(execution.get(k)) for k in ("tokensUsed", "outputTokens", "thinkingTokens"))
    if total is None and out is None and thinking is None:
        return None
    generated = int(out or 0) + int(thinking or 0)
    return {"input": max(int(total or 0) - generated, 0), "output": generated, "cache_read": 0, "cache_write": 0,
            "reasoning": int(thinking or 0)}


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





def scorecard(rec: dict) -> Scorecard:
    """The typed scorecard of one data point (parts the record lacks stay empty)."""
    task, routing, execution = as_dict(rec.get("task")), as_dict(rec.get("routing")), as_dict(rec.get("execution"))
    evaluation, rl, caws = as_dict(rec.get("evaluation")), as_dict(rec.get("rlLabels")), as_dict(rec.get("caws"))
    scores = []
    if as_number(evaluation.get("overallScore")) is not None:
        scores.append(Score("overall", evaluation["overallScore"]))
    for field, scorer in (("success", "success"), ("partialSuccess", "partial_success")):
        if isinstance(execution.get(field), bool):
            scores.append(Score(scorer, execution[field]))
    rub = as_dict(evaluation.get("rubricScores"))
    rubric = {k: rub[k] for k in (*RUBRIC, *(k for k in rub if k not in RUBRIC))
              if k in rub and as_number(rub[k]) is not None}
    gates = [Gate(str(g.get("name")), _bool(g.get("passed")), as_number(g.get("score")),
                  as_number(g.get("threshold")), _bool(g.get("mandatory")))
             for g in _objects(evaluation.get("qualityGates"))]
    turns = [TurnScore(t["turnNumber"] if _is_int(t.get("turnNumber")) else k + 1,
                       {name: t[field] for field, name in TURN_SERIES if as_number(t.get(field)) is not None},
                       as_text(t.get("toolCalled")))
             for k, t in enumerate(_objects(rl.get("turns")))]
    agent = as_dict(routing.get("selectedAgent"))
    hist = as_dict(routing.get("historicalPerformance"))
    route = Routing(
        strategy=as_text(routing.get("strategy")), confidence=as_number(routing.get("confidence")),
        rationale=as_text(routing.get("rationale")),
        alternatives=[Alternative(as_text(a.get("agentId")), as_number(a.get("score")), as_text(a.get("reason")))
                      for a in _objects(routing.get("alternativesConsidered"))],
        history={name: hist[field] for field, name in (("agentSuccessRate", "success_rate"),
                                                       ("agentAvgQuality", "quality"), ("agentTaskCount", "tasks"))
                 if as_number(hist.get(field)) is not None})
    checks = {name: evaluation[field] for field, name in (("cawsCompliant", "CAWS compliant"),
                                                           ("budgetCompliant", "budget compliant"))
              if isinstance(evaluation.get(field), bool)}
    labels = {name: v for name, v in (("complexity", as_text(task.get("complexity"))),
                                      ("final outcome", as_text(rl.get("finalOutcome"))),
                                      ("CAWS spec", as_text(caws.get("specId"))),
                                      ("CAWS verdict", as_text(caws.get("verdictId")))) if v is not None}
    tables = {name: _rows(group) for name, group in (
        ("minimal-diff metrics", evaluation.get("minimalDiffMetrics")), ("CAWS scores", caws.get("scores")),
        ("CAWS budget", caws.get("budgetUsage")), ("provenance", rec.get("provenance")))}
    return Scorecard(
        scores=scores, rubric=rubric, gates=gates, gates_passed=_bool(evaluation.get("passedAllMandatory")),
        turns=turns,
        rewards={"total": rl["totalReward"]} if as_number(rl.get("totalReward")) is not None else {},
        metrics={name: execution[field] for field, name in METRICS if as_number(execution.get(field)) is not None},
        checks=checks, labels=labels, task_type=as_text(task.get("type")),
        agent=Agent(as_text(agent.get("id")), as_text(agent.get("name")), as_text(agent.get("modelFamily")))
        if agent else None,
        routing=route if route.as_dict() else None,
        tools=[ToolUse(str(t.get("toolName")), t["callCount"] if _is_int(t.get("callCount")) else None,
                       as_number(t.get("successRate")), as_number(t.get("avgLatency")))
               for t in _objects(execution.get("toolsUsed"))],
        tables={k: v for k, v in tables.items() if v},
    )


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _bool(v) -> bool | None:
    return v if isinstance(v, bool) else None


def _objects(v) -> list[dict]:
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def _rows(group) -> list[dict]:
    """An object of named values as (metric, value) rows; nested values as compact JSON text."""
    return [{"metric": k, "value": v if v is None or isinstance(v, (str, int, float, bool))
             else json.dumps(v, separators=(",", ":"))} for k, v in as_dict(group).items()]


def _one_line(v, limit: int = 100) -> str | None:
    if not isinstance(v, str) or not v.strip():
        return None
    s = " ".join(v.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


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
