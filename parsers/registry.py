"""Which format is this input? The registry of formats, one door for built-ins and plug-ins.

Every format, the built-in ones included, is named in the `traceview.formats` entry-point
group of an installed package (`name = "module:OBJECT"`, OBJECT a `parsers.model.Format`).
A plug-in that fails to load is listed in `load_problems()`, never a crash; the other formats
still work. From a checkout that was never installed, the built-ins are read from the same
table in the checkout's pyproject.toml.
"""
from __future__ import annotations

import importlib
import threading
from importlib import metadata
from pathlib import Path

from parsers.io.source import Source
from parsers.model import Companion, Format, UnsupportedFormatError

GROUP = "traceview.formats"

__all__ = ["GROUP", "Companion", "CompanionFile", "Format", "detect", "formats", "get", "names",
           "load_problems", "refresh"]


class CompanionFile(UnsupportedFormatError):
    def __init__(self, name: str, reason: str):
        self.reason = reason
        super().__init__(name, {"companion": reason})


class _Registry:
    def __init__(self):
        self.by_name: dict[str, Format] = {}  # names and aliases
        self.ordered: list[Format] = []
        self.problems: list[str] = []

    def add(self, fmt: Format, where: str) -> None:
        if not isinstance(fmt, Format):
            self.problems.append(f"{where}: expected a parsers.model.Format, found {type(fmt).__name__}")
            return
        for key in (fmt.name, *fmt.aliases):
            if key in self.by_name:
                self.problems.append(f"{where}: format name {key!r} is already registered; {fmt.name!r} skipped")
                return
        for key in (fmt.name, *fmt.aliases):
            self.by_name[key] = fmt
        self.ordered.append(fmt)

    def finish(self) -> None:
        self.ordered.sort(key=lambda f: (f.priority, f.name))


_lock = threading.Lock()
_registry: _Registry | None = None


def _entry_points() -> list[tuple[str, str]]:
    """(name, "module:attr") of every format entry point installed."""
    eps = [(ep.name, ep.value) for ep in metadata.entry_points(group=GROUP)]
    if not any(v.startswith("parsers.formats.") for _, v in eps):
        eps += _checkout_entry_points()  # a checkout run without installing it
    return sorted(set(eps))


def _checkout_entry_points() -> list[tuple[str, str]]:
    pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
    try:
        import tomllib
        table = tomllib.loads(pyproject.read_text("utf-8"))
    except (ImportError, OSError, ValueError):
        return []
    group = table.get("project", {}).get("entry-points", {}).get(GROUP, {})
    return [(k, v) for k, v in group.items() if isinstance(v, str)]


def _load() -> _Registry:
    reg = _Registry()
    for name, value in _entry_points():
        where = f"entry point {name} = {value!r}"
        module, _, attr = value.partition(":")
        try:
            obj = importlib.import_module(module)
            for part in filter(None, attr.split(".")):
                obj = getattr(obj, part)
        except Exception as e:  # a broken plug-in must not take the others down
            reg.problems.append(f"{where}: could not be loaded ({type(e).__name__}: {e})")
            continue
        if isinstance(obj, Format) and obj.name != name:
            reg.problems.append(f"{where}: the entry point's name differs from the format's name {obj.name!r}")
            continue
        reg.add(obj, where)
    reg.finish()
    return reg


def _get_registry() -> _Registry:
    global _registry
    if _registry is None:
        with _lock:
            if _registry is None:
                _registry = _load()
    return _registry


def refresh() -> None:
    """Forget the loaded formats; the next call reads the entry points again (after a
    package was installed into the running interpreter)."""
    global _registry
    with _lock:
        _registry = None


def formats() -> list[Format]:
    """Every registered format, in the order detection tries them."""
    return list(_get_registry().ordered)


def names() -> list[str]:
    """Every name --format accepts (format names and their aliases)."""
    return sorted(_get_registry().by_name)


def load_problems() -> list[str]:
    """Plug-ins that could not be registered, and why."""
    return list(_get_registry().problems)


def get(name: str) -> Format:
    try:
        return _get_registry().by_name[name]
    except KeyError:
        raise UnsupportedFormatError(name, {"--format": f"unknown format name; known: {', '.join(names())}"}) from None


def detect(source: Source) -> Format:
    """The first format that accepts the source: those whose file patterns match its name
    first, then the rest, each group by priority; UnsupportedFormatError when none does."""
    reasons: dict[str, str] = {}
    ordered = formats()
    base = source.basename
    named = [f for f in ordered if f.matches_name(base)]
    for fmt in named + [f for f in ordered if f not in named]:
        try:
            why = fmt.sniff(source)
        except OSError:
            raise
        except Exception as e:  # noqa: BLE001  (one plug-in's bug must not hide the input from the others)
            why = f"internal error while sniffing ({type(e).__name__}: {e})"
        if why is None:
            return fmt
        reasons[fmt.name] = why
    for why in reasons.values():
        if isinstance(why, Companion):
            raise CompanionFile(source.name, str(why))
    raise UnsupportedFormatError(source.name, dict(sorted(reasons.items(), key=lambda kv: _rank(ordered, kv[0]))))


def _rank(ordered: list[Format], name: str) -> int:
    return next((i for i, f in enumerate(ordered) if f.name == name), len(ordered))
