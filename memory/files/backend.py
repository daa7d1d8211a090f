"""The file backend of a namespace (``memory.backend``): a folder, its files and its lock.

Every operation holds the namespace's mutex (the namespace takes it) and the folder's ``flock``
(other processes; ``_locked``), then catches up with whatever other processes appended to the
journal before acting (``memory.files.folder``). Reads in a folder that cannot be written
still answer, without the lock; writes there raise ``MemorySaveFailed``. A change is a journal
line (``memory.files.journal``), fsynced before the operation returns, after its history
records (``memory.files.changelog``, write-ahead: no change stands without its record); a touch
an unflushed line. The id clock is the highest id seen within reach, deleted ones too, and
survives compaction in the journal's first line.

A ``memory.json`` edited by hand while the namespace is held is merged into it, never taken
wholesale (``memory.files.handedit``); one that cannot be read leaves what is held in place,
and is written back from it. Compaction writes ``memory.json`` from what is held: amortised,
when the journal outgrows the snapshot; in the background, after ``compact_seconds`` of
pending changes (``maintain``, holding the namespace only to copy and to swap: operations go on
while it writes); and on release. One that fails (a full disk) is retried with back-off, and
logged once per change of state.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from memory.backoff import Backoff
from memory.bm25 import Bm25Ranker
from memory.errors import MemoryInvalid, MemorySaveFailed, MemoryStoreError
from memory.files.changelog import ChangeLog
from memory.files.compaction import discard
from memory.files.documents import FileDocuments
from memory.files.folder import SNAPSHOT, Change, NamespaceFiles
from memory.files.handedit import History as Written
from memory.files.handedit import merge, write_conflicts
from memory.files.io import CacheFile, copy_aside
from memory.files.vectors import FileVectors
from memory.held import Held
from memory.history import Author, ChangeRecord, History, Retention, undone_elsewhere
from memory.ids import advanced
from memory.model import Memory

log = logging.getLogger(__name__)
T = TypeVar("T")

INDEX_FILE = "memory.index"
BACKOFF = 5.0  # seconds before compaction is tried again after a failure, doubling
BACKOFF_MAX = 300.0
WRITER_PAUSE = 0.0005  # seconds: longer than a waiting thread takes to wake and take the GIL


def _let_others_run() -> None:
    """A pause in long background work, so that an operation waiting for the interpreter (the
    GIL) gets it now, not after the switch interval each time it lets go (see
    ``memory.jsontext.dump_records``)."""
    time.sleep(WRITER_PAUSE)


class FileBackend:
    """One namespace's folder (see the module docstring); its own ``Writing`` too."""

    def __init__(self, folder: Path, name: str, retention: Retention | None = None) -> None:
        self.name = name
        self.path = folder
        self._files = NamespaceFiles(folder)
        self.retention = retention or Retention()
        self._changelog = ChangeLog(folder, self.retention)  # memory.history
        self.high_id = 0  # the id clock: the highest id seen within reach, deleted ones too
        self._quarantined: Path | None = None
        self._last_used = time.monotonic()
        self._deleted_at: dict[int, float] = {}  # epoch seconds of each delete seen
        self._dirty_since: float | None = None  # monotonic time of the oldest uncompacted change
        self._written = Written()  # what compaction wrote, to tell a person's edits apart
        self._rewrite = False  # memory.json must be written from what is held (merged, broken)
        self._merged: list[Path] = []  # displaced files merged, removed once compacted
        self._backoff = Backoff(BACKOFF, BACKOFF_MAX)  # compaction's failures, monotonic time
        self._changes = 0  # changes taken in so far (puts, deletes; not touches)
        self._held: Held  # the namespace's, from ``hold``
        self._mutex: threading.RLock

    def hold(self, held: Held, mutex: threading.RLock) -> None:
        self._held, self._mutex = held, mutex

    # -- the port ---------------------------------------------------------------------------

    def reading(self, *, use: bool = True) -> contextlib.AbstractContextManager[bool]:
        return self._locked(write=False, use=use)

    def writing(self, block: Callable[[FileBackend], T]) -> T:
        """Run ``block`` once, under the folder's lock: it never runs on a stale state."""
        with self._locked(write=True):
            return block(self)

    def commit(
        self,
        *,
        puts: Sequence[Memory] = (),
        deletes: Sequence[int] = (),
        records: Sequence[ChangeRecord] = (),
    ) -> None:
        """Append the change to the journal (fsynced); its ``records`` to the history first."""
        entries: list[dict[str, Any]] = [{"op": "put", "m": m.to_dict()} for m in puts]
        entries += [{"op": "del", "id": key} for key in deletes]
        mark = self._changelog.append(list(records)) if records else None
        if entries:
            try:
                self._files.journal.append(entries, durable=True)
            except MemoryStoreError:
                if mark is not None:
                    self._changelog.cut(mark)
                raise
        if records:
            try:
                self._changelog.trim()
            except MemoryStoreError as e:  # retention only: the records are all there
                log.warning("could not trim the history of %s: %s", self.name, e.message)
        if entries:
            self._changed()
        for memory in puts:
            self._put(memory)
            self._deleted_at.pop(memory.id, None)
        for key in deletes:
            self._held.drop(key)
            self._deleted_at[key] = time.time()

    def refs(self) -> Iterable[str]:
        return (record.ref for record in self._changelog.read().records)

    def undone_elsewhere(self, author: Author) -> bool:
        return undone_elsewhere(self._changelog.read().records, author)

    def touch(self, counted: list[Memory], *, save: bool) -> list[Memory]:
        """An unflushed journal line of absolute counts; held even if it cannot be written
        (``memory.json`` is written from what is held)."""
        try:
            if save:
                counts = {str(m.id): m.access_count for m in counted}
                entry = {"op": "touch", "at": counted[0].accessed_at, "n": counts}
                journal = self._files.journal
                journal.append([entry], durable=False)  # not worth a rewrite, nor a flush
        finally:
            self._held.count(counted)
        return counted

    def history(self) -> History:
        with self._locked(write=False):
            return self._changelog.read()

    def documents(self) -> FileDocuments:
        """The documents beside ``memory.json`` (``memory.files.documents``)."""
        return FileDocuments(self.path)

    def vectors(self) -> FileVectors:
        """``memory.vectors`` beside ``memory.json`` (``memory.files.vectors``)."""
        return FileVectors(self.path)

    def index_cache(self) -> CacheFile:
        """The search index's analysed memories, beside the snapshot (``memory.termindex``)."""
        return CacheFile(self.path / INDEX_FILE)

    def pop_quarantine(self) -> Path | None:
        """Where an unreadable file of this namespace was moved aside; told once."""
        path, self._quarantined = self._quarantined, None
        return path

    def quarantined(self) -> list[Path]:
        """Every unreadable ``memory.json`` moved aside so far, oldest first (for repair)."""
        with self._locked(write=False):
            pass  # loading moves an unreadable memory.json aside
        # The names end in their UTC time, so sorted is oldest first.
        return sorted(self.path.glob(f"{SNAPSHOT}.corrupt-*"))

    # -- housekeeping -------------------------------------------------------------------------

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
        if due and now >= self._backoff.retry_at:
            self._compact_aside()
        with self._mutex:
            if time.monotonic() - self._last_used >= idle_seconds:
                self.release()

    def release(self) -> None:
        """Flush and drop the memories from RAM; the next operation reloads them."""
        with self._mutex:
            self.flush()
            self._files.release()
            self._held.release()
            self._written = Written()  # memory.journal.base holds what it knew

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
            try:
                self._files.lock.acquire()
            except OSError as e:
                if write:
                    path = self._files.lock.path
                    raise MemorySaveFailed(f"could not lock {path}: {e.strerror}", path=path) from e
                if self.path.exists():  # asked only now: a stat an operation saved
                    self._sync(compact=False)
                yield False
                return
            try:
                self._sync(compact=True)
                yield True
                if self._files.journal.lines > max(1000, len(self._held)):
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
            self._written.record(self._held.memories.values(), self._files.snapshot_mtime)
        skipped = sum(not self._apply(entry) for entry in change.entries)
        if skipped:
            # Keep the journal's bytes: a skipped entry is a change nobody should lose silently.
            kept = copy_aside(self._files.journal.path)
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
                len(self._held),
            )
            self._rewrite = True
        if change.quarantined and self._quarantined is None:
            self._quarantined = change.quarantined[0]

    def _merge(self, change: Change) -> None:
        """Take a person's edit of memory.json into what is held (``memory.files.handedit``)."""
        source = change.source or self._files.snapshot_path
        held = self._held
        result = merge(
            change.edited or [], change.edited_at, held.memories, self._written, self._deleted_at
        )
        for memory_id in held.memories.keys() - result.memories.keys():
            self._deleted_at[memory_id] = change.edited_at
        held.clear()
        for memory in result.memories.values():
            self._put(memory)
        self._written.record(result.edited.values(), change.edited_at)
        if result.bad:
            kept = copy_aside(source)
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
        self._held.clear()
        bad = 0
        read = Memory.from_store if change.trusted else Memory.from_dict
        for record in change.snapshot:
            try:
                memory = read(record)
            except MemoryInvalid:
                bad += 1
                continue
            if memory.id in self._held.memories:
                bad += 1
                continue
            self._put(memory)
        if bad:
            # Keep the file's bytes, then rewrite it with what could be read.
            kept = copy_aside(self._files.snapshot_path)
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
                self.high_id = advanced(self.high_id, key)
                self._held.drop(key)
                self._deleted_at[key] = time.time()
            elif op == "high":
                self.high_id = advanced(self.high_id, int(entry["id"]))
                return True  # not a change: the snapshot is as current as this line
            elif op == "touch":
                at, memories = str(entry["at"]), self._held.memories
                counted = [
                    replace(memories[int(key)], access_count=int(count), accessed_at=at)
                    for key, count in dict(entry["n"]).items()
                    if int(key) in memories
                ]
                self._held.count(counted)
                return True  # bookkeeping: stays in the journal, no reason to compact
            else:
                raise ValueError(op)
        except (KeyError, TypeError, ValueError, MemoryStoreError):
            log.warning("skipped a journal entry of %s: %r", self.name, entry)
            return False
        self._changed()
        return True

    def _put(self, memory: Memory) -> None:
        self._held.put(memory)
        self.high_id = advanced(self.high_id, memory.id)

    def _changed(self) -> None:
        """One more change taken in (by this process or read from the journal)."""
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
            memories = list(self._held.memories.values())
            mark, changes = self._files.mark(), self._changes
        try:
            records = (m.to_dict() for m in memories)
            prepared = self._files.prepare(records, mark, pause=_let_others_run)
        except MemoryStoreError as e:
            log.warning("could not write ahead a snapshot of %s: %s", self.name, e.message)
            with self._locked(write=True, use=False):
                self._compact()  # with its back-off and its logging of failures
            return
        compared = self._written.compare(memories)
        with self._locked(write=True, use=False):
            if not self._files.current(prepared):
                discard(prepared)
                if self._dirty_since is not None:  # not compacted by whoever moved the files
                    self._compact(force=True)
                return
            try:
                written = self._files.compact([], self.high_id, prepared)
            except MemoryStoreError:
                self._compact()  # with its back-off and its logging of failures
                return
            if not written or self._files.pending or self._files.kept:
                self._compact(force=True)  # a person saved meanwhile: merge, as ever
                return
            self._written.record(memories, self._files.snapshot_mtime, compared=compared)
            failures = self._backoff.recovered()
            if failures:
                log.warning("compacted %s again after %d failures", self.name, failures)
            self._dirty_since = None if self._changes == changes else time.monotonic()
            ranker = self._held.rankers["default"]
        if isinstance(ranker, Bm25Ranker):
            ranker.persist()  # the search index: only a cache, and it has its own lock

    def _compact(self, *, force: bool = False) -> None:
        """Write memory.json from what is held, unless a failure asks to wait (``force``: try).

        A person may save memory.json meanwhile: it is merged, and compaction tried again.
        """
        now = time.monotonic()
        if not force and now < self._backoff.retry_at:
            return
        for _ in range(3):
            memories = list(self._held.memories.values())
            try:
                written = self._files.compact([m.to_dict() for m in memories], self.high_id)
            except MemoryStoreError as e:
                # The journal still holds every change; compaction is tried again later.
                if self._backoff.failed(now):
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
                self._written.record(memories, self._files.snapshot_mtime)
                for source in self._merged:
                    self._files.done_with(source)
                self._merged = []
                if not self._files.pending:
                    break
            self._sync(compact=False)  # merge what a person saved meanwhile, then again
        else:
            return  # saved again and again: the next operation tries again
        failures = self._backoff.recovered()
        if failures:
            log.warning("compacted %s again after %d failures", self.name, failures)
        self._dirty_since = None
        ranker = self._held.rankers["default"]
        if isinstance(ranker, Bm25Ranker):
            ranker.persist()  # the search index beside the new snapshot; only a cache
        self._rewrite = False
