"""The plug-in documentation stays true: every field of Format is described, and the README's
example plug-in, installed as a package, is detected and cooked."""
from __future__ import annotations

import dataclasses
import re
import tomllib
from pathlib import Path

from parsers import registry
from parsers.model import Format
from parsers.pipeline import cook_uploads

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def block_after(marker: str, lang: str) -> str:
    start = README.index(marker)
    m = re.compile(rf"```{lang}\n(.*?)```", re.S).search(README, start)
    return m.group(1)


def test_every_format_field_is_described():
    start = README.index("<!-- format-fields")
    table = README[start:README.index("\n\n", start + 1)]
    described = {re.match(r"\| `(\w+)", row).group(1) for row in table.splitlines() if row.startswith("| `")}
    assert described == {f.name for f in dataclasses.fields(Format)}


def test_the_documented_entry_point_group_is_the_one_read():
    toml = tomllib.loads(block_after("<!-- plugin-example", "toml"))
    (group,) = toml["project"]["entry-points"]
    assert group == registry.GROUP
    ours = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))["project"]["entry-points"][group]
    assert set(ours) == {f.name for f in registry.formats()}  # every built-in goes through it


def test_the_example_plugin_works_as_documented(plugin):
    source = block_after("<!-- plugin-example", "python")
    toml = tomllib.loads(block_after("<!-- plugin-example", "toml"))
    (entry,) = toml["project"]["entry-points"][registry.GROUP].items()
    module = entry[1].split(":")[0]
    renamed = f"tv_test_{module}"  # a module name no other test uses
    plugin(renamed, source, {entry[0]: entry[1].replace(module, renamed)})
    assert registry.load_problems() == []
    doc, (summary,) = cook_uploads([("notes.kv", b"#kv-log\nuser: hi\nassistant: hello\nbot: ?\n")])
    assert summary.format == "kv-log" and summary.traces == 1
    msgs = {m["id"]: m for m in doc["messages"]}
    assert [msgs[i]["content"] for i in doc["traces"][0]["timeline"]] == ["hi", "hello"]
    assert [(p["line"], p["message"]) for p in summary.problems] == [
        (4, "expected user or assistant, found 'bot'; line skipped")]
