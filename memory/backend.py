"""The port: what a backend does for one namespace, below the operations.

The operations (add, search, update, delete, import, undo...) are written once, in
``memory.namespace``, over the memories a namespace holds in the process (``memory.held``).
A backend keeps what is stored, and only that, as the transports below httpx's client and the
persistence classes below python-telegram-bot's ``Application`` do:

- the catch-up with other processes and the serialisation of the namespace's writers across
  them: ``reading`` brings what is held up to date with what is stored, and ``writing`` runs
  a write's block (``Writing``) on what is held such that its change is stored only if what
  the block decided from was current: under a lock held across the block (the files), or
  sent conditional on the namespace's version and run again when another process wrote
  first (PostgreSQL: one round trip for a write, a conflict costing the run again);
- the commit of a change (``Writing.commit``: the memories put and deleted and the change's
  history records, all or nothing, durable when the write ends) and the id clock it is made
  at (``Writing.high_id``);
- a touch (``touch``: access bookkeeping, saved without waiting for the disk);
- the change history (``history``, ``Writing.refs``, ``Writing.undone_elsewhere``);
- the documents, the vectors and the keyword ranking's cache of the namespace.

A backend keeps what is held in step with what is stored (``hold`` hands it over once): a
catch-up takes in what other processes changed, a commit this one's change. The namespace
makes every call holding its mutex (threads share one namespace object), so a backend only
serialises what happens across processes. Two backends implement it: ``memory.files.backend``
(a folder: a snapshot, a journal and an ``flock``) and ``memory.pg.backend`` (rows, and a
lock on the namespace's row); both keep the contract of ``tests/memory/contract/``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from pathlib import PurePath
from typing import Protocol, TypeVar

from memory.documents import Documents
from memory.held import Held
from memory.history import Author, ChangeRecord, History, Retention
from memory.indexfile import IndexCache
from memory.model import Memory
from memory.vectors import VectorStore

T = TypeVar("T")


class Writing(Protocol):
    """One run of a write's block (``Backend.writing``): at most one ``commit``."""

    high_id: int  # the id clock: the highest id seen within reach (``memory.ids.new_id``)

    def commit(
        self,
        *,
        puts: Sequence[Memory] = (),
        deletes: Sequence[int] = (),
        records: Sequence[ChangeRecord] = (),
    ) -> None:
        """Store the change: ``puts`` (new memories, or new versions of held ones), the ids
        ``deletes``, and the change's history ``records``; all of it or none, durable once
        the write ends, and then taken into what is held (not before: a block may be run
        again, and only the run that is stored counts). Records alone change no memory (an
        undo's ``keep``, a migration's history of memories it already holds)."""
        ...

    def refs(self) -> Iterable[str]:
        """The ``ref`` of every history record kept (a migration copies only the others)."""
        ...

    def undone_elsewhere(self, author: Author) -> bool:
        """Whether another undo of the change ``author`` undoes has begun: its records are
        there (``memory.history.undone_elsewhere``)."""
        ...


class Backend(Protocol):
    """What a backend does for one namespace (see the module docstring)."""

    retention: Retention  # how much history is kept

    def hold(self, held: Held, mutex: threading.RLock) -> None:
        """Keep ``held`` in step with what is stored from now on; ``mutex`` is the
        namespace's (every call is made holding it; the backend takes it for work of its own,
        such as housekeeping)."""
        ...

    def reading(self, *, use: bool = True) -> AbstractContextManager[bool]:
        """A block in which what is held is caught up with what is stored (and stays so: no
        other process writes meanwhile); yields whether a touch can be saved. Without
        ``use``, housekeeping: the namespace does not count as used (idle release). Inside a
        view (``memory.views``) a backend may catch up at the view's first read only."""
        ...

    def writing(self, block: Callable[[Writing], T]) -> T:
        """Run ``block`` on what is held and store the change it commits, only if nothing
        another process stored since escaped what it decided from; what it returns.

        A backend may run ``block`` more than once: when another process wrote first, the
        run's change is not stored, what is held catches up, and ``block`` runs again on
        that (so a duplicate check, a new id or an undo's check is decided again). So a block
        decides from what is held and from ``write`` only, and changes nothing but through
        ``write.commit``. A write that fails leaves nothing stored and nothing held. A run
        that commits nothing is a read: its answer (or its error) may be the view's
        (``memory.views``), as a read's is."""
        ...

    def touch(self, counted: list[Memory], *, save: bool) -> list[Memory]:
        """Count held memories as used: ``counted`` are they with one more use, ``accessedAt``
        now. Saved without waiting for the disk (with ``save``: ``reading`` said it can be),
        and held; returns them as stored (a backend several processes write adds to the
        stored counts, so that their touches add up). A failure to save raises
        ``MemoryStoreError``, after what is held has taken what it should."""
        ...

    def history(self) -> History:
        """The change records kept (within ``retention``), oldest first."""
        ...

    def documents(self) -> Documents:
        """The namespace's documents."""
        ...

    def vectors(self) -> VectorStore:
        """Where the namespace's embeddings are kept."""
        ...

    def index_cache(self) -> IndexCache | None:
        """Where the keyword ranking keeps its analysis between runs (None: nowhere)."""
        ...

    def pop_quarantine(self) -> PurePath | None:
        """Where an unreadable copy of the memories was set aside since last asked."""
        ...

    def quarantined(self) -> Sequence[PurePath]:
        """Every unreadable copy set aside so far, oldest first."""
        ...

    def release(self) -> None:
        """Make what is held durable where it must be, then let it go (``Held.release``)
        with every resource; the next operation loads the namespace again."""
        ...
