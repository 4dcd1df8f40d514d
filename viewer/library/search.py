"""What a person types into search, read once and asked of either full-text index.

Words and "quoted phrases" must all be present in one message (a timeline item: a message, or
a tool call with its result); a trailing `*` makes the last word a prefix.
Identifiers are asked as written: `zq_snake_marker` or `module.attr` is the phrase of the
words it is made of, which is how both indexes hold them (SQLite's tokenizer splits on
anything but letters and digits, and PostgreSQL's index is built on `words`, the text split
the same way). Nothing typed reaches either index as syntax: every word is letters and digits
only, so any input is a valid query (or no query at all).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_WORD = re.compile(r"[^\W_]+")
_TERM = re.compile(r'"([^"]*)"?|(\S+)')


def words(text: str) -> str:
    """The text as its indexed words (lower case, separated by single spaces)."""
    return " ".join(_WORD.findall(text.lower()))


@dataclass(frozen=True)
class Term:
    words: tuple[str, ...]
    prefix: bool = False


@dataclass(frozen=True)
class Query:
    terms: tuple[Term, ...]

    @property
    def empty(self) -> bool:
        return not self.terms

    def fts5(self) -> str:
        """SQLite FTS5: each term a quoted phrase (`"zq snake marker"`), prefixes starred."""
        return " AND ".join('"' + " ".join(t.words) + '"' + (" *" if t.prefix else "") for t in self.terms)

    def tsquery(self) -> str:
        """PostgreSQL: each term its words in order (`zq <-> snake <-> marker`), `:*` on a prefix."""
        out = []
        for t in self.terms:
            ws = list(t.words)
            if t.prefix:
                ws[-1] += ":*"
            out.append("(" + " <-> ".join(ws) + ")" if len(ws) > 1 else ws[0])
        return " & ".join(out)

    def highlight(self) -> list[str]:
        """The words to mark in text shown for a hit."""
        return [w for t in self.terms for w in t.words]


def parse(text: str) -> Query:
    terms = []
    for quoted, bare in _TERM.findall(text or ""):
        raw = quoted if quoted else bare
        ws = tuple(_WORD.findall(raw.lower()))
        if ws:
            terms.append(Term(ws, prefix=bool(bare) and bare.endswith("*")))
    return Query(tuple(dict.fromkeys(terms)))


SNIPPET_OPEN, SNIPPET_CLOSE = "\x02", "\x03"  # around the matched words of a snippet
SNIPPET_WORDS = 24


def snippet(text: str, query: Query, width: int = SNIPPET_WORDS) -> str:
    """A few words of `text` around the first place a query word occurs, each query word
    between SNIPPET_OPEN and SNIPPET_CLOSE; "…" where text was cut."""
    text = text.replace(SNIPPET_OPEN, "").replace(SNIPPET_CLOSE, "")  # the marks are ours alone
    wanted = set(query.highlight())
    prefixes = tuple(t.words[-1] for t in query.terms if t.prefix)
    spans = [(m.start(), m.end(), m.group().lower()) for m in _WORD.finditer(text)]

    def hit(w: str) -> bool:
        return w in wanted or (bool(prefixes) and w.startswith(prefixes))
    first = next((i for i, (_, _, w) in enumerate(spans) if hit(w)), 0)
    lo = max(0, first - width // 3)
    hi = min(len(spans), lo + width)
    if not spans:
        return text[:200]
    out = ["…" if lo else ""]
    pos, marking = spans[lo][0], False
    for a, b, w in spans[lo:hi]:
        gap = text[pos:a]
        if marking and (not hit(w) or any(c.isspace() for c in gap)):
            out.append(SNIPPET_CLOSE)  # a marked identifier (zq_snake_marker) stays one mark
            marking = False
        out.append(gap)
        if hit(w) and not marking:
            out.append(SNIPPET_OPEN)
            marking = True
        out.append(text[a:b])
        pos = b
    if marking:
        out.append(SNIPPET_CLOSE)
    out.append("…" if hi < len(spans) else text[pos:])
    return " ".join("".join(out).split())
