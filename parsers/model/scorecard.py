"""How a trace was judged, typed: scores, rubric, quality gates, per-turn rewards, votes.

A format fills a `Scorecard` from whatever its source records (benchmark rubrics and gates,
an eval's scores per scorer and epoch, a verifier's rewards, arena votes); the cook writes
`as_dict()` into the cooked trace and the viewer reads it back with `Scorecard.from_dict`,
so no page ever needs to know a source's field names.

Names the viewer gives a meaning to (a format uses them when its source means the same):
- scores: "overall" (the headline score of the trace), "success" and "resolved" (verdicts);
- turn series: "reward" and "progress" (shown first);
- rewards: "total" (the trajectory's reward);
- metrics: "latency_ms", "tokens", "output_tokens", "thinking_tokens", "tool_calls",
  "tool_success_rate", "time_to_first_action_ms", "token_efficiency".
Everything else is shown under its own name.
"""
from __future__ import annotations

from dataclasses import dataclass, field

Number = int | float
ScoreValue = int | float | bool | str | None

# Letter grades of eval frameworks (Inspect's CORRECT / INCORRECT / PARTIAL / NOANSWER) and
# how they read as numbers, the frameworks' own reading.
LETTER_GRADES = {"C": (1.0, "correct"), "I": (0.0, "incorrect"), "P": (0.5, "partial"), "N": (0.0, "no answer")}
_WORDS = {"yes": 1.0, "true": 1.0, "no": 0.0, "false": 0.0}


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def numeric_reading(value: ScoreValue) -> float | None:
    """A score value as a number: numbers as they are, true/false as 1/0, letter grades and
    yes/no as their frameworks read them, numeric text parsed; None when there is none."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if _is_number(value):
        return float(value) if value == value else None
    if isinstance(value, str):
        s = value.strip()
        if s in LETTER_GRADES:
            return LETTER_GRADES[s][0]
        if s.lower() in _WORDS:
            return _WORDS[s.lower()]
        try:
            f = float(s)
        except ValueError:
            return None
        return f if f == f and f not in (float("inf"), float("-inf")) else None
    return None


def _compact(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


@dataclass(slots=True)
class Score:
    """One scorer's verdict on the trace: `value` as the source has it (a number, true/false
    or a grade such as "C"), `numeric` its reading as a number (computed when not given).
    A scorer with several named values becomes one Score per value, named "scorer/key"."""

    scorer: str
    value: ScoreValue
    epoch: int | None = None
    answer: str | None = None  # what the scorer took as the answer
    explanation: str | None = None
    label: str | None = None  # a word for the value ("correct" for "C")
    numeric: float | None = None

    def __post_init__(self):
        if self.numeric is None:
            self.numeric = numeric_reading(self.value)
        if self.label is None and isinstance(self.value, str) and self.value.strip() in LETTER_GRADES:
            self.label = LETTER_GRADES[self.value.strip()][1]

    def as_dict(self) -> dict:
        return {"scorer": self.scorer, "value": self.value, **_compact({
            "numeric": self.numeric, "epoch": self.epoch, "answer": self.answer,
            "explanation": self.explanation, "label": self.label})}

    @classmethod
    def from_dict(cls, d: dict) -> Score:
        return cls(str(d.get("scorer")), d.get("value"), epoch=d.get("epoch"), answer=d.get("answer"),
                   explanation=d.get("explanation"), label=d.get("label"), numeric=d.get("numeric"))


@dataclass(slots=True)
class Gate:
    """A quality gate: passed or not, with the score it got and the threshold it needed."""

    name: str
    passed: bool | None
    score: Number | None = None
    threshold: Number | None = None
    mandatory: bool | None = None

    def as_dict(self) -> dict:
        return {"name": self.name, "passed": self.passed, "score": self.score, "threshold": self.threshold,
                "mandatory": self.mandatory}

    @classmethod
    def from_dict(cls, d: dict) -> Gate:
        return cls(str(d.get("name")), d.get("passed"), d.get("score"), d.get("threshold"), d.get("mandatory"))


@dataclass(slots=True)
class TurnScore:
    """The labels of one turn of a trajectory: named numbers (reward, progress, ...) and the
    tool the turn called."""

    turn: int
    values: dict[str, Number] = field(default_factory=dict)
    tool: str | None = None

    def as_dict(self) -> dict:
        return {"turn": self.turn, **_compact({"tool": self.tool}), "values": dict(self.values)}

    @classmethod
    def from_dict(cls, d: dict) -> TurnScore:
        return cls(d.get("turn"), dict(d.get("values") or {}), d.get("tool"))


@dataclass(slots=True)
class Agent:
    """Who ran the task (an orchestrator's agent, a harness's agent)."""

    id: str | None = None
    name: str | None = None
    model_family: str | None = None
    version: str | None = None

    @property
    def key(self) -> str | None:
        """What names the agent in statistics: its id, else its name."""
        return self.id or self.name

    def as_dict(self) -> dict:
        return _compact({"id": self.id, "name": self.name, "model_family": self.model_family,
                         "version": self.version})

    @classmethod
    def from_dict(cls, d: dict) -> Agent:
        return cls(d.get("id"), d.get("name"), d.get("model_family"), d.get("version"))


@dataclass(slots=True)
class Alternative:
    """An agent the router considered and did not choose."""

    agent: str | None
    score: Number | None = None
    reason: str | None = None

    def as_dict(self) -> dict:
        return {"agent": self.agent, "score": self.score, "reason": self.reason}

    @classmethod
    def from_dict(cls, d: dict) -> Alternative:
        return cls(d.get("agent"), d.get("score"), d.get("reason"))


@dataclass(slots=True)
class Routing:
    """Why this agent got the task: the strategy, its confidence, the alternatives, and the
    agent's record at routing time (`history`: success_rate, quality, tasks)."""

    strategy: str | None = None
    confidence: Number | None = None
    rationale: str | None = None
    alternatives: list[Alternative] = field(default_factory=list)
    history: dict[str, Number] = field(default_factory=dict)

    def as_dict(self) -> dict:
        out = _compact({"strategy": self.strategy, "confidence": self.confidence, "rationale": self.rationale})
        if self.alternatives:
            out["alternatives"] = [a.as_dict() for a in self.alternatives]
        if self.history:
            out["history"] = dict(self.history)
        return out

    @classmethod
    def from_dict(cls, d: dict) -> Routing:
        return cls(d.get("strategy"), d.get("confidence"), d.get("rationale"),
                   [Alternative.from_dict(a) for a in d.get("alternatives") or () if isinstance(a, dict)],
                   dict(d.get("history") or {}))


