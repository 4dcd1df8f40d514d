"""Hostile names in a real browser: model, tool, agent and label names carrying Plotly's
pseudo-HTML (`<a href>`, `<span style="...url(...)">`), a URL in a title and a model name, and a
right-to-left override in a title and a tool name.

Served: one folder holding the audit's chart reproducers (copied into a tmp folder at test
time from the shared bad-inputs folder, which sits beside the repository only in the
development checkout). Every page is loaded with every request routed: anything not for the
server's own origin is aborted and counted, and must not happen. The DOM (Plotly's SVG
included) must hold no link to a host named by the traces and no style carrying their CSS,
while the charts still show the names as visible text.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlparse

import pytest

from parsers import pipeline

from tests.e2e.conftest import start_server

REPO = Path(__file__).resolve().parents[2]
BAD = REPO.parent / "shared" / "badinputs"
REPROS = ("repro/X01_plotly_pseudo_html_names.jsonl", "repro/X02_plotly_benchmark_labels.jsonl",
          "repro/X03_autolink_in_chrome.jsonl", "repro/X04_bidi_override.jsonl")
FOLDERS = ("plotly", "plotly_arena")
HOSTS = ("198.51.100.9", "example-phish")  # every host the reproducers name
RLO = "\u202e"
TIMEOUT = 60_000

# Every element's href-like and style attributes and every <style> element, in the page and
# inside Plotly's SVG, that mention a host of the traces or their oversized fonts. A heading's
# own anchor ("#title-words") names no host and stays on the page, so fragments are not links out.
HOSTILE_DOM = """hosts => {
  const bad = [];
  const hostile = v => v && (hosts.some(h => v.includes(h)) || /font-size:\\s*(60|120)px/.test(v));
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      const n = a.name.toLowerCase();
      if (n.endsWith('href') && a.value.startsWith('#')) continue;
      if ((n.endsWith('href') || n === 'src' || n === 'style') && hostile(a.value))
        bad.push(el.tagName + ' ' + n + '=' + a.value.slice(0, 120));
    }
    if (el.tagName.toLowerCase() === 'style' && hostile(el.textContent))
      bad.push('style element: ' + el.textContent.slice(0, 120));
  }
  for (const a of document.querySelectorAll('a')) {
    const h = a.getAttribute('href') || a.getAttribute('xlink:href') || a.getAttribute('xlink:xlink:href')
      || a.getAttributeNS('http://www.w3.org/1999/xlink', 'href') || '';
    if (!h.startsWith('#') && hosts.some(x => h.includes(x))) bad.push('link ' + h);
  }
  return bad;
}"""


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    if not BAD.is_dir():
        pytest.skip(f"{BAD} is not present (the shared bad-inputs folder sits beside the repository only "
                    "in the development checkout)")
    d = tmp_path_factory.mktemp("hostile") / "hostile"
    d.mkdir()
    for rel in REPROS:
        shutil.copy(BAD / rel, d / Path(rel).name)
    for rel in FOLDERS:
        src = BAD / rel
        for f in src.rglob("*"):
            if f.is_file():
                (d / rel / f.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(f, d / rel / f.relative_to(src))
    for f in d.rglob("*"):  # the shared copies are read-only
        f.chmod(0o755 if f.is_dir() else 0o644)
    doc, _ = pipeline.cook_paths([d])
    by_source = {t["source"]: t["id"] for t in doc["traces"]}
    ids = {"names": by_source["X01_plotly_pseudo_html_names.jsonl"],
           "bench": by_source["X02_plotly_benchmark_labels.jsonl"],
           "autolink": by_source["X03_autolink_in_chrome.jsonl"],
           "bidi": by_source["X04_bidi_override.jsonl"],
           "battle": next(g["id"] for g in doc.get("groups") or () if g.get("kind") == "battle")}
    server = start_server([d], tmp_path_factory.mktemp("served-hostile"))
    yield server, ids
    server.stop()


def pages(ids: dict) -> list[tuple[str, str]]:
    return [("open", "open"),
            ("timeline", f"timeline?trace={ids['names']}"),
            ("timeline-autolink", f"timeline?trace={ids['autolink']}"),
            ("timeline-bidi", f"timeline?trace={ids['bidi']}"),
            ("requests", f"requests?trace={ids['names']}"),
            ("metrics-all", "metrics"),
            ("metrics-trace", f"metrics?trace={ids['names']}"),
            ("metrics-benchmark", f"metrics?trace={ids['bench']}"),
            ("compare", f"compare?battle={ids['battle']}"),
            ("battles", "battles"),
            ("leaderboard", "leaderboard")]


def settle(pg) -> None:
    pg.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]', timeout=TIMEOUT)
    pg.wait_for_selector('[data-testid="stMain"]', timeout=TIMEOUT)
    pg.wait_for_timeout(1500)  # charts draw after the script ends; time for anything to load


def chart_text(pg) -> str:
    """Everything Plotly drew as text (ticks, legends, titles, bar labels)."""
    return "\n".join(pg.locator('[data-testid="stPlotlyChart"] svg text').all_text_contents())


def test_hostile_names_stay_text_and_nothing_leaves_the_page(served, page, shots_dir):
    server, ids = served
    origin = urlparse(server.url)
    left, problems, drawn, shown = [], {}, {}, {}

    def route(r):
        u = urlparse(r.request.url)
        if u.scheme in ("data", "blob") or (u.hostname, u.port) == (origin.hostname, origin.port):
            r.continue_()
        else:
            left.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    for name, path in pages(ids):
        page.goto(f"{server.url}/{path}")
        settle(page)
        exceptions = page.locator("[data-testid='stException']")
        assert exceptions.count() == 0, (name, exceptions.first.inner_text())
        problems[name] = page.evaluate(HOSTILE_DOM, list(HOSTS))
        drawn[name] = chart_text(page)
        if name.startswith("metrics") or name == "leaderboard":
            charts = page.locator('[data-testid="stPlotlyChart"]')
            for w, h in ((1400, 1000), (1280, 720)):
                page.set_viewport_size({"width": w, "height": h})
                page.wait_for_timeout(500)
                for k in range(min(charts.count(), 6)):
                    if k % 2 == 0 or name == "metrics-benchmark":  # two charts side by side share a shot
                        charts.nth(k).scroll_into_view_if_needed()
                        page.wait_for_timeout(200)
                        page.screenshot(path=str(shots_dir / f"hostile-{name}-{w}x{h}-{k}.png"))
            page.set_viewport_size({"width": 1400, "height": 1000})
        if name == "timeline-bidi":
            shown["bidi"] = page.locator('[data-testid="stMain"]').inner_text()
        if name == "timeline-autolink":
            main = page.locator('[data-testid="stMain"]')
            shown["autolink"] = main.locator("h4").first.inner_text()
            shown["autolink-model"] = main.locator('[data-testid="stCaptionContainer"]').first.inner_text()

    print(f"requests that left the page: {len(left)}; hostile DOM nodes: "
          f"{ {k: len(v) for k, v in problems.items() if v} }")
    assert left == [], f"{len(left)} requests left the page: {left[:10]}"
    assert {k: v for k, v in problems.items() if v} == {}
    # The override shows as a visible mark; the URL in the heading is text (no link: above).
    assert RLO not in shown["bidi"] and "<U+202E>" in shown["bidi"]
    assert "example-phish.test/reset" in shown["autolink"], shown["autolink"]
    assert "198.51.100.9/login" in shown["autolink-model"], shown["autolink-model"]
    # The names are still there, as text: the markup shows literally where it was a label.
    assert "LINK-model0</a>" in drawn["metrics-trace"]
    assert "LINK-tool0</a>" in drawn["metrics-trace"]
    assert '<a href="http://198.51.100.9/link-model0">LINK-model0</a>' in drawn["metrics-all"]
    assert "LINK-agent</a>" in drawn["metrics-benchmark"] or "LINK-agentname</a>" in drawn["metrics-benchmark"]
    assert "LINK-m1</a>" in drawn["leaderboard"]
