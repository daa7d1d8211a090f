"""The PostgreSQL backend of a namespace (``memory.backend``): rows, and a lock on a row.

What a namespace holds is never stale: every operation first asks for the rows changed since
the version it holds (``memory_namespaces.version``, ``memories.changed``), in one statement and
so in one snapshot; when nothing changed that is one short round trip, and it is the whole of a
read (what is held answers it). Inside a view (``memory.views``: the bot's handled update) only
the first read asks; the later ones answer from what is held, the view's snapshot.

A write locks the namespace's row (``UPDATE ... SET version = version + 1 RETURNING``), which
serialises the namespace's writers across processes, catches up under that lock, then writes
and commits; what is held takes the change only once the commit succeeded. The lock and the
catch-up are two statements (the catch-up must see what the writer before it committed while
this one waited for the lock: a statement's snapshot is taken when it starts) sent together,
and the change goes with the commit: two round trips (``Database.transaction``). The id clock
is the row's ``high_id`` (only ids within a day of now: ``memory.ids.clock_of``) and the highest
id held. A touch adds one to each count in the database (``access_count + 1``), so two
processes' touches add up, and commits without waiting for the disk, as the file store's touch
is not fsynced; its lock, catch-up and counts go together, in one round trip.

The change history (``memory.history``) is a table: a change's records are inserted in the
change's own transaction, so no change stands without its record, and none without its change;
kept within the store's retention (``Retention``: the newest ``max``, none older than
``days``). The vectors are in ``memory_vectors`` (``memory.pg.vectors``).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import PurePath
from typing import Any, TypeVar

from memory.errors import MemoryInvalid
from memory.held import Held
from memory.history import Author, ChangeRecord, History, Retention
from memory.ids import ID_REACH_MS, clock_ms, clock_of
from memory.model import Memory
from memory.pg.database import Database
from memory.pg.documents import PgDocuments
from memory.pg.vectors import PgVectors
from memory.views import current_view

T = TypeVar("T")

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


class PgBackend:
    """One namespace's rows in PostgreSQL (see the module docstring)."""

    def __init__(
        self,
        database: Database,
        name: str,
        documents: PgDocuments,
        retention: Retention | None = None,
    ) -> None:
        self.name = name
        self.retention = retention or Retention()
        self._db = database
        self._documents = documents
        self._version = -1  # the namespace version held; -1: nothing loaded
        self._held: Held  # the namespace's, from ``hold``

    def hold(self, held: Held, mutex: threading.RLock) -> None:
        self._held = held

    @contextlib.contextmanager
    def reading(self, *, use: bool = True) -> Iterator[bool]:
        view = current_view()
        if view is None or self._version < 0 or not view.caught_up(self):
            while not self._take(self._db.run(CHANGES, self._since(), write=False).rows):
                pass  # the database was replaced: loaded again
            if view is not None:
                view.note(self)
        yield True

    def writing(self, block: Callable[[PgWriting], T]) -> T:
        """Run ``block`` once, under the namespace's lock, caught up."""
        with self._db.transaction(write=True) as connection:
            version, high_id = self._lock(connection)
            write = PgWriting(self, connection, version, high_id)
            result = block(write)
        # Committed: now what is held takes the change.
        for memory in write.puts:
            self._held.put(memory)
        for key in write.deletes:
            self._held.drop(key)
        self._version = version
        if (view := current_view()) is not None:
            view.note(self)
        return result

    def touch(self, counted: list[Memory], *, save: bool) -> list[Memory]:
        """``access_count + 1`` in the database: the counts of every process add up."""
        locked, changes, counts = self._db.batch(
            [
                (LOCK, (self.name,)),
                (CHANGES, self._since()),
                (
                    f"UPDATE memories SET access_count = access_count + 1, accessed_at = %s,"
                    f" changed = (SELECT version FROM memory_namespaces WHERE name = %s)"
                    f" WHERE namespace = %s AND id = ANY(%s) AND NOT deleted RETURNING {COLUMNS}",
                    (counted[0].accessed_at, self.name, self.name, [m.id for m in counted]),
                ),
            ],
            write=True,
            durable=False,
        )
        version = int(locked.rows[0][0])
        if not self._take(changes.rows, below=version):  # the database was replaced
            with self.reading():
                pass
        touched = {row[0]: _memory(row) for row in counts.rows}
        self._held.count(touched.values())
        self._version = max(self._version, version)
        if (view := current_view()) is not None:
            view.note(self)
        return [touched.get(m.id, m) for m in counted]

    def history(self) -> History:
        """The records kept; a row another writer damaged is counted, never dropped silently."""
        rows = self._db.run(
            "SELECT record FROM memory_history WHERE namespace = %s AND at >= %s ORDER BY seq",
            (self.name, self.retention.cutoff()),
            write=False,
        ).rows
        records: list[ChangeRecord] = []
        bad = 0
        for (text,) in rows:
            try:
                records.append(ChangeRecord.from_dict(json.loads(text)))
            except (ValueError, MemoryInvalid, RecursionError):
                bad += 1
        return History(tuple(records[-self.retention.max :]), bad)

    def documents(self) -> PgDocuments:
        return self._documents

    def vectors(self) -> PgVectors:
        """The namespace's rows of ``memory_vectors``."""
        return PgVectors(self._db, self.name)

    def index_cache(self) -> None:
        """None: the search index is built in the process (rows are not files)."""
        return None

    def pop_quarantine(self) -> PurePath | None:
        """Nothing is ever set aside: the database holds only rows the store wrote."""
        return None

    def quarantined(self) -> list[PurePath]:
        """None: see ``pop_quarantine``."""
        return []

    def release(self) -> None:
        """Drop what is held; the next operation loads the namespace again."""
        self._version = -1
        self._held.release()
        if (view := current_view()) is not None:
            view.forget(self)

    # -- internals --------------------------------------------------------------------------

    def _since(self) -> dict[str, Any]:
        return {"name": self.name, "since": self._version}

    def _take(self, rows: list[tuple[Any, ...]], below: int | None = None) -> bool:
        """Take the rows changed since the version held (``CHANGES``; below ``below``, a
        version this transaction locked); False if the database was replaced (a restore):
        what was held is let go, and they must be asked for again."""
        version = rows[0][0] if rows else None
        if version is None:  # never written
            if self._version > 0:
                self.release()  # the database was emptied under us
            self._version = 0
            return True
        if version < self._version:  # the database was replaced: start again
            self.release()
            return False
        for row in rows:
            if row[1] is None:
                continue
            if row[3]:
                self._held.drop(row[1])
            else:
                self._held.put(_memory(row[1:]))
        self._version = version if below is None else below - 1
        return True

    def _lock(self, connection: Any) -> tuple[int, int]:
        """Lock the namespace's row for this transaction, and catch up (one round trip); its
        new version and id clock (the highest id held or recorded within reach:
        ``memory.ids.clock_of``)."""
        locked = connection.execute(LOCK, (self.name,))
        changes = connection.execute(CHANGES, self._since())
        version, high_id = locked.fetchone()
        if not self._take(changes.fetchall(), below=version):  # the database was replaced
            self._take(connection.execute(CHANGES, self._since()).fetchall(), below=version)
        return int(version), max(clock_of([int(high_id)]), clock_of(self._held.memories))