@dataclass(slots=True)
class ToolUse:
    """A tool's use over the whole run, as the source sums it up."""

    name: str
    calls: int | None = None
    success_rate: Number | None = None
    avg_latency_ms: Number | None = None

    def as_dict(self) -> dict:
        return {"name": self.name, "calls": self.calls, "success_rate": self.success_rate,
                "avg_latency_ms": self.avg_latency_ms}

    @classmethod
    def from_dict(cls, d: dict) -> ToolUse:
        return cls(str(d.get("name")), d.get("calls"), d.get("success_rate"), d.get("avg_latency_ms"))


@dataclass(slots=True)
class Scorecard:
    """Everything a source says about how well a trace did.

    - scores: verdicts per scorer (and epoch); rubric: criterion -> score (0-1);
    - gates and `gates_passed` (every mandatory gate passed, as the source states it);
    - turns: per-turn series; rewards: named rewards; metrics: named numbers about the run;
    - checks: named yes/no facts; labels: named text facts (complexity, final outcome);
    - task_type: what statistics group the trace by; agent, routing, tools (tool use);
    - votes (won / lost / tie / bothbad) and feedback (upvote / downvote / flag) counts;
    - tables: anything else, as named tables of rows (each row a dict of plain values)."""

    scores: list[Score] = field(default_factory=list)
    rubric: dict[str, Number] = field(default_factory=dict)
    gates: list[Gate] = field(default_factory=list)
    gates_passed: bool | None = None
    turns: list[TurnScore] = field(default_factory=list)
    rewards: dict[str, Number] = field(default_factory=dict)
    metrics: dict[str, Number] = field(default_factory=dict)
    checks: dict[str, bool] = field(default_factory=dict)
    labels: dict[str, str] = field(default_factory=dict)
    task_type: str | None = None
    agent: Agent | None = None
    routing: Routing | None = None
    tools: list[ToolUse] = field(default_factory=list)
    votes: dict[str, int] = field(default_factory=dict)
    feedback: dict[str, int] = field(default_factory=dict)
    tables: dict[str, list[dict]] = field(default_factory=dict)

    def score(self, scorer: str, epoch: int | None = None) -> Score | None:
        """The first score of `scorer` (of that epoch when given)."""
        return next((s for s in self.scores if s.scorer == scorer and (epoch is None or s.epoch == epoch)), None)

    def is_empty(self) -> bool:
        return not self.as_dict()

    def as_dict(self) -> dict:
        """Plain JSON, empty parts left out."""
        out: dict = {}
        if self.scores:
            out["scores"] = [s.as_dict() for s in self.scores]
        if self.rubric:
            out["rubric"] = dict(self.rubric)
        if self.gates:
            out["gates"] = [g.as_dict() for g in self.gates]
        if self.gates_passed is not None:
            out["gates_passed"] = self.gates_passed
        if self.turns:
            out["turns"] = [t.as_dict() for t in self.turns]
        for name in ("rewards", "metrics", "checks", "labels"):
            part = getattr(self, name)
            if part:
                out[name] = dict(part)
        if self.task_type is not None:
            out["task_type"] = self.task_type
        agent = self.agent.as_dict() if self.agent is not None else {}
        if agent:
            out["agent"] = agent
        routing = self.routing.as_dict() if self.routing is not None else {}
        if routing:
            out["routing"] = routing
        if self.tools:
            out["tools"] = [t.as_dict() for t in self.tools]
        if self.votes:
            out["votes"] = dict(self.votes)
        if self.feedback:
            out["feedback"] = dict(self.feedback)
        if self.tables:
            out["tables"] = {k: [dict(r) for r in rows] for k, rows in self.tables.items()}
        return out

    @classmethod
    def from_dict(cls, d) -> Scorecard:
        """The typed scorecard of a cooked trace's `scorecard` (missing parts come back empty)."""
        d = d if isinstance(d, dict) else {}

        def items(key) -> list[dict]:
            v = d.get(key)
            return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []

        def named(key) -> dict:
            v = d.get(key)
            return dict(v) if isinstance(v, dict) else {}

        agent, routing = d.get("agent"), d.get("routing")
        return cls(
            scores=[Score.from_dict(x) for x in items("scores")], rubric=named("rubric"),
            gates=[Gate.from_dict(x) for x in items("gates")], gates_passed=d.get("gates_passed"),
            turns=[TurnScore.from_dict(x) for x in items("turns")], rewards=named("rewards"),
            metrics=named("metrics"), checks=named("checks"), labels=named("labels"), task_type=d.get("task_type"),
            agent=Agent.from_dict(agent) if isinstance(agent, dict) else None,
            routing=Routing.from_dict(routing) if isinstance(routing, dict) else None,
            tools=[ToolUse.from_dict(x) for x in items("tools")], votes=named("votes"), feedback=named("feedback"),
            tables={k: [r for r in v if isinstance(r, dict)] for k, v in named("tables").items() if isinstance(v, list)},
        )
