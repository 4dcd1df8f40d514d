"""The README stays true: every registered format and every command is documented."""
from __future__ import annotations

import re
from pathlib import Path

from parsers.registry import formats
from viewer.cli import build_parser

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def _formats_table() -> str:
    start = README.index("<!-- formats-table")
    return README[start:README.index("\n\n", start + 1)]


def test_every_registered_format_is_in_the_table():
    table = _formats_table()
    for fmt in formats():
        assert f"`{fmt.name}`" in table, f"format {fmt.name!r} ({fmt.title}) is missing from README's table"
        assert fmt.title in table, f"README's table does not name {fmt.title!r}"


def test_every_table_row_is_a_registered_format():
    names = {f.name for f in formats()}
    rows = [ln for ln in _formats_table().splitlines()[3:] if ln.startswith("| ")]  # after the header
    assert rows
    for row in rows:
        first = re.search(r"`([^`]+)`", row.split("|")[2]).group(1)
        assert first in names, f"README lists {first!r}, which is not a registered format"


def test_every_command_is_documented():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in sub.choices:
        assert f"`traceview {name}" in README, f"command {name!r} is not in README"
