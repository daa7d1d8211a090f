"""The store backends the tests run on (``contract/``), and where a store was opened, to
open it again."""

from __future__ import annotations

from collections.abc import Callable

from memory import Store, open_store
from memory.files import MemoryStore

BACKENDS = ["files", "postgres"]  # how each opens: ``contract/conftest.py``, ``location``
Opener = Callable[..., Store]  # opens the test's store again, with options
_LOCATIONS: dict[int, str] = {}  # id(store) -> where it was opened


def open_location(location: str) -> Store:
    """``open_store(location)``, remembered so that ``reopen_store`` can open it again."""
    opened = open_store(location)
    _LOCATIONS[id(opened)] = location
    return opened


def forget(store: Store) -> None:
    """Close ``store`` for good."""
    store.close()
    _LOCATIONS.pop(id(store), None)


def reopen_store(store: Store) -> Store:
    """Close ``store`` and open its location afresh, as a restarted bot would."""
    location = _LOCATIONS.pop(id(store), None)
    if location is None:
        assert isinstance(store, MemoryStore)
        location = str(store.data_dir)
    store.close()
    return open_location(location)
