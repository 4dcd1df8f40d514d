"""Exported HTML opened from disk (file://) in Chromium with every network request aborted and
recorded: the whole run shows, hostile content stays inert, nothing is requested, a compare
page shows both sides. Screenshots go to TRACEVIEW_SHOTS when set (else a tmp folder)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import shared_path
from tests.e2e.test_timeline_e2e import EVIL_HOST, write_hostile_log, write_long_log
from viewer.cli import main

REPO = Path(__file__).resolve().parents[2]
SESSION_DIR = REPO / "sample_data" / "claude_code"


def export(inputs, to: str, out: Path, *trace: str) -> Path:
    args = ["export", *map(str, inputs), "--to", to, "-o", str(out)]
    for t in trace:
        args += ["--trace", t]
    assert main(args) == 0
    return out


def parent_id(path: Path) -> str:
    """The run of a session that started sub-agent runs (as the library names runs)."""
    from viewer.library import export as library_export

    runs, _ = library_export.cooked_runs([path])
    parents = {run["parent"] for run, _ in runs}
    return next(run["id"] for run, _ in runs if run["id"] in parents)


@pytest.fixture
def offline(browser):
    """open(path, width, height) -> a page of the file, every request but the file's own
    aborted; `.requests` lists them, `.dialogs` any dialog opened."""
    contexts = []

    def open_(path: Path, width: int = 1400, height: int = 1000):
        ctx = browser.new_context(viewport={"width": width, "height": height})
        contexts.append(ctx)
        page = ctx.new_page()
        page.requests, page.dialogs = [], []
        page.on("request", lambda r: page.requests.append(r.url))
        page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))

        def route(r):
            if r.request.url == path.as_uri():
                r.continue_()
            else:
                r.abort()
        ctx.route("**/*", route)
        t0 = time.perf_counter()
        page.goto(path.as_uri())
        page.wait_for_selector(".tv-root .tv-msg")
        page.opened_in = time.perf_counter() - t0
        return page

    yield open_
    for ctx in contexts:
        ctx.close()


def test_the_whole_trace_shows_offline(offline, tmp_path):
    log = tmp_path / "long.jsonl"
    write_long_log(log, n=400, big_at=200)
    page = offline(export([log], "html", tmp_path / "long.html"))
    record = json.loads(log.read_text())
    expected = len(record["request"]["messages"]) + len(record["response"]["choices"])
    assert page.locator(".tv-timeline > .tv-root > .tv-msg").count() == expected
    assert page.get_by_text("message number 399").count() == 1
    # the long message whole: its end folded away, there once opened
    folded = page.locator("details.tv-more")
    assert folded.count() == 1 and "BIG-END" in folded.evaluate("e => e.textContent")
    folded.locator("summary").click()
    assert "BIG-END" in folded.inner_text()
    assert page.requests == [(tmp_path / "long.html").as_uri()]


def test_hostile_content_is_inert_offline(offline, tmp_path):
    log = tmp_path / "hostile.jsonl"
    write_hostile_log(log)
    page = offline(export([log], "html", tmp_path / "hostile.html"))
    page.wait_for_timeout(1000)  # time for anything that would fire to fire
    text = page.locator(".tv-timeline").inner_text()
    assert "<script>window.__pwned" in text and "<form action=" in text  # shown as text
    assert page.evaluate("() => window.__pwned") is None
    assert page.dialogs == []
    assert page.locator("title").count() == 1  # the trace's <title> is text in ours
    for sel in ("form", "iframe", "script", "object", "svg", "video", "base", "link", "input", "embed"):
        assert page.locator(f"body {sel}").count() == 0, sel
    assert page.locator("[onerror], [onload], a[href^='javascript']").count() == 0
    assert page.locator(".tv-msg").first.is_visible()  # the injected style hid nothing
    assert not [u for u in page.requests if EVIL_HOST in u]
    assert page.requests == [(tmp_path / "hostile.html").as_uri()]


def test_a_compare_page_shows_both_sides(offline, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_long_log(a, n=12)
    write_hostile_log(b)
    from viewer.library import export as library_export

    runs, _ = library_export.cooked_runs([a, b])
    out = tmp_path / "compare.html"
    out.write_bytes(library_export.compare_html_bytes(*runs))
    page = offline(out)
    grid = page.locator(".tv-cmp")
    text = grid.text_content()  # (rows far down are laid out only when scrolled near)
    assert "message number 11" in text and "<script>window.__pwned" in text
    boxes = page.locator(".tv-cmp-head").evaluate_all("els => els.map(e => e.getBoundingClientRect().left)")
    assert len(boxes) == 2 and boxes[0] < boxes[1]  # side by side
    assert page.evaluate("() => window.__pwned") is None
    assert page.requests == [out.as_uri()]


def test_a_session_with_sub_agents_reads_like_the_timeline(offline, tmp_path, shots_dir):
    tid = parent_id(SESSION_DIR / "-home-user-notes-app" / "5f0c1e2a-7b3d-4c59-9e1f-2a6b8c0d4e71.jsonl")
    out = export([SESSION_DIR], "html", tmp_path / "session.html", tid)
    for width, height in ((1400, 1000), (1280, 720)):
        page = offline(out, width, height)
        assert page.opened_in < 5
        run = page.locator("details.tv-subagent-run").first
        run.locator("summary").click()
        assert run.locator(".tv-msg").count() >= 3  # the sub-agent's messages, nested under its call
        page.locator(".tv-call", has=page.locator("details.tv-subagent-run")).first.scroll_into_view_if_needed()
        page.screenshot(path=str(shots_dir / f"export_session_{width}.png"))
        page.locator(".tv-edit").first.scroll_into_view_if_needed()
        assert page.locator(".tv-edit .tv-hl-gi").count() >= 1  # the diff, highlighted
        page.screenshot(path=str(shots_dir / f"export_diff_{width}.png"))
        # nothing wider than the window
        assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
        assert page.requests == [out.as_uri()]


def test_the_index_of_a_folder_export_opens_a_sub_agent_where_its_session_holds_it(browser, tmp_path, shots_dir):
    out = export([SESSION_DIR], "html", tmp_path / "pages")
    ctx = browser.new_context(viewport={"width": 1280, "height": 720})
    asked = []
    ctx.on("request", lambda r: asked.append(r.url))
    ctx.route("**/*", lambda r: r.continue_() if r.request.url.startswith(out.as_uri() + "/") else r.abort())
    try:
        page = ctx.new_page()
        page.goto((out / "index.html").as_uri())
        held = page.locator("a", has_text="↳ ")
        assert held.count() >= 1
        href = held.first.get_attribute("href")
        session, anchor = href.split("#")
        held.first.click()
        page.wait_for_url(f"**/{session}#{anchor}")
        card = page.locator(f"#{anchor}")
        card.locator(".tv-subagent-facts").wait_for()
        box = card.bounding_box()
        assert box is not None and 0 <= box["y"] < 720  # scrolled to it
        page.screenshot(path=str(shots_dir / "export_index_to_sub_agent_1280.png"))
        assert all(url.startswith(out.as_uri() + "/") for url in asked)
    finally:
        ctx.close()


def test_a_real_session_with_its_sub_agents(offline, tmp_path):
    src = shared_path("realdata", "claude_code_session", "ccv_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    records = [json.loads(line) for line in src.read_text().splitlines()]
    # Sub-agent runs inlined as sidechains: each starts with its Task call's prompt.
    prompts = {b["input"].get("prompt", "")[:80]: b["id"] for r in records if not r.get("isSidechain")
               for b in (r.get("message") or {}).get("content") or ()
               if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "Task"}
    started = [prompts[r["message"]["content"][:80]] for r in records
               if r.get("isSidechain") and r.get("parentUuid") is None]
    out = export([src], "html", tmp_path / "real.html", parent_id(src))
    page = offline(out)
    runs = page.locator("details.tv-subagent-run")
    assert runs.count() == len(started) > 1
    calls = [runs.nth(i).locator("xpath=ancestor::div[contains(@class, 'tv-call')][1]").locator(".tv-call-id")
             .first.text_content() for i in range(runs.count())]
    assert calls == started  # each under the call that started it
    assert page.requests == [out.as_uri()]


def test_the_apps_download_buttons_give_the_files(browser, tmp_path):
    from tests.e2e.conftest import start_server
    from viewer.library import export as library_export

    logs = REPO / "sample_data" / "api_logs"
    runs, _ = library_export.cooked_runs([logs])
    app = start_server([logs], tmp_path)
    ctx = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    try:
        page = ctx.new_page()
        page.set_default_timeout(60_000)

        def download(key: str) -> tuple[str, bytes]:
            """A file of a "Download" popover (its key is the button's up to its last part)."""
            page.locator(f".st-key-{key.rsplit('_', 1)[0]} button").first.click()
            button = page.locator(f".st-key-{key} button").first
            with page.expect_download() as dl:
                button.click()
            return dl.value.suggested_filename, Path(dl.value.path()).read_bytes()

        page.goto(app.url + "/")
        name, data = download("tv_dl_runs_csv")
        lines = data.decode().splitlines()
        assert name == "runs.csv" and len(lines) == 1 + len(list(logs.iterdir()))
        a, b = runs[0][0]["id"], runs[1][0]["id"]
        page.goto(f"{app.url}/timeline?trace={a}")
        name, data = download("tv_dl_run_markdown")
        assert name == f"{a}.md" and data.decode().startswith("# ")
        page.goto(f"{app.url}/compare?a={a}&b={b}")
        name, data = download("tv_dl_compare_html")
        assert name == f"compare-{a}-{b}.html"
        out = tmp_path / name
        out.write_bytes(data)
        page.goto(out.as_uri())
        text = page.locator(".tv-cmp").text_content()
        for run, _ in runs[:2]:  # each side's first question, as its log has it
            log = json.loads(Path(run["path"]).read_text().splitlines()[0])
            asked = next(m["content"] for m in log["request"]["messages"] if m["role"] == "user")
            asked = asked if isinstance(asked, str) else next(p["text"] for p in asked if p.get("type") == "text")
            assert " ".join(asked.replace("`", "").split()) in " ".join(text.split())
    finally:
        ctx.close()
        app.stop()
