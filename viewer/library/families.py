"""How the library stores a family's cooked document (its runs with what they point to).

A cooked request lists every message it sent, so a conversation of n requests lists
n(n+1)/2 message ids: a 15 MB Claude Code session cooks to 46 MB of JSON, nearly all of it
ids repeated from one request to the next. Stored, a request whose history starts with its
tree parent's conversation (the parent's request and response messages) keeps only how much
of it it repeats and what it adds:

    "request_messages": {"after": <index of the parent in "requests">, "keep": k, "add": [...]}

`unpack` gives back the cooked document exactly (the parent's first k ids, then the added
ones), each repeated history sharing its parent's id objects in memory. A stored document
whose requests list their messages in full (as libraries before this one hold them) is read
as it is.
"""
from __future__ import annotations

import orjson

from viewer.analysis import conversation

# The family of a run listed from its input's summaries before the input is cooked (an
# evaluation log of many samples shows its runs at once): nothing is stored under it, the run
# is read from its file when it is opened, until the cook writes its family in its place.
LISTED = "listed:"
LISTED_COOKER = "listed from its summaries, not cooked"  # the cooker such an input is recorded with


def listed(family: str | None) -> bool:
    return isinstance(family, str) and family.startswith(LISTED)


def pack(doc: dict) -> bytes:
    """The JSON text of a cooked document as the library stores it."""
    reqs = doc.get("requests") or []
    place = {r.get("id"): i for i, r in enumerate(reqs)}
    packed = []
    for i, r in enumerate(reqs):
        sent = r.get("request_messages")
        p = place.get(r.get("parent_id"))
        if p is not None and p < i and isinstance(sent, list) and sent:
            k = conversation.common_start(sent, reqs[p])
            if k:
                r = {**r, "request_messages": {"after": p, "keep": k, "add": sent[k:]}}
        packed.append(r)
    return orjson.dumps({**doc, "requests": packed})


def unpack(data: bytes) -> dict:
    """The cooked document of a stored family (see the module's docstring)."""
    doc = orjson.loads(data)
    reqs = doc.get("requests") or []
    for r in reqs:
        sent = r.get("request_messages")
        if isinstance(sent, dict):  # its parent comes before it, so it is whole already
            parent, keep = reqs[sent["after"]], sent["keep"]
            asked = parent.get("request_messages") or []
            kept = asked[:keep] if keep <= len(asked) else asked + (parent.get("response_messages") or [])[:keep - len(asked)]
            r["request_messages"] = kept + sent["add"]
    return doc

