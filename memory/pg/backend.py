"""The PostgreSQL backend of a namespace (``memory.backend``): rows, and their version.

What a namespace holds is never stale where it matters: every read first asks for the rows
changed since the version it holds (``memory_namespaces.version``, ``memories.changed``), in
one statement and so in one snapshot; when nothing changed that is one short round trip, and it
is the whole of a read (what is held answers it). Inside a view (``memory.views``: the bot's
handled update) only the first read asks, and none if the view started at the version held
(the update queue read it as it started the update: ``View.started_at``); the later ones
answer from what is held, the view's snapshot.

A write is one round trip. Its block (``memory.namespace``) runs on what is held, and its
change goes out as one statement conditional on the version held (``memory.pg.change``): the
namespace's row moves to the next version only if it is still at that one, and the change's
rows, history records, trim and id clock follow from that, committed together. When another
process wrote first, nothing is stored; the block runs again under the lock, caught up, and
that cannot conflict: the row is locked (``LOCK``: ``UPDATE ... SET version = version + 1``),
then caught up in a second statement sent with it (it must see what the writer before it
committed while this one waited: a statement's snapshot is taken when it starts), and the
change goes with the commit: two round trips more (``Database.transaction``), so a writer that
loses a race always gets through at the second try, however many race it. The block runs under
the lock at once when what is held is known stale (nothing loaded, or a view that started at
another version) or when it asks what only the lock answers (an undo's check, a migration's
history: ``PgWriting.refs``). A run that writes nothing (a duplicate, a missing id) is a read:
it stands if the view vouches for what is held, else once a catch-up brings nothing new. What
is held takes a change only once it is stored.

The id clock is the row's ``high_id`` (only ids within a day of now: ``memory.ids.clock_of``)
at the version held, and the highest id held. A touch adds one to each count in the database
(``access_count + 1``), so two processes' touches add up, and commits without waiting for the
disk, as the file store's touch is not fsynced; its lock, catch-up and counts go together, in
one round trip.

The change history (``memory.history``) is a table: a change's records are inserted by the
change's own statement, so no change stands without its record, and none without its change;
kept within the store's retention (``Retention``: the newest ``max``, none older than
``days``). The vectors are in ``memory_vectors`` (``memory.pg.vectors``).
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import PurePath
from typing import Any, TypeVar

from memory.errors import MemoryInvalid, MemoryStoreError
from memory.held import Held
from memory.history import Author, ChangeRecord, History, Retention
from memory.ids import clock_of
from memory.model import Memory
from memory.pg.change import change_statement, recorded_high
from memory.pg.database import Database
from memory.pg.documents import PgDocuments
from memory.pg.vectors import PgVectors
from memory.views import View, current_view

T = TypeVar("T")

COLUMNS = (
    "id, seq, deleted, content, tags, category, created_at, accessed_at, access_count,"
    " updated_at, source, date, attachment, origin"
)
# The namespace's version and recorded id clock, and the rows changed since a version, in one
# snapshot.
CHANGES = f"""
    SELECT n.version, n.high_id, m.{COLUMNS.replace(", ", ", m.")}
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


