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
chosen under the row lock. A search's touch adds one to each hit's count in the database
(``access_count + 1``), so two processes' touches add up, and commits without waiting for the
disk, as the file store's touch is not fsynced.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from memory.bm25 import Bm25Ranker
from memory.errors import MemoryInvalid, MemoryNotFound, MemoryStoreError
from memory.model import (
    MAX_ID,
    Hit,
    Memory,
    Stats,
    clean_category,
    clean_content,
    clean_tags,
    format_time_ms,
    now_iso,
    parse_id,
    parse_limit,
)
from memory.namespace import MOST_ACCESSED, RANKERS, TOP_TAGS
from memory.pg.database import Database
from memory.ranking import Ranker, SeedRanker

if TYPE_CHECKING:
    from memory.pg.documents import PgDocuments

log = logging.getLogger(__name__)

COLUMNS = (
    "id, seq, deleted, content, tags, category, created_at, accessed_at, access_count,"
    " updated_at, source"
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
UPSERT = f"""
    INSERT INTO memories (namespace, changed, {COLUMNS})
    VALUES (%s, %s, %s, nextval('memory_seq'), false, %s, %s, %s, %s, %s, %s, %s, %s)
    ON CONFLICT (namespace, id) DO UPDATE SET
        changed = excluded.changed, deleted = false, content = excluded.content,
        tags = excluded.tags, category = excluded.category, created_at = excluded.created_at,
        accessed_at = excluded.accessed_at, access_count = excluded.access_count,
        updated_at = excluded.updated_at, source = excluded.source,
        seq = CASE WHEN memories.deleted THEN excluded.seq ELSE memories.seq END
"""


def _new_rankers() -> dict[str, Ranker]:
    return {"default": Bm25Ranker(), "seed": SeedRanker()}


def _memory(row: tuple[Any, ...]) -> Memory:
    _, _, _, content, tags, category, created, accessed, count, updated, source = row
    return Memory(row[0], content, tuple(tags), category, created, accessed, count, updated, source)


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
    )


