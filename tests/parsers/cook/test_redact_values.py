"""`scrub` on every kind of JSON value: text is masked at any depth (in arrays, in objects, as
a str subclass), numbers, true/false and null come back as they are, shapes are kept."""
from __future__ import annotations

from parsers.cook.redact import MASK, mask_message, scrub

KEY = "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0"


class Label(str):
    pass


def test_text_at_any_depth_is_masked_and_other_values_are_kept():
    value = {"n": 3, "f": 0.5, "ok": True, "none": None,
             "list": [1, None, False, 2.5, f"key {KEY}", [f"{KEY}"], {"deep": [KEY]}],
             "sub": Label(f"was {KEY}"), "items": [Label(KEY)]}
    out = scrub(value)
    assert out == {"n": 3, "f": 0.5, "ok": True, "none": None,
                   "list": [1, None, False, 2.5, f"key {MASK}", [MASK], {"deep": [MASK]}],
                   "sub": f"was {MASK}", "items": [MASK]}
    assert type(out["ok"]) is bool and type(out["list"][2]) is bool and type(out["n"]) is int


def test_a_message_keeps_its_numbers_and_masks_its_text():
    m = {"id": "x", "role": "user", "content": f"use {KEY}", "tool_calls": [{"name": "Bash", "id": "t1",
         "arguments": {"command": f"curl -H 'x-api-key: {KEY}'", "timeout": 30}}],
         "tool_use_id": None, "is_error": None, "timestamp": 1_700_000_000_000, "line": 4, "sidechain": True}
    mask_message(m)
    assert m["content"] == f"use {MASK}"
    assert m["tool_calls"] == [{"name": "Bash", "id": "t1", "arguments": {"command": f"curl -H 'x-api-key: {MASK}'",
                                                                          "timeout": 30}}]
    assert (m["timestamp"], m["line"], m["sidechain"]) == (1_700_000_000_000, 4, True)
