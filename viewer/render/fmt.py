"""Numbers and labels for the page chrome (headers, tables, widget labels).

Trace text that ends up in Streamlit's own Markdown (a title in a header, a file name in an
expander label) goes through `md_text`, which makes it literal: no link, image, HTML or
formatting can come out of it. Message bodies never come here; they go through
`viewer.render.html`.
"""
from __future__ import annotations

import datetime as dt
import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|:~$=&\"'^%@/])")


def md_text(value, limit: int = 300) -> str:
    """Untrusted text as literal Markdown on one line."""
    s = " ".join(str(value if value is not None else "").split())
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    return _MD_SPECIAL.sub(r"\\\1", s)


def tokens(n) -> str:
    if n is None:
        return "—"
    n = float(n)
    for unit, size in (("M", 1e6), ("k", 1e3)):
        if abs(n) >= size:
            return f"{n / size:.1f}{unit}".replace(".0" + unit, unit)
    return f"{int(n)}"


def cost(usd) -> str:
    if usd is None:
        return "—"
    if usd == 0:
        return "$0"
    if usd < 0.01:
        return f"${usd:.4f}"
    return f"${usd:,.2f}"


def duration(ms) -> str:
    if ms is None:
        return "—"
    s = float(ms) / 1000
    if s < 1:
        return f"{int(ms)} ms"
    if s < 60:
        return f"{s:.1f} s"
    m, s = divmod(int(s), 60)
    if m < 60:
        return f"{m} min {s:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def when(ms, pattern: str = "%Y-%m-%d %H:%M UTC", missing: str = "—") -> str:
    """An epoch-ms time as UTC text, or `missing` when there is none (or it is unreadable)."""
    if ms is None:
        return missing
    try:
        return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime(pattern)
    except (OverflowError, OSError, ValueError, TypeError):
        return missing


def size(nbytes) -> str:
    n = float(nbytes or 0)
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def total_tokens(totals: dict) -> int:
    return sum(int(totals.get(k) or 0) for k in ("input", "output", "cache_read", "cache_write"))
