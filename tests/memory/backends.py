"""The two store backends for the tests: where a store was opened, to open it again."""

from __future__ import annotations

from memory import Store, open_store
from memory.files import MemoryStore

BACKENDS = ["files", "postgres"]
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
