"""A Claude Code session with a sub-agent in Chromium, against `traceview serve`: the Task
call's card opens the sub-agent's timeline, whose header leads back to the call; injected
text is one toggle away (and the toggle is in the URL); the compaction reads as a marker.
Screenshots at 1400x1000 and 1280x720 go to TRACEVIEW_SHOTS when set."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from parsers import pipeline
from tests.e2e.conftest import start_server

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "sample_data" / "claude_code" / "-home-user-notes-app"
TIMEOUT = 30_000


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    doc, _ = pipeline.cook_paths([PROJECT])
    session = next(t for t in doc["traces"] if t.get("children"))
    child = next(t for t in doc["traces"] if t.get("parent"))
    server = start_server([PROJECT], tmp_path_factory.mktemp("served"))
    yield server, session, child
    server.stop()


@pytest.mark.parametrize("width,height", [(1400, 1000), (1280, 720)])
def test_sub_agent_card_opens_the_run_and_the_run_leads_back(app, browser, shots_dir, width, height):
    server, session, child = app
    ctx = browser.new_context(viewport={"width": width, "height": height})
    pg = ctx.new_page()
    pg.set_default_timeout(TIMEOUT)
    try:
        pg.goto(f"{server.url}/timeline?trace={session['id']}")
        card = pg.locator(".tv-subagent").first
        _find_bar_fits(pg)
        card.scroll_into_view_if_needed()
        pg.screenshot(path=str(shots_dir / f"session-subagent-card-{width}x{height}.png"))
        assert child["title"] in card.inner_text()
        card.locator("a").click()
        pg.wait_for_url(re.compile(rf".*/timeline\?trace={child['id']}$"))
        back = pg.locator(".tv-run-links a")
        back.wait_for()
        pg.screenshot(path=str(shots_dir / f"session-subagent-run-{width}x{height}.png"))
        back.click()
        pg.wait_for_url(re.compile(rf".*trace={session['id']}.*msg=\d+"))
        n = int(re.search(r"msg=(\d+)", pg.url).group(1))
        call = pg.locator(f"#msg-{n}")
        call.wait_for()
        assert call.locator(".tv-subagent").count() == 1  # landed on the call that started it
        pg.wait_for_timeout(500)  # the jump scrolls once the bar is drawn
        top = call.bounding_box()["y"]
        assert 0 <= top < height / 2, top
    finally:
        ctx.close()


def _find_bar_fits(pg) -> None:
    """The find bar's row (a session with a sub-agent has the conversation chooser too): the
    three step buttons are drawn whole, left of the Filters button, not cut off by it."""
    filters = pg.get_by_role("button", name=re.compile("Filters")).bounding_box()
    right = 0.0
    for key in ("tv_prev", "tv_next", "tv_first_error"):
        box = pg.locator(f".st-key-{key} button >> visible=true").bounding_box()
        assert box["x"] >= right, (key, box, right)  # each after the one before
        right = box["x"] + box["width"]
    assert right <= filters["x"], (right, filters)


def test_injected_text_toggle_and_compaction_marker(app, page, shots_dir):
    server, session, _ = app
    page.goto(f"{server.url}/timeline?trace={session['id']}")
    page.locator(".tv-msg").first.wait_for()
    assert page.get_by_text("harness-injected hidden").count() == 1
    shown = page.locator(".tv-msg").count()
    page.get_by_role("button", name=re.compile("Filters")).click()
    page.get_by_text("Show harness-injected messages").click()
    page.wait_for_url(re.compile(r".*injected=true.*"))
    page.wait_for_function(f"document.querySelectorAll('.tv-msg').length > {shown}")
    marker = page.locator(".tv-compaction").first
    marker.scroll_into_view_if_needed()
    page.screenshot(path=str(shots_dir / "session-compaction-1400x1000.png"))
    assert "tokens before" in marker.inner_text()
    page.reload()  # the toggle lives in the URL: a reload keeps the injected text shown
    page.wait_for_function(f"document.querySelectorAll('.tv-msg').length > {shown}")
