"""What every provider's message reader shares: a memo of converted raw messages, the
reuse of a repeated history, problems with their JSON path, tool-call arguments."""
from __future__ import annotations

import json
import operator

import orjson

from parsers.model import ImageRef, Message, Problem
from parsers.model.parts import image_from_address, image_from_base64, image_note


def shared_prefix(a: list, b: list) -> int:
    """The length of the longest common prefix of two lists of JSON values (slice
    comparisons run in C and stop at the first difference)."""
    n = min(len(a), len(b))
    if not n or a[0] != b[0]:
        return 0
    if a[:n] != b[:n]:
        lo, hi = 1, n - 1  # a[:lo] == b[:lo]; a[:hi + 1] != b[:hi + 1]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if a[:mid] == b[:mid]:
                lo = mid
            else:
                hi = mid - 1
        n = lo
    # Python's == takes 1, 1.0 and true for the same; JSON does not. Elements reused by
    # RepeatedArrays are the same objects; any other pair is checked by its JSON text.
    if not all(map(operator.is_, a[:n], b[:n])):
        for i in range(n):
            if a[i] is not b[i] and json_text(a[i]) != json_text(b[i]):
                return i
    return n


def json_text(v) -> str:
    """A JSON value as compact JSON text, whatever it holds: orjson, else Python's json (integers
    past 64 bits, nesting past orjson's 255 levels), else a note for nesting too deep for either."""
    try:
        return orjson.dumps(v).decode()
    except TypeError:
        pass
    try:
        return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
    except (RecursionError, ValueError, TypeError):
        return "[a value nested too deep to write]"


class MessageReader:
    name = ""

    def __init__(self, file: str, where: dict, problems: list[Problem], memo: dict | None = None):
        self.file, self.where, self.problems = file, where, problems
        self.memo = memo if memo is not None else {}

    def cached(self, raw, convert) -> list[Message]:
        """Converted messages of one raw message, reused when the same raw message recurs.

        Logged requests repeat the whole history, so most messages of a request were seen
        in the previous one; converting (and later hashing) each only once keeps cooking
        close to the cost of parsing the JSON. The key is the raw message's exact JSON."""
        try:
            key = orjson.dumps(raw)
        except TypeError:
            return convert()
        key = self.name.encode() + key
        hit = self.memo.get(key)
        if hit is None:
            hit = self.memo[key] = convert()
        return hit

    def convert_history(self, raws: list, convert_one) -> list[Message]:
        """Converted messages of a request's history.

        Most requests repeat an earlier request's history (usually the previous one's; a
        side call may come between) and add a little: the longest prefix shared with one of
        the last few histories is found by list comparisons (in C; identity checks when the
        lines were read by `RepeatedArrays`) and its conversion reused, flattened list
        included (so the cook can spot the shared prefix by identity); only the rest goes
        through `cached`."""
        recent = self.memo.setdefault(("recent histories", self.name), [])
        best, k = None, 0
        for h in recent:
            n = shared_prefix(raws, h[0])
            if n > k:
                best, k = h, n
                if n == len(h[0]):
                    break
        if best is not None:
            flat, ends = best[1][:best[2][k - 1]], best[2][:k]
        else:
            flat, ends = [], []
        for i in range(k, len(raws)):
            raw = raws[i]
            flat.extend(self.cached(raw, lambda: convert_one(raw, i)))
            ends.append(len(flat))
        recent.insert(0, (raws, flat, ends))
        del recent[4:]
        return list(flat)

    def problem(self, path: str, message: str):
        self.problems.append(Problem(self.file, message, path=path, **self.where))

    def parse_arguments(self, raw, path: str, name: str | None):
        """OpenAI arguments are a JSON string: parsed to an object; kept raw when unparsable."""
        if raw is None:
            return {}
        if not isinstance(raw, str):
            return raw
        if not raw.strip():
            return {}
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.problem(path, f"arguments of tool call {name!r} are not valid JSON; kept as text")
            return raw


IMAGE_BLOCKS = ("image", "image_url", "input_image")


def image_of_block(b: dict) -> ImageRef:
    """The image of a content block, whichever provider's shape it has: Anthropic's
    `{"type": "image", "source": {"type": "base64" | "url" | "file", ...}}`, OpenAI's
    `{"type": "image_url", "image_url": {"url"}}` (or the URL as a string) and Responses
    `{"type": "input_image", "image_url" | "file_id"}`, and `{"type": "image", "image": URL}`."""
    src = b.get("source")
    if isinstance(src, dict):
        kind = src.get("type")
        if kind == "base64" or (kind is None and "data" in src):
            return image_from_base64(src.get("media_type"), src.get("data"))
        if kind == "url" or (kind is None and "url" in src):
            return image_from_address(src.get("url"), src.get("media_type"))
        if kind == "file" or "file_id" in src:
            fid = str(src.get("file_id"))
            return image_note(f"image skipped: held by the provider as file {fid}", key=fid)
        return image_note("image skipped: an image source of an unknown kind", key=json_text(src))
    for key in ("image_url", "image", "url"):
        v = b.get(key)
        if isinstance(v, dict):
            v = v.get("url")
        if isinstance(v, str) and v:
            return image_from_address(v, b.get("media_type") or b.get("mime_type"))
    if b.get("file_id"):
        fid = str(b["file_id"])
        return image_note(f"image skipped: held by the provider as file {fid}", key=fid)
    return image_from_address(None)


def result_content(content) -> tuple[str, list[ImageRef] | None]:
    """A tool result's text (each image as the placeholder `[image]`) and its images."""
    if content is None:
        return "", None
    if isinstance(content, str):
        return content, None
    if isinstance(content, list):
        parts, images = [], []
        for b in content:
            if isinstance(b, dict):
                t = b.get("type")
                if t == "text":
                    parts.append(str(b.get("text") or ""))
                elif t in IMAGE_BLOCKS:
                    parts.append("[image]")
                    images.append(image_of_block(b))
                else:
                    parts.append(json_text(b))
            else:
                parts.append(str(b))
        return "\n".join(parts), images or None
    return json_text(content), None


def result_text(content) -> str:
    return result_content(content)[0]
