"""What a format plug-in declares. A format module builds one `Format` (or several) and names
it in the `traceview.formats` entry-point group; the registry loads it from there."""
from __future__ import annotations

import fnmatch
import functools
import re
from dataclasses import dataclass, field
from typing import Callable

from parsers.model.scorecard import Scorecard
from parsers.model.trace import ParseResult


class Companion(str):
    """A decline that means "this file is read together with another one" (a sandbox log
    with its conversation, a summary with its trials file): not a problem to report."""


@dataclass(frozen=True)
class Format:
    """A trace format.

    - `sniff(source)` looks at the name and the first bytes only and returns None to accept,
      else the reason it declines (a `Companion` reason for files read with another input).
    - `parse(source, *options)` returns a ParseResult; options are the `aliases` a user forced.
    - `validate(document)` (optional) returns None when the parsed JSON document is not of this
      format's kind, else its schema violations as (JSON pointer, message) pairs.
    - `convert(source)` (optional) returns (the input as a Standard Workflow Format document,
      problems), for `traceview convert --to swf`.
    - `list_runs(source)` and `open_run(source, index)` (optional, together): a container of
      many runs (an evaluation log of 1,000 samples) lists its runs from their summaries
      without reading every run, and reads one run when it is opened. `open_run` returns a
      ParseResult holding that one trace, the same trace `parse` gives at that index.
    """

    name: str
    title: str  # the format's own name, as users know it
    description: str
    sniff: Callable
    parse: Callable[..., ParseResult]
    patterns: tuple[str, ...] = ()  # file-name globs ("*.trials.json"): tried first when they match
    aliases: tuple[str, ...] = ()  # other names --format accepts (e.g. a forced record shape)
    priority: int = 100  # lower sniffs first; specific formats before general ones
    validate: Callable | None = None
    convert: Callable | None = None
    list_runs: Callable | None = None
    open_run: Callable | None = None

    def matches_name(self, basename: str) -> bool:
        rx = _name_rx(tuple(self.patterns))
        return rx is not None and rx.match(basename.lower()) is not None


@functools.lru_cache(maxsize=None)
def _name_rx(patterns: tuple[str, ...]) -> re.Pattern | None:
    """A format's file-name globs as one regex (every input's name is matched against every
    format's: a folder of 10,000 files asks 250,000 times)."""
    return re.compile("|".join(fnmatch.translate(p) for p in patterns)) if patterns else None


@dataclass(slots=True)
class RunSummary:
    """One run of an input as a listing shows it, before (or without) reading the run itself.
    `index` is the run's place among the traces `parse` gives (it makes the trace id)."""

    index: int
    title: str | None = None
    task: str | None = None
    models: list[str] = field(default_factory=list)
    outcome: str = "unknown"
    outcome_detail: str | None = None
    started_at: int | None = None  # epoch ms
    duration_ms: float | None = None
    messages: int | None = None
    scorecard: Scorecard | None = None
    session: str | None = None  # as `ParsedTrace.session`
