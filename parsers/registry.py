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

import orjson

from parsers.io.records import looks_binary
from parsers.io.source import Source
from parsers.model import Companion, Format, UnsupportedFormatError

GROUP = "traceview.formats"

__all__ = ["GROUP", "Companion", "CompanionFile", "Format", "describe", "detect", "formats", "get", "names",
           "load_problems", "refresh", "UNSUPPORTED", "unsupported"]


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
    # the reasons in the registry's order (they were asked for name matches first)
    raise UnsupportedFormatError(source.name, {f.name: reasons[f.name] for f in ordered if f.name in reasons})


# -- what an input no format reads looks like ----------------------------------------------------

# Whole files up to this size are parsed to describe them; larger ones by their first bytes.
DESCRIBE_BYTES = 4 * 1024 * 1024
_MAGIC = ((b"PK\x03\x04", "a zip archive"), (b"PK\x05\x06", "an empty zip archive"), (b"\x1f\x8b", "a gzip file"),
          (b"\x89PNG", "a PNG image"), (b"GIF8", "a GIF image"), (b"\xff\xd8\xff", "a JPEG image"),
          (b"%PDF", "a PDF document"), (b"SQLite format 3\x00", "an SQLite database"))
MAX_KEYS, MAX_KEY_CHARS = 8, 40
UNSUPPORTED = "no supported format recognised it"  # how the problem of such an input begins


def unsupported(source: Source, error: UnsupportedFormatError) -> str:
    """The problem message for an input no format reads: what it looks like, in plain words,
    and why the formats its name points to (and any that failed) declined it. The formats it
    could have been are listed once by whoever shows many such inputs."""
    named = {f.name for f in formats() if f.matches_name(source.basename)}
    said = [f"{name}: {why}" for name, why in error.reasons.items()
            if name in named or str(why).startswith("internal error")]
    return f"{UNSUPPORTED}: it is {describe(source)}" + (f" ({'; '.join(said)})" if said else "")


DOCUMENT_SUFFIXES = (".md", ".markdown", ".rst", ".txt", ".adoc")
SETTINGS_SUFFIXES = (".yaml", ".yml", ".toml", ".ini", ".cfg")
NOT_A_TRACE = "not a trace"


def not_a_trace(source: Source) -> str | None:
    """A plain note for an input that is documentation, not a trace (a README, a format's
    specification, a JSON Schema), else None (then it is a problem that nothing read it)."""
    low = source.basename.lower()
    head = source.head
    if low.endswith(DOCUMENT_SUFFIXES) and not looks_binary(head):
        return f"{NOT_A_TRACE}: a text document"
    if low.endswith(SETTINGS_SUFFIXES) and not looks_binary(head):
        return f"{NOT_A_TRACE}: a settings file (a run's configuration or metadata)"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] == b"{" and (b'"$schema"' in head or b'"$defs"' in head) and source.size <= DESCRIBE_BYTES:
        try:
            doc = orjson.loads(source.read_bytes())
        except (orjson.JSONDecodeError, OSError):
            return None
        if isinstance(doc, dict) and ("$schema" in doc or "$defs" in doc):
            return f"{NOT_A_TRACE}: a JSON Schema"
    return None


def describe(source: Source) -> str:
    """What an input looks like ("a JSON object with keys `a`, `b`", "JSON lines whose records
    have `type`, `uuid`"), from its first bytes, or all of it when it is small."""
    head = source.head
    for magic, what in _MAGIC:
        if head.startswith(magic):
            if "zip" in what and not source.basename.lower().endswith(".zip"):
                what += " under a name not ending in .zip (only .zip files are opened as archives)"
            return f"binary content, {what}"
    if looks_binary(head):
        return "binary content, not text"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] not in (b"{", b"["):
        return "a Markdown or plain text file, not JSON"
    whole = head if source.size <= len(head) else None
    if whole is None and source.size <= DESCRIBE_BYTES:
        try:
            whole = source.read_bytes()
        except OSError:
            whole = None
    if whole is not None:
        try:
            return _json_kind(orjson.loads(whole))
        except orjson.JSONDecodeError:
            pass
    records = []
    lines = (whole or head).splitlines()
    for line in lines if whole is not None else lines[:-1]:  # the last line of a head may be cut
        if not line.strip():
            continue
        try:
            records.append(orjson.loads(line))
        except orjson.JSONDecodeError:
            break
    if len(records) > 1:
        objects = [r for r in records if isinstance(r, dict)]
        if len(objects) == len(records):
            common = [k for k in objects[0] if all(k in r for r in objects)] or list(objects[0])
            return f"JSON lines whose records have {_keys(common)}"
        return "JSON lines of " + _kinds(records)
    if whole is None:
        return "a large file starting like JSON whose first bytes do not tell its shape"
    return "text starting like JSON that is not valid JSON"


def _json_kind(value) -> str:
    if isinstance(value, dict):
        return f"a JSON object with keys {_keys(list(value))}" if value else "an empty JSON object"
    if isinstance(value, list):
        if not value:
            return "an empty JSON array"
        if all(isinstance(v, dict) for v in value):
            return f"a JSON array of {len(value)} object{'s' * (len(value) != 1)} with keys {_keys(list(value[0]))}"
        return f"a JSON array of {len(value)} {_kinds(value)}"
    return "a single JSON value, not an object or array"


def _keys(keys: list) -> str:
    shown = ", ".join(f"`{k if len(k) <= MAX_KEY_CHARS else k[:MAX_KEY_CHARS - 1] + '…'}`" for k in keys[:MAX_KEYS])
    return shown + (f" and {len(keys) - MAX_KEYS} more" if len(keys) > MAX_KEYS else "") if keys else "none"


def _kinds(values: list) -> str:
    kinds = sorted({{dict: "objects", list: "arrays", str: "strings", bool: "booleans", type(None): "nulls"}.get(
        type(v), "numbers") for v in values})
    return " and ".join(kinds)
