"""Secrets never reach the page: the audit's files with fake keys, served, in Chromium.

A copy of `../shared/badinputs/secrets/*.jsonl` and `repro/S01_*` is served from a tmp folder;
the Open page, and each trace's Timeline and Requests pages (every request chosen in turn)
are opened. Neither the page (its HTML and its text) nor anything the server sends over the
websocket (tables travel as Arrow data, drawn on a canvas) may hold a secret or a piece of one.
The secrets are found in the raw files as the cook test finds them.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from parsers import pipeline

from tests.e2e.conftest import copy_into, start_server
from tests.parsers.cook.test_redact import audit_files, fragments, secrets_of

TIMEOUT = 60_000


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    files = audit_files()
    d = tmp_path_factory.mktemp("served-secrets")
    copy_into(d / "logs", *files)
    doc, _ = pipeline.cook_paths([d / "logs"])
    server = start_server([d / "logs"], d)
    server.doc = doc
    server.pieces = {f: s for s in set().union(*(secrets_of(p) for p in files)) for f in fragments(s)}
    yield server
    server.stop()


def leaks(app, *texts: str) -> list[str]:
    return sorted({s for text in texts for f, s in app.pieces.items() if f in text})


def test_no_secret_on_the_open_timeline_and_requests_pages(page, app, shots_dir):
    frames: list[str] = []

    def on_ws(ws):
        ws.on("framereceived", lambda payload: frames.append(
            payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload))

    page.on("websocket", on_ws)
    doc = app.doc
    assert len(doc["traces"]) == 3 and len(doc["requests"]) == 5

    page.goto(app.url + "/")
    page.wait_for_selector("text=Open traces", timeout=TIMEOUT)
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=TIMEOUT)
    page.wait_for_timeout(1500)
    seen = {"open": (page.content(), page.locator("body").inner_text())}
    page.screenshot(path=str(shots_dir / "secrets_open.png"), full_page=True)

    for n, t in enumerate(doc["traces"]):
        page.goto(f"{app.url}/timeline?trace={t['id']}")
        page.wait_for_selector(".tv-root .tv-msg", timeout=TIMEOUT)
        page.wait_for_timeout(500)
        seen[f"timeline {t['source']}"] = (page.content(), page.locator("body").inner_text())
        page.screenshot(path=str(shots_dir / f"secrets_timeline_{n}.png"), full_page=True)
        for rid in t["requests"]:
            page.goto(f"{app.url}/requests?trace={t['id']}&request={rid}")
            page.get_by_text("Request #").first.wait_for(timeout=TIMEOUT)
            page.locator("table.tv-table").first.wait_for(timeout=TIMEOUT)
            page.wait_for_timeout(800)
            seen[f"requests {t['source']} {rid}"] = (page.content(), page.locator("body").inner_text())
        page.screenshot(path=str(shots_dir / f"secrets_requests_{n}.png"), full_page=True)

    found = {k: leaks(app, html, text) for k, (html, text) in seen.items()}
    assert {k: v for k, v in found.items() if v} == {}
    assert frames, "no websocket frame was seen"
    assert leaks(app, *frames) == []
    # The pages did show the masked values (they are there, just masked).
    timeline = "".join(text for k, (_, text) in seen.items() if k.startswith("timeline"))
    assert "[redacted]" in timeline
    requests = "".join(text for k, (_, text) in seen.items() if k.startswith("requests"))
    assert "Incorrect API key provided: [redacted]" in requests
