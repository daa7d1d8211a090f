"""One namespace: its memories in RAM, the article's operations, and the files behind them.

Every operation holds the namespace's mutex (threads, asyncio tasks run in threads) and the
folder's ``flock`` (other processes), then catches up with whatever other processes appended to
the journal before acting (``memory.files.journal``). Reads in a folder that cannot be written still
answer, without the lock; writes there raise ``MemorySaveFailed``.

Ids are millisecond timestamps, as in the article, but strictly increasing within a namespace,
also across processes: a new id is ``max(now_ms, id clock + 1)``, chosen under the lock, where
the clock is the highest id seen within a day of now (``memory.model.new_id``: an imported id
beyond that is renumbered, one held already is stepped around).
Rankers are fed on every put and delete (``memory.ranking``); access bookkeeping (a search's
touch) changes counts without re-indexing. With an embedder, every put also notes the memory's
text for the background embedding (``memory.meaning``), and ``search(..., ranker="hybrid")``
fuses the keyword ranking with the meaning (``memory.hybrid``); without one, or while the
embedder fails, "hybrid" is exactly the keyword ranking.

A ``memory.json`` edited by hand while the namespace is held is merged into it, never taken
wholesale (``memory.files.handedit``); one that cannot be read leaves what is held in place, and is
written back from it. Compaction that fails (a full disk) is retried with back-off, and logged
once per change of state.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from memory.bm25 import Bm25Ranker
from memory.duplicates import Near, near_duplicates
from memory.embedding import Embedder
from memory.errors import MemoryInvalid, MemoryNotFound, MemorySaveFailed, MemoryStoreError
from memory.files.changelog import ChangeLog
from memory.files.documents import FileDocuments
from memory.files.handedit import History, merge, write_conflicts
from memory.files.io import CacheFile
from memory.files.journal import SNAPSHOT, Change, NamespaceFiles
from memory.files.vectors import FileVectors
from memory.history import (
    ChangeRecord,
    Retention,
    copied_records,
    current_author,
    new_record,
    state,
    undone_elsewhere,
)
from memory.history import History as ChangeHistory
from memory.hybrid import dense_query, rank
from memory.interface import SearchStatus
from memory.meaning import Meaning
from memory.model import (
    Added,
    Hit,
    Memory,
    Stats,
    advanced,
    clean_category,
    clean_content,
    clean_date,
    clean_extra,
    clean_tags,
    clock_ms,
    format_time_ms,
    new_id,
    now_iso,
    parse_id,
    parse_limit,
    related_to,
    renumber,
    restored,
    stats_of,
    update_changes,
)
from memory.ranking import Ranker, SeedRanker
from memory.text import content_key

log = logging.getLogger(__name__)

RANKERS = ("default", "hybrid", "seed")
NEAR_CANDIDATES = 20  # the best search hits for a new text that are measured as near-duplicates
INDEX_FILE = "memory.index"
BACKOFF = 2.5  # seconds before compaction is tried again after a failure, doubling
BACKOFF_MAX = 300.0
WRITER_PAUSE = 0.0005  # seconds: longer than a waiting thread takes to wake and take the GIL


def _let_others_run() -> None:
    """A pause in long background work, so that an operation waiting for the interpreter (the
    GIL) gets it now, not after the switch interval each time it lets go (see
    ``files.dump_records``)."""
    time.sleep(WRITER_PAUSE)


def _new_rankers(folder: Path) -> dict[str, Ranker]:
    # The search index's analysed memories are kept beside the snapshot (memory.termindex).
    return {"default": Bm25Ranker(CacheFile(folder / INDEX_FILE)), "seed": SeedRanker()}


def _same_file(stored: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> bool:
    """Whether two attachments are the same file (or both absent): Telegram's
    ``file_unique_id`` when both have one, else the whole reference."""
    if stored is None or new is None:
        return stored is new
    key = "file_unique_id"
    if key in stored and key in new:
        return bool(stored[key] == new[key])
    return dict(stored) == dict(new)


class Namespace:
    """One namespace's memories, with the article's operations. Thread-safe."""

    def __init__(
        self,
        folder: Path,
        name: str,
        retention: Retention | None = None,
        *,
        embedder: Embedder | None = None,
        wake: Callable[[Namespace], None] | None = None,
        wait: Callable[[float | None], bool] | None = None,
    ) -> None:
        self.name = name
        self.path = folder
        self._files = NamespaceFiles(folder)
        self._changelog = ChangeLog(folder, retention or Retention())  # memory.history
        self._mutex = threading.RLock()
        # Search by meaning (``memory.meaning``): None without an embedder.
        self._meaning: Meaning | None = None
        self._wait = wait
        if embedder is not None:
            wake_me = (lambda: wake(self)) if wake is not None else (lambda: None)
            self._meaning = Meaning(name, FileVectors(folder), embedder, self._mutex, wake_me)
        self._memories: dict[int, Memory] = {}
        self._sources: dict[str, int] = {}  # source -> id of the memory that came from it
        # content_key -> id of a memory with that content; built on the first add (None: not
        # yet), so that opening a namespace does not fold every memory.
        self._keys: dict[str, int] | None = None
        self._shadowed = False  # two held memories share a content key (edits, old files)
        self._rankers: dict[str, Ranker] = _new_rankers(self.path)
        self._high_id = 0  # the id clock: the highest id seen within reach, deleted ones too
        self._quarantined: Path | None = None
        self._dirty_since: float | None = None  # monotonic time of the oldest uncompacted change
        self._last_used = time.monotonic()
        self._history = History()  # what compaction wrote, to tell a person's edits apart
        self._deleted_at: dict[int, float] = {}  # epoch seconds of each delete seen
        self._rewrite = False  # memory.json must be written from what is held (merged, broken)
        self._merged: list[Path] = []  # displaced files merged, removed once compacted
        self._failures = 0  # compactions failed in a row
        self._retry_at = 0.0  # monotonic time before which compaction is not tried again
        self._changes = 0  # changes taken in so far (puts, deletes; not touches)

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
        """Store a new memory; it is on disk when this returns (``add_unique`` says more)."""
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
        """Store a new memory unless its content is already stored; on disk when this returns.

        Content equal to a stored memory's after folding (``memory.text.content_key``: case,
        width, spacing, punctuation) is not stored again: that memory comes back, as a
        ``duplicate``. ``source`` names what the memory came from (``telegram:<chat>:<message>``);
        adding again with a source already present returns that memory (not as a duplicate: it
        is the same message) and writes nothing, so a message delivered twice is remembered once.
        ``date`` is the local day (and time) the content names (``memory.model.Memory``).
        ``attachment`` and ``origin`` are kept with it as given (``clean_extra``); a memory made
        from a file is a duplicate only of one made from the same file (two photos both
        captioned "📷 photo" are two memories).
        """
        content, clean, day = clean_content(content), clean_tags(tags), clean_date(date)
        group = clean_category(category)
        kept, came_from = clean_extra(attachment, "attachment"), clean_extra(origin, "origin")
        if source is not None and (not isinstance(source, str) or not 0 < len(source) <= 200):
            raise MemoryInvalid("source must be text of 1 to 200 characters", field="source")
        with self._locked(write=True):
            if source is not None and source in self._sources:
                return Added(self._memories[self._sources[source]])
            key = content_key(content)
            same = self._content_keys().get(key) if key else None
            if same is not None and not _same_file(self._memories[same].attachment, kept):
                same = None
            if same is not None:
                return Added(self._memories[same], duplicate=True)
            now_ms = clock_ms()
            at = format_time_ms(now_ms)
            memory_id = new_id(self._high_id, now_ms, self._memories)
            memory = Memory(
                memory_id,
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
            record = new_record("add", memory.id, None, memory)
            self._commit([{"op": "put", "m": memory.to_dict()}], records=[record])
            self._put(memory)
            return Added(memory)

    def similar(self, content: str) -> list[Near]:
        """The stored memories that may say what ``content`` says (``memory.duplicates``).

        Candidates are the best search hits for the content (nothing is counted as used).
        """
        content = clean_content(content)
        with self._locked(write=False):
            ranked = self._rankers["default"].rank(content, self._memories, NEAR_CANDIDATES)
            candidates = [self._memories[mid] for mid, _ in ranked]
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
        meaning = self._meaning if ranker == "hybrid" else None
        # Embedded before taking the namespace: other operations go on meanwhile.
        vector = meaning.query_vector(dense_query(query)) if meaning is not None else None
        with self._locked(write=False) as writable:
            cosines = (
                self._meaning.cosines(vector)
                if vector is not None and self._meaning is not None
                else None
            )
            ranked = rank(
                query,
                ranker,
                self._rankers,
                self._memories,
                cosines,
                limit,
            )
            found = [self._memories[mid] for mid, _, _ in ranked]
            if touch and found:
                found = self._touch(found, persist=writable)
            return [
                Hit(memory, score, evidence)
                for memory, (_, score, evidence) in zip(found, ranked, strict=True)
            ]

    def search_status(self) -> SearchStatus:
        """Whether "hybrid" searches use meaning, and how much is embedded so far."""
        if self._meaning is None:
            return SearchStatus("keywords")
        with self._locked(write=False, use=False):
            return self._meaning.status()

    def wait_for_embeddings(self, timeout: float | None = None) -> bool:
        """Embed every memory lacking a vector before returning (False: ``timeout`` passed)."""
        self.search_status()  # loads the memories, which notes what lacks a vector
        return self._wait(timeout) if self._wait is not None else True

    def vectors(self) -> FileVectors:
        """Where this namespace's embeddings are kept (``memory.files.vectors``)."""
        return FileVectors(self.path)

    def embed_step(self) -> int:
        """Embed a batch of memories that lack a vector; how many (0: none left). For the
        store's background worker (``memory.meaning``), and benchmarks that wait for it."""
        if self._meaning is None:
            return 0
        return self._meaning.embed_step()

    def memories(self, category: str | None = None) -> list[Memory]:
        """All memories in stored order, or those of one category."""
        with self._locked(write=False):
            if category is None:
                return list(self._memories.values())
            group = clean_category(category)
            return [m for m in self._memories.values() if m.category == group]

    def get(self, memory_id: int | str) -> Memory:
        """The memory with this id (``MemoryNotFound`` if there is none)."""
        key = parse_id(memory_id)
        with self._locked(write=False):
            return self._find(key)

    def update(
        self,
        memory_id: int | str,
        *,
        content: str | None = None,
        tags: Iterable[str] | str | None = None,
        category: str | None = None,
    ) -> Memory:
        """Change a memory's content, tags or category; it is on disk when this returns."""
        key = parse_id(memory_id)
        changes = update_changes(content, tags, category)
        with self._locked(write=True):
            before = self._find(key)
            memory = replace(before, **changes, updated_at=now_iso())
            record = new_record("update", key, before, memory)
            self._commit([{"op": "put", "m": memory.to_dict()}], records=[record])
            self._put(memory)
            return memory

    def delete(self, memory_id: int | str) -> Memory:
        """Remove a memory and return it; it is gone from disk when this returns."""
        key = parse_id(memory_id)
        with self._locked(write=True):
            return self._delete_held(key)

    def stats(self) -> Stats:
        """Totals by category, the most used tags and the most accessed memories.

        ``most_accessed`` is the article's top 5 by ``accessCount``, ties ordered as the digest
        orders them (``memory.model.most_used``).
        """
        with self._locked(write=False):
            return stats_of(list(self._memories.values()))

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
        with self._locked(write=False):
            target = self._find(key)
            return related_to(
                target,
                self._memories.values(),
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
        id more than a day ahead gets a fresh one (``memory.model.renumber``), but not with
        ``history`` (a migration's copy keeps every id). ``renumbered`` receives old -> new.

        All or nothing: one invalid record rejects the whole import. Returns how many were added.
        """
        incoming: dict[int, Memory] = {}
        for number, record in enumerate(records, start=1):
            try:
                memory = Memory.from_dict(record)
            except MemoryInvalid as e:
                raise MemoryInvalid(f"record {number}: {e.message}", field=e.field) from e
            incoming.setdefault(memory.id, memory)
        with self._locked(write=True):
            keys = dict(self._content_keys())
            new = []
            for memory in incoming.values():
                key = content_key(memory.content)
                if memory.id in self._memories or (skip_duplicates and key and key in keys):
                    continue  # already here: by id, or the same content under another id
                if key:
                    keys[key] = memory.id
                new.append(memory)
            if history is None:
                new, moved = renumber(new, self._high_id, self._memories)
                if renumbered is not None:
                    renumbered.update(moved)
                logged = [new_record("import", m.id, None, m) for m in new]
            else:
                held = (r.ref for r in self._changelog.read().records)
                retention = self._changelog.retention
                logged = copied_records(held, history, retention, self._changelog.cutoff())
            if new:
                self._commit([{"op": "put", "m": m.to_dict()} for m in new], records=logged)
                for memory in new:
                    self._put(memory)
            elif logged:  # the memories came before: their history alone
                self._changelog.append(logged)
                self._changelog.trim()
            return len(new)

    def export(self) -> list[dict[str, Any]]:
        """Every memory as an article-format record, in stored order."""
        return [m.to_dict() for m in self.memories()]

    # -- history and undo (memory.history) ------------------------------------------------

    def history(self, memory_id: int | str | None = None) -> ChangeHistory:
        """The changes kept (``memory.history``), oldest first; with ``memory_id``, its own."""
        key = parse_id(memory_id) if memory_id is not None else None
        with self._locked(write=False):
            found = self._changelog.read()
        if key is None:
            return found
        return dataclasses.replace(found, records=tuple(found.of(key)))

    def restore(self, memory: Memory) -> Memory:
        """Put ``memory`` back: re-inserted with its id, times and counts if it is gone; else
        its content, tags and category set back to ``memory``'s. It is on disk on return.

        Re-inserting an id handed out before keeps ids strictly increasing: the next new id is
        still above every id this namespace has seen (within the id clock's reach).
        """
        memory = Memory.from_dict(memory.to_dict())  # validated as an imported record is
        with self._locked(write=True):
            return self._restore_held(memory)

    def revert(self, record: ChangeRecord) -> bool | None:
        """Undo ``record`` for the undo in progress (``memory.history.undo``), checked and
        written under one hold of the lock: True if the memory was as the record left it and
        is now as it was before (deleted, for an add); False if it was not, and is left as it
        is (a ``keep`` record says so); None, writing nothing, if another undo of the same
        change has begun (its records are there)."""
        before = Memory.from_dict(record.before.to_dict()) if record.before is not None else None
        with self._locked(write=True):
            if undone_elsewhere(self._changelog.read().records, current_author()):
                return None
            current = self._memories.get(record.memory_id)
            if state(current) != state(record.after):
                self._changelog.append([new_record("keep", record.memory_id, current, current)])
                return False
            if before is None:
                self._delete_held(record.memory_id)
            else:
                self._restore_held(before)
            return True

    def _delete_held(self, key: int) -> Memory:
        memory = self._find(key)
        self._commit([{"op": "del", "id": key}], records=[new_record("delete", key, memory, None)])
        self._drop(key)
        self._deleted_at[key] = time.time()
        return memory

    def _restore_held(self, memory: Memory) -> Memory:
        current = self._memories.get(memory.id)
        taken = memory.source is not None and memory.source in self._sources
        back = restored(memory, current, taken)
        record = new_record("restore", memory.id, current, back)
        self._commit([{"op": "put", "m": back.to_dict()}], records=[record])
        self._put(back)
        self._deleted_at.pop(memory.id, None)
        return back

    def documents(self) -> FileDocuments:
        """This namespace's documents, beside ``memory.json`` (``memory.files.documents``)."""
        return FileDocuments(self.path)

    def pop_quarantine(self) -> Path | None:
        """Where an unreadable file of this namespace was moved aside; told once."""
        with self._mutex:
            path, self._quarantined = self._quarantined, None
            return path

    def quarantined(self) -> list[Path]:
        """Every unreadable ``memory.json`` moved aside so far, oldest first (for repair)."""
        self.memories()  # loading moves an unreadable memory.json aside
        # The names end in their UTC time, so sorted is oldest first.
        return sorted(self.path.glob(f"{SNAPSHOT}.corrupt-*"))

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
        with self._locked(write=False) as writable:
            found = [self._memories[key] for key in keys if key in self._memories]
            return self._touch(found, persist=writable) if found else []

    # -- housekeeping ---------------------------------------------------------------------

    @property
    def held(self) -> int:
        """How many memories this namespace holds in RAM now (0 once released)."""
        return len(self._memories)

    def flush(self) -> None:
        """Bring ``memory.json`` up to date with every change (compaction)."""
        with self._mutex:
            if self._dirty_since is not None or self._files.pending:
                with self._locked(write=True):
                    self._compact(force=True)

    def maintain(self, compact_seconds: float, idle_seconds: float) -> None:
        """Compact after ``compact_seconds`` of pending changes; release after idling.

        This compaction holds the namespace only to copy its memories and to swap the new
        snapshot in (``_compact_aside``): operations go on while it writes.
        """
        with self._mutex:
            now = time.monotonic()
            due = self._dirty_since is not None and now - self._dirty_since >= compact_seconds
        if due and now >= self._retry_at:
            self._compact_aside()
        with self._mutex:
            if time.monotonic() - self._last_used >= idle_seconds:
                self.release()

    def release(self) -> None:
        """Flush and drop the memories from RAM; the next operation reloads them."""
        with self._mutex:
            self.flush()
            self._files.release()
            self._memories, self._sources, self._keys = {}, {}, None
            self._rankers = _new_rankers(self.path)
            if self._meaning is not None:
                self._meaning.release()
            self._history = History()  # memory.journal.base holds what it knew

    # -- internals --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, *, write: bool, use: bool = True) -> Iterator[bool]:
        """Hold the mutex and the file lock, in sync with disk; yields whether writes can work.

        A read in a data directory that cannot be written (no folder yet, or read-only) runs
        without the file lock rather than failing. Without ``use`` (housekeeping) the
        namespace is not counted as used.
        """
        with self._mutex:
            if use:
                self._last_used = time.monotonic()
            if write:
                self._files.ensure_folder()
            elif not self.path.exists():
                yield False
                return
            try:
                self._files.lock.acquire()
            except OSError as e:
                if write:
                    path = self._files.lock.path
                    raise MemorySaveFailed(f"could not lock {path}: {e.strerror}", path=path) from e
                self._sync(compact=False)
                yield False
                return
            try:
                self._sync(compact=True)
                yield True
                if self._files.journal_lines > max(1000, len(self._memories)):
                    self._compact()  # amortised: the journal has outgrown the snapshot
            finally:
                self._files.idle()  # an idle namespace holds no file open
                self._files.lock.release()

    def _sync(self, *, compact: bool) -> None:
        """Catch up with disk; with ``compact`` (the lock held), write back what must be."""
        # A person's files saved one after another, or found on opening: each merged in turn.
        for _ in range(4):
            self._catch_up()
            if not self._files.pending:
                break
        if self._rewrite:
            self._dirty_since = 0.0
            if compact:
                self._compact(force=True)

    def _catch_up(self) -> None:
        """Apply what changed on disk."""
        change = self._files.poll()
        if change.reload:
            self._reload(change)
            self._history.record(self._memories.values(), self._files.snapshot_mtime)
        skipped = sum(not self._apply(entry) for entry in change.entries)
        if skipped:
            # Keep the journal's bytes: a skipped entry is a change nobody should lose silently.
            kept = self._files.copy_aside(self._files.journal_path)
            change.quarantined.append(kept)
            log.warning(
                "%d journal entries of %s skipped; a copy is in %s", skipped, self.name, kept
            )
            self._dirty_since = 0.0  # compact soon, so that the copy is made once
        if change.edited is not None:
            self._merge(change)
        if change.broken:
            log.warning(
                "%s of %s could not be read; still holding its %d memories, written back to it",
                self._files.snapshot_path.name,
                self.name,
                len(self._memories),
            )
            self._rewrite = True
        if change.quarantined and self._quarantined is None:
            self._quarantined = change.quarantined[0]

    def _merge(self, change: Change) -> None:
        """Take a person's edit of memory.json into what is held (``memory.files.handedit``)."""
        source = change.source or self._files.snapshot_path
        result = merge(
            change.edited or [], change.edited_at, self._memories, self._history, self._deleted_at
        )
        for memory_id in self._memories.keys() - result.memories.keys():
            self._deleted_at[memory_id] = change.edited_at
        self._memories, self._sources, self._keys = {}, {}, None
        self._rankers = _new_rankers(self.path)
        if self._meaning is not None:
            self._meaning.forget_all()
        for memory in result.memories.values():
            self._put(memory)
        self._history.record(result.edited.values(), change.edited_at)
        if result.bad:
            kept = self._files.copy_aside(source)
            change.quarantined.append(kept)
            log.warning("%d unreadable memories in %s; a copy is in %s", result.bad, source, kept)
        if result.conflicts:
            path = write_conflicts(self._files.snapshot_path, result.conflicts)
            log.warning(
                "%s of %s was edited by hand while the store changed it: %d conflicts, the later"
                " change kept, the other side of each in %s",
                source.name,
                self.name,
                len(result.conflicts),
                path,
            )
        log.info("merged a hand edit of %s: %d changes taken", source, result.changed)
        if change.source is not None:
            self._merged.append(change.source)
        self._rewrite = True

    def _reload(self, change: Change) -> None:
        self._memories, self._sources, self._keys = {}, {}, None
        self._rankers = _new_rankers(self.path)
        if self._meaning is not None:
            self._meaning.forget_all()
        bad = 0
        read = Memory.from_store if change.trusted else Memory.from_dict
        for record in change.snapshot:
            try:
                memory = read(record)
            except MemoryInvalid:
                bad += 1
                continue
            if memory.id in self._memories:
                bad += 1
                continue
            self._put(memory)
        if bad:
            # Keep the file's bytes, then rewrite it with what could be read.
            kept = self._files.copy_aside(self._files.snapshot_path)
            change.quarantined.append(kept)
            log.warning("%d unreadable memories in %s; a copy is in %s", bad, self.path, kept)
            self._dirty_since = 0.0

    def _apply(self, entry: dict[str, Any]) -> bool:
        """Replay one journal entry; False if it could not be understood (and was skipped)."""
        try:
            op = entry["op"]
            if op == "put":
                self._put(Memory.from_dict(entry["m"]))
            elif op == "del":
                key = int(entry["id"])
                self._high_id = advanced(self._high_id, key)
                self._drop(key)
                self._deleted_at[key] = time.time()
            elif op == "high":
                self._high_id = advanced(self._high_id, int(entry["id"]))
                return True  # not a change: the snapshot is as current as this line
            elif op == "touch":
                at = str(entry["at"])
                for key, count in dict(entry["n"]).items():
                    memory = self._memories.get(int(key))
                    if memory is not None:
                        self._memories[memory.id] = replace(
                            memory, access_count=int(count), accessed_at=at
                        )
                return True  # bookkeeping: stays in the journal, no reason to compact
            else:
                raise ValueError(op)
        except (KeyError, TypeError, ValueError, MemoryStoreError):
            log.warning("skipped a journal entry of %s: %r", self.name, entry)
            return False
        self._changes += 1
        if self._dirty_since is None:
            self._dirty_since = time.monotonic()
        return True

    def _content_keys(self) -> dict[str, int]:
        """Content key -> the id of a held memory with it (every key held has one)."""
        if self._keys is None:
            self._keys, self._shadowed = {}, False
            for memory in self._memories.values():
                self._key_in(memory)
        return self._keys

    def _key_in(self, memory: Memory) -> None:
        key = content_key(memory.content)
        if key and self._keys is not None and self._keys.setdefault(key, memory.id) != memory.id:
            self._shadowed = True

    def _key_out(self, memory: Memory) -> None:
        key = content_key(memory.content)
        if self._keys is not None and self._keys.get(key) == memory.id:
            del self._keys[key]
            if self._shadowed:
                self._keys = None  # another memory may have that key: built again when asked

    def _put(self, memory: Memory) -> None:
        old = self._memories.get(memory.id)
        if old is not None:
            self._key_out(old)
        self._memories[memory.id] = memory
        self._key_in(memory)
        if memory.source is not None:
            self._sources[memory.source] = memory.id
        self._high_id = advanced(self._high_id, memory.id)
        for ranker in self._rankers.values():
            ranker.index(memory)
        if self._meaning is not None:
            self._meaning.note(memory.id, memory.content)

    def _drop(self, memory_id: int) -> None:
        memory = self._memories.pop(memory_id, None)
        if memory is not None and memory.source is not None:
            self._sources.pop(memory.source, None)
        if memory is not None:
            self._key_out(memory)
        for ranker in self._rankers.values():
            ranker.unindex(memory_id)
        if self._meaning is not None:
            self._meaning.forget(memory_id)

    def _find(self, memory_id: int) -> Memory:
        try:
            return self._memories[memory_id]
        except KeyError:
            raise MemoryNotFound(memory_id) from None

    def _touch(self, found: list[Memory], *, persist: bool) -> list[Memory]:
        at = now_iso()
        touched = [replace(m, access_count=m.access_count + 1, accessed_at=at) for m in found]
        if persist:
            entry = {"op": "touch", "at": at, "n": {str(m.id): m.access_count for m in touched}}
            try:
                self._commit([entry], durable=False)
            except MemoryStoreError as e:
                # Access counts are bookkeeping, not the user's data: a search still answers.
                log.warning("access counts of %s not saved: %s", self.name, e.message)
        for memory in touched:
            self._memories[memory.id] = memory
        return touched

    def _commit(
        self,
        entries: list[dict[str, Any]],
        *,
        durable: bool = True,
        records: list[ChangeRecord] | None = None,
    ) -> None:
        """Append ``entries`` to the journal; ``records`` of the change to the history first
        (write-ahead: no change stands without its record; ``memory.files.changelog``)."""
        mark = self._changelog.append(records) if records else None
        try:
            self._files.append(entries, durable=durable)
        except MemoryStoreError:
            if mark is not None:
                self._changelog.cut(mark)
            raise
        if records:
            try:
                self._changelog.trim()
            except MemoryStoreError as e:  # retention only: the records are all there
                log.warning("could not trim the history of %s: %s", self.name, e.message)
        if not durable:
            return  # a touch alone is not worth a rewrite
        self._changes += 1
        if self._dirty_since is None:
            self._dirty_since = time.monotonic()

    def _compact_aside(self) -> None:
        """Compact holding the namespace only to copy its memories, then to swap the file in.

        The records are copied under the lock (memories are immutable values: a list of them
        is a consistent copy), serialised and written (fsynced) to a temporary file without
        it, then swapped in under the lock with the same checked replace as ``_compact``;
        journal lines appended meanwhile stay in the new journal. Whenever the files moved
        on in a way the copy does not follow (a hand edit to merge, another process's
        compaction, a failure), it falls back to ``_compact`` under the lock.
        """
        with self._locked(write=True, use=False):
            if self._rewrite or self._merged or self._files.pending or self._dirty_since is None:
                self._compact(force=True)  # the careful path, and hand edits, as ever
                return
            memories = list(self._memories.values())
            mark, changes = self._files.mark(), self._changes
        try:
            records = (m.to_dict() for m in memories)
            prepared = self._files.prepare(records, mark, pause=_let_others_run)
        except MemoryStoreError as e:
            log.warning("could not write ahead a snapshot of %s: %s", self.name, e.message)
            with self._locked(write=True, use=False):
                self._compact()  # with its back-off and its logging of failures
            return
        compared = self._history.compare(memories)
        with self._locked(write=True, use=False):
            if not self._files.current(prepared):
                self._files.discard(prepared)
                if self._dirty_since is not None:  # not compacted by whoever moved the files
                    self._compact(force=True)
                return
            try:
                written = self._files.compact([], self._high_id, prepared)
            except MemoryStoreError:
                self._compact()  # with its back-off and its logging of failures
                return
            if not written or self._files.pending or self._files.kept:
                self._compact(force=True)  # a person saved meanwhile: merge, as ever
                return
            self._history.record(memories, self._files.snapshot_mtime, compared=compared)
            if self._failures:
                log.warning("compacted %s again after %d failures", self.name, self._failures)
            self._failures, self._retry_at = 0, 0.0
            self._dirty_since = None if self._changes == changes else time.monotonic()
            ranker = self._rankers["default"]
        if isinstance(ranker, Bm25Ranker):
            ranker.persist()  # the search index: only a cache, and it has its own lock

    def _compact(self, *, force: bool = False) -> None:
        """Write memory.json from what is held, unless a failure asks to wait (``force``: try).

        A person may save memory.json meanwhile: it is merged, and compaction tried again.
        """
        now = time.monotonic()
        if not force and now < self._retry_at:
            return
        for _ in range(3):
            memories = list(self._memories.values())
            try:
                written = self._files.compact([m.to_dict() for m in memories], self._high_id)
            except MemoryStoreError as e:
                # The journal still holds every change; compaction is tried again later.
                self._failures += 1
                self._retry_at = now + min(BACKOFF_MAX, BACKOFF * 2 ** min(self._failures, 8))
                if self._failures == 1:
                    log.warning(
                        "could not compact %s: %s (the journal keeps every change; tried again"
                        " with back-off, logged again once it works)",
                        self.name,
                        e.message,
                    )
                return
            if self._files.kept and self._quarantined is None:
                self._quarantined = self._files.kept[-1]
            self._files.kept.clear()
            if written:
                self._history.record(memories, self._files.snapshot_mtime)
                for source in self._merged:
                    self._files.done_with(source)
                self._merged = []
                if not self._files.pending:
                    break
            self._sync(compact=False)  # merge what a person saved meanwhile, then again
        else:
            return  # saved again and again: the next operation tries again
        if self._failures:
            log.warning("compacted %s again after %d failures", self.name, self._failures)
        self._failures, self._retry_at = 0, 0.0
        self._dirty_since = None
        ranker = self._rankers["default"]
        if isinstance(ranker, Bm25Ranker):
            ranker.persist()  # the search index beside the new snapshot; only a cache
        self._rewrite = False
