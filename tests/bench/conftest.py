"""What the benchmark tests share: a benchmark's module, imported as the benchmark runs it."""
from __future__ import annotations

import importlib
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.fixture(scope="module")
def bench_module():
    """bench_module(name) -> the module bench/NAME.py, its folder on the path while it imports
    (the benchmarks import each other by name)."""
    def load(name: str):
        with pytest.MonkeyPatch.context() as mp:
            mp.syspath_prepend(str(BENCH))
            return importlib.import_module(name)
    return load
