"""What a format plug-in declares. A format module builds one `Format` (or several) and names
it in the `traceview.formats` entry-point group; the registry loads it from there."""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Callable

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

    def matches_name(self, basename: str) -> bool:
        low = basename.lower()
        return any(fnmatch.fnmatchcase(low, p) for p in self.patterns)
