"""A server on a library, in Chromium: search (highlighted hits that open the timeline at the
matching message, trace text inert in snippets), filters and pages of the runs table, and a
restart that indexes nothing again. Screenshots at 1400x1000 and 1280x720."""
from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from viewer import serve
from viewer.library.library import Library, Scope

SIZES = ((1400, 1000), (1280, 720))
RUNS = 60  # more than one page of 50
CANARY = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


def chat_log(path: Path, i: int) -> None:
    """One run: a request log whose user asks about task i; every 7th plants zq_snake_marker,
    run 13 a script and an image that would act if the snippet were not inert."""
    words = f"question {i} about flaky tests"
    if i % 7 == 0:
        words += " and the zq_snake_marker helper"
    if i == 13:
        words += f" zqcanary {CANARY}"
    msgs = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"},
            {"role": "user", "content": words}]
    rec = {"id": f"r{i}", "timestamp": 1_700_000_000_000 + i * 60_000,
           "request": {"model": "gpt-4o" if i % 2 else "claude-3", "messages": msgs},
           "response": {"choices": [{"message": {"role": "assistant", "content": f"answer {i}"}}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 2}}}
    path.write_text(json.dumps(rec) + "\n")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("corpus")
    for i in range(RUNS):
        chat_log(d / f"run{i:03d}.jsonl", i)
    return d


@pytest.fixture(scope="module")
def library(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("lib") / "library.sqlite")


@pytest.fixture(scope="module")
def app(corpus, library, tmp_path_factory):
    server = serve.Running([corpus], tmp_path_factory.mktemp("served"), options=("--library", library))
    yield server
    server.stop()


def ready(page) -> None:
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')


def shots(page, shots_dir: Path, name: str) -> None:
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_timeout(400)
        page.screenshot(path=str(shots_dir / f"library_{name}_{w}x{h}.png"))


def search(page, text: str) -> None:
    box = page.locator(".st-key-tv_runs_search input")
    box.fill(text)
    box.press("Enter")
    page.locator(".tv-hits, [data-testid=stAlertContentInfo]").first.wait_for()
    ready(page)


def test_a_search_lists_matching_runs_highlighted_and_opens_the_timeline_at_the_hit(app, page, shots_dir):
    page.goto(app.url)
    ready(page)
    page.get_by_text(f"Runs · {RUNS}").first.wait_for()
    search(page, "zq_snake_marker")
    expected = {f"run{i:03d}.jsonl" for i in range(RUNS) if i % 7 == 0}
    hits = page.locator(".tv-hit")
    assert hits.count() == len(expected)
    marks = page.locator(".tv-hit-snippet mark").all_inner_texts()
    assert set(marks) == {"zq_snake_marker"}
    shots(page, shots_dir, "search")
    link = page.locator(".tv-hit-title a").first
    href = link.get_attribute("href")
    assert re.fullmatch(r"timeline\?trace=[0-9a-f]{16}&msg=\d+", href)
    n = int(href.rsplit("=", 1)[1])
    link.click()
    ready(page)
    page.wait_for_url(re.compile(r"/timeline\?"))
    target = page.locator(f".tv-root #msg-{n}")
    target.wait_for()
    assert "zq_snake_marker" in target.inner_text()
    assert target.evaluate("e => getComputedStyle(e).outlineStyle") == "solid"  # the item is the focus
    shots(page, shots_dir, "hit_timeline")


def test_trace_text_in_a_snippet_is_inert(app, page, shots_dir):
    page.goto(app.url)
    ready(page)
    search(page, "zqcanary")
    snippet = page.locator(".tv-hit-snippet").first
    assert "<script>" in snippet.inner_text()  # shown as text
    assert page.locator(".tv-hits img, .tv-hits script").count() == 0
    assert page.evaluate("window.__pwned === undefined")


def test_filters_and_pages_are_answered_by_the_library(app, page, shots_dir):
    page.goto(app.url)
    ready(page)
    page.get_by_text(f"Runs · {RUNS}").first.wait_for()
    # Two pages of runs: 50, then the rest.
    assert page.get_by_test_id("stPagination").count() or page.locator(".st-key-tv_runs_page").count()
    page.locator(".st-key-tv_runs_filters button").first.click()  # the filters' popover
    page.locator(".st-key-tv_runs_model input").click()
    page.get_by_role("option", name="claude-3").click()
    page.keyboard.press("Escape")
    ready(page)
    claude = sum(1 for i in range(RUNS) if i % 2 == 0)
    page.get_by_text(f"Runs · {claude} of {RUNS}").first.wait_for()
    captions = page.locator('[data-testid="stCaptionContainer"]').all_inner_texts()
    assert any(f"Model: claude-3 {claude}" in t for t in captions), captions
    page.get_by_text("Filtered by model claude-3").first.wait_for()  # what is set, in sight once closed
    shots(page, shots_dir, "filtered")


def test_a_restart_indexes_nothing_again(corpus, library, tmp_path, page):
    # The module's server indexed the corpus already; a new server on the same library finds
    # every file unchanged and shows the runs at once.
    lib = Library(library)
    before = lib.db.one("SELECT max(indexed_at) FROM inputs")[0]
    assert lib.count(Scope(paths=(str(corpus),))) == RUNS
    t0 = time.monotonic()
    server = serve.Running([corpus], tmp_path, options=("--library", library))
    try:
        page.goto(server.url)
        ready(page)
        page.get_by_text(f"Runs · {RUNS}").first.wait_for()
        took = time.monotonic() - t0
    finally:
        server.stop()
    assert lib.db.one("SELECT max(indexed_at) FROM inputs")[0] == before  # nothing written again
    assert took < 60
