"""viewer.fmt: chrome labels; trace text in Streamlit's Markdown stays literal."""
from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from viewer.render import fmt

HOSTILE = [
    "![x](http://evil.example/a.png)",
    "[click](javascript:alert(1))",
    "<img src=x onerror=alert(1)>",
    "<script>window.pwned=1</script>",
    "**bold** _it_ `code` # head\n\n- list",
    "<https://evil.example/auto>",
    "![ref][r]\n\n[r]: http://evil.example/b.png",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_md_text_is_literal(text):
    out = MarkdownIt("commonmark").render(fmt.md_text(text))
    for bad in ("<img", "<a ", "<script", "<strong", "<em", "<code", "<h1", "<li"):
        assert bad not in out, (text, out)
    assert "\n" not in fmt.md_text(text)


def test_md_text_keeps_the_words_and_bounds_length():
    assert fmt.md_text("plain words 42") == "plain words 42"
    assert len(fmt.md_text("x" * 1000, limit=50)) <= 50


def test_numbers():
    assert fmt.tokens(None) == "—" and fmt.tokens(950) == "950" and fmt.tokens(20_500) == "20.5k"
    assert fmt.tokens(2_000_000) == "2M"
    assert fmt.cost(None) == "—" and fmt.cost(0.04015) == "$0.04" and fmt.cost(0.0006904) == "$0.0007"
    assert fmt.duration(None) == "—" and fmt.duration(850) == "850 ms" and fmt.duration(12_300) == "12.3 s"
    assert fmt.duration(103_000) == "1 min 43 s" and fmt.duration(3_900_000) == "1 h 05 min"
    assert fmt.size(2048) == "2.0 KB"
    assert fmt.total_tokens({"input": 1, "output": 2, "cache_read": 3, "cache_write": 4, "reasoning": 9}) == 10
