"""Which format is this input? A small registry, the same door for built-in and added formats.

Each format is a `Format`: a name, a description, `sniff(source)` that accepts or says why
it declines (from the name and the first bytes only), and `parse(source, **options)` that
returns a ParseResult. Register a new one with `register(fmt)`; built-ins do the same.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from .errors import UnsupportedFormatError
from .model import ParseResult
from .source import Source


class Companion(str):
    """A decline that means "this file is read together with another one" (a sandbox log
    with its conversation, a summary with its trials file): not a problem to report."""


class CompanionFile(UnsupportedFormatError):
    def __init__(self, name: str, reason: str):
        self.reason = reason
        super().__init__(name, {"companion": reason})


@dataclass(frozen=True)
class Format:
    name: str
    title: str  # the format's own name, as users know it
    description: str
    sniff: Callable[[Source], str | None]  # None = accepted, else the reason it declines
    parse: Callable[..., ParseResult]
    aliases: tuple[str, ...] = ()  # other names --format accepts (e.g. a forced record shape)
    extensions: tuple[str, ...] = field(default=())
    priority: int = 100  # lower sniffs first; specific formats before general ones


_FORMATS: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    for key in (fmt.name, *fmt.aliases):
        if key in _FORMATS and _FORMATS[key] is not fmt:
            raise ValueError(f"format name {key!r} is already registered")
    _FORMATS[fmt.name] = fmt
    for a in fmt.aliases:
        _FORMATS[a] = fmt
    return fmt


def formats() -> list[Format]:
    _load_builtins()
    seen, out = set(), []
    for f in sorted(_FORMATS.values(), key=lambda f: (f.priority, f.name)):
        if f.name not in seen:
            seen.add(f.name)
            out.append(f)
    return out


def names() -> list[str]:
    """Every name --format accepts."""
    _load_builtins()
    return sorted(_FORMATS)


def get(name: str) -> Format:
    _load_builtins()
    try:
        return _FORMATS[name]
    except KeyError:
        raise UnsupportedFormatError(name, {"--format": f"unknown format name; known: {', '.join(names())}"}) from None


def detect(source: Source) -> Format:
    """The first format (by priority) that accepts the source, or UnsupportedFormatError."""
    reasons: dict[str, str] = {}
    for fmt in formats():
        why = fmt.sniff(source)
        if why is None:
            return fmt
        reasons[fmt.name] = why
    for why in reasons.values():
        if isinstance(why, Companion):
            raise CompanionFile(source.name, str(why))
    raise UnsupportedFormatError(source.name, reasons)


_loaded = False


def _load_builtins() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    from . import builtin_formats  # noqa: F401  (registers through register())