class _Unlocked(Exception):
    """A block asked, without the lock, what only the lock can answer: run it under the lock."""


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
        self._high_id = 0  # the namespace's recorded id clock at that version
        self._held: Held  # the namespace's, from ``hold``

    def hold(self, held: Held, mutex: threading.RLock) -> None:
        self._held = held

    @contextlib.contextmanager
    def reading(self, *, use: bool = True) -> Iterator[bool]:
        view = current_view()
        self._start_empty(view)
        if view is None or not self._seen_in(view):
            while not self._take(self._db.run(CHANGES, self._since(), write=False).rows):
                pass  # the database was replaced: loaded again
            if view is not None:
                view.note(self)
        yield True

    def writing(self, block: Callable[[PgWriting], T]) -> T:
        """Run ``block`` on what is held, its change sent conditional on the version held
        (one round trip); when another process wrote first, or the block needs the lock,
        run it again under the lock, caught up (two). See the module docstring."""
        view = current_view()
        self._start_empty(view)
        if self._worth_trying(view):
            write = PgWriting(self, None, self._clock(self._high_id))
            try:
                result = block(write)
            except _Unlocked:
                pass
            except MemoryStoreError:
                if self._answers(view):
                    raise
            else:
                if write.changed:
                    if self._store(write):
                        return result
                elif self._answers(view):
                    return result
        return self._write_locked(block)

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

    def _start_empty(self, view: View | None) -> None:
        """Hold the namespace as empty, with no round trip, if nothing is loaded and the
        view's work started with it never written (version 0: no row, so no memory): a new
        user's first message loads nothing."""
        if view is not None and self._version < 0 and view.started_at(self.name) == 0:
            self._version, self._high_id = 0, 0  # what is held is empty: new, or released

    def _worth_trying(self, view: View | None) -> bool:
        """Whether what is held may be what is stored, worth a write sent conditional on it:
        loaded, and not known to be older than the view's work (``View.started_at``)."""
        if self._version < 0:
            return False
        if view is None or view.caught_up(self):
            return True
        return view.started_at(self.name) in (None, self._version)

    def _answers(self, view: View | None) -> bool:
        """Whether what is held answers as a read would, for a run that wrote nothing (a
        duplicate, a missing id): the view vouches for it, or (outside one) catching up
        brings nothing new (one round trip, as a read)."""
        if view is not None and self._seen_in(view):
            return True
        version = self._version
        with self.reading():
            return self._version == version

    def _seen_in(self, view: View) -> bool:
        """Whether what is held is what ``view``'s reads see: caught up inside it, or at the
        version the namespace had when the view's work started (``View.started_at``)."""
        if self._version < 0:
            return False
        return view.caught_up(self) or view.started_at(self.name) == self._version

    def _since(self) -> dict[str, Any]:
        return {"name": self.name, "since": self._version}

    def _clock(self, recorded: int) -> int:
        """The id clock: the highest id recorded or held within reach (``clock_of``)."""
        return max(clock_of([recorded]), clock_of(self._held.memories))

    def _take(self, rows: list[tuple[Any, ...]], below: int | None = None) -> bool:
        """Take the rows changed since the version held (``CHANGES``; below ``below``, a
        version this transaction locked); False if the database was replaced (a restore):
        what was held is let go, and they must be asked for again."""
        version = rows[0][0] if rows else None
        if version is None:  # never written
            if self._version > 0:
                self.release()  # the database was emptied under us
            self._version, self._high_id = 0, 0
            return True
        if version < self._version:  # the database was replaced: start again
            self.release()
            return False
        for row in rows:
            if row[2] is None:
                continue
            if row[4]:
                self._held.drop(row[2])
            else:
                self._held.put(_memory(row[2:]))
        self._version = version if below is None else below - 1
        self._high_id = int(rows[0][1])
        return True

    def _store(self, write: PgWriting) -> bool:
        """Send ``write``'s change conditional on the version held (``memory.pg.change``):
        whether it was stored (False: another process wrote first, and nothing was)."""
        sql, params = write.statement(at=self._version)
        row = self._db.run(sql, params, write=True).one()
        if row is None:
            return False
        self._took(write, int(row[0]), int(row[1]))
        return True

    def _write_locked(self, block: Callable[[PgWriting], T]) -> T:
        """Run ``block`` under the namespace's lock, caught up: the lock and the catch-up in
        one round trip, the change with the commit in another."""
        with self._db.transaction(write=True) as connection:
            locked = connection.execute(LOCK, (self.name,))
            changes = connection.execute(CHANGES, self._since())
            version, high_id = locked.fetchone()
            if not self._take(changes.fetchall(), below=version):  # the database was replaced
                self._take(connection.execute(CHANGES, self._since()).fetchall(), below=version)
            write = PgWriting(self, connection, self._clock(high_id))
            result = block(write)
            if write.changed:
                connection.execute(*write.statement(at=None))
        # Committed: now what is held takes the change.
        self._took(write, int(version), recorded_high(int(high_id), write.puts))
        return result

    def _took(self, write: PgWriting, version: int, high_id: int) -> None:
        """``write``'s change is stored, at ``version``: what is held takes it."""
        for memory in write.puts:
            self._held.put(memory)
        for key in write.deletes:
            self._held.drop(key)
        self._version, self._high_id = version, high_id
        if (view := current_view()) is not None:
            view.note(self)


class PgWriting:
    """One run of a write's block (``memory.backend.Writing``): its change, kept until sent;
    under the namespace's lock (``connection``) or not (None)."""

    def __init__(self, backend: PgBackend, connection: Any | None, high_id: int) -> None:
        self.high_id = high_id
        self.puts: list[Memory] = []
        self.deletes: list[int] = []
        self.records: list[ChangeRecord] = []
        self._name = backend.name
        self._retention = backend.retention
        self._connection = connection

    @property
    def changed(self) -> bool:
        """Whether the block committed anything (a memory, or records alone)."""
        return bool(self.puts or self.deletes or self.records)

    def commit(
        self,
        *,
        puts: Sequence[Memory] = (),
        deletes: Sequence[int] = (),
        records: Sequence[ChangeRecord] = (),
    ) -> None:
        """Keep the change, sent when the block ends (``memory.pg.change``)."""
        self.puts += puts
        self.deletes += deletes
        self.records += records

    def statement(self, *, at: int | None) -> tuple[str, dict[str, Any]]:
        """The statement storing the change, decided at version ``at`` (None: locked)."""
        return change_statement(
            self._name,
            at=at,
            puts=self.puts,
            deletes=self.deletes,
            records=self.records,
            retention=self._retention,
        )

    def refs(self) -> list[str]:
        sql = "SELECT record::jsonb ->> 'ref' FROM memory_history WHERE namespace = %s"
        return [ref for (ref,) in self._locked().execute(sql, (self._name,)).fetchall()]

    def undone_elsewhere(self, author: Author) -> bool:
        if author.undoes is None:
            return False
        undoes = (self._name, author.undoes, author.change)
        return self._locked().execute(UNDONE, undoes).fetchone() is not None

    def _locked(self) -> Any:
        """The connection holding the lock; a run without it asks for one (``_Unlocked``):
        what the history holds is decided under the lock, as undo's check needs."""
        if self._connection is None:
            raise _Unlocked
        return self._connection
