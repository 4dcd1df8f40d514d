"""A Claude Code session written while `traceview serve` follows it, in Chromium: lines appended
by the test show on the open timeline within 2 s of the write, without a reload, under the same
URL (a growing file keeps its trace id); a reader at the end follows it, a reader further up
keeps the place and gets a "new messages" marker. Screenshots before and after go to
TRACEVIEW_SHOTS when set."""
from __future__ import annotations

import hashlib
import re
import time

import orjson
import pytest

from tests.e2e.conftest import start_server

SESSION = "0b5e1f3c-6a2d-4e8f-9c71-5d3a2b1e0f99"
TIMEOUT = 30_000
LIVE_S = 2.0  # the longest a write may take to show


def session_lines(start: int, count: int) -> bytes:
    """Claude Code session lines: user questions and assistant answers in one chain, message
    `start` to `start + count - 1` (numbered from 1), each saying its number."""
    out = []
    for n in range(start, start + count):
        role = "user" if n % 2 else "assistant"
        rec = {"type": role, "uuid": f"u-{n}", "parentUuid": f"u-{n - 1}" if n > 1 else None,
               "sessionId": SESSION, "isSidechain": False, "cwd": "/work", "version": "2.1.40",
               "timestamp": f"2026-11-20T10:{n // 60:02d}:{n % 60:02d}.000Z"}
        if role == "user":
            rec["message"] = {"role": "user", "content": f"live question number {n}"}
        else:
            rec["requestId"] = f"req_{n}"
            rec["message"] = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                              "content": [{"type": "text", "text": f"live answer number {n}"}],
                              "usage": {"input_tokens": 10 * n, "output_tokens": 5}}
        out.append(orjson.dumps(rec) + b"\n")
    return b"".join(out)


def trace_id() -> str:
    """The README's rule: a Claude Code session is named by its session id."""
    return hashlib.sha256(f"claude-code\nsession\n{SESSION}".encode()).hexdigest()[:16]


@pytest.fixture
def served(tmp_path):
    project = tmp_path / "projects" / "-work"
    project.mkdir(parents=True)
    session = project / f"{SESSION}.jsonl"
    session.write_bytes(session_lines(1, 4))
    server = start_server([tmp_path / "projects"], tmp_path)
    yield server, session
    server.stop()


def append_and_time(page, session, start: int, count: int, shown_text: str) -> float:
    with session.open("ab") as f:
        f.write(session_lines(start, count))
    written = time.monotonic()
    page.locator(".tv-root, [data-testid=stButton]").get_by_text(shown_text, exact=True).first.wait_for(timeout=TIMEOUT)
    return time.monotonic() - written


@pytest.mark.parametrize("width,height", [(1400, 1000), (1280, 720)])
def test_appended_lines_show_on_the_open_timeline_without_a_reload(served, browser, shots_dir, width, height):
    server, session = served
    ctx = browser.new_context(viewport={"width": width, "height": height})
    page = ctx.new_page()
    page.set_default_timeout(TIMEOUT)
    try:
        url = f"{server.url}/timeline?trace={trace_id()}"
        page.goto(url)
        page.locator("#msg-4").get_by_text("live answer number 4", exact=True).wait_for()
        page.evaluate("window.__same_page = true")  # gone if the page reloads
        page.screenshot(path=str(shots_dir / f"live-before-{width}x{height}.png"))
        seen = []
        for start in range(5, 11, 2):  # a question and its answer at a time
            seen.append(append_and_time(page, session, start, 2, f"live answer number {start + 1}"))
        page.get_by_text("Entries 1–10 of 10").wait_for()
        page.screenshot(path=str(shots_dir / f"live-after-{width}x{height}.png"))
        assert max(seen) < LIVE_S, seen
        assert page.evaluate("window.__same_page === true")
        assert page.url.startswith(url)
        assert page.locator(".tv-msg").count() == 10
    finally:
        ctx.close()


# The first page, and the page before the last (the reader is within a page's length of the
# end, not on the last page).
@pytest.mark.parametrize("msg,first", [(1, 1), (40, 26)])
def test_a_reader_further_up_keeps_the_place_and_gets_a_marker(served, page, shots_dir, msg, first):
    from playwright.sync_api import expect

    server, session = served
    with session.open("ab") as f:
        f.write(session_lines(5, 56))  # 60 messages: three pages of 25
    page.goto(f"{server.url}/timeline?trace={trace_id()}&per_page=25&msg={msg}")
    page.locator(f"#msg-{msg}").get_by_text(f"live {'question' if msg % 2 else 'answer'} number {msg}",
                                            exact=True).wait_for()
    page.get_by_text(f"Entries {first}–{first + 24} of 60").wait_for()
    seconds = append_and_time(page, session, 61, 3, "3 new messages below")
    page.screenshot(path=str(shots_dir / f"live-marker-msg{msg}-1400x1000.png"))
    assert seconds < LIVE_S
    assert page.get_by_text(f"Entries {first}–{first + 24} of 63").is_visible()  # the reader's page stays
    page.get_by_role("button", name=re.compile("3 new messages below")).click()
    page.wait_for_url(re.compile(r".*msg=61.*"))
    page.locator("#msg-61").get_by_text("live question number 61", exact=True).wait_for()
    expect(page.get_by_text("new messages below")).to_have_count(0)  # read: the marker goes
