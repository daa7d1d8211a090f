"""The store interface: what the bot may rely on, whatever keeps the bytes.

Two backends implement it: files (``memory.files.MemoryStore``, the default: one folder per
namespace, ``memory.json`` in the article's format plus a journal) and PostgreSQL
(``memory.pg.PgStore``) for several replicas. The bot is written against these Protocols
only: no paths, no file helpers, no lock that only one process could hold. What must be
serialised is serialised by the store, per namespace, so that a second process or replica is
correct. This module holds the Protocols and the small values they pass (``SearchStatus``),
and imports no backend: opening a store is ``memory.open``, the operations are
``memory.namespace``, the replicas' update queue (``UpdateQueue``) ``memory.queue``, the
documents (their Protocol, ``Documents``, and their rules) ``memory.documents``, and where a
namespace keeps its embeddings (``VectorStore``) ``memory.vectors``.

Per namespace the store offers:

- ``MemoryNamespace``: the article's eight operations (add, search, memories, get, update,
  delete, stats, related) plus bulk import and export, on ``Memory`` values; an add never
  stores content already stored (``add_unique`` says when it was), and ``similar`` finds the
  near-duplicates of a text before it is added (``memory.duplicates``);
- ``Documents``: a small key-value store of JSON documents for everything else the bot keeps
  there (conversation history, token usage, digest settings, later reminders and change
  history). ``put`` is a compare-and-set on the document's ``version``, an opaque string the
  store hands out; ``update_document`` (``memory.documents``) builds a read-modify-write loop
  on it, so that two processes changing one document never lose each other's change
  (``MemoryNamespace.documents()`` is ``Store.documents(namespace.name)``).

Beside the namespaces, the store keeps what its client (the bot) holds as a whole:

- ``Store.bot_documents()``: documents of no namespace (the console's message-id counter),
  with the same compare-and-set; no namespace name can reach them;
- ``Store.bot_log(name)``: an append-only ``RecordLog`` of JSON records (``inbox``: the
  updates received and not yet handled; ``poison``: those set aside). One process writes a
  log (the one polling Telegram); appends are cheap and made durable in batches by ``sync``.
- ``Store.updates()``: the ``UpdateQueue`` that several replicas share (PostgreSQL), or None
  (files: one process, which keeps its updates in the ``inbox`` log instead).

Keys are like namespace names: segments of ASCII letters, digits, ``_`` and ``-`` joined by
``/`` (``history``, ``reminders/1712``), so that every backend can keep them as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Protocol

from memory.documents import Documents
from memory.duplicates import Near
from memory.history import ChangeRecord, History
from memory.model import Added, Hit, Memory, Stats
from memory.queue import UpdateQueue
from memory.vectors import VectorStore


class RecordLog(Protocol):
    """An append-only log of JSON records, written by one process at a time.

    ``append`` is cheap and not durable (a crash of the process keeps it, a power cut may not);
    ``sync`` makes every record appended so far durable at once, and ``append(...,
    durable=True)`` one record and all before it. ``rewrite`` replaces the whole log atomically
    and durably (compaction). A record a crash cut short is never read back: ``read`` skips it,
    and a failed ``append`` leaves nothing of its record behind. Failures are
    ``MemoryLoadFailed`` and ``MemorySaveFailed``.
    """

    name: str

    def read(self) -> list[Any]:
        """Every whole record, oldest first (none if the log does not exist yet)."""
        ...

    def append(self, record: Any, *, durable: bool = False) -> None:
        """Add ``record`` at the end (with ``durable``: on disk, with all before it, on return)."""
        ...

    def sync(self) -> None:
        """Make every record appended so far durable (one flush for all of them)."""
        ...

    def rewrite(self, records: Sequence[Any]) -> None:
        """Replace the log with ``records``, atomically and durably."""
        ...

    def close(self) -> None:
        """Let the log's resources go; the next call opens them again."""
        ...


# -- search by meaning: embedding vectors (issue 14) -----------------------------------------
# Kept in a block of its own: the rest of the store interface does not depend on it.