class PgNamespace:
    """One namespace's memories in PostgreSQL, with the article's operations. Thread-safe."""

    def __init__(self, database: Database, name: str, documents: PgDocuments) -> None:
        self.name = name
        self._db = database
        self._documents = documents
        self._mutex = threading.RLock()
        self._version = -1  # the namespace version the cache holds; -1: nothing loaded
        self._memories: dict[int, Memory] = {}
        self._sources: dict[str, int] = {}
        self._rankers = _new_rankers()

    # -- the article's operations ---------------------------------------------------------

    def add(
        self,
        content: str,
        tags: Iterable[str] | str = (),
        category: str | None = None,
        *,
        source: str | None = None,
    ) -> Memory:
        """Store a new memory, committed when this returns; a known ``source`` adds nothing."""
        content, clean = clean_content(content), clean_tags(tags)
        group = clean_category(category)
        if source is not None and (not isinstance(source, str) or not 0 < len(source) <= 200):
            raise MemoryInvalid("source must be text of 1 to 200 characters", field="source")
        with self._mutex, self._db.transaction(write=True) as connection:
            version, high_id = self._lock(connection)
            if source is not None and source in self._sources:
                return self._memories[self._sources[source]]
            now_ms = time.time_ns() // 1_000_000
            at = format_time_ms(now_ms)
            memory_id = max(now_ms, high_id + 1)
            if memory_id >= MAX_ID:
                raise MemoryInvalid("no ids left in this namespace (an id in it is too large)")
            memory = Memory(memory_id, content, clean, group, at, at, 0, source=source)
            self._write(connection, version, [memory])
        self._taken(version, [memory])
        return memory

    def search(
        self, query: str, limit: int = 10, *, ranker: str = "default", touch: bool = True
    ) -> list[Hit]:
        """The memories that best answer ``query``, best first; hits are touched and saved."""
        if not isinstance(query, str) or not query.strip():
            raise MemoryInvalid("the search query is empty", field="query")
        limit = parse_limit(limit)
        if ranker not in RANKERS:
            raise MemoryInvalid(f"unknown ranker {ranker!r}; use one of {RANKERS}", field="ranker")
        with self._mutex:
            self._refresh()
            ranked = self._rankers[ranker].rank(query, self._memories, limit)
            found = [self._memories[mid] for mid, _ in ranked]
            if touch and found:
                found = self._touch(found)
            return [Hit(memory, score) for memory, (_, score) in zip(found, ranked, strict=True)]

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
        if content is None and tags is None and category is None:
            raise MemoryInvalid("nothing to update: give content, tags or category")
        changes: dict[str, Any] = {}
        if content is not None:
            changes["content"] = clean_content(content)
        if tags is not None:
            changes["tags"] = clean_tags(tags)
        if category is not None:
            changes["category"] = clean_category(category)
        with self._mutex, self._db.transaction(write=True) as connection:
            version, _ = self._lock(connection)
            memory = replace(self._find(key), **changes, updated_at=now_iso())
            self._write(connection, version, [memory])
        self._taken(version, [memory])
        return memory

    def delete(self, memory_id: int | str) -> Memory:
        """Remove a memory and return it, committed when this returns."""
        key = parse_id(memory_id)
        with self._mutex, self._db.transaction(write=True) as connection:
            version, _ = self._lock(connection)
            memory = self._find(key)
            connection.execute(
                "UPDATE memories SET deleted = true, content = '', tags = '{}', source = NULL,"
                " changed = %s WHERE namespace = %s AND id = %s",
                (version, self.name, key),
            )
        self._drop(key)
        self._version = version
        return memory

    def stats(self) -> Stats:
        """Totals by category, the most used tags and the most accessed memories."""
        memories = self.memories()
        by_category = Counter(m.category for m in memories)
        tags = Counter(tag for m in memories for tag in m.tags)
        most = sorted(memories, key=lambda m: -m.access_count)[:MOST_ACCESSED]
        return Stats(
            len(memories), dict(by_category.most_common()), tags.most_common(TOP_TAGS), most
        )

    def related(self, memory_id: int | str, limit: int = 5) -> list[Hit]:
        """Other memories sharing its tags (+1 each) or its category (+2), best first."""
        key = parse_id(memory_id)
        limit = parse_limit(limit)
        with self._mutex:
            self._refresh()
            target = self._find(key)
            tags = set(target.tags)
            scored = []
            for memory in self._memories.values():
                if memory.id == key:
                    continue
                score = len(tags.intersection(memory.tags))
                score += 2 if memory.category == target.category else 0
                if score:
                    scored.append(Hit(memory, float(score)))
        scored.sort(key=lambda hit: -hit.score)
        return scored[:limit]

    def import_memories(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Add article-format records, ids kept, present ids skipped; all or nothing."""
        incoming: dict[int, Memory] = {}
        for number, record in enumerate(records, start=1):
            try:
                memory = Memory.from_dict(record)
            except MemoryInvalid as e:
                raise MemoryInvalid(f"record {number}: {e.message}", field=e.field) from e
            incoming.setdefault(memory.id, memory)
        with self._mutex, self._db.transaction(write=True) as connection:
            version, _ = self._lock(connection)
            new = [m for m in incoming.values() if m.id not in self._memories]
            if new:
                self._write(connection, version, new)
        if new:
            self._taken(version, new)
        return len(new)

    def export(self) -> list[dict[str, Any]]:
        """Every memory as an article-format record, in stored order."""
        return [m.to_dict() for m in self.memories()]

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
            self._version, self._memories, self._sources = -1, {}, {}
            self._rankers = _new_rankers()

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
        """Lock the namespace's row for this transaction; its new version and high id."""
        version, high_id = connection.execute(LOCK, (self.name,)).fetchone()
        self._catch_up(connection, version)
        return int(version), max(int(high_id), max(self._memories, default=0))

    def _write(self, connection: Any, version: int, memories: list[Memory]) -> None:
        with connection.cursor() as cursor:
            cursor.executemany(UPSERT, [(self.name, version, *_values(m)) for m in memories])
        connection.execute(
            "UPDATE memory_namespaces SET high_id = greatest(high_id, %s) WHERE name = %s",
            (max(m.id for m in memories), self.name),
        )

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
        self._memories[memory.id] = memory
        if memory.source is not None:
            self._sources[memory.source] = memory.id
        for ranker in self._rankers.values():
            ranker.index(memory)

    def _drop(self, memory_id: int) -> None:
        memory = self._memories.pop(memory_id, None)
        if memory is not None and memory.source is not None:
            self._sources.pop(memory.source, None)
        for ranker in self._rankers.values():
            ranker.unindex(memory_id)

    def _find(self, memory_id: int) -> Memory:
        try:
            return self._memories[memory_id]
        except KeyError:
            raise MemoryNotFound(memory_id) from None
