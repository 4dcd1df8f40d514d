"""Sums of normalised usage (the one computation of token totals)."""
from __future__ import annotations

from parsers.model import USAGE_KINDS


def empty() -> dict:
    return dict.fromkeys(USAGE_KINDS, 0)


def add(total: dict, u: dict | None) -> None:
    if u:
        for k in USAGE_KINDS:
            total[k] += u.get(k, 0) or 0
