"""The typed model every format converts into and the cook reads: messages and their image
references, calls (requests), traces, artifacts, scorecards, problems, and what a format
plug-in declares."""
from parsers.model.problem import (ConversionError, Problem, UnsupportedFormatError, ValidationError,
                                   WorkflowFormatError, internal_error, json_kind, pointer)
from parsers.model.artifact import ARTIFACT_KINDS, Artifact, diff_name
from parsers.model.parts import ImageRef
from parsers.model.scorecard import Agent, Alternative, Gate, Routing, Score, Scorecard, ToolUse, TurnScore
from parsers.model.trace import (MODEL_ROLES, OUTCOMES, ROLES, USAGE_KINDS, Call, Message, ParsedTrace,
                                 ParseResult, Turn)
from parsers.model.format import Companion, Format, RunSummary

__all__ = [
    "ConversionError", "Problem", "UnsupportedFormatError", "ValidationError", "WorkflowFormatError",
    "internal_error", "json_kind", "pointer",
    "ARTIFACT_KINDS", "Artifact", "ImageRef", "diff_name",
    "Agent", "Alternative", "Gate", "Routing", "Score", "Scorecard", "ToolUse", "TurnScore",
    "MODEL_ROLES", "OUTCOMES", "ROLES", "USAGE_KINDS", "Call", "Message", "ParsedTrace", "ParseResult", "Turn",
    "Companion", "Format", "RunSummary",
]
