"""One namespace: the article's operations, written once over a backend (``memory.backend``).

A namespace holds its memories in the process (``memory.held``) and answers from them; its
backend keeps them in step with what is stored. Every operation holds the namespace's mutex
(threads, and asyncio tasks run in threads) and reads inside the backend's ``reading`` (caught
up with other processes) or writes by handing a block to its ``writing``, which commits the
change and its history records (``memory.history``) in one step: no change stands without its
record. A block is a function, not a ``with`` body, because a backend may run it again: one
several processes write stores a change only if the namespace is still at the version the
block decided from, and otherwise catches up and runs it again (``memory.pg.backend``); so
every decision a write makes (a duplicate, a new id, an undo's check) is made on what is
stored, and a block changes nothing but through its commit.

Ids are millisecond timestamps, as in the article, but strictly increasing within a namespace,
also across processes: a new id is ``max(now_ms, id clock + 1)``, chosen in the write's block
(stored only if no other write came between), where the clock is the highest id seen within a
day of now (``memory.ids.new_id``: an imported id beyond that is renumbered, one held already
is stepped around).

Search ranks what is held, with the same rankers over the same values in the same order
whatever the backend, so every backend gives the same hits and the same scores. Rankers are
fed on every put and delete (``memory.ranking``); access bookkeeping (a search's touch)
changes counts without re-indexing. With an embedder, every put also notes the memory's text
for the background embedding (``memory.meaning``), and ``search(..., ranker="hybrid")`` fuses
the keyword ranking with the meaning (``memory.hybrid``); without one, or while the embedder
fails, "hybrid" is exactly the keyword ranking.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import PurePath
from typing import Any, TypeVar

from memory.backend import Backend, Writing
from memory.documents import Documents
from memory.duplicates import Near, near_duplicates
from memory.embedding import Embedder
from memory.errors import MemoryInvalid, MemoryStoreError
from memory.held import Held
from memory.history import ChangeRecord, History, copied_records, current_author, new_record, state
from memory.hybrid import dense_query, rank
from memory.ids import clock_ms, new_id, renumber
from memory.interface import SearchStatus
from memory.meaning import Meaning
from memory.model import (
    Added,
    Hit,
    Memory,
    Stats,
    clean_category,
    clean_content,
    clean_date,
    clean_extra,
    clean_tags,
    parse_id,
    parse_limit,
)
from memory.rules import importable, read_records, related_to, restored, stats_of, update_changes
from memory.timestamps import format_time_ms, now_iso
from memory.vectors import VectorStore

log = logging.getLogger(__name__)

T = TypeVar("T")

RANKERS = ("default", "hybrid", "seed")
NEAR_CANDIDATES = 20  # the best search hits for a new text that are measured as near-duplicates


class Namespace:
    """One namespace's memories, with the article's operations. Thread-safe."""

    def __init__(
        self,
        name: str,
        backend: Backend,
        *,
        embedder: Embedder | None = None,
        wake: Callable[[Namespace], None] | None = None,
        wait: Callable[[float | None], bool] | None = None,
    ) -> None:
        self.name = name
        self._backend = backend
        self._mutex = threading.RLock()
        self._wait = wait
        # Search by meaning (``memory.meaning``): None without an embedder.
        meaning = None
        if embedder is not None:
            wake_me = (lambda: wake(self)) if wake is not None else (lambda: None)
            meaning = Meaning(name, backend.vectors(), embedder, self._mutex, wake_me)
        self._held = Held(backend.index_cache(), meaning)
        backend.hold(self._held, self._mutex)

    # -- the article's operations ---------------------------------------------------------

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
        """Store a new memory, durable when this returns (``add_unique`` says more)."""
        return self.add_unique(
            content, tags, category, source=source, date=date, attachment=attachment, origin=origin
        ).memory

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
        """Store a new memory unless its content is already stored; durable when this returns.

        Content equal to a stored memory's after folding (``memory.text.content_key``: case,
        width, spacing, punctuation) is not stored again: that memory comes back, as a
        ``duplicate`` (of several, the oldest id). ``source`` names what the memory came from
        (``telegram:<chat>:<message>``); adding again with a source already present returns
        that memory (not as a duplicate: it is the same message) and writes nothing, so a
        message delivered twice is remembered once. ``date`` is the local day (and time) the
        content names (``memory.model.Memory``). ``attachment`` and ``origin`` are kept with it
        as given (``clean_extra``); a memory made from a file is a duplicate only of one made
        from the same file (two photos both captioned "📷 photo" are two memories).
        """
        content, clean, day = clean_content(content), clean_tags(tags), clean_date(date)
        group = clean_category(category)
        kept, came_from = clean_extra(attachment, "attachment"), clean_extra(origin, "origin")
        if source is not None and (not isinstance(source, str) or not 0 < len(source) <= 200):
            raise MemoryInvalid("source must be text of 1 to 200 characters", field="source")
        held = self._held

        def add(write: Writing) -> Added:
            repeated = held.repeated(content, source, kept)
            if repeated is not None:
                return repeated
            now_ms = clock_ms()
            at = format_time_ms(now_ms)
            memory = Memory(
                new_id(write.high_id, now_ms, held.memories),
                content,
                clean,
                group,
                at,
                at,
                0,
                source=source,
                date=day,
                attachment=kept,
                origin=came_from,
            )
            write.commit(puts=[memory], records=[new_record("add", memory.id, None, memory)])
            return Added(memory)

        return self._write(add)

    def similar(self, content: str) -> list[Near]:
        """The stored memories that may say what ``content`` says (``memory.duplicates``).

        Candidates are the best search hits for the content (nothing is counted as used).
        """
        content = clean_content(content)
        with self._reading():
            memories = self._held.memories
            ranked = self._held.rankers["default"].rank(content, memories, NEAR_CANDIDATES)
            candidates = [memories[mid] for mid, _ in ranked]
        return near_duplicates(content, candidates)

    def search(
        self, query: str, limit: int = 10, *, ranker: str = "default", touch: bool = True
    ) -> list[Hit]:
        """The memories that best answer ``query``, best first.

        Each hit's ``accessCount`` goes up by one and its ``accessedAt`` becomes now, as in
        the article, unless ``touch`` is false (benchmarks, previews).
        """
        if not isinstance(query, str) or not query.strip():
            raise MemoryInvalid("the search query is empty", field="query")
        limit = parse_limit(limit)
        if ranker not in RANKERS:
            raise MemoryInvalid(f"unknown ranker {ranker!r}; use one of {RANKERS}", field="ranker")
        meaning = self._held.meaning if ranker == "hybrid" else None
        # Embedded before taking the namespace: other operations go on meanwhile.
        vector = meaning.query_vector(dense_query(query)) if meaning is not None else None
        with self._reading() as writable:
            held = self._held
            cosines = (
                held.meaning.cosines(vector)
                if vector is not None and held.meaning is not None
                else None
            )
            ranked = rank(query, ranker, held.rankers, held.memories, cosines, limit)
            found = [held.memories[mid] for mid, _, _ in ranked]
            if touch and found:
                found = self._touch(found, writable=writable)
            return [
                Hit(memory, score, evidence)
                for memory, (_, score, evidence) in zip(found, ranked, strict=True)
            ]

    def search_status(self) -> SearchStatus:
        """Whether "hybrid" searches use meaning, and how much is embedded so far."""
        if self._held.meaning is None:
            return SearchStatus("keywords")
        with self._reading(use=False):
            return self._held.meaning.status()

    def wait_for_embeddings(self, timeout: float | None = None) -> bool:
        """Embed every memory lacking a vector before returning (False: ``timeout`` passed)."""
        self.search_status()  # loads the memories, which notes what lacks a vector
        return self._wait(timeout) if self._wait is not None else True

    def vectors(self) -> VectorStore:
        """Where this namespace's embeddings are kept."""
        return self._backend.vectors()

    def embed_step(self) -> int:
        """Embed a batch of the memories held that lack a vector; how many (0: none left).
        For the store's background worker (``memory.meaning``), and benchmarks waiting for it."""
        meaning = self._held.meaning
        return meaning.embed_step() if meaning is not None else 0

    def memories(self, category: str | None = None) -> list[Memory]:
        """All memories in stored order, or those of one category."""
        with self._reading():
            if category is None:
                return list(self._held.memories.values())
            group = clean_category(category)
            return [m for m in self._held.memories.values() if m.category == group]

    def count(self) -> int:
        """How many memories there are, none copied (the namespace loaded, caught up)."""
        with self._reading():
            return len(self._held)

    def get(self, memory_id: int | str) -> Memory:
        """The memory with this id (``MemoryNotFound`` if there is none)."""
        key = parse_id(memory_id)
        with self._reading():
            return self._held.find(key)

    def update(
        self,
        memory_id: int | str,
        *,
        content: str | None = None,
        tags: Iterable[str] | str | None = None,
        category: str | None = None,
    ) -> Memory:
        """Change a memory's content, tags or category; durable when this returns."""
        key = parse_id(memory_id)
        changes = update_changes(content, tags, category)

        def update(write: Writing) -> Memory:
            before = self._held.find(key)
            memory = replace(before, **changes, updated_at=now_iso())
            write.commit(puts=[memory], records=[new_record("update", key, before, memory)])
            return memory

        return self._write(update)

    def delete(self, memory_id: int | str) -> Memory:
        """Remove a memory and return it; gone, durably, when this returns."""
        key = parse_id(memory_id)
        return self._write(lambda write: self._delete(write, key))

    def stats(self) -> Stats:
        """Totals by category, the most used tags and the most accessed memories.

        ``most_accessed`` is the article's top 5 by ``accessCount``, ties ordered as the digest
        orders them (``memory.model.most_used``).
        """
        with self._reading():
            return stats_of(list(self._held.memories.values()))

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
        first; score 0 dropped.

        The defaults are the article's (+1 a shared tag, +2 the same category). Without
        ``default_category``, sharing the default category (``general``, where everything
        without one goes) scores nothing: the bot's ``/related`` weighs tags over categories
        that way (``bot.core.operations.related``).
        """
        key = parse_id(memory_id)
        limit = parse_limit(limit)
        with self._reading():
            target = self._held.find(key)
            return related_to(
                target,
                self._held.memories.values(),
                limit,
                tag=tag,
                category=category,
                default_category=default_category,
            )

    def import_memories(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        skip_duplicates: bool = True,
        history: Sequence[ChangeRecord] | None = None,
        renumbered: dict[int, int] | None = None,
    ) -> int:
        """Add article-format records, ids kept; ids or contents already present are skipped.

        Without ``skip_duplicates`` only ids are: a benchmark's data set is taken as it is.
        ``history``: the records to keep instead of ``import`` ones (``MemoryNamespace``); an
        id more than a day ahead gets a fresh one (``memory.ids.renumber``), but not with
        ``history`` (a migration's copy keeps every id). ``renumbered`` receives old -> new.

        All or nothing: one invalid record rejects the whole import. Returns how many were added.
        """
        incoming = read_records(records)
        held = self._held

        def add_all(write: Writing) -> tuple[int, dict[int, int]]:
            keys = held.content_keys().keys()
            new = importable(incoming, held.memories, keys, skip_duplicates=skip_duplicates)
            moved: dict[int, int] = {}
            if history is None:
                new, moved = renumber(new, write.high_id, held.memories)
                logged = [new_record("import", m.id, None, m) for m in new]
            else:  # a migration: the memories' own history, what of it this one lacks
                logged = copied_records(write.refs(), history, self._backend.retention)
            if new or logged:
                write.commit(puts=new, records=logged)
            return len(new), moved

        added, moved = self._write(add_all)  # moved: of the run that was stored
        if renumbered is not None:
            renumbered.update(moved)
        return added

    def export(self) -> list[dict[str, Any]]:
        """Every memory as an article-format record, in stored order."""
        return [m.to_dict() for m in self.memories()]

    # -- history and undo (memory.history) ------------------------------------------------

    def history(self, memory_id: int | str | None = None) -> History:
        """The changes kept (``memory.history``), oldest first; with ``memory_id``, its own."""
        key = parse_id(memory_id) if memory_id is not None else None
        with self._mutex:
            found = self._backend.history()
        if key is None:
            return found
        return dataclasses.replace(found, records=tuple(found.of(key)))

    def restore(self, memory: Memory) -> Memory:
        """Put ``memory`` back: re-inserted with its id, times and counts if it is gone; else
        its content, tags and category set back to ``memory``'s. Durable on return.

        Re-inserting an id handed out before keeps ids strictly increasing: the next new id is
        still above every id this namespace has seen (within the id clock's reach).
        """
        memory = Memory.from_dict(memory.to_dict())  # validated as an imported record is
        return self._write(lambda write: self._restore(write, memory))

    def revert(self, record: ChangeRecord) -> bool | None:
        """Undo ``record`` for the undo in progress (``memory.history.undo``), checked and
        written under one hold of the lock: True if the memory was as the record left it and
        is now as it was before (deleted, for an add); False if it was not, and is left as it
        is (a ``keep`` record says so); None, writing nothing, if another undo of the same
        change has begun (its records are there)."""
        before = Memory.from_dict(record.before.to_dict()) if record.before is not None else None
        author = current_author()

        def undo(write: Writing) -> bool | None:
            if write.undone_elsewhere(author):
                return None
            current = self._held.memories.get(record.memory_id)
            if state(current) != state(record.after):
                write.commit(records=[new_record("keep", record.memory_id, current, current)])
                return False
            if before is None:
                self._delete(write, record.memory_id)
            else:
                self._restore(write, before)
            return True

        return self._write(undo)

    def _delete(self, write: Writing, key: int) -> Memory:
        memory = self._held.find(key)
        write.commit(deletes=[key], records=[new_record("delete", key, memory, None)])
        return memory

    def _restore(self, write: Writing, memory: Memory) -> Memory:
        current = self._held.memories.get(memory.id)
        taken = memory.source is not None and memory.source in self._held.sources
        back = restored(memory, current, taken)
        write.commit(puts=[back], records=[new_record("restore", memory.id, current, back)])
        return back

    def documents(self) -> Documents:
        """This namespace's documents (``Store.documents(self.name)``)."""
        return self._backend.documents()

    def pop_quarantine(self) -> PurePath | None:
        """Where an unreadable copy of the memories was set aside since last asked; told once."""
        with self._mutex:
            return self._backend.pop_quarantine()

    def quarantined(self) -> list[PurePath]:
        """Every unreadable copy of the memories set aside so far, oldest first (for repair)."""
        with self._mutex:
            return list(self._backend.quarantined())

    # -- use: what counts as a use of a memory (issue 15) -----------------------------------

    def touch(self, memory_ids: Iterable[int | str]) -> list[Memory]:
        """Count these memories as used (``accessCount`` + 1, ``accessedAt`` now), each once.

        ``search(..., touch=True)`` touches every hit, as the article does; a caller that knows
        which hit was the answer searches with ``touch=False`` and touches that one here. Ids
        not found (deleted meanwhile) are skipped; like a search's touch, it is bookkeeping
        and not durable on return.
        """
        keys = list(dict.fromkeys(parse_id(value) for value in memory_ids))
        if not keys:
            return []
        with self._reading() as writable:
            memories = self._held.memories
            found = [memories[key] for key in keys if key in memories]
            return self._touch(found, writable=writable) if found else []

    def _touch(self, found: list[Memory], *, writable: bool) -> list[Memory]:
        at = now_iso()
        counted = [m.used(at) for m in found]
        try:
            return self._backend.touch(counted, save=writable)
        except MemoryStoreError as e:
            # Access counts are bookkeeping, not the user's data: a search still answers.
            log.warning("access counts of %s not saved: %s", self.name, e.message)
            return counted

    # -- housekeeping ---------------------------------------------------------------------

    @property
    def held(self) -> int:
        """How many memories this namespace holds in RAM now (0 once released)."""
        return len(self._held)

    def release(self) -> None:
        """Drop the memories from RAM (made durable first where they must be); the next
        operation loads them again."""
        with self._mutex:
            self._backend.release()

    @contextlib.contextmanager
    def _reading(self, *, use: bool = True) -> Iterator[bool]:
        with self._mutex, self._backend.reading(use=use) as writable:
            yield writable

    def _write(self, block: Callable[[Writing], T]) -> T:
        """Run a write's ``block`` (``Backend.writing``: perhaps more than once, so it decides
        from what is held and ``write`` alone, and changes nothing but by its commit)."""
        with self._mutex:
            return self._backend.writing(block)
