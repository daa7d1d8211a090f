"""Errors raised by the memory library.

Every error carries a stable ``code`` (the seed's strings, such as ``MEMORY_SAVE_FAILED``) so
that callers (the bot, the LLM tools, the command line) can map it to a message without
parsing text, and data as attributes::

    MemoryStoreError                code: str, message: str
    ├── MemoryInvalid               MEMORY_INVALID       field: str | None
    │   └── NamespaceInvalid        NAMESPACE_INVALID    namespace: str
    ├── MemoryNotFound              MEMORY_NOT_FOUND     memory_id: int
    ├── MemorySaveFailed            MEMORY_SAVE_FAILED   path: Path
    ├── MemoryLoadFailed            MEMORY_LOAD_FAILED   path: Path
    ├── DocumentConflict            DOCUMENT_CONFLICT    key: str, expected: str, actual: str
    └── EmbeddingFailed             EMBEDDING_FAILED     (search then uses keywords alone)

The library raises only these; foreign errors (``OSError``, ``json.JSONDecodeError``) are
wrapped at the boundary with ``raise ... from e``.
"""

from __future__ import annotations

from pathlib import Path


class MemoryStoreError(Exception):
    """Base class: something the caller asked for could not be done."""

    code = "MEMORY_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class MemoryInvalid(MemoryStoreError):
    """An argument is not acceptable (empty content, too many tags, a bad id or limit)."""

    code = "MEMORY_INVALID"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class NamespaceInvalid(MemoryInvalid):
    """A namespace name that is malformed or could leave the data directory."""

    code = "NAMESPACE_INVALID"

    def __init__(self, message: str, *, namespace: str) -> None:
        super().__init__(message, field="namespace")
        self.namespace = namespace


class MemoryNotFound(MemoryStoreError):
    """No memory with this id in this namespace."""

    code = "MEMORY_NOT_FOUND"

    def __init__(self, memory_id: int) -> None:
        super().__init__(f"no memory with id {memory_id}")
        self.memory_id = memory_id


class MemorySaveFailed(MemoryStoreError):
    """The change could not be made durable (disk full, read-only, permissions)."""

    code = "MEMORY_SAVE_FAILED"

    def __init__(self, message: str, *, path: Path) -> None:
        super().__init__(message)
        self.path = path


class MemoryLoadFailed(MemoryStoreError):
    """A namespace's files could not be read at all (permissions, I/O error)."""

    code = "MEMORY_LOAD_FAILED"

    def __init__(self, message: str, *, path: Path) -> None:
        super().__init__(message)
        self.path = path


class DocumentConflict(MemoryStoreError):
    """A compare-and-set lost: the document is no longer at the version the caller read."""

    code = "DOCUMENT_CONFLICT"

    def __init__(self, key: str, *, expected: str, actual: str) -> None:
        super().__init__(f"document {key!r} changed meanwhile (version {actual}, not {expected})")
        self.key = key
        self.expected = expected
        self.actual = actual


class StoreInUse(MemoryStoreError):
    """Another process serves the bot from this store, which allows one (``claim_serving``), or
    is already the replica this one would be (``UpdateQueue.enter``)."""

    code = "STORE_IN_USE"


class EmbeddingFailed(MemoryStoreError):
    """Texts could not be embedded (model missing, endpoint down or answering garbage)."""

    code = "EMBEDDING_FAILED"
