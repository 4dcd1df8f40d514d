"""Images in provider messages: the `[image]` placeholder stays in `content`, the message
carries typed references (validated data URIs, remote addresses never fetched, notes for
what was skipped), and image digests take part in message ids.

Expected digests and ids are computed here with hashlib and json.dumps; the images are PNG
and JPEG bytes built here."""
from __future__ import annotations

import base64
import hashlib
import json
import socket
import struct
import zlib
from pathlib import Path

import orjson
import pytest

from parsers import pipeline
from parsers.cook.schema import cooked_errors
from parsers.model import Problem
from parsers.providers.anthropic import ClaudeMessages
from parsers.providers.gemini import GeminiMessages
from parsers.providers.openai import OpenAIMessages

REPO = Path(__file__).resolve().parents[3]


def png(w: int = 3, h: int = 2, rgb=(200, 30, 30)) -> bytes:
    rows = b"".join(b"\x00" + bytes(rgb) * w for _ in range(h))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


PNG_A = png(rgb=(200, 30, 30))
PNG_B = png(rgb=(30, 30, 200))
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 40 + b"\xff\xd9"  # header bytes of a JPEG
REMOTE = "https://images.example.com/cat.jpg"


def b64(b: bytes) -> str:
    return base64.b64encode(b).decode()


def sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def spec_id(m: dict, digests=None) -> str:
    obj = {k: m[k] for k in ("role", "content", "tool_calls", "tool_use_id", "is_error")}
    if digests:
        obj["images"] = digests
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def reader(cls):
    problems: list[Problem] = []
    return cls("t.jsonl", {}, problems), problems


# -- providers -----------------------------------------------------------------------------------
def test_anthropic_base64_and_url_sources():
    r, problems = reader(ClaudeMessages)
    out = r.blocks("user", [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG_A)}},
        {"type": "image", "source": {"type": "url", "url": REMOTE}},
    ], "/content")
    assert [(m.role, m.content) for m in out] == [("user", "what is this?"), ("user", "[image]"), ("user", "[image]")]
    assert out[0].images is None
    (emb,), (rem,) = out[1].images, out[2].images
    assert emb.data_uri == "data:image/png;base64," + b64(PNG_A)
    assert (emb.media_type, emb.digest, emb.size, emb.url, emb.note) == ("image/png", sha(PNG_A), len(PNG_A), None, None)
    assert (rem.url, rem.data_uri, rem.digest, rem.note) == (REMOTE, None, sha(REMOTE.encode()), None)
    assert problems == []


def test_anthropic_tool_result_images():
    r, _ = reader(ClaudeMessages)
    (res,) = r.blocks("user", [{"type": "tool_result", "tool_use_id": "t1", "content": [
        {"type": "text", "text": "screenshot taken"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(PNG_B)}}]}], "/c")
    assert (res.role, res.content, res.tool_use_id) == ("tool_result", "screenshot taken\n[image]", "t1")
    assert [im.digest for im in res.images] == [sha(PNG_B)]
    assert res.images[0].data_uri.endswith(b64(PNG_B))


def test_openai_image_url_data_and_remote_and_input_image():
    r, _ = reader(OpenAIMessages)
    out = r.message({"role": "user", "content": [
        {"type": "text", "text": "compare"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(PNG_A), "detail": "low"}},
        {"type": "image_url", "image_url": {"url": REMOTE}},
        {"type": "input_image", "image_url": "data:image/jpeg;base64," + b64(JPEG)},
    ]}, "/m")
    assert [m.content for m in out] == ["compare", "[image]", "[image]", "[image]"]
    assert out[1].images[0].data_uri == "data:image/png;base64," + b64(PNG_A)
    assert out[2].images[0].url == REMOTE and out[2].images[0].data_uri is None
    assert out[3].images[0].media_type == "image/jpeg" and out[3].images[0].digest == sha(JPEG)


def test_openai_tool_message_with_image_parts():
    r, _ = reader(OpenAIMessages)
    (res,) = r.message({"role": "tool", "tool_call_id": "c1", "content": [
        {"type": "text", "text": "done"}, {"type": "image_url", "image_url": {"url": REMOTE}}]}, "/m")
    assert (res.content, res.tool_use_id) == ("done\n[image]", "c1")
    assert res.images[0].url == REMOTE


