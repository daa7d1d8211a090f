"""The contract every backend keeps: each test in this folder runs on every backend.

``memory.interface`` is what the bot relies on, and ``memory.backend`` the port a backend
implements below the one ``memory.namespace``; a backend keeps the contract when every test
here passes on it. The tests reach a store through ``open_store`` and the interface only, as a
caller does (where one looks at what is stored, it says so for each backend). A backend joins
by being named in ``BACKENDS`` (``tests/memory/backends.py``) with how to open a fresh one
(``location`` below): from then on every test here runs on it too, as python-telegram-bot's
persistence tests run on each of its persistence classes. What one backend does on its own
(``memory.json`` and hand edits; PostgreSQL's schema, faults and update queue) is tested beside,
in ``tests/memory/``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from backends import BACKENDS, Opener, forget, open_location

from memory import MemoryNamespace, Store, open_store


@pytest.fixture(params=BACKENDS)
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a fresh store of each backend is: a data directory, or a new PostgreSQL database."""
    if request.param == "files":
        return str(tmp_path / "data")
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture
def store(location: str) -> Iterator[Store]:
    """The store at ``location``, closed at the end (``backends.reopen_store`` reopens it)."""
    opened = open_location(location)
    try:
        yield opened
    finally:
        forget(opened)


@pytest.fixture
def ns(store: Store) -> MemoryNamespace:
    return store.namespace("users/42")


@pytest.fixture
def opener(location: str) -> Iterator[Opener]:
    """Opens the store at ``location`` with options, as often as asked; every store it opened
    is closed at the end."""
    opened: list[Store] = []

    def open_it(**options: Any) -> Store:
        store = open_store(location, **options)
        opened.append(store)
        return store

    yield open_it
    for store in opened:
        store.close()
