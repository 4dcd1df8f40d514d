"""The Open page in Chromium, against `traceview serve` on the bundled samples and real files:
an upload opens (one trace on its timeline, many runs in the runs table filtered to them), and
the inputs' problems are in sight. Screenshots at 1400x1000 and 1280x720 go to TRACEVIEW_SHOTS
when set (else a tmp folder)."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from parsers import pipeline

from tests.conftest import another_run, shared_path
from tests.e2e.conftest import copy_into, start_server

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_data"
SIZES = ((1400, 1000), (1280, 720))


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    d = tmp_path_factory.mktemp("served")
    served = d / "data"
    shutil.copytree(SAMPLES, served, ignore=shutil.ignore_patterns("__pycache__"))
    copy_into(served / "shared", shared_path("badinputs", "repro", "R12_swf_step_type_list.swf.json"),
              shared_path("badinputs", "archives", "A14_zip_renamed.jsonl"))
    server = start_server([served], d)
    yield server
    server.stop()


def ready(page) -> None:
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')


def shots(page, shots_dir: Path, name: str, at=None) -> None:
    for w, h in SIZES:
        page.set_viewport_size({"width": w, "height": h})
        page.wait_for_timeout(400)
        if at is not None:
            at.scroll_into_view_if_needed()
        page.screenshot(path=str(shots_dir / f"open_{name}_{w}x{h}.png"))


def upload(page, path: Path) -> None:
    page.get_by_test_id("stFileUploaderDropzoneInput").first.set_input_files(str(path))


def test_an_uploaded_log_opens_on_its_timeline(app, page, shots_dir, tmp_path):
    log = tmp_path / "my_upload.jsonl"
    log.write_bytes(another_run((SAMPLES / "api_logs" / "openai_chat.jsonl").read_bytes(), 2))  # not the sample's run
    tid = pipeline.cook_uploads([(log.name, log.read_bytes())])[0]["traces"][0]["id"]
    page.goto(app.url)
    ready(page)
    # Started on a folder that is a Python package: its marker is not an input.
    page.get_by_text("Inputs ·").first.wait_for()
    assert "__init__.py" not in page.locator('[data-testid="stMain"]').inner_text()
    upload(page, log)
    page.wait_for_url(re.compile(rf"/timeline\?.*trace={tid}"))
    page.wait_for_selector(".tv-root .tv-msg")
    shots(page, shots_dir, "upload_one")


def test_an_upload_of_many_runs_is_listed_and_marked(app, page, shots_dir, realdata):
    conv = realdata / "sharegpt_fastchat" / "dummy_conversation.json"
    page.goto(app.url)
    ready(page)
    upload(page, conv)
    heading = page.get_by_text(re.compile(r"Runs · 500 of \d+"))
    heading.wait_for()
    ready(page)
    main = page.locator('[data-testid="stMain"]')
    assert "★ new upload: dummy_conversation.json" in main.inner_text()
    assert "/timeline" not in page.url
    shots(page, shots_dir, "upload_many")


def test_problems_inside_a_trace_are_counted_with_its_input(app, page, shots_dir):
    page.goto(app.url)
    ready(page)
    panel = page.get_by_text(re.compile(r"R12_swf_step_type_list\.swf\.json · \d+ problems?")).first
    panel.wait_for()
    panel.click()
    page.get_by_text("/steps/1/type").first.wait_for(state="attached")  # a grid cell: drawn on a canvas
    shots(page, shots_dir, "problems", at=panel)
    # A file no format reads is described, and the formats are listed once for all of them.
    zipped = page.get_by_text(re.compile(r"A14_zip_renamed\.jsonl · 1 problem")).first
    zipped.click()
    page.get_by_text(re.compile("a zip archive under a name not ending in .zip")).first.wait_for(state="attached")
    assert page.get_by_text("Formats traceview reads").count() == 1
    shots(page, shots_dir, "unsupported", at=zipped)
