"""The benchmarks' shared helpers (bench/bench_cook.py)."""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_byte_compile_leaves_every_module_with_its_current_bytecode(bench_module):
    # What is timed starts from bytecode, as an installed package does, even where
    # PYTHONDONTWRITEBYTECODE keeps Python from writing it.
    modules = sorted(p for part in ("parsers", "viewer") for p in (REPO / part).rglob("*.py"))
    assert len(modules) > 50
    for src in modules[::10]:  # some without bytecode, as after an edit that none was written for
        Path(importlib.util.cache_from_source(str(src))).unlink(missing_ok=True)
    bench_module("bench_cook").byte_compile()
    for src in modules:
        pyc = Path(importlib.util.cache_from_source(str(src)))
        assert pyc.exists(), src
        # py_compile records the source's mtime in the header: the bytecode is of this source.
        header = pyc.read_bytes()[:16]
        assert int.from_bytes(header[8:12], "little") == int(os.stat(src).st_mtime) & 0xFFFFFFFF, src
