"""One namespace in PostgreSQL: its memories cached in the process, checked on every operation.

Search ranks in the process, with the same rankers as the file store (``memory.bm25``,
``memory.ranking``) over the same values in the same order, so both backends give the same
hits and the same scores. The cache is never stale: every operation first asks for the rows
changed since the version it holds (``memory_namespaces.version``, ``memories.changed``), in
one statement and so in one snapshot; when nothing changed that is one short round trip.

A write locks the namespace's row (``UPDATE ... SET version = version + 1 RETURNING``), which
serialises the namespace's writers across processes, catches up under that lock, then writes
and commits; the cache takes the change only once the commit succeeded. Ids are millisecond
timestamps, strictly increasing per namespace across processes: ``max(now_ms, high_id + 1)``,
chosen under the row lock, where ``high_id`` counts only ids within a day of now
(``memory.model.new_id``: an imported id beyond that is renumbered, one held is stepped
around). A search's touch adds one to each hit's count in the database (``access_count + 1``),
so two processes' touches add up, and commits without waiting for the disk, as the file
store's touch is not fsynced.

The change history (``memory.history``) is a table: a change's records are inserted in the
change's own transaction, so no change stands without its record, and none without its change;
the retention is the file store's (``Retention``: the newest ``max``, none older than ``days``).
Search by meaning reuses the file store's pieces (``memory.meaning``, ``memory.hybrid``) with
the vectors in ``memory_vectors`` (``PgVectors``).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

import numpy as np

from memory.bm25 import Bm25Ranker
from memory.duplicates import Near, near_duplicates
from memory.embedding import Embedder
from memory.errors import MemoryInvalid, MemoryNotFound, MemoryStoreError
from memory.files.namespace import NEAR_CANDIDATES, RANKERS, _same_file
from memory.history import (
    ChangeRecord,
    History,
    Retention,
    copied_records,
    current_author,
    new_record,
    state,
)
from memory.hybrid import dense_query, rank
from memory.interface import SearchStatus, VectorSet
from memory.meaning import Meaning
from memory.model import (
    ID_REACH_MS,
    Added,
    Hit,
    Memory,
    Stats,
    clean_category,
    clean_content,
    clean_date,
    clean_extra,
    clean_tags,
    clock_ms,
    clock_of,
    format_time,
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
from memory.pg.database import Database
from memory.ranking import Ranker, SeedRanker
from memory.text import content_key

if TYPE_CHECKING:
    from memory.pg.documents import PgDocuments

log = logging.getLogger(__name__)

COLUMNS = (
    "id, seq, deleted, content, tags, category, created_at, accessed_at, access_count,"
    " updated_at, source, date, attachment, origin"
)
# The rows changed since a version, and the namespace's version, in one snapshot.
CHANGES = f"""
    SELECT n.version, m.{COLUMNS.replace(", ", ", m.")}
    FROM (SELECT %(name)s::text AS name) AS wanted
    LEFT JOIN memory_namespaces n ON n.name = wanted.name
    LEFT JOIN memories m ON m.namespace = wanted.name AND m.changed > %(since)s
        AND n.version IS DISTINCT FROM %(since)s
    ORDER BY m.seq
"""
LOCK = """
    INSERT INTO memory_namespaces (name, version) VALUES (%s, 1)
    ON CONFLICT (name) DO UPDATE SET version = memory_namespaces.version + 1
    RETURNING version, high_id
"""
# A record of another undo of the change an undo reverts (``memory.history.undone_elsewhere``).
UNDONE = """
    SELECT 1 FROM memory_history WHERE namespace = %s AND record::jsonb ->> 'undoes' = %s
        AND record::jsonb ->> 'change' <> %s LIMIT 1
"""
UPSERT = f"""
    INSERT INTO memories (namespace, changed, {COLUMNS})
    VALUES (%s, %s, %s, nextval('memory_seq'), false, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,
        %s)
    ON CONFLICT (namespace, id) DO UPDATE SET
        changed = excluded.changed, deleted = false, content = excluded.content,
        tags = excluded.tags, category = excluded.category, created_at = excluded.created_at,
        accessed_at = excluded.accessed_at, access_count = excluded.access_count,
        updated_at = excluded.updated_at, source = excluded.source, date = excluded.date,
        attachment = excluded.attachment, origin = excluded.origin,
        seq = CASE WHEN memories.deleted THEN excluded.seq ELSE memories.seq END
