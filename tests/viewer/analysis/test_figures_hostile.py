"""Every figure builder given hostile names (model, tool, title, agent, criterion, gate, turn
series, error text): no trace string reaches the figure raw, none sits in a hover or text
template, and the names are still there, escaped by `fmt.chart_text`."""
from __future__ import annotations

import re

import pandas as pd
import pytest

from viewer.analysis import metrics as md
from viewer.analysis import requests as rd
from viewer.pages import leaderboard
from viewer.render.fmt import chart_text


def hostile(tag: str) -> str:
    return (f'<a href="http://198.51.100.9/link-{tag}">LINK-{tag}</a>'
            f'<span style="font-size:120px;fill:url(http://198.51.100.9/fill-{tag}.svg#g)">BIG-{tag}</span>'
            f" $x$ %{{y}} \u202e{tag}")


MODEL, MODEL2, TOOL, TITLE, ERROR = (hostile(t) for t in ("model", "model2", "tool", "title", "error"))
AGENT, REASON, CRITERION, GATE, SERIES, TURN_TOOL = (hostile(t) for t in
                                                     ("agent", "reason", "criterion", "gate", "series", "turntool"))
TAG = re.compile(r"<[^<>]*>")  # what Plotly would read as a tag
OURS = {"<br>", "<extra>", "</extra>", "<extra></extra>"}  # the tags our templates use


def strings(obj, path=()):
    """(path, string) for every string in a figure's dict, keys included."""
    if isinstance(obj, str):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield path, str(k)
            yield from strings(v, (*path, str(k)))
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from strings(v, path)
    elif hasattr(obj, "tolist"):
        yield from strings(obj.tolist(), path)


def check(fig, *names: str) -> str:
    """Assert the figure holds no raw trace text; return all its text, for positive checks."""
    found = list(strings(fig.to_dict()))
    for path, s in found:
        for name in names:
            assert name not in s, (path, s)
        assert "\u202e" not in s, (path, s)
        assert "198.51.100.9" not in "".join(t for t in TAG.findall(s) if t not in OURS), (path, s)
        assert not re.fullmatch(r"\$.*\$", s), (path, s)
        if path and path[-1] in ("hovertemplate", "texttemplate"):
            assert "LINK-" not in s and "BIG-" not in s, (path, s)  # never part of a template
    return "\n".join(s for _, s in found)


@pytest.fixture
def doc():
    trace = {"id": "t1", "title": TITLE, "models": [MODEL], "requests": ["r1", "r2", "r3"], "timeline": ["m1", "m2"],
             "started_at": 1_000, "totals": {"input": 30, "output": 6, "requests": 3}}
    requests = {
        "r1": {"id": "r1", "model": MODEL, "timestamp": 1_000, "duration_ms": 500, "usage": {"input": 10, "output": 2},
               "response_messages": ["m1"], "request_messages": []},
        "r2": {"id": "r2", "model": MODEL2, "parent_id": "r1", "timestamp": 2_000, "duration_ms": 400,
               "usage": {"input": 10, "output": 2}, "cost": 0.01, "error": ERROR, "request_messages": ["m1"]},
        "r3": {"id": "r3", "model": MODEL, "parent_id": "r1", "timestamp": 3_000, "duration_ms": 300,
               "usage": {"input": 10, "output": 2}, "request_messages": ["m1", "m2"]},
    }
    messages = {"m1": {"id": "m1", "role": "assistant", "tool_calls": [{"id": "c1", "name": TOOL, "arguments": {}}]},
                "m2": {"id": "m2", "role": "tool_result", "tool_use_id": "c1", "is_error": True, "content": "x"}}
    return trace, requests, messages


