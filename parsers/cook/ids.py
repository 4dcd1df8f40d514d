"""Content ids of messages and tools.

The rule: an id is the first 16 hex characters of the SHA-256 of the UTF-8 bytes of
`json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`, where `obj`
holds the fields the cook format names (messages: role, content, tool_calls, tool_use_id,
is_error; tools: name, description, parameters). A message that carries images also holds
`images`: the list of its images' digests (SHA-256 hex of each image's bytes, see
`parsers.model.parts`), in order; a message without images holds the five fields only.

orjson writes the same text as json.dumps for strings, integers within 64 bits, booleans,
null, lists and objects with string keys (keys sorted by code point, the same non-ASCII
characters written as UTF-8, the same escapes), and is several times faster; it writes some
floats differently (`1e-7` for json.dumps's `1e-07`, null for NaN) and refuses integers
beyond 64 bits. So a value holding a float goes through json.dumps itself, and so does
anything orjson refuses; everything else through orjson. A string holding a lone surrogate
(possible after json.loads, not valid UTF-8) is hashed as its surrogatepass encoding.
"""
from __future__ import annotations

import hashlib
import json

import orjson
from json.encoder import encode_basestring as _encode_str

_OPTS = orjson.OPT_SORT_KEYS
_dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


def _has_float(v) -> bool:
    """Whether a JSON-like value holds a float (or anything that is not plain JSON, which
    json.dumps then decides about)."""
    t = type(v)
    if t is str or t is int or t is bool or v is None:
        return False
    if t is dict:
        for x in v.values():
            if type(x) is not str and _has_float(x):
                return True
        return False
    if t is list or t is tuple:
        for x in v:
            if type(x) is not str and _has_float(x):
                return True
        return False
    return True


def _json_text(obj) -> bytes:
    try:
        text = _dumps(obj)
    except (TypeError, ValueError, RecursionError):
        # What json.dumps cannot write (keys of mixed types, nesting deeper than Python
        # recurses): no rule to follow; a stable text all the same.
        try:
            return orjson.dumps(obj, option=_OPTS | orjson.OPT_NON_STR_KEYS, default=repr)
        except TypeError:
            text = _deep_text(obj)
    return text.encode("utf-8", "surrogatepass")


class _Punct(str):
    pass


_FLOATS = {float("inf"): "Infinity", float("-inf"): "-Infinity"}


def _deep_text(obj) -> str:
    """json.dumps's text without recursion, for nesting deeper than Python recurses."""
    out: list[str] = []
    stack = [obj]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is _Punct:
            out.append(v)
        elif t is str:
            out.append(_encode_str(v))
        elif v is None or t is bool:
            out.append("null" if v is None else "true" if v else "false")
        elif t is int:
            out.append(int.__repr__(v))
        elif t is float:
            out.append("NaN" if v != v else _FLOATS.get(v) or float.__repr__(v))
        elif isinstance(v, dict):
            try:
                items = sorted(v.items())
            except TypeError:
                items = sorted(v.items(), key=lambda kv: str(kv[0]))
            stack.append(_Punct("}"))
            for n, (k, x) in enumerate(reversed(items)):
                stack.append(x)
                key = k if isinstance(k, str) else json.dumps(k)
                stack.append(_Punct(_encode_str(key) + ":"))
                if n < len(items) - 1:
                    stack.append(_Punct(","))
            stack.append(_Punct("{"))
        elif isinstance(v, (list, tuple)):
            stack.append(_Punct("]"))
            for n, x in enumerate(reversed(v)):
                stack.append(x)
                if n < len(v) - 1:
                    stack.append(_Punct(","))
            stack.append(_Punct("["))
        else:
            out.append(_encode_str(repr(v)))
    return "".join(out)


def canonical_json(obj) -> bytes:
    """The UTF-8 bytes of json.dumps(obj, sort_keys=True, separators=(",", ":"),
    ensure_ascii=False)."""
    try:
        has_float = _has_float(obj)
    except RecursionError:
        return _json_text(obj)
    if has_float:
        return _json_text(obj)
    try:
        return orjson.dumps(obj, option=_OPTS)
    except TypeError:  # an integer beyond 64 bits, a lone surrogate, a non-string key
        return _json_text(obj)


def content_id(obj) -> str:
    return hashlib.sha256(canonical_json(obj)).hexdigest()[:16]


def message_id(role, content, tool_calls, tool_use_id, is_error, images=None) -> str:
    """`images`: the digests of the message's images, when it has any."""
    obj = {"role": role, "content": content, "tool_calls": tool_calls,
           "tool_use_id": tool_use_id, "is_error": is_error}
    if images:
        obj["images"] = list(images)
    if (tool_calls is None and type(content) is str and type(role) is str
            and (tool_use_id is None or type(tool_use_id) is str) and (is_error is None or type(is_error) is bool)):
        # Most messages: strings, a boolean, nulls (and digests): no float to look for.
        try:
            text = orjson.dumps(obj, option=_OPTS)
        except TypeError:  # a lone surrogate
            text = _json_text(obj)
        return hashlib.sha256(text).hexdigest()[:16]
    return content_id(obj)


def tool_id(name, description, parameters) -> str:
    return content_id({"name": name, "description": description, "parameters": parameters})
