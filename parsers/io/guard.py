"""The guard every reader puts around one record: an exception nobody foresaw becomes a
problem naming the record, and reading goes on with the next one."""
from __future__ import annotations

from parsers.model import Problem, internal_error


class record_guard:
    """`with record_guard(problems, file, "the X reader", line=.., record=.., path=..) as g:`
    reads one record; afterwards `g.failed` says whether it was skipped."""

    __slots__ = ("problems", "file", "who", "line", "record", "path", "failed")

    def __init__(self, problems: list[Problem], file: str, who: str, line: int | None = None,
                 record: int | None = None, path: str = ""):
        self.problems, self.file, self.who = problems, file, who
        self.line, self.record, self.path = line, record, path
        self.failed = False

    def __enter__(self) -> "record_guard":
        return self

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is None or not isinstance(exc, Exception):
            return False
        self.failed = True
        self.problems.append(internal_error(self.file, self.who, exc, self.line, self.record, self.path))
        return True