def test_per_request_figures(doc):
    trace, requests, messages = doc
    df = md.per_request(trace, requests, messages)
    for build in (md.tokens_figure, md.context_figure, md.cost_figure, md.latency_figure, md.gaps_figure):
        text = check(build(df), MODEL, MODEL2)
        assert chart_text(MODEL) in text
    legend = [t.name for t in md.latency_figure(df).data]
    assert legend == [chart_text(MODEL, md.LABEL_CHARS), chart_text(MODEL2, md.LABEL_CHARS)]


def test_tools_figure(doc):
    trace, requests, messages = doc
    tu = md.tool_usage(trace, requests, messages)
    assert tu["tool"].tolist() == [TOOL]  # the frame keeps the name as it is; the figure escapes it
    text = check(md.tools_figure(tu), TOOL)
    assert chart_text(TOOL, md.LABEL_CHARS) in text


def test_across_traces_figures(doc):
    trace, requests, _ = doc
    pt = md.per_trace([trace])
    text = check(md.trace_tokens_figure(pt), TITLE)
    assert chart_text(TITLE, 29) in text
    pm = md.per_model([trace], requests)
    text = check(md.model_cost_figure(pm), MODEL, MODEL2)
    assert chart_text(MODEL, md.LABEL_CHARS) in text


def test_scorecard_figures():
    rubric = pd.DataFrame([(CRITERION, 0.5), ("plain", 0.9)], columns=["criterion", "score"])
    assert chart_text(CRITERION, md.LABEL_CHARS) in check(md.rubric_figure(rubric), CRITERION)
    gates = pd.DataFrame([(GATE, True, 0.8, 0.5, True)], columns=["name", "passed", "score", "threshold", "mandatory"])
    assert chart_text(GATE, md.LABEL_CHARS) in check(md.gates_figure(gates), GATE)
    turns = pd.DataFrame([(1, TURN_TOOL, 0.5, 0.2, 0.3)], columns=["turn", "tool", "reward", "progress", SERIES])
    fig = md.turns_figure(turns)
    text = check(fig, TURN_TOOL, SERIES)
    assert chart_text(TURN_TOOL) in text and chart_text(SERIES, md.LABEL_CHARS) in text
    alts = pd.DataFrame([(AGENT, 0.9, REASON, True), ("other", 0.4, None, False)],
                        columns=["agent", "score", "reason", "chosen"])
    text = check(md.alternatives_figure(alts), AGENT, REASON)
    assert chart_text(AGENT, md.LABEL_CHARS) in text and chart_text(REASON) in text


def test_request_tree_figure(doc):
    trace, requests, messages = doc
    rows = rd.tree_rows(trace, requests, messages)
    text = check(rd.tree_figure(rows, selected="r2"), MODEL, MODEL2, ERROR)
    assert chart_text(MODEL2) in text and chart_text(ERROR, 80) in text


def test_leaderboard_figures():
    rows = [{"model": m, "bt": 1000 + k, "bt_lower": 990, "bt_upper": 1010, "elo": 1000, "elo_lower": 980,
             "elo_upper": 1020} for k, m in enumerate((MODEL, MODEL2))]
    text = check(leaderboard._ratings_chart(rows), MODEL, MODEL2)
    assert chart_text(MODEL, leaderboard.LABEL_CHARS) in text
    values = {(MODEL, MODEL2): 0.75, (MODEL2, MODEL): 0.25}
    text = check(leaderboard._heatmap([MODEL, MODEL2], values, "%{z:.0%}", "Blues", zmax=1.0), MODEL, MODEL2)
    assert chart_text(MODEL2, leaderboard.HEATMAP_LABEL_CHARS) + " #2" in text  # same cut label, kept apart


def test_check_catches_a_raw_name():
    # The checks above can fail: a figure given the raw name is caught.
    import plotly.graph_objects as go

    with pytest.raises(AssertionError):
        check(go.Figure(go.Bar(x=[MODEL], y=[1])), MODEL)
    with pytest.raises(AssertionError):  # a name inside a template
        check(go.Figure(go.Bar(x=[1], y=[1], hovertemplate="%{y} " + chart_text(MODEL))))
