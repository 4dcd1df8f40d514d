"""`traceview convert`: a trace file to another format. The one target is the Standard
Workflow Format, from an SWF file itself or from any of the tool exports that convert to it.
"""
from __future__ import annotations

from pathlib import Path

import orjson

from . import swf, swf_exports
from .errors import Problem, UnsupportedFormatError, WorkflowFormatError
from .registry import detect
from .source import from_path

TARGETS = ("swf",)


def convert_file(path, to: str) -> tuple[str | None, list[Problem]]:
    """(the converted document as JSON text, or None when nothing could be converted; problems).

    Raises ValueError for an unknown target."""
    if str(to).lower() not in TARGETS:
        raise ValueError(f"unknown target format {to!r}; known: {', '.join(TARGETS)}")
    p = Path(path)
    if not p.is_file():
        return None, [Problem(str(path), "no such file")]
    src = from_path(p)
    try:
        fmt = detect(src)
    except UnsupportedFormatError as e:
        return None, [Problem(src.name, str(e).split(": ", 1)[1])]
    except OSError as e:
        return None, [Problem(src.name, f"could not be read: {e}")]
    readers = {swf.NAME: swf.read, **swf_exports.TO_SWF}
    read = readers.get(fmt.name)
    if read is None:
        known = ", ".join(sorted(readers))
        return None, [Problem(src.name, f"{fmt.title} files cannot be converted to the {swf.TITLE} "
                                        f"(it converts from: {known})")]
    try:
        doc, problems = read(src)
    except WorkflowFormatError as e:
        return None, list(getattr(e, "errors", None) or [Problem(src.name, str(e))])
    except OSError as e:
        return None, [Problem(src.name, f"could not be read: {e}")]
    doc = swf.normalise(doc)
    if fmt.name != swf.NAME:
        # An SWF input's violations are already listed; an export's conversion is checked here.
        problems = problems + [Problem(src.name, f"the written {swf.TITLE} breaks its schema at "
                                                 f"{p.path or '/'}: {p.message}")
                               for p in swf.validation_problems(doc)]
    text = orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
    return text, problems
