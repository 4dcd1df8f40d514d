"""Timestamps of every format to epoch milliseconds."""
from __future__ import annotations

import math
from datetime import datetime, timezone

from parsers.model import Problem

# The times a page can show: 1970-01-01 to the end of year 9999; anything else is unreadable.
MAX_EPOCH_MS = 253_402_300_799_999


def to_epoch_ms(value) -> int | None:
    """ISO 8601 strings, epoch seconds or epoch milliseconds -> epoch ms; None when unreadable."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            return None
        # Heuristic: values above 1e11 are already milliseconds (1e11 s is the year 5138).
        ms = int(value if value > 1e11 else value * 1000)
        return ms if 0 <= ms <= MAX_EPOCH_MS else None
    if isinstance(value, str):
        s = value.strip()
        if not s:
            return None
        if ":" not in s:  # a number never holds one; an ISO time always does (no exception to pay)
            try:
                return to_epoch_ms(float(s))
            except ValueError:
                pass
        if s.endswith("Z") or s.endswith("z"):
            s = s[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(s)
        except ValueError:
            return None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
        try:
            ms = int(dt.timestamp() * 1000)
        except (OverflowError, ValueError):
            return None
        return ms if 0 <= ms <= MAX_EPOCH_MS else None
    return None


def read_time(value, problems: list[Problem], file: str, path: str, then: str = "", **where) -> int | None:
    """`to_epoch_ms(value)`; a value that is given but unreadable is a problem naming its path,
    saying what follows (`then`, e.g. "the step is shown without a time")."""
    ms = to_epoch_ms(value)
    if ms is None and value is not None:
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:59] + "…"
        problems.append(Problem(file, f"expected an ISO 8601 time or epoch number, found {shown}"
                                      + (f"; {then}" if then else ""), path=path, **where))
    return ms
