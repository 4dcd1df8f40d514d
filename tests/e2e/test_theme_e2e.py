"""The app's theme in Chromium, against `traceview serve` on a free port.

A reader picks Dark in Streamlit's main menu once; every page, reached by an in-app link, by
a reload or by typing its address, stays dark, and highlighted code and JSON are dark with
readable token colours. Switching back recolours the code on the spot. Screenshots of the
Timeline and the Requests page at 1400x1000 and 1280x720 in both themes go to TRACEVIEW_SHOTS
when set (else a tmp folder).
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from parsers import pipeline
from viewer import serve

from tests.e2e.conftest import start_server

REPO = Path(__file__).resolve().parents[2]
LOG = REPO / "sample_data" / "api_logs" / "anthropic_messages.jsonl"
TIMEOUT = 30_000
CODE = "pre.tv-hl"


def background(theme: str) -> tuple:
    """The page background of one of the app's themes, from its Streamlit settings."""
    colour = tomllib.loads(serve.CONFIG.read_text(encoding="utf-8"))["theme"][theme]["backgroundColor"]
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


DARK_BG, LIGHT_BG = background("dark"), background("light")

# Relative luminance (WCAG 2) of computed colours, and the contrast of every highlighted
# token against its code block, computed in the page.
LUMINANCE_JS = """
function rgb(s) { return s.match(/[\\d.]+/g).slice(0, 3).map(Number); }
function lum(s) {
  const c = rgb(s).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
}
function contrast(a, b) { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); }
"""


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    doc, _ = pipeline.cook_paths([LOG])
    server = start_server([LOG], tmp_path_factory.mktemp("served"))
    yield server, doc["traces"][0]["id"]
    server.stop()


def choose_theme(pg, name: str) -> None:
    pg.click('[data-testid="stMainMenu"]')
    pg.click(f'[data-testid="stMainMenuItem-theme-{name}"]')
    pg.keyboard.press("Escape")


def scheme(pg) -> str:
    return pg.evaluate("() => getComputedStyle(document.querySelector('.stApp')).colorScheme")


def code_colours(pg) -> dict:
    """The first code block's background luminance, and the lowest contrast of any token in
    the first few code blocks against their block."""
    pg.locator(CODE).first.wait_for(timeout=TIMEOUT)
    return pg.evaluate("() => {" + LUMINANCE_JS + """
        const blocks = [...document.querySelectorAll('pre.tv-hl')].slice(0, 6);
        let worst = 99;
        for (const b of blocks) {
          const bg = getComputedStyle(b).backgroundColor;
          for (const t of b.querySelectorAll('span')) {
            if (!t.textContent.trim()) continue;
            worst = Math.min(worst, contrast(getComputedStyle(t).color, bg));
          }
        }
        return {background: lum(getComputedStyle(blocks[0]).backgroundColor), worst: worst};
    }""")


def wait_theme(pg, scheme: str, background: tuple) -> None:
    """Until the app is in `scheme` with the theme's background colour."""
    pg.wait_for_function("([scheme, bg]) => { const s = getComputedStyle(document.querySelector('.stApp'));"
                         " return s.colorScheme === scheme && s.backgroundColor === bg; }",
                         arg=[scheme, "rgb({}, {}, {})".format(*background)], timeout=TIMEOUT)


def assert_dark(pg) -> None:
    wait_theme(pg, "dark", DARK_BG)
    code = code_colours(pg)
    assert code["background"] < 0.05, code  # a dark block, not the white one of the light theme
    assert code["worst"] >= 3, code  # every token readable on it (WCAG large-text contrast)


def test_one_dark_theme_across_links_reloads_and_pages(app, page):
    server, tid = app
    page.goto(f"{server.url}/timeline?trace={tid}")
    page.locator(CODE).first.wait_for(timeout=TIMEOUT)
    choose_theme(page, "Dark")
    assert_dark(page)

    page.locator('[data-testid="stSidebar"] a[href^="requests?"]').click()  # an in-app link
    page.wait_for_url("**/requests?trace=*", timeout=TIMEOUT)
    page.locator("table.tv-table a").first.click()  # a request of the table: a new page load
    page.wait_for_url("**/requests?*request=*", timeout=TIMEOUT)
    assert_dark(page)

    page.reload()
    assert_dark(page)

    page.goto(f"{server.url}/")  # typed in: the same theme on any page
    wait_theme(page, "dark", DARK_BG)


def test_code_follows_a_theme_switch_without_a_reload(app, page):
    server, tid = app
    page.goto(f"{server.url}/timeline?trace={tid}")
    page.locator(CODE).first.wait_for(timeout=TIMEOUT)
    choose_theme(page, "Light")
    assert code_colours(page)["background"] > 0.8
    choose_theme(page, "Dark")
    assert_dark(page)
    choose_theme(page, "Light")
    wait_theme(page, "light", LIGHT_BG)
    code = code_colours(page)
    assert code["background"] > 0.8 and code["worst"] >= 3, code


@pytest.mark.parametrize("theme", ["Light", "Dark"])
@pytest.mark.parametrize("width,height", [(1400, 1000), (1280, 720)])
def test_screenshots(app, browser, shots_dir, theme, width, height):
    server, tid = app
    ctx = browser.new_context(viewport={"width": width, "height": height})
    pg = ctx.new_page()
    try:
        pg.goto(f"{server.url}/timeline?trace={tid}")
        pg.locator(CODE).first.wait_for(timeout=TIMEOUT)
        choose_theme(pg, theme)
        pg.locator(CODE).first.scroll_into_view_if_needed()
        pg.screenshot(path=str(shots_dir / f"theme-timeline-{theme.lower()}-{width}x{height}.png"))
        pg.goto(f"{server.url}/requests?trace={tid}")
        pg.locator("table.tv-table a").last.click()
        pg.wait_for_url("**/requests?*request=*", timeout=TIMEOUT)
        pg.locator(CODE).first.wait_for(timeout=TIMEOUT)
        pg.screenshot(path=str(shots_dir / f"theme-requests-{theme.lower()}-{width}x{height}.png"))
        assert scheme(pg) == theme.lower()
    finally:
        ctx.close()