@dataclass(frozen=True)
class SearchStatus:
    """How a namespace searches now: ``hybrid`` (keywords and meaning) or ``keywords``."""

    mode: str
    model: str | None = None
    embedded: int = 0  # memories with a vector of ``model``
    total: int = 0
    failing: bool = False  # the embedder is failing: searches use keywords alone meanwhile


class MeaningSearch(Protocol):
    """What a namespace adds for search by meaning (``search(..., ranker="hybrid")``)."""

    def search_status(self) -> SearchStatus:
        """Whether searches use meaning, with which model, and how much is embedded so far."""
        ...

    def vectors(self) -> VectorStore:
        """Where this namespace's embeddings are kept."""
        ...

    def wait_for_embeddings(self, timeout: float | None = None) -> bool:
        """Wait until every memory has a vector (tools, benchmarks); False after ``timeout``."""
        ...


# -- end of search by meaning --------------------------------------------------------------


class MemoryNamespace(MeaningSearch, Protocol):
    """One namespace's memories: the article's operations, and bulk import and export."""

    name: str

    def add(
        self,
        content: str,
        tags: Iterable[str] | str = (),
        category: str | None = None,
        *,
        source: str | None = None,
        date: str | None = None,
        attachment: Mapping[str, Any] | None = None,
        origin: Mapping[str, Any] | None = None,
    ) -> Memory:
        """Store a new memory (durable on return); a ``source`` already present adds nothing.
        ``attachment`` and ``origin`` are the client's, kept as given (``clean_extra``)."""
        ...

    def add_unique(
        self,
        content: str,
        tags: Iterable[str] | str = (),
        category: str | None = None,
        *,
        source: str | None = None,
        date: str | None = None,
        attachment: Mapping[str, Any] | None = None,
        origin: Mapping[str, Any] | None = None,
    ) -> Added:
        """Like ``add``, unless the same content (after folding) is stored: then that memory,
        as a ``duplicate``, and nothing is written (``memory.duplicates``); a memory made from a
        file is a duplicate only of one made from the same file."""
        ...

    def similar(self, content: str) -> list[Near]:
        """The stored memories that may say what ``content`` says (``memory.duplicates``)."""
        ...

    def search(
        self, query: str, limit: int = 10, *, ranker: str = "default", touch: bool = True
    ) -> list[Hit]:
        """The best memories for ``query``, best first (``ranker``: default, hybrid, seed)."""
        ...

    def memories(self, category: str | None = None) -> list[Memory]:
        """All memories in stored order, or those of one category."""
        ...

    def count(self) -> int:
        """How many memories there are, copying none (loads the namespace, as ``memories``)."""
        ...

    def get(self, memory_id: int | str) -> Memory:
        """One memory (``MemoryNotFound`` if there is none)."""
        ...

    def update(
        self,
        memory_id: int | str,
        *,
        content: str | None = None,
        tags: Iterable[str] | str | None = None,
        category: str | None = None,
    ) -> Memory:
        """Change a memory's content, tags or category (durable on return)."""
        ...

    def delete(self, memory_id: int | str) -> Memory:
        """Remove a memory and return it (durable on return)."""
        ...

    def stats(self) -> Stats:
        """Totals by category, the most used tags and the most accessed memories."""
        ...

    def related(
        self,
        memory_id: int | str,
        limit: int = 5,
        *,
        tag: float = 1.0,
        category: float = 2.0,
        default_category: bool = True,
    ) -> list[Hit]:
        """Other memories sharing its tags (``tag`` each) or its category (``category``), best
        first (the article's weights by default); without ``default_category`` sharing the
        default category scores nothing."""
        ...

    def import_memories(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        skip_duplicates: bool = True,
        history: Sequence[ChangeRecord] | None = None,
        renumbered: dict[int, int] | None = None,
    ) -> int:
        """Add article-format records with their ids; how many were new. Content already
        stored (after folding) is skipped too, unless not ``skip_duplicates``.

        An id more than a day past now (``memory.ids.ID_REACH_MS``: the far future, which
        would leave no ids for later adds) is given a fresh one, as an add would get;
        ``renumbered``, if given, receives old id -> new id of each.

        ``history`` (a migration: another store's history of these memories, oldest first)
        is recorded instead of ``import`` records: its records this namespace lacks (by
        ``ref``), within its retention, even when no memory is new; so the copy's history is
        the original's, and importing again records nothing twice. A migration keeps every
        id as it is, the far ones too: its history names them."""
        ...

    def export(self) -> list[dict[str, Any]]:
        """Every memory as an article-format record."""
        ...

    # -- history and undo (``memory.history``) ------------------------------------------------
    # The store records every add, update, delete, import and restore itself, written ahead of
    # the change (no change stands without its record), by the author ``memory.history.acting``
    # set, within the store's retention. ``memory.history.undo`` is built on these three.

    def history(self, memory_id: int | str | None = None) -> History:
        """The changes kept, oldest first; with ``memory_id``, that memory's (deleted or not)."""
        ...

    def restore(self, memory: Memory) -> Memory:
        """Put ``memory`` back: re-inserted with its id, times and counts if it is gone, else
        its content, tags and category set back to ``memory``'s (durable on return)."""
        ...

    def revert(self, record: ChangeRecord) -> bool | None:
        """Undo one record for the undo in progress (``memory.history.undo``; its author has
        ``undoes``), checked and written in one step: True if the memory was as ``record``
        left it and is now as it was before (deleted, for an add); False if it was not and is
        left as it is (recorded as a ``keep``); None, with nothing written, if another undo of
        the same change has begun."""
        ...

    def documents(self) -> Documents:
        """This namespace's documents (``Store.documents(self.name)``)."""
        ...

    def pop_quarantine(self) -> PurePath | None:
        """Where an unreadable copy of the memories was set aside since last asked; told once."""
        ...

    def quarantined(self) -> Sequence[PurePath]:
        """Every unreadable copy of the memories set aside so far, oldest first (for repair)."""
        ...

    # -- use: what counts as a use of a memory (issue 15) -----------------------------------

    def touch(self, memory_ids: Iterable[int | str]) -> list[Memory]:
        """Count these memories as used: ``accessCount`` + 1 and ``accessedAt`` now, each once.

        The article counts every search hit as used (``search(..., touch=True)``, kept for the
        CLI and library callers); the bot searches with ``touch=False`` and touches only what
        was the answer (``bot.core.operations``). Bookkeeping, not the user's data: not
        durable on return, and an id not found is skipped. Returns the memories touched.
        """
        ...