def test_gemini_inline_and_file_data():
    r, _ = reader(GeminiMessages)
    out = r.parts("user", [
        {"text": "look"},
        {"inlineData": {"mimeType": "image/png", "data": b64(PNG_A)}},
        {"fileData": {"mimeType": "image/jpeg", "fileUri": "gs://bucket/cat.jpg"}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://bucket/doc.pdf"}},
        {"inlineData": {"mimeType": "audio/wav", "data": "UklGRg=="}},
    ], "/parts")
    assert [m.content for m in out] == ["look", "[image]", "[image]", "[file]", "[file]"]
    assert out[1].images[0].data_uri == "data:image/png;base64," + b64(PNG_A)
    assert out[2].images[0].url == "gs://bucket/cat.jpg" and out[2].images[0].media_type == "image/jpeg"
    assert out[3].images is None and out[4].images is None


@pytest.mark.parametrize("media_type, data, why", [
    ("image/svg+xml", b64(b"<svg onload='alert(1)'/>"), "image/svg+xml is not shown"),
    ("image/png", "not base64 at all!", "not valid base64"),
    ("image/png", b64(b"<html>not an image</html>"), "not a PNG, JPEG, GIF or WebP"),
    ("image/png", b64(b"\x89PNG\r\n\x1a\n" + b"\x00" * (2 * 1024 * 1024)), "over the 2,097,152-byte limit"),
    (None, b64(PNG_A), "no media type is not shown"),
])
def test_invalid_embedded_images_are_skipped_with_a_note(media_type, data, why):
    r, _ = reader(ClaudeMessages)
    (m,) = r.blocks("user", [{"type": "image", "source": {"type": "base64", "media_type": media_type,
                                                           "data": data}}], "/c")
    (im,) = m.images
    assert m.content == "[image]"
    assert im.data_uri is None and im.url is None
    assert im.note.startswith("image skipped:") and why in im.note, im.note


def test_data_uri_exactly_at_the_limit_is_kept():
    body = b"\x89PNG\r\n\x1a\n" + b"\x00" * (2 * 1024 * 1024 - 8)
    r, _ = reader(OpenAIMessages)
    (m,) = r.content("user", [{"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(body)}}], "/c")
    assert m.images[0].size == 2 * 1024 * 1024 and m.images[0].data_uri is not None


def test_label_set_right_and_wrapped_base64_accepted():
    """A JPEG sent as image/png is kept as image/jpeg; base64 wrapped over lines (and without
    its padding) is accepted and kept unwrapped."""
    wrapped = "\n".join(b64(PNG_A)[i:i + 16] for i in range(0, len(b64(PNG_A)), 16)).rstrip("=")
    r, _ = reader(OpenAIMessages)
    a, b = r.content("user", [
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(JPEG)}},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64," + wrapped}}], "/c")
    assert a.images[0].media_type == "image/jpeg" and a.images[0].data_uri.startswith("data:image/jpeg;base64,")
    assert b.images[0].data_uri == "data:image/png;base64," + b64(PNG_A) and b.images[0].digest == sha(PNG_A)


def test_an_image_url_that_is_no_address_gets_a_note():
    """Some loggers replace the data with a marker: neither an image nor an address."""
    r, _ = reader(OpenAIMessages)
    (m,) = r.content("user", [{"type": "image_url", "image_url": {"url": "<base64-data-removed>"}}], "/c")
    (im,) = m.images
    assert im.url is None and im.data_uri is None
    assert im.note.startswith("image skipped:") and "<base64-data-removed>" in im.note
    assert im.digest == sha(b"<base64-data-removed>")


# -- through the cook ------------------------------------------------------------------------------
def log_with_images() -> bytes:
    msgs = [{"role": "user", "content": [{"type": "text", "text": "two charts"},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(PNG_A)}},
                                         {"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(PNG_B)}},
                                         {"type": "image_url", "image_url": {"url": REMOTE}}]}]
    rec1 = {"id": "r1", "request": {"model": "gpt-4o", "messages": msgs},
            "response": {"choices": [{"message": {"role": "assistant", "content": "red, blue"}}]}}
    msgs2 = msgs + [{"role": "assistant", "content": "red, blue"},
                    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64," + b64(PNG_A)}}]}]
    rec2 = {"id": "r2", "request": {"model": "gpt-4o", "messages": msgs2},
            "response": {"choices": [{"message": {"role": "assistant", "content": "red again"}}]}}
    return orjson.dumps(rec1) + b"\n" + orjson.dumps(rec2) + b"\n"


def test_cooked_images_and_ids(monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("a remote image was fetched")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    doc, _ = pipeline.cook_uploads([("vision.jsonl", log_with_images())])
    assert cooked_errors(doc) == []
    by_id = {m["id"]: m for m in doc["messages"]}
    r1, r2 = doc["requests"]
    sent = [by_id[i] for i in r1["request_messages"]]
    assert [m["content"] for m in sent] == ["two charts", "[image]", "[image]", "[image]"]
    # Messages without images: the spec's fields only, and the spec's id.
    assert "images" not in sent[0] and sent[0]["id"] == spec_id(sent[0])
    # Same text, different images: different ids, each the hash of the fields and digests.
    assert sent[1]["id"] != sent[2]["id"]
    assert sent[1]["id"] == spec_id(sent[1], [sha(PNG_A)])
    assert sent[2]["id"] == spec_id(sent[2], [sha(PNG_B)])
    assert sent[3]["id"] == spec_id(sent[3], [sha(REMOTE.encode())])
    assert sent[1]["images"] == [{"media_type": "image/png", "data_uri": "data:image/png;base64," + b64(PNG_A),
                                  "url": None, "digest": sha(PNG_A), "size": len(PNG_A), "note": None}]
    assert sent[3]["images"][0]["url"] == REMOTE and sent[3]["images"][0]["data_uri"] is None
    # The same image sent again later is the same message: one id, deduplicated.
    assert r2["request_messages"][-1] == sent[1]["id"]
    assert r2["request_messages"][:4] == r1["request_messages"]
    assert len(doc["messages"]) == 6  # text, A, B, remote, two answers: A once


def test_bundled_vision_sample():
    doc, _ = pipeline.cook_paths([REPO / "sample_data" / "api_logs" / "openai_vision.jsonl"])
    assert cooked_errors(doc) == []
    with_images = [m for m in doc["messages"] if m.get("images")]
    assert [m["content"] for m in with_images] == ["[image]"] * 3
    kinds = sorted("embedded" if m["images"][0]["data_uri"] else "remote" for m in with_images)
    assert kinds == ["embedded", "embedded", "remote"]
    for m in with_images:
        im = m["images"][0]
        if im["data_uri"]:
            raw = base64.b64decode(im["data_uri"].split(",", 1)[1])
            assert raw.startswith(b"\x89PNG") and im["digest"] == sha(raw) and im["size"] == len(raw)
        assert m["id"] == spec_id(m, [im["digest"]])
