"""Long-term memory for a chat assistant: the CogitoAgent article's model, done durably.

A library, free of Telegram and of LLMs: ``open_store("data").namespace("users/42")`` gives
a namespace with the article's eight operations (add, search, list, get, update, delete,
stats, related), and ``.documents("users/42")`` its small JSON documents. The interface is
``memory.interface``; the operations are written once (``memory.namespace``) over the port
each backend implements (``memory.backend``): files (``memory.files``, the default) and
PostgreSQL (``memory.pg``), chosen by ``memory.open``.
"""

from memory.documents import Document, Documents, update_document
from memory.errors import (
    DocumentConflict,
    MemoryInvalid,
    MemoryLoadFailed,
    MemoryNotFound,
    MemorySaveFailed,
    MemoryStoreError,
    NamespaceInvalid,
    StoreInUse,
)
from memory.interface import MemoryNamespace, RecordLog, Store
from memory.jsontext import parse_json
from memory.model import Added, Hit, Memory, Stats
from memory.open import open_store
from memory.queue import Delivery, Lane, Received, Turn, UpdateQueue

__all__ = [
    "Added",
    "Delivery",
    "Document",
    "DocumentConflict",
    "Documents",
    "Hit",
    "Lane",
    "Memory",
    "MemoryInvalid",
    "MemoryLoadFailed",
    "MemoryNamespace",
    "MemoryNotFound",
    "MemorySaveFailed",
    "MemoryStoreError",
    "NamespaceInvalid",
    "Received",
    "RecordLog",
    "Stats",
    "Store",
    "StoreInUse",
    "Turn",
    "UpdateQueue",
    "open_store",
    "parse_json",
    "update_document",
]
