"""Content ids of messages and tools.

The rule: an id is the first 16 hex characters of the SHA-256 of a canonical JSON text of
the fields the cook format names (messages: role, content, tool_calls, tool_use_id,
is_error; tools: name, description, parameters). Canonical means: keys sorted at every
level, no whitespace (separators "," and ":"), non-ASCII characters written as UTF-8
rather than escaped, UTF-8 bytes hashed. This equals Python's
`json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` for the
strings, integers and booleans that traces carry.
"""
from __future__ import annotations

import hashlib

import orjson

_OPTS = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def canonical_json(obj) -> bytes:
    return orjson.dumps(obj, option=_OPTS)


def content_id(obj) -> str:
    return hashlib.sha256(canonical_json(obj)).hexdigest()[:16]


def message_id(role, content, tool_calls, tool_use_id, is_error) -> str:
    return content_id({"role": role, "content": content, "tool_calls": tool_calls,
                       "tool_use_id": tool_use_id, "is_error": is_error})


def tool_id(name, description, parameters) -> str:
    return content_id({"name": name, "description": description, "parameters": parameters})
