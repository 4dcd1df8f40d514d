"""When each occurrence of a message in a trace happened.

A message is stored once per document, by content id, and its `timestamp` is the time of the
first occurrence cooked. The same words can occur again, in the same run ("yes" typed twice,
again after a compaction) or in another run (the note a harness puts at the start of every
session), each time at its own time. A trace says those times in `message_times`: message id
-> the distinct times at which the message occurs in the trace, ascending, for the messages
whose times in the trace are not just their own `timestamp` (an empty list: the message has
no time in this trace). The k-th time the message appears in the trace's conversation, read
in time order, is at the k-th of those times (the last one, past the end of the list: two
occurrences at one time are one time).
"""
from __future__ import annotations

from parsers.cook.intake import repeated_prefix
from parsers.model import Message


class OccurrenceTimes:
    def __init__(self):
        self._times: dict[str, set] = {}  # message id -> the times it occurs at
        self._ids: list[str] = []  # the last conversation noted

    def note(self, ids: list[str], msgs: list[Message], continued: bool = True) -> None:
        """Messages of the trace: their ids and the messages they were made from. A request's
        messages (`continued`) usually repeat the previous request's and add a few: only the
        rest is read. (A response is read whole; a later request need not send it back as it
        came, so requests are compared with requests.)"""
        k = 0
        if continued:
            k = repeated_prefix(ids, self._ids)
            self._ids = ids
        times = self._times
        for i in range(k, len(ids)):
            extra = msgs[i].extra
            t = extra.get("timestamp") if extra else None
            seen = times.get(ids[i])
            if seen is None:
                times[ids[i]] = seen = set()
            if t is not None:
                seen.add(t)

    def differing(self, messages: dict[str, dict]) -> dict[str, list[int]]:
        """The trace's `message_times` (see the module's note)."""
        out = {}
        for mid, seen in self._times.items():
            own = messages[mid].get("timestamp")
            if len(seen) > 1 or (seen != {own} if own is not None else seen):
                out[mid] = sorted(seen)
        return out
