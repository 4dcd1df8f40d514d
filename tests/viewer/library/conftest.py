"""A library of each kind: a SQLite file and a real PostgreSQL database."""
from __future__ import annotations

import pytest

from viewer.library.library import Library


@pytest.fixture(params=["sqlite", "postgresql"])
def library(request, tmp_path):
    if request.param == "sqlite":
        lib = Library(str(tmp_path / "lib.sqlite"))
    else:
        lib = Library(request.getfixturevalue("postgres_db"))
    yield lib
    lib.close()
