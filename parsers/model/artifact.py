"""What a run produced beside its conversation: a patch, a file written, a sandbox run."""
from __future__ import annotations

from dataclasses import dataclass, field

ARTIFACT_KINDS = ("patch", "file", "sandbox_run")


def diff_name(side: str, path: str) -> str:
    """A file's name on one side ("a" or "b") of a unified diff, as git writes it: an absolute
    path loses its leading slash (`a/home/u/x.py`, not `a//home/u/x.py`)."""
    return f"{side}/{path.lstrip('/')}"


@dataclass(slots=True)
class Artifact:
    """`kind` is one of ARTIFACT_KINDS; `content` the patch (a unified diff when `format` says
    "unified-diff") or the file's text; `details` what a kind adds (the step and tool that made
    it; a sandbox run's code, output, error, rounds and environment)."""

    kind: str
    title: str | None = None
    content: str | None = None
    format: str | None = None
    details: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        out: dict = {"kind": self.kind, "title": self.title}
        if self.content is not None:
            out["content"] = self.content
        if self.format is not None:
            out["format"] = self.format
        out.update(self.details)
        return out
