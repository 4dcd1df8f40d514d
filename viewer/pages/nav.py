"""The app's pages: one list, and links between them that carry the open trace along.

Adding a page is one `PageSpec` line in `PAGES`: a URL path, a title, an icon and the
function that draws it (`"module:function"`, imported when the page runs). Streamlit drops
query parameters when pages switch, so every link here passes `trace` explicitly.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class PageSpec:
    url_path: str
    title: str
    icon: str
    target: str  # "package.module:function"
    default: bool = False

    def run(self) -> None:
        module, _, func = self.target.partition(":")
        getattr(importlib.import_module(module), func)()


PAGES: list[PageSpec] = [
    PageSpec("open", "Open", ":material/folder_open:", "viewer.pages.open:page", default=True),
    PageSpec("timeline", "Timeline", ":material/forum:", "viewer.pages.timeline:page"),
    PageSpec("requests", "Requests", ":material/account_tree:", "viewer.pages.requests:page"),
    PageSpec("metrics", "Metrics", ":material/monitoring:", "viewer.pages.metrics:page"),
    PageSpec("compare", "Compare", ":material/compare:", "viewer.pages.compare:page"),
    PageSpec("battles", "Battles", ":material/sports_kabaddi:", "viewer.pages.battles:page"),
    PageSpec("leaderboard", "Leaderboard", ":material/leaderboard:", "viewer.pages.leaderboard:page"),
]


def _page(spec: PageSpec):
    # A page's identity is its URL path, so building it again names the same page. No icon
    # here: Streamlit would fetch a Material icon from a remote host for the favicon.
    return st.Page(spec.run, title=spec.title, url_path=spec.url_path, default=spec.default)


def build() -> list:
    return [_page(spec) for spec in PAGES]


def page(url_path: str):
    return _page(next(s for s in PAGES if s.url_path == url_path))


def params(trace: str | None, **extra) -> dict:
    out = {"trace": trace} if trace else {}
    out.update({k: str(v) for k, v in extra.items() if v is not None})
    return out


def link(url_path: str, label: str | None = None, *, trace: str | None = None, icon: str | None = None,
         **extra) -> None:
    """A link to one of our pages, carrying `trace` (and any other parameters)."""
    st.page_link(page(url_path), label=label, icon=icon, query_params=params(trace, **extra) or None)


def go(url_path: str, *, trace: str | None = None, **extra) -> None:
    st.switch_page(page(url_path), query_params=params(trace, **extra) or None)


def sidebar(trace: str | None) -> None:
    with st.sidebar:
        st.markdown("### traceview")
        for spec in PAGES:
            link(spec.url_path, spec.title, trace=trace, icon=spec.icon)
