"""Timestamps of every format to epoch milliseconds."""
from __future__ import annotations

from datetime import datetime, timezone


def to_epoch_ms(value) -> int | None:
    """ISO 8601 strings, epoch seconds or epoch milliseconds -> epoch ms; None when unreadable."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        # Heuristic: values above 1e11 are already milliseconds (1e11 s is the year 5138).
        return int(value if value > 1e11 else value * 1000)
    if isinstance(value, str):
        s = value.strip()
        if not s:
            return None
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
        return int(dt.timestamp() * 1000)
    return None
