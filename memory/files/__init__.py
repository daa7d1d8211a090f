"""The file backend: every namespace a folder of files under one data directory.

``MemoryStore(data_dir)`` (``memory.files.store``) holds the namespaces, each the one
``memory.namespace.Namespace`` over a ``FileBackend`` (``memory.files.backend``, the port of
``memory.backend``). A namespace's folder (``memory.files.folder``) keeps its memories in
``memory.json`` (the article's format) and an append-only journal (``memory.files.journal``),
the snapshot rewritten by compaction (``memory.files.compaction``: written ahead, swapped in by
``memory.files.swap``); its change history in ``memory.history`` (``memory.files.changelog``),
its documents as JSON files (``memory.files.documents``) and its embeddings in
``memory.vectors`` (``memory.files.vectors``); the client's record logs are
``memory.files.records``. A ``memory.json`` edited by hand is merged (``memory.files.handedit``);
one that does not parse, or a save still in progress, is read once settled and watched
(``memory.files.watch``), and ``memory.files.salvage`` reads back what it can. The careful file
primitives are ``memory.files.io``.
"""

from memory.files.store import FileNamespace, MemoryStore

__all__ = ["FileNamespace", "MemoryStore"]