"""


def _new_rankers() -> dict[str, Ranker]:
    return {"default": Bm25Ranker(), "seed": SeedRanker()}


def _json(value: Mapping[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(dict(value), ensure_ascii=False)


def _unjson(text: str | None) -> dict[str, Any] | None:
    return None if text is None else dict(json.loads(text))


def _memory(row: tuple[Any, ...]) -> Memory:
    _, _, _, content, tags, category, created, accessed, count, updated, source = row[:11]
    date, attachment, origin = row[11:14]
    return Memory(
        row[0],
        content,
        tuple(tags),
        category,
        created,
        accessed,
        count,
        updated,
        source,
        date,
        _unjson(attachment),
        _unjson(origin),
    )


def _values(memory: Memory) -> tuple[Any, ...]:
    return (
        memory.id,
        memory.content,
        list(memory.tags),
        memory.category,
        memory.created_at,
        memory.accessed_at,
        memory.access_count,
        memory.updated_at,
        memory.source,
        memory.date,
        _json(memory.attachment),
        _json(memory.origin),
    )


class PgVectors:
    """A namespace's embeddings in ``memory_vectors`` (``memory.interface.VectorStore``)."""

    def __init__(self, database: Database, name: str) -> None:
        self._db = database
        self.name = name

    def load(self, model: str, dimensions: int) -> VectorSet | None:
        """The stored vectors of ``model`` at ``dimensions`` (None if there are none, or if
        the database cannot be read: only derived data, embedded again)."""
        try:
            with self._db.transaction(write=False) as connection:
                rows = connection.execute(
                    "SELECT key, vector FROM memory_vectors WHERE namespace = %s AND model = %s"
                    " AND dimensions = %s",
                    (self.name, model, dimensions),
                ).fetchall()
        except MemoryStoreError as e:
            log.warning("vectors of %s not read (embedding again): %s", self.name, e.message)
            return None
        good = [(bytes(k), bytes(v)) for k, v in rows if len(bytes(v)) == 4 * dimensions]
        if not good:
            return None
        matrix = np.frombuffer(b"".join(v for _, v in good), dtype="<f4")
        vectors = matrix.astype(np.float32).reshape(len(good), dimensions)
        return VectorSet(model, dimensions, tuple(k for k, _ in good), vectors)

    def stored(self) -> list[tuple[str, int]]:
        """The models (and sizes) with vectors here, sorted."""
        with self._db.transaction(write=False) as connection:
            rows = connection.execute(
                "SELECT DISTINCT model, dimensions FROM memory_vectors WHERE namespace = %s"
                " ORDER BY model, dimensions",
                (self.name,),
            ).fetchall()
        return [(str(model), int(dimensions)) for model, dimensions in rows]

    def save(self, vectors: VectorSet) -> None:
        """Replace the stored vectors of that model, in one transaction."""
        matrix = np.ascontiguousarray(vectors.vectors, dtype="<f4")
        if matrix.shape != (len(vectors.keys), vectors.dimensions):
            raise ValueError(f"vectors of shape {matrix.shape} for {len(vectors.keys)} keys")
        rows = [
            (self.name, vectors.model, vectors.dimensions, key, matrix[i].tobytes())
            for i, key in enumerate(vectors.keys)
        ]
        with self._db.transaction(write=True, durable=False) as connection:
            connection.execute(
                "DELETE FROM memory_vectors WHERE namespace = %s AND model = %s"
                " AND dimensions = %s",
                (self.name, vectors.model, vectors.dimensions),
            )
            with connection.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO memory_vectors (namespace, model, dimensions, key, vector)"
                    " VALUES (%s, %s, %s, %s, %s)",
                    rows,
                )


