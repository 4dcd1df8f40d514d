"""Shared fixtures. Tests that need the shared real-data folder skip when it is absent."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def shared_path(*parts: str) -> Path:
    """A path under the shared folder beside the repo, or a skip when it is not there."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"{p} is not present (the shared real-data and benchmark folder sits beside "
                    "the repository only in the development checkout)")
    return p


@pytest.fixture
def shared():
    """shared(*parts) -> Path under the shared folder, skipping the test when it is absent."""
    return shared_path


@pytest.fixture
def realdata():
    return shared_path("realdata")


@pytest.fixture(scope="session")
def gen_traces():
    """Run the shared deterministic trace generator: gen_traces(kind, n, out, *opts)."""
    import subprocess
    import sys

    script = shared_path("bench", "gen_traces.py")

    def run(kind: str, n: int, out: Path, *opts: str) -> Path:
        subprocess.run([sys.executable, str(script), kind, str(n), str(out), *opts], check=True)
        return out

    return run
