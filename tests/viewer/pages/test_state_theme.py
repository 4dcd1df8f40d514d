"""viewer.pages.state.themed and the stylesheet: rendered trace HTML follows the reader's
theme by CSS alone."""
from __future__ import annotations

import re
from pathlib import Path

from viewer.pages import state
from viewer.render import html as render

STYLE = Path(render.__file__).with_name("style.css").read_text(encoding="utf-8")


def test_themed_html_forces_no_theme():
    # The server hears of a theme switch only on the next rerun, so a theme class chosen there
    # goes stale; the stylesheet follows the colour scheme Streamlit sets instead.
    out = state.themed('<div class="tv-root">x</div>')
    assert not re.search(r"tv-(dark|light)", out)


def test_stylesheet_colours_follow_the_colour_scheme():
    assert "prefers-color-scheme" not in STYLE  # not the system's setting: the app's theme
    # A class still forces a scheme (a page that wants one), scoped like every rule.
    assert ".tv-root.tv-dark, .tv-dark .tv-root { color-scheme: dark; }" in STYLE
    assert ".tv-root.tv-light, .tv-light .tv-root { color-scheme: light; }" in STYLE
    # Code blocks take text and background from light-dark() pairs.
    block = re.search(r"\.tv-root pre\.tv-hl \{([^}]*)\}", STYLE).group(1)
    used = re.findall(r"(?:color|background): var\((--[\w-]+)\)", block)
    assert len(used) == 2
    for var in used:
        assert re.search(re.escape(var) + r": light-dark\(", STYLE), var
