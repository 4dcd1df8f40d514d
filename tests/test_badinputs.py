"""The audit's reproducers (../shared/badinputs) that are not covered beside their own module:
every one-format folder under cli/, the benchmark time overflow, hostile file names, and the
hostile strings of every format rendered as the timeline renders them."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import orjson
import pytest

from parsers.cook.schema import cooked_errors
from parsers.pipeline import cook_paths
from viewer.analysis.conversation import build_items
from viewer.render.html import render_messages

BAD = Path(__file__).resolve().parents[1].parent / "shared" / "badinputs"
CLI_CASES = sorted(p.name for p in (BAD / "cli").iterdir()) if (BAD / "cli").is_dir() else []
# what the problem of each kind of reproducer names
EXPECTED = {"ts_e20": re.compile(r"time|date-time|tstamp"), "nul_line": re.compile(r"NUL"),
            "dup_conv_ids": re.compile(r"conv_id"), "args_lone_surrogate": re.compile(r".")}


def cook(path):
    doc, summaries = cook_paths([path])
    text = orjson.dumps(doc)  # the document can always be written...
    assert cooked_errors(orjson.loads(text)) == []  # ...and validates
    return doc, summaries


@pytest.mark.parametrize("case", CLI_CASES)
def test_each_cli_reproducer_loads_its_good_records_and_reports_the_bad_one(case, shared):
    doc, summaries = cook(shared("badinputs", "cli", case))
    assert doc["traces"], f"{case}: nothing loaded"
    kind = case.split("__", 1)[1]
    problems = [f'{p["path"]} {p["message"]}' for s in summaries for p in s.problems]
    assert any(EXPECTED[kind].search(m) for m in problems), (case, problems)


def test_a_benchmark_time_out_of_range_is_a_problem_and_every_record_loads(shared):
    doc, (summary,) = cook(shared("badinputs", "repro", "R13_benchmark_timestamp_overflow.jsonl"))
    assert len(doc["traces"]) == 5
    assert any(p["path"] == "/timestamp" and p["line"] == 3 for p in summary.problems)


def test_hostile_file_names_load_and_stay_names(shared):
    folder = shared("badinputs", "folders", "F03_hostile_names")
    doc, summaries = cook(folder)
    names = {Path(i["name"]).name for i in doc["inputs"]}
    assert {p.name for p in folder.iterdir() if p.is_file()} <= names
    assert sum(1 for s in summaries if s.traces) >= 5


class _Live(HTMLParser):
    """The elements and attributes a browser would act on in rendered HTML."""

    ACTIVE = {"script", "iframe", "style", "form", "object", "embed", "svg", "math", "link", "meta", "base",
              "input", "button", "textarea", "select", "video", "audio", "source", "frame", "frameset"}

    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in self.ACTIVE:
            self.found.append(f"<{tag}>")
        rel = (dict(attrs).get("rel") or "").split()
        for name, value in attrs:
            if tag == "a" and name == "href" and (value or "").lower().startswith(("http://", "https://", "mailto:")) \
                    and {"noopener", "noreferrer"} <= set(rel):
                continue  # a Markdown link in a message: followed only when clicked, and tells nothing
            value = (value or "").strip().lower()
            if name.startswith("on") or name in ("style", "srcdoc", "formaction", "action"):
                self.found.append(f"{tag} {name}=")
            elif name in ("href", "src", "xlink:href", "background", "poster") and not (
                    value.startswith("#") or (tag == "img" and name == "src" and value.startswith("data:image/"))
                    or (tag == "a" and value.startswith("data:image/"))):
                self.found.append(f"{tag} {name}={value[:40]}")


def live_parts(html: str) -> list[str]:
    parser = _Live()
    parser.feed(html)
    return parser.found


@pytest.mark.parametrize("kind", ["strings", "strings_all", "keys", "numbers"])
def test_hostile_strings_of_every_format_render_inert(kind, shared):
    doc, _ = cook(shared("badinputs", "xss", kind))
    assert doc["traces"]
    messages = {m["id"]: m for m in doc["messages"]}
    requests = {r["id"]: r for r in doc["requests"]}
    for t in doc["traces"]:
        html = render_messages(build_items(t["timeline"], messages, [requests[r] for r in t["requests"]]))
        live = live_parts(html)
        assert not live, (t["title"][:60], live[:5])
