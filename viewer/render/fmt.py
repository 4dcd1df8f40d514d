"""Numbers and labels for the page chrome (headers, tables, widget labels, charts).

Trace text that ends up in Streamlit's own Markdown (a title in a header, a file name in an
expander label) goes through `md_text`, which makes it literal: no link, image, HTML or
formatting can come out of it. Trace text given to a Plotly figure (titles, ticks, legends,
hover, bar text, category names) goes through `chart_text`. Both show bidirectional controls
as visible marks (`visible`), as does `viewer.render.html` for message bodies.
"""
from __future__ import annotations

import datetime as dt
import html
import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|:~$=&\"'^%@/])")
# Bidirectional controls (embeddings, overrides, isolates, marks) reorder the text around them:
# "notes\u202etxt.sh" displays as "notes" + "hs.txt". A name from a trace must read as it is.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Streamlit's Markdown turns text that looks like a URL or an e-mail address into a link, even
# when every character is escaped. An invisible word joiner where such text starts keeps it text.
_LINK_START = re.compile(r"(?i)(https?|ftp|www|mailto|xmpp)(?=[:.])|(?=@)")
_WORD_JOINER = "\u2060"


def visible(value, mark: str = "<U+{:04X}>") -> str:
    """Text with every bidirectional control replaced by a visible mark (`<U+202E>`).

    `mark` is a format for the code point; HTML output passes an escaped one."""
    s = value if isinstance(value, str) else str(value if value is not None else "")
    return _BIDI.sub(lambda m: mark.format(ord(m.group())), s) if _BIDI.search(s) else s


def visible_frame(df):
    """A copy of a table for a data grid, every text cell and column name through `visible`
    (the grid draws text with the same bidirectional reordering)."""
    out = df.copy()
    out.columns = [visible(c) if isinstance(c, str) else c for c in out.columns]
    for i in range(out.shape[1]):
        col = out.iloc[:, i]
        if col.dtype.kind not in "biufcmM" and any(isinstance(v, str) and _BIDI.search(v) for v in col):
            out.isetitem(i, [visible(v) if isinstance(v, str) else v for v in col])
    return out


def _one_line(value, limit: int | None) -> str:
    s = " ".join(visible(value).split())
    if limit is not None and len(s) > limit:
        s = s[: limit - 1] + "…"
    return s


def md_text(value, limit: int = 300) -> str:
    """Untrusted text as literal Markdown on one line: no formatting, HTML or link, and its
    bidirectional controls shown."""
    s = _LINK_START.sub(lambda m: (m.group(1) or "") + _WORD_JOINER, _one_line(value, limit))
    return _MD_SPECIAL.sub(r"\\\1", s)


def chart_text(value, limit: int | None = None) -> str:
    """Untrusted text for a Plotly figure, shown as it is and inert.

    Plotly reads a subset of HTML in every label, tick, legend entry, hover text and title
    (`<a href>`, `<span style>` with CSS `url()`, `<br>`...), and turns entities back into
    their characters when it draws them. So `&`, `<` and `>` become entities (markup shows as
    the text it is), `$` too (a label between dollars would be read as TeX), and
    bidirectional controls become visible marks. On one line, cut at `limit` characters."""
    s = html.escape(_one_line(value, limit), quote=False)
    return s.replace("$", "&#36;")


def chart_labels(values, limit: int | None = None) -> list[str]:
    """`chart_text` for the categories of an axis: names that differ stay apart even when
    their cut labels would not (a category axis merges equal labels), by a " #2" suffix."""
    out, seen = [], {}
    for v in values:
        label = chart_text(v, limit)
        first = seen.setdefault(label, v)
        if first != v:
            k = 2
            while f"{label} #{k}" in seen and seen[f"{label} #{k}"] != v:
                k += 1
            label = f"{label} #{k}"
            seen.setdefault(label, v)
        out.append(label)
    return out


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