class Store(Protocol):
    """Every namespace of one store (a data directory, or a database)."""

    def namespace(self, name: str) -> MemoryNamespace:
        """The namespace called ``name`` (``users/42``)."""
        ...

    def documents(self, name: str) -> Documents:
        """The documents of the namespace called ``name``."""
        ...

    def namespace_names(self) -> list[str]:
        """Every namespace that holds memories, sorted."""
        ...

    def bot_documents(self) -> Documents:
        """The documents of the store's client as a whole, outside every namespace."""
        ...

    def bot_log(self, name: str) -> RecordLog:
        """The client's record log called ``name`` (a document key: ``inbox``, ``poison``)."""
        ...

    def updates(self) -> UpdateQueue | None:
        """The update queue replicas share, or None when the store serves one process."""
        ...

    def claim_serving(self) -> None:
        """Claim the store for this process's bot until ``close``: ``StoreInUse`` if the store
        serves one process and another holds it; nothing where replicas share ``updates``."""
        ...

    def ping(self) -> None:
        """Check, cheaply, that the store can be reached and written (a health check);
        raises ``MemoryStoreError`` saying why not."""
        ...

    def close(self) -> None:
        """Make everything durable and let every resource go."""
        ...

    def __enter__(self) -> Store: ...

    def __exit__(self, *exc: object) -> None: ...
