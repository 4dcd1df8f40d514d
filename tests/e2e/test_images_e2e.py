"""Images on the timeline in Chromium: an embedded PNG shows as a thumbnail that opens full
size in place, a remote image shows as its address, and no request ever leaves 127.0.0.1.

The request log is written here: an OpenAI request whose user message carries a PNG drawn
here (as a data URI) and the address of a remote image."""
from __future__ import annotations

import base64
import json
import struct
import zlib
from pathlib import Path
from urllib.parse import urlparse

import pytest

from parsers import pipeline

from tests.e2e.conftest import start_server

REMOTE = "https://images.example.com/shop/window.jpg"
W, H = 600, 360


def png(w: int, h: int) -> bytes:
    """A bar chart: white ground, four coloured bars, an axis."""
    colours = [(33, 158, 188), (2, 48, 71), (251, 133, 0), (255, 183, 3)]
    heights = [110, 200, 300, 160]
    base = h - 30

    def pixel(x, y):
        if y == base or x == 30:
            return (60, 60, 60)
        for i, (bh, c) in enumerate(zip(heights, colours)):
            x0 = 70 + i * 130
            if x0 <= x < x0 + 90 and base - bh <= y < base:
                return c
        return (255, 255, 255)

    rows = b"".join(b"\x00" + b"".join(bytes(pixel(x, y)) for x in range(w)) for y in range(h))

    def chunk(tag, data):
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))


def write_log(path: Path) -> None:
    uri = "data:image/png;base64," + base64.b64encode(png(W, H)).decode()
    msgs = [{"role": "system", "content": "Describe charts briefly."},
            {"role": "user", "content": [
                {"type": "text", "text": "Which region sold best? The shop window photo is attached too."},
                {"type": "image_url", "image_url": {"url": uri}},
                {"type": "image_url", "image_url": {"url": REMOTE}}]}]
    rec = {"id": "img-1", "timestamp": "2025-11-05T09:12:03Z", "duration_ms": 900,
           "request": {"model": "gpt-4o", "messages": msgs},
           "response": {"choices": [{"message": {"role": "assistant", "content": "The third region (orange)."}}],
                        "usage": {"prompt_tokens": 300, "completion_tokens": 8}}}
    path.write_text(json.dumps(rec) + "\n")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    d = tmp_path_factory.mktemp("served-images")
    (d / "logs").mkdir()
    write_log(d / "logs" / "vision.jsonl")
    server = start_server([d / "logs"], d)
    doc, _ = pipeline.cook_paths([d / "logs" / "vision.jsonl"])
    server.trace = doc["traces"][0]["id"]
    yield server
    server.stop()


def test_thumbnail_opens_full_size_and_nothing_leaves_localhost(page, app, shots_dir):
    blocked, local = [], []

    def route(r):
        u = urlparse(r.request.url)
        if u.scheme in ("data", "blob") or u.hostname == "127.0.0.1":
            local.append(r.request.url)
            r.continue_()
        else:
            blocked.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    seen = []
    page.on("request", lambda req: seen.append(req.url))
    page.goto(f"{app.url}/timeline?trace={app.trace}")
    page.wait_for_selector(".tv-root .tv-msg")
    thumb = page.locator(".tv-root details.tv-img img.tv-thumb")
    thumb.wait_for()
    assert thumb.count() == 1
    page.wait_for_function("() => { const i = document.querySelector('.tv-root img.tv-thumb');"
                           " return i && i.complete && i.naturalWidth > 0; }")
    assert thumb.evaluate("i => [i.naturalWidth, i.naturalHeight]") == [W, H]  # the PNG decoded
    small = thumb.bounding_box()
    assert small["width"] <= 241 and small["height"] <= 181  # a thumbnail
    # The remote image: its address as text, no element that would load it.
    note = page.locator(".tv-root .tv-img-note", has_text="not loaded")
    assert REMOTE in note.inner_text()
    srcs = page.locator(".tv-root img").evaluate_all("els => els.map(e => e.getAttribute('src'))")
    assert all(s.startswith("data:image/png;base64,") for s in srcs), srcs
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.wait_for_timeout(300)
    page.screenshot(path=str(shots_dir / "images-thumbnail-1400x1000.png"))

    # Click: the same image at full size, in place; click again: back to the thumbnail.
    thumb.click()
    page.wait_for_function("() => document.querySelector('.tv-root details.tv-img').open")
    big = thumb.bounding_box()
    assert big["width"] == pytest.approx(W, abs=3) and big["height"] == pytest.approx(H, abs=3)
    assert page.locator(".tv-root .tv-img-cap").is_visible()
    thumb.scroll_into_view_if_needed()
    page.screenshot(path=str(shots_dir / "images-open-1400x1000.png"))
    page.set_viewport_size({"width": 1280, "height": 720})
    page.wait_for_timeout(300)
    thumb.scroll_into_view_if_needed()
    page.screenshot(path=str(shots_dir / "images-open-1280x720.png"))
    thumb.click()
    page.wait_for_function("() => !document.querySelector('.tv-root details.tv-img').open")
    assert thumb.bounding_box()["width"] <= 241

    page.wait_for_timeout(1000)  # time for anything that would load to try
    assert blocked == [], blocked
    hosts = {urlparse(u).hostname for u in seen if urlparse(u).scheme in ("http", "https", "ws", "wss")}
    assert hosts == {"127.0.0.1"}, sorted(hosts)
    assert not any("example.com" in u for u in seen)
