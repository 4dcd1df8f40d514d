"""The project's error vocabulary, shared by every format.

The names come from the Standard Workflow Format's pipeline; they are kept apart from
`jsonschema.ValidationError` (ours carries a list of problems with JSON paths).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing met while reading an input that did not load as it should."""

    file: str
    message: str
    line: int | None = None  # 1-based line of a line-oriented input
    record: int | None = None  # 0-based record index inside a JSON document
    path: str = ""  # JSON pointer inside the record

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "record": self.record,
                "path": self.path, "message": self.message}

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.record is not None:
            where += f" record {self.record}"
        if self.path:
            where += f" at {self.path}"
        return f"{where}: {self.message}"


def internal_error(file: str, who: str, exc: BaseException, line: int | None = None,
                   record: int | None = None, path: str = "") -> Problem:
    """An unexpected exception inside a reader or the cook, as a problem: the input's other
    records (and every other input) still load."""
    text = str(exc)
    text = text if len(text) <= 300 else text[:299] + "…"
    return Problem(file, f"internal error in {who} ({type(exc).__name__}: {text}); "
                         "this part was skipped and the rest kept", line=line, record=record, path=path)


class WorkflowFormatError(Exception):
    """Base class of every error raised while reading a trace."""


class UnsupportedFormatError(WorkflowFormatError):
    """No registered format accepts the input; `reasons` says why each declined."""

    def __init__(self, name: str, reasons: dict[str, str]):
        self.name = name
        self.reasons = reasons
        tried = "; ".join(f"{fmt}: {why}" for fmt, why in reasons.items())
        self.why = f"no supported format recognised it (tried {tried})"  # the message without the name
        super().__init__(f"{name}: {self.why}")


class ValidationError(WorkflowFormatError):
    """An input breaks its format's schema; `errors` lists each problem with its JSON path."""

    def __init__(self, message: str, errors: list[Problem] | None = None):
        self.errors = list(errors or [])
        super().__init__(message)


class ConversionError(WorkflowFormatError):
    """An input was recognised but could not be converted."""


def json_kind(v) -> str:
    """How a problem names the JSON type it found ("an object", "null", ...)."""
    return {dict: "an object", list: "an array", str: "a string", int: "a number", float: "a number",
            bool: "a boolean", type(None): "null"}.get(type(v), type(v).__name__)


def pointer(*parts: object) -> str:
    """A JSON pointer (RFC 6901) from path parts."""
    out = []
    for p in parts:
        s = str(p).replace("~", "~0").replace("/", "~1")
        out.append(s)
    return "/" + "/".join(out) if out else ""