class PgWriting:
    """One write transaction of a namespace, its row locked (``memory.backend.Writing``)."""

    def __init__(self, backend: PgBackend, connection: Any, version: int, high_id: int) -> None:
        self.high_id = high_id
        self.puts: list[Memory] = []
        self.deletes: list[int] = []
        self._name = backend.name
        self._retention = backend.retention
        self._connection = connection
        self._version = version

    def commit(
        self,
        *,
        puts: Sequence[Memory] = (),
        deletes: Sequence[int] = (),
        records: Sequence[ChangeRecord] = (),
    ) -> None:
        """The change's statements, in the transaction (committed when the write ends)."""
        if puts:
            self._write(puts)
        for key in deletes:
            self._connection.execute(
                "UPDATE memories SET deleted = true, content = '', tags = '{}', source = NULL,"
                " date = NULL, attachment = NULL, origin = NULL,"
                " changed = %s WHERE namespace = %s AND id = %s",
                (self._version, self._name, key),
            )
        if records:
            self._record(records)
        self.puts += puts
        self.deletes += deletes

    def refs(self) -> list[str]:
        rows = self._connection.execute(
            "SELECT record::jsonb ->> 'ref' FROM memory_history WHERE namespace = %s",
            (self._name,),
        ).fetchall()
        return [ref for (ref,) in rows]

    def undone_elsewhere(self, author: Author) -> bool:
        if author.undoes is None:
            return False
        undoes = (self._name, author.undoes, author.change)
        return self._connection.execute(UNDONE, undoes).fetchone() is not None

    def _write(self, memories: Sequence[Memory]) -> None:
        with self._connection.cursor() as cursor:
            cursor.executemany(UPSERT, [(self._name, self._version, *_values(m)) for m in memories])
        # The recorded clock takes only ids within reach; one past it (written before that
        # rule) is dropped for the ids written now.
        self._connection.execute(
            "UPDATE memory_namespaces SET high_id = greatest(CASE WHEN high_id > %(reach)s THEN 0"
            " ELSE high_id END, %(top)s) WHERE name = %(name)s",
            {
                "reach": clock_ms() + ID_REACH_MS,
                "top": clock_of(m.id for m in memories),
                "name": self._name,
            },
        )

    def _record(self, records: Sequence[ChangeRecord]) -> None:
        """Insert a change's records in its transaction, then trim to the retention."""
        with self._connection.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO memory_history (namespace, at, record) VALUES (%s, %s, %s)",
                [(self._name, r.at, json.dumps(r.to_dict(), ensure_ascii=False)) for r in records],
            )
        self._connection.execute(
            "DELETE FROM memory_history WHERE namespace = %(name)s AND (at < %(cutoff)s OR seq <"
            " (SELECT min(seq) FROM (SELECT seq FROM memory_history WHERE namespace = %(name)s"
            " ORDER BY seq DESC LIMIT %(max)s) AS newest))",
            {"name": self._name, "cutoff": self._retention.cutoff(), "max": self._retention.max},
        )