class PgNamespace:
    """One namespace's memories in PostgreSQL, with the article's operations. Thread-safe."""

    def __init__(
        self,
        database: Database,
        name: str,
        documents: PgDocuments,
        retention: Retention | None = None,
        *,
        embedder: Embedder | None = None,
        wake: Callable[[PgNamespace], None] | None = None,
        wait: Callable[[float | None], bool] | None = None,
    ) -> None:
        self.name = name
        self._db = database
        self._documents = documents
        self._retention = retention or Retention()
        self._mutex = threading.RLock()
        self._version = -1  # the namespace version the cache holds; -1: nothing loaded
        self._memories: dict[int, Memory] = {}
        self._sources: dict[str, int] = {}
        self._keys: dict[str, set[int]] = {}  # content_key -> the ids of memories with it
        self._rankers = _new_rankers()
        self._meaning: Meaning | None = None
        self._wait = wait
        if embedder is not None:
            wake_me = (lambda: wake(self)) if wake is not None else (lambda: None)
            vectors = PgVectors(database, name)
            self._meaning = Meaning(name, vectors, embedder, self._mutex, wake_me)

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
        """Store a new memory, committed when this returns (``add_unique`` says more)."""
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
        """Store a new memory unless its content is stored (as ``memory.namespace``'s): a
        known ``source`` gives that memory back, the same content (after folding, from the
        same file if any) gives that memory as a ``duplicate``; neither writes anything."""
        content, clean, day = clean_content(content), clean_tags(tags), clean_date(date)
        group = clean_category(category)
        kept, came_from = clean_extra(attachment, "attachment"), clean_extra(origin, "origin")
        if source is not None and (not isinstance(source, str) or not 0 < len(source) <= 200):
            raise MemoryInvalid("source must be text of 1 to 200 characters", field="source")
        with self._mutex, self._db.transaction(write=True) as connection:
            version, high_id = self._lock(connection)
            if source is not None and source in self._sources:
                return Added(self._memories[self._sources[source]])
            key = content_key(content)
            for same in sorted(self._keys.get(key, ())) if key else ():
                if _same_file(self._memories[same].attachment, kept):
                    return Added(self._memories[same], duplicate=True)
            now_ms = clock_ms()
            at = format_time_ms(now_ms)
            memory_id = new_id(high_id, now_ms, self._memories)
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
            self._write(connection, version, [memory])
            self._record(connection, [new_record("add", memory.id, None, memory)])
        self._taken(version, [memory])
        return Added(memory)

    def similar(self, content: str) -> list[Near]:
        """The stored memories that may say what ``content`` says (``memory.duplicates``);
        the candidates are the best search hits for it (nothing counted as used)."""
        content = clean_content(content)
        with self._mutex:
            self._refresh()
            ranked = self._rankers["default"].rank(content, self._memories, NEAR_CANDIDATES)
            candidates = [self._memories[mid] for mid, _ in ranked]
        return near_duplicates(content, candidates)

    def search(
        self, query: str, limit: int = 10, *, ranker: str = "default", touch: bool = True
    ) -> list[Hit]:
        """The memories that best answer ``query``, best first; hits are touched and saved."""
        if not isinstance(query, str) or not query.strip():
            raise MemoryInvalid("the search query is empty", field="query")
        limit = parse_limit(limit)
        if ranker not in RANKERS:
            raise MemoryInvalid(f"unknown ranker {ranker!r}; use one of {RANKERS}", field="ranker")
        meaning = self._meaning if ranker == "hybrid" else None
        # Embedded before taking the namespace: other operations go on meanwhile.
        vector = meaning.query_vector(dense_query(query)) if meaning is not None else None
        with self._mutex:
            self._refresh()
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
                found = self._touch(found)
            return [
                Hit(memory, score, evidence)
                for memory, (_, score, evidence) in zip(found, ranked, strict=True)
            ]

    def search_status(self) -> SearchStatus:
        """Whether "hybrid" searches use meaning, and how much is embedded so far."""
        if self._meaning is None:
            return SearchStatus("keywords")
        with self._mutex:
            self._refresh()
            return self._meaning.status()

    def wait_for_embeddings(self, timeout: float | None = None) -> bool:
        """Embed every memory lacking a vector before returning (False: ``timeout`` passed)."""
        self.search_status()  # loads the memories, which notes what lacks a vector
        return self._wait(timeout) if self._wait is not None else True

    def vectors(self) -> PgVectors:
        """Where this namespace's embeddings are kept (``memory_vectors``)."""
        return PgVectors(self._db, self.name)

    def embed_step(self) -> int:
        """Embed a batch of memories that lack a vector; how many (0: none left). For the
        store's background worker (``memory.meaning``), and benchmarks that wait for it."""
        if self._meaning is None:
            return 0
        with self._mutex:
            self._refresh()
        return self._meaning.embed_step()

    def memories(self, category: str | None = None) -> list[Memory]:
        """All memories in stored order, or those of one category."""
        with self._mutex:
            self._refresh()
            if category is None:
                return list(self._memories.values())
            group = clean_category(category)
            return [m for m in self._memories.values() if m.category == group]

    def get(self, memory_id: int | str) -> Memory:
        """The memory with this id (``MemoryNotFound`` if there is none)."""
        key = parse_id(memory_id)
        with self._mutex:
            self._refresh()
            return self._find(key)

    def update(
        self,
        memory_id: int | str,
        *,
        content: str | None = None,
        tags: Iterable[str] | str | None = None,
        category: str | None = None,
    ) -> Memory:
        """Change a memory's content, tags or category, committed when this returns."""
        key = parse_id(memory_id)
        changes = update_changes(content, tags, category)
        with self._mutex, self._db.transaction(write=True) as connection:
            version, _ = self._lock(connection)
            before = self._find(key)
            memory = replace(before, **changes, updated_at=now_iso())
            self._write(connection, version, [memory])
            self._record(connection, [new_record("update", key, before, memory)])
        self._taken(version, [memory])
        return memory

    def delete(self, memory_id: int | str) -> Memory:
        """Remove a memory and return it, committed when this returns."""
        key = parse_id(memory_id)
        with self._mutex, self._db.transaction(write=True) as connection:
            version, _ = self._lock(connection)
            memory = self._delete_in(connection, version, key)
        self._drop(key)
        self._version = version
        return memory

    def stats(self) -> Stats:
        """Totals by category, the most used tags and the most accessed memories (ties
        ordered as ``memory.model.most_used`` orders them, as the file store does)."""
        return stats_of(self.memories())

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
        first; without ``default_category`` sharing the default category scores nothing."""
        key = parse_id(memory_id)
        limit = parse_limit(limit)
        with self._mutex:
            self._refresh()
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
        """Add article-format records, ids kept; ids or contents already present are skipped
        (only ids without ``skip_duplicates``); all or nothing. How many were added.
        ``history``: the records to keep instead of ``import`` ones (``MemoryNamespace``); an
        id more than a day ahead gets a fresh one (``memory.model.renumber``), but not with
        ``history`` (a migration's copy keeps every id). ``renumbered`` receives old -> new."""
        incoming: dict[int, Memory] = {}
        for number, record in enumerate(records, start=1):
            try:
                memory = Memory.from_dict(record)
            except MemoryInvalid as e:
                raise MemoryInvalid(f"record {number}: {e.message}", field=e.field) from e
            incoming.setdefault(memory.id, memory)
        with self._mutex, self._db.transaction(write=True) as connection:
            version, high_id = self._lock(connection)
            keys = set(self._keys)
            new = []
            for memory in incoming.values():
                key = content_key(memory.content)
                if memory.id in self._memories or (skip_duplicates and key and key in keys):
                    continue  # already here: by id, or the same content under another id
                if key:
                    keys.add(key)
                new.append(memory)
            if history is None:
                new, moved = renumber(new, high_id, self._memories)
                if renumbered is not None:
                    renumbered.update(moved)
                logged = [new_record("import", m.id, None, m) for m in new]
            else:
                held = connection.execute(
                    "SELECT record::jsonb ->> 'ref' FROM memory_history WHERE namespace = %s",
                    (self.name,),
                ).fetchall()
                refs = (ref for (ref,) in held)
                logged = copied_records(refs, history, self._retention, self._cutoff())
            if new:
                self._write(connection, version, new)
            if logged:
                self._record(connection, logged)
        if new:
            self._taken(version, new)
        return len(new)

    def export(self) -> list[dict[str, Any]]:
        """Every memory as an article-format record, in stored order."""
        return [m.to_dict() for m in self.memories()]

    # -- history and undo (memory.history) ------------------------------------------------

    def history(self, memory_id: int | str | None = None) -> History:
        """The changes kept (``memory.history``), oldest first; with ``memory_id``, its own."""
        key = parse_id(memory_id) if memory_id is not None else None
        with self._db.transaction(write=False) as connection:
            rows = connection.execute(
                "SELECT record FROM memory_history WHERE namespace = %s AND at >= %s ORDER BY seq",
                (self.name, self._cutoff()),
            ).fetchall()
        records: list[ChangeRecord] = []
        bad = 0
        for (text,) in rows:
            try:
                records.append(ChangeRecord.from_dict(json.loads(text)))
            except (ValueError, MemoryInvalid, RecursionError):
                bad += 1  # only rows another writer damaged: counted, never dropped silently
        found = History(tuple(records[-self._retention.max :]), bad)
        if key is None:
            return found
        return dataclasses.replace(found, records=tuple(found.of(key)))

    def restore(self, memory: Memory) -> Memory:
        """Put ``memory`` back: re-inserted with its id, times and counts if it is gone; else
        its content, tags and category set back to ``memory``'s. Committed on return."""
        memory = Memory.from_dict(memory.to_dict())  # validated as an imported record is
        with self._mutex, self._db.transaction(write=True) as connection:
            version, _ = self._lock(connection)
            back = self._restore_in(connection, version, memory)
        self._taken(version, [back])
        return back

    def revert(self, record: ChangeRecord) -> bool | None:
        """Undo ``record`` for the undo in progress, checked and written in one transaction
        under the namespace's row lock (as ``memory.namespace``'s: True reverted, False left
        as it is with a ``keep`` record, None if another undo of the change has begun)."""
        before = Memory.from_dict(record.before.to_dict()) if record.before is not None else None
        author = current_author()
        with self._mutex, self._db.transaction(write=True) as connection:
            version, _ = self._lock(connection)
            undoes = (self.name, author.undoes, author.change)
            if author.undoes is not None and connection.execute(UNDONE, undoes).fetchone():
                return None
            current = self._memories.get(record.memory_id)
            if state(current) != state(record.after):
                self._record(connection, [new_record("keep", record.memory_id, current, current)])
                back, done = None, False
            elif before is None:
                self._delete_in(connection, version, record.memory_id)
                back, done = None, True
            else:
                back, done = self._restore_in(connection, version, before), True
        if back is not None:
            self._taken(version, [back])
        elif done:
            self._drop(record.memory_id)
        self._version = version
        return done

    def _delete_in(self, connection: Any, version: int, key: int) -> Memory:
        memory = self._find(key)
        self._record(connection, [new_record("delete", key, memory, None)])
        connection.execute(
            "UPDATE memories SET deleted = true, content = '', tags = '{}', source = NULL,"
            " date = NULL, attachment = NULL, origin = NULL,"
            " changed = %s WHERE namespace = %s AND id = %s",
            (version, self.name, key),
        )
        return memory

    def _restore_in(self, connection: Any, version: int, memory: Memory) -> Memory:
        current = self._memories.get(memory.id)
        taken = memory.source is not None and memory.source in self._sources
        back = restored(memory, current, taken)
        self._write(connection, version, [back])
        self._record(connection, [new_record("restore", memory.id, current, back)])
        return back

    def touch(self, memory_ids: Iterable[int | str]) -> list[Memory]:
        """Count these memories as used (``accessCount`` + 1, ``accessedAt`` now), each once;
        ids not found are skipped. Bookkeeping: committed without waiting for the disk."""
        keys = list(dict.fromkeys(parse_id(value) for value in memory_ids))
        if not keys:
            return []
        with self._mutex:
            self._refresh()
            found = [self._memories[key] for key in keys if key in self._memories]
            return self._touch(found) if found else []

    def documents(self) -> PgDocuments:
        """This namespace's documents."""
        return self._documents

    def pop_quarantine(self) -> PurePath | None:
        """Nothing is ever set aside: the database holds only rows the store wrote."""
        return None

    def quarantined(self) -> list[PurePath]:
        """None: see ``pop_quarantine``."""
        return []

    # -- internals --------------------------------------------------------------------------

    def release(self) -> None:
        """Drop the cache; the next operation loads the namespace again."""
        with self._mutex:
            self._version, self._memories, self._sources, self._keys = -1, {}, {}, {}
            self._rankers = _new_rankers()
            if self._meaning is not None:
                self._meaning.release()

    @property
    def held(self) -> int:
        """How many memories the cache holds."""
        return len(self._memories)

    def _refresh(self) -> None:
        with self._db.transaction(write=False) as connection:
            self._catch_up(connection, None)

    def _catch_up(self, connection: Any, below: int | None) -> None:
        """Take the rows changed since the cached version (below ``below``, a locked version)."""
        rows = connection.execute(CHANGES, {"name": self.name, "since": self._version}).fetchall()
        version = rows[0][0] if rows else None
        if version is None:  # never written
            if self._version > 0:
                self.release()  # the database was emptied under us
            self._version = 0
            return
        if version < self._version:  # the database was replaced (a restore): start again
            self.release()
            self._catch_up(connection, below)
            return
        for row in rows:
            if row[1] is None:
                continue
            if row[3]:
                self._drop(row[1])
            else:
                self._put(_memory(row[1:]))
        self._version = version if below is None else below - 1

    def _lock(self, connection: Any) -> tuple[int, int]:
        """Lock the namespace's row for this transaction; its new version and id clock (the
        highest id held or recorded within reach: ``memory.model.clock_of``)."""
        version, high_id = connection.execute(LOCK, (self.name,)).fetchone()
        self._catch_up(connection, version)
        return int(version), max(clock_of([int(high_id)]), clock_of(self._memories))

    def _write(self, connection: Any, version: int, memories: list[Memory]) -> None:
        with connection.cursor() as cursor:
            cursor.executemany(UPSERT, [(self.name, version, *_values(m)) for m in memories])
        # The recorded clock takes only ids within reach; one past it (written before that
        # rule) is dropped for the ids written now.
        connection.execute(
            "UPDATE memory_namespaces SET high_id = greatest(CASE WHEN high_id > %(reach)s THEN 0"
            " ELSE high_id END, %(top)s) WHERE name = %(name)s",
            {
                "reach": clock_ms() + ID_REACH_MS,
                "top": clock_of(m.id for m in memories),
                "name": self.name,
            },
        )

    def _record(self, connection: Any, records: list[ChangeRecord]) -> None:
        """Insert a change's records in its transaction, then trim to the retention."""
        with connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO memory_history (namespace, at, record) VALUES (%s, %s, %s)",
                [(self.name, r.at, json.dumps(r.to_dict(), ensure_ascii=False)) for r in records],
            )
        connection.execute(
            "DELETE FROM memory_history WHERE namespace = %(name)s AND (at < %(cutoff)s OR seq <"
            " (SELECT min(seq) FROM (SELECT seq FROM memory_history WHERE namespace = %(name)s"
            " ORDER BY seq DESC LIMIT %(max)s) AS newest))",
            {"name": self.name, "cutoff": self._cutoff(), "max": self._retention.max},
        )

    def _cutoff(self) -> str:
        return format_time(datetime.now(UTC) - timedelta(days=self._retention.days))

    def _taken(self, version: int, memories: list[Memory]) -> None:
        """The committed write into the cache."""
        for memory in memories:
            self._put(memory)
        self._version = version

    def _touch(self, found: list[Memory]) -> list[Memory]:
        at = now_iso()
        try:
            with self._db.transaction(write=True, durable=False) as connection:
                version, _ = self._lock(connection)
                rows = connection.execute(
                    f"UPDATE memories SET access_count = access_count + 1, accessed_at = %s,"
                    f" changed = %s WHERE namespace = %s AND id = ANY(%s) AND NOT deleted"
                    f" RETURNING {COLUMNS}",
                    (at, version, self.name, [m.id for m in found]),
                ).fetchall()
        except MemoryStoreError as e:
            # Access counts are bookkeeping, not the user's data: a search still answers.
            log.warning("access counts of %s not saved: %s", self.name, e.message)
            return [replace(m, access_count=m.access_count + 1, accessed_at=at) for m in found]
        touched = {row[0]: _memory(row) for row in rows}
        self._taken(version, list(touched.values()))
        return [touched.get(m.id, m) for m in found]

    def _put(self, memory: Memory) -> None:
        old = self._memories.get(memory.id)
        if old is not None and old.source is not None and old.source != memory.source:
            self._sources.pop(old.source, None)
        if old is not None:
            self._key_out(old)
        self._memories[memory.id] = memory
        key = content_key(memory.content)
        if key:
            self._keys.setdefault(key, set()).add(memory.id)
        if memory.source is not None:
            self._sources[memory.source] = memory.id
        for ranker in self._rankers.values():
            ranker.index(memory)
        if self._meaning is not None:
            self._meaning.note(memory.id, memory.content)

    def _key_out(self, memory: Memory) -> None:
        key = content_key(memory.content)
        ids = self._keys.get(key)
        if ids is not None:
            ids.discard(memory.id)
            if not ids:
                del self._keys[key]

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
