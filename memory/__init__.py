"""Long-term memory for a chat assistant: the CogitoAgent article's model, done durably.

A library, free of Telegram and of LLMs: ``MemoryStore(data_dir).namespace("users/42")`` gives
a ``Namespace`` with the article's eight operations (add, search, list, get, update, delete,
stats, related). See ``memory.store`` for the design.
"""

from memory.errors import (
    MemoryInvalid,
    MemoryLoadFailed,
    MemoryNotFound,
    MemorySaveFailed,
    MemoryStoreError,
    NamespaceInvalid,
)
from memory.model import Hit, Memory, Stats

__all__ = [
    "Hit",
    "Memory",
    "MemoryInvalid",
    "MemoryLoadFailed",
    "MemoryNotFound",
    "MemorySaveFailed",
    "MemoryStoreError",
    "NamespaceInvalid",
    "Stats",
]
