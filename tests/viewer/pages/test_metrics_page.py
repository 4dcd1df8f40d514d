"""The Metrics page in AppTest: the cook's totals, "no prices" instead of a flat cost line,
unknown usage as "—", and a prices file that prices the nanobot log."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from parsers import pipeline

ROOT = Path(__file__).resolve().parents[3]
APP = str(ROOT / "app.py")


@pytest.fixture(autouse=True)
def fresh_library():
    """Each test on a library of its own: a trace id found in an earlier test's library
    would open that copy (cooked with other prices)."""
    from viewer.pages import state
    state.store.clear()
    yield
    state.store.clear()


def metrics_page(monkeypatch, path: Path, trace: str | None) -> AppTest:
    monkeypatch.setenv("TRACEVIEW_PATHS", str(path))
    at = AppTest.from_file(APP, default_timeout=90)
    at._page_hash = calc_hash("metrics")
    if trace:
        at.query_params["trace"] = trace
    return at.run()


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def infos(at: AppTest) -> str:
    return "\n".join(i.value for i in at.info)


def charts(at: AppTest) -> set[str]:
    return {json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")}


def test_nanobot_without_prices_says_no_prices(monkeypatch, realdata):
    path = realdata / "llm_trace_raw" / "nanobot.jsonl"
    monkeypatch.delenv("TRACEVIEW_PRICES", raising=False)
    doc, _ = pipeline.cook_paths([path])
    at = metrics_page(monkeypatch, path, doc["traces"][0]["id"])
    assert not at.exception
    assert metric(at, "Cost") == "unpriced"
    assert "no prices" in infos(at).lower()
    assert "Cumulative cost (USD)" not in charts(at)
    # tokens as the raw file counts them (prompt + completion of its 25 records)
    raw = [json.loads(line)["response"]["usage"] for line in path.read_text("utf-8").splitlines()]
    expected = sum(u["prompt_tokens"] + u["completion_tokens"] for u in raw)
    assert metric(at, "Tokens") == f"{expected / 1000:.1f}k"


def test_nanobot_with_a_prices_file_draws_its_cost(monkeypatch, realdata, tmp_path):
    path = realdata / "llm_trace_raw" / "nanobot.jsonl"
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."ark-code-latest"]\ninput = 0.8\noutput = 2.0\n')
    monkeypatch.setenv("TRACEVIEW_PRICES", str(prices))
    doc, _ = pipeline.cook_paths([path])
    at = metrics_page(monkeypatch, path, doc["traces"][0]["id"])
    assert not at.exception
    raw = [json.loads(line)["response"]["usage"] for line in path.read_text("utf-8").splitlines()]
    cost = sum(u["prompt_tokens"] * 0.8 + u["completion_tokens"] * 2.0 for u in raw) / 1e6
    assert metric(at, "Cost") == f"${cost:,.2f}"
    assert "Cumulative cost (USD)" in charts(at)
    sources = {v for df in at.dataframe if "source" in df.value.columns for v in df.value["source"]}
    assert sources == {f"prices file {prices}"}


def test_a_trace_without_usage_shows_a_dash(monkeypatch, tmp_path):
    rec = {"id": "r1", "timestamp": "2026-02-20T10:00:00Z", "error": "overloaded",
           "request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}, "response": None}
    path = tmp_path / "failed.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    doc, _ = pipeline.cook_paths([path])
    at = metrics_page(monkeypatch, path, doc["traces"][0]["id"])
    assert not at.exception
    assert metric(at, "Tokens") == "—" and metric(at, "Cost") == "—"
    assert "no usage recorded" in infos(at)


def test_benchmark_scorecard_tokens_are_the_trace_totals(monkeypatch):
    path = ROOT / "sample_data" / "benchmark" / "arbiter_benchmark.jsonl"
    first = json.loads(path.read_text("utf-8").splitlines()[0])
    doc, _ = pipeline.cook_paths([path])
    at = metrics_page(monkeypatch, path, doc["traces"][0]["id"])
    assert not at.exception
    assert metric(at, "Tokens") == f"{first['execution']['tokensUsed'] / 1000:.1f}k"


def test_aggregate_tables_show_no_none(monkeypatch, tmp_path):
    """Traces without usage or price in the aggregate tables: "—" in the cells, never "None"."""
    rec = {"id": "r1", "timestamp": "2026-02-20T10:00:00Z", "error": "overloaded",
           "request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}, "response": None}
    path = tmp_path / "failed.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    at = metrics_page(monkeypatch, path, None)
    assert not at.exception
    assert metric(at, "Tokens") == "—" and metric(at, "Cost") == "—"
    assert at.dataframe
    for df in at.dataframe:
        shown = pa.ipc.open_stream(df.proto.arrow_data.styler.display_values).read_all().to_pandas()
        cells = {str(v) for col in shown.columns for v in shown[col]}
        assert not cells & {"None", "nan", "<NA>", "NaN"}, cells
    (runs,) = [df for df in at.dataframe if "title" in df.value.columns]
    shown = pa.ipc.open_stream(runs.proto.arrow_data.styler.display_values).read_all().to_pandas()
    assert shown.loc[0, "tokens"] == "—" and shown.loc[0, "cost"] == "—"
