"""The file backend: every namespace a folder of files under one data directory.

``MemoryStore(data_dir)`` (``memory.files.store``) holds the namespaces; each keeps its
memories in ``memory.json`` (the article's format) and an append-only journal
(``memory.files.journal``), its change history in ``memory.history``
(``memory.files.changelog``), its documents as JSON files (``memory.files.documents``) and its
embeddings in ``memory.vectors`` (``memory.files.vectors``); the client's record logs are
``memory.files.records``. A ``memory.json`` edited by hand is merged (``memory.files.handedit``);
one that does not parse is set aside, and ``memory.files.salvage`` reads back what it can. The
careful file primitives are ``memory.files.io``.
"""

from memory.files.store import FileNamespace, MemoryStore

__all__ = ["FileNamespace", "MemoryStore"]
