"""viewer.render.fmt against hostile names: `chart_text` for Plotly labels, `md_text` without
autolinks, `visible` for bidirectional controls (also in `viewer.render.html` and data grids)."""
from __future__ import annotations

import html
import re

import pandas as pd
import pytest
from markdown_it import MarkdownIt

from viewer.render import fmt
from viewer.render.html import render_messages, render_table

RLO = "\u202e"
NAMES = [
    '<a href="http://198.51.100.9/link">LINK</a>'
    '<span style="font-size:120px;fill:url(http://198.51.100.9/f.svg#g)">BIG</span>',
    "<br>two<br/>lines<sup>up</sup><b>bold</b><i>it</i><em>em</em><s>s</s><u>u</u><sub>d</sub>",
    "&lt;a href=x&gt;entity-coded&lt;/a&gt; &amp; &#60;b&#62; &#x3c;i&#x3e; &quot;q&quot; &nbsp;",
    "$\\frac{1}{2}$",
    "%{y} %{customdata[0]} %{fullData.name}",
    "notes" + RLO + "txt.sh",
    "plain model-name/v1.2",
]

# Plotly's own reading of a label (src/lib/svg_text_utils.js): text between tags, with these
# entities and numeric references turned back into characters.
PLOTLY_TAG = re.compile(r"<[^<>]*>")
PLOTLY_ENTITY = re.compile(r"&(#\d+|#x[\da-fA-F]+|[a-z]+);")
PLOTLY_NAMED = {"mu": "μ", "amp": "&", "lt": "<", "gt": ">", "nbsp": "\xa0", "times": "×", "plusmn": "±",
                "deg": "°"}


def plotly_shows(label: str) -> str:
    """What Plotly draws for a label: its tags dropped (they become elements), entities decoded."""
    def entity(m):
        t = m.group(1)
        if t.startswith("#"):
            return chr(int(t[2:], 16) if t[1] in "xX" else int(t[1:]))
        return PLOTLY_NAMED.get(t, m.group(0))
    return "".join(PLOTLY_ENTITY.sub(entity, part) for part in PLOTLY_TAG.split(label))


@pytest.mark.parametrize("name", NAMES)
def test_chart_text_is_no_markup_for_plotly_and_shows_the_name(name):
    label = fmt.chart_text(name)
    assert PLOTLY_TAG.search(label) is None  # no tag, so no link, span, style or line break
    assert not re.fullmatch(r"\$.*\$", label)  # not TeX either
    assert plotly_shows(label) == fmt.visible(name)  # and it reads exactly as the name


def test_plotly_model_tells_markup_from_text():
    # The check above is only as good as this model of Plotly: raw markup loses its tags, and
    # an entity Plotly does not know (html.escape's &quot;) would show as "&quot;".
    assert plotly_shows(NAMES[0]) == "LINKBIG"
    assert plotly_shows(html.escape('"q"')) != '"q"'


def test_chart_text_one_line_cut_and_none():
    assert fmt.chart_text(None) == ""
    assert fmt.chart_text(42) == "42"
    assert fmt.chart_text("a\nb\tc") == "a b c"
    cut = fmt.chart_text("<" * 100, limit=10)
    assert plotly_shows(cut) == "<" * 9 + "…"  # cut before escaping: no entity is broken


def test_visible_shows_bidi_controls():
    controls = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
    out = fmt.visible("a" + controls + "b")
    assert not any(c in out for c in controls)
    assert out.startswith("a<U+061C><U+200E><U+200F><U+202A>") and out.endswith("<U+2069>b")
    assert fmt.visible("شكرا עברית") == "شكرا עברית"  # right-to-left text itself is left alone
    assert fmt.visible("x" + RLO, "&lt;U+{:04X}&gt;") == "x&lt;U+202E&gt;"


def _md_text_node(md: str) -> str:
    """The text Streamlit's Markdown would hold for `md` (CommonMark, then HTML entities decoded)."""
    out = MarkdownIt("commonmark").render(md)
    assert "<a " not in out and "<img" not in out
    return html.unescape(re.sub(r"<[^>]+>", "", out)).strip()


# GitHub-flavoured autolink literals (mdast-util-gfm-autolink-literal), run on text nodes after
# escapes are resolved: that is why escaping alone did not stop them.
GFM_URL = re.compile(r"(https?://|www(?=\.))([-.\w]+)([^ \t\r\n]*)", re.I)
GFM_EMAIL = re.compile(r"([-.\w+]+)@([-\w]+(?:\.[-\w]+)+)")


@pytest.mark.parametrize("text", ["gpt-4o (docs: http://198.51.100.9/login)", "visit www.example-phish.test/reset",
                                  "HTTPS://X.TEST/a", "mail admin@example-phish.test now", "_www.x.test",
                                  "ftp://x.test/f mailto:a@b.test"])
def test_md_text_leaves_nothing_to_autolink(text):
    node = _md_text_node(fmt.md_text(text))
    assert GFM_URL.search(node) is None and GFM_EMAIL.search(node) is None, node
    assert node.replace("\u2060", "") == text  # the same characters, only an invisible joiner added


def test_md_text_autolink_check_can_fail():
    assert GFM_URL.search(_md_text_node(fmt._MD_SPECIAL.sub(r"\\\1", "see http://x.test/a")))


def test_md_text_shows_bidi_controls():
    assert _md_text_node(fmt.md_text("notes" + RLO + "txt.sh")) == "notes<U+202E>txt.sh"


def test_html_render_shows_bidi_controls_in_names_and_bodies():
    msg = {"id": "m1", "role": "assistant", "content": "Run \u202e.exe.txt",
           "tool_calls": [{"id": "c1", "name": "safe_read" + RLO, "arguments": {"path": "notes" + RLO + "txt.sh"}}]}
    out = render_messages([{"message": msg, "position": 0, "result": None, "unmatched": False, "error": None}])
    assert RLO not in out
    assert out.count("&lt;U+202E&gt;") >= 3
    table = render_table([("name", "text", "")], [["notes" + RLO + "txt.sh"]])
    assert RLO not in table and "notes&lt;U+202E&gt;txt.sh" in table


def test_visible_frame_for_data_grids():
    df = pd.DataFrame({"title": ["a" + RLO + "b", None], "n": [1, 2], "t" + RLO: ["x", "y"]})
    out = fmt.visible_frame(df)
    assert out["title"][0] == "a<U+202E>b" and pd.isna(out["title"][1])
    assert out["n"].tolist() == [1, 2]
    assert list(out.columns) == ["title", "n", "t<U+202E>"]
    assert df["title"][0] == "a" + RLO + "b"  # a copy: the page's own frame is untouched


def test_chart_labels_keep_names_apart_when_cut():
    names = ["x" * 70 + "a", "x" * 70 + "b", "x" * 70 + "a", "short"]
    labels = fmt.chart_labels(names, limit=20)
    assert labels[0] == labels[2] == fmt.chart_text(names[0], 20)
    assert labels[1] == labels[0] + " #2"
    assert labels[3] == "short"
    assert fmt.chart_labels(["<a>", "<a>"]) == ["&lt;a&gt;", "&lt;a&gt;"]
