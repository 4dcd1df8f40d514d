"""A folder of two models' runs on the same tasks in Chromium: one row per task, each model's
outcome side by side; choosing a task opens Compare of its two runs. Screenshots at 1400x1000
and 1280x720 go to TRACEVIEW_SHOTS when set."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.e2e.conftest import start_server

REPO = Path(__file__).resolve().parents[2]
RUNS = REPO / "sample_data" / "benchmark_runs"
TIMEOUT = 30_000


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    running = start_server([RUNS], tmp_path_factory.mktemp("served"))
    yield running
    running.stop()


@pytest.mark.parametrize("width,height", [(1400, 1000), (1280, 720)])
def test_a_task_row_opens_compare_of_its_two_models(server, browser, shots_dir, width, height):
    ctx = browser.new_context(viewport={"width": width, "height": height})
    pg = ctx.new_page()
    pg.set_default_timeout(TIMEOUT)
    try:
        pg.goto(server.url)
        pg.get_by_text("One row per task").click()
        grid = pg.locator("[data-testid='stDataFrame']").first
        pg.get_by_text("One row per task: each model's outcome").wait_for()
        # The runs table is drawn until the rerun replaces it with the pivot.
        grid.locator("[role='gridcell']", has_text="failure · 0").first.wait_for(state="attached")
        cells = grid.locator("[role='gridcell']").all_inner_texts()
        assert "python_puzzles/sum-2" in cells and "failure · 0" in cells and "success · 1" in cells
        pg.screenshot(path=str(shots_dir / f"runs-by-task-{width}x{height}.png"))
        box = grid.bounding_box()
        pg.mouse.click(box["x"] + 15, box["y"] + 35 + 17)  # the first row's checkbox
        pg.wait_for_url(re.compile(r".*/compare\?a=\w+&b=\w+"))
        pg.locator(".tv-cmp").first.wait_for()
        pg.screenshot(path=str(shots_dir / f"runs-by-task-compare-{width}x{height}.png"))
        heads = pg.locator(".tv-cmp-head").all_inner_texts()
        assert len(heads) == 2 and heads[0] != heads[1]
    finally:
        ctx.close()
