"""A run whose file states its cost but records no usage to price (a SWE-agent trajectory)
shows that cost, said to be the file's, on the Timeline and on Metrics, and has it in the runs
table (and so in its sorting, filters and exports)."""
from __future__ import annotations

import json
from pathlib import Path

from parsers import pipeline
from tests.viewer.pages.test_app import app, on_page
from viewer.library.library import Library, RunsQuery, Scope

ROOT = Path(__file__).resolve().parents[3]
TRAJ = ROOT / "sample_data" / "swe_agent" / "demo__calc-1" / "demo__calc-1.traj"


def test_a_stated_cost_shows_where_nothing_is_priced(monkeypatch, tmp_path):
    stated = json.loads(TRAJ.read_text())["info"]["model_stats"]["instance_cost"]
    doc, _ = pipeline.cook_paths([TRAJ.parent])
    (trace,) = doc["traces"]
    assert trace["totals"]["cost"] is None  # no usage recorded to price
    at = on_page(app([TRAJ.parent], monkeypatch), "timeline", trace=trace["id"])
    assert any(f"${stated:.2f} as the file states" in c.value for c in at.caption)
    at = on_page(app([TRAJ.parent], monkeypatch), "metrics", trace=trace["id"])
    assert next(m for m in at.metric if m.label == "Cost").value == f"${stated:.2f}"
    lib = Library(str(tmp_path / "lib.sqlite"))
    lib.index([TRAJ.parent])
    (row,) = lib.runs(RunsQuery(), Scope(everything=True)).rows
    assert row["cost"] == stated
    lib.close()
