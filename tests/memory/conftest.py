"""Fixtures of the memory tests: a real store on files in ``tmp_path`` (on every backend:
``contract/conftest.py``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.files import FileNamespace, MemoryStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    with MemoryStore(tmp_path / "data") as store:
        yield store


@pytest.fixture
def ns(store: MemoryStore) -> FileNamespace:
    return store.namespace("users/42")
