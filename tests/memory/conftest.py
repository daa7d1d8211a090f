"""Fixtures of the memory tests: a real store on files in ``tmp_path``, or on each backend."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import BACKENDS, forget, open_location

from memory import Store
from memory.files import FileNamespace, MemoryStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    with MemoryStore(tmp_path / "data") as store:
        yield store


@pytest.fixture
def ns(store: MemoryStore) -> FileNamespace:
    return store.namespace("users/42")


@pytest.fixture(params=BACKENDS)
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A real store on each backend: files in ``tmp_path``, a fresh PostgreSQL database."""
    if request.param == "files":
        location = str(tmp_path / "data")
    else:
        location = request.getfixturevalue("pg_url")
    opened = open_location(location)
    try:
        yield opened
    finally:
        forget(opened)
