"""The history of a namespace's memories: who changed what, when and through which door; undo.

Every change the store makes to a memory (an add, an update, a delete, an import, a restore) is
recorded as a ``ChangeRecord``: the memory as it was (``before``, None for an add) and as the
change left it (``after``, None for a delete), when, and the ``Author`` of the change: who
(``user:42``, ``chat:-100123``, ``cli``), their name, the door it came through (``/edit``,
``button``, ``model``, ``cli``...), the chat it was made in, and the change it is part of. A
*change* is what one person did in one go, and what one ``undo`` reverts: a command, a button
press, the language model's whole turn, one run of the command line. Its records share the
``change`` id (8 characters, short enough for a button's callback data).

Who acts is not an argument of every operation: the door says it once, ``with acting(author):``
(a ``contextvars`` variable, so it follows the work into ``asyncio.to_thread`` and into a
``contextvars.copy_context().run`` in a worker thread), and the store reads it
(``current_author``) for every record it writes. A change made with no author set (a library
call) is recorded as ``library`` and is a change of its own.

Undo (``undo``) reverts one change, its records newest first: an add is deleted, an update put
back to the content, tags and category before it, a delete restored with its id, times and
counts (``MemoryNamespace.restore``: a re-insert, which keeps ids strictly increasing, since the
id was handed out before). The undo's own records carry ``undoes``: the change they revert,
which counts as undone from then on, so a second ``undo`` goes further back. Each record is
checked and reverted in one step under the namespace's lock (``MemoryNamespace.revert``), so a
change another process makes meanwhile is never reverted with it, and of two undos of one
change at once (two processes, one button pressed twice) only the first reverts anything.

A conflict is decided, not guessed: a memory whose content, tags or category are no longer as
the change left them (someone changed it since; or it was deleted since; or, for a delete, its
id is back) is *left as it is*: the later change stands. The undo records that, as a ``keep``
record (before and after: the memory as it is now), reverts the rest of the change, and says
which memories it left and who changed them since, so that the person can pick a version with
``/history <id>``. Undoing a change whose every memory changed since therefore changes nothing,
says why, and still counts as done, so the next undo goes further back instead of refusing
the same change again and again.

The store keeps what is recorded within a retention bound (``Retention``: the newest ``max``
records, none older than ``days``); older changes can no longer be undone or shown.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import PurePath
from typing import Any, Protocol

from memory.errors import MemoryInvalid
from memory.model import Memory
from memory.timestamps import format_time, now_iso

OPS = ("add", "update", "delete", "import", "restore", "keep")
DEFAULT_DAYS = 90
DEFAULT_MAX = 1000
CHANGE_PATTERN = r"[A-Za-z0-9_-]{8}"


def new_change_id() -> str:
    """A fresh change id: 8 URL-safe characters."""
    return secrets.token_urlsafe(6)


@dataclass(frozen=True, slots=True)
class Author:
    """Who makes the changes in progress, through which door, in which chat, as which change.

    ``undoes`` is set while an undo runs: the change it reverts.
    """

    by: str = "library"
    door: str = "library"
    name: str = ""
    chat: int | None = None
    change: str = field(default_factory=new_change_id)
    undoes: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape, inside a record."""
        record: dict[str, Any] = {"by": self.by, "door": self.door, "change": self.change}
        if self.name:
            record["name"] = self.name
        if self.chat is not None:
            record["chat"] = self.chat
        if self.undoes is not None:
            record["undoes"] = self.undoes
        return record

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Author:
        """Read the author of a record (``MemoryInvalid`` if it is not one)."""
        by, door, change = record.get("by"), record.get("door"), record.get("change")
        name, chat, undoes = record.get("name", ""), record.get("chat"), record.get("undoes")
        if not all(isinstance(v, str) and v for v in (by, door, change)):
            raise MemoryInvalid("a change record needs by, door and change", field="by")
        if not isinstance(name, str) or not (undoes is None or isinstance(undoes, str)):
            raise MemoryInvalid("name and undoes must be text", field="name")
        if chat is not None and (isinstance(chat, bool) or not isinstance(chat, int)):
            raise MemoryInvalid("chat must be a whole number", field="chat")
        return cls(str(by), str(door), name, chat, str(change), undoes)


_AUTHOR: ContextVar[Author | None] = ContextVar("memory_author", default=None)


@contextlib.contextmanager
def acting(author: Author) -> Iterator[Author]:
    """Make ``author`` the author of every change the store records inside the block."""
    token = _AUTHOR.set(author)
    try:
        yield author
    finally:
        _AUTHOR.reset(token)


def set_author(author: Author) -> None:
    """Make ``author`` the author of what follows in this context (a task handling one
    update: the context ends with the task)."""
    _AUTHOR.set(author)


def current_author() -> Author:
    """The author set by ``acting`` (a fresh ``library`` one, a change of its own, if none)."""
    author = _AUTHOR.get()
    return author if author is not None else Author()


@dataclass(frozen=True, slots=True)
class ChangeRecord:
    """One change to one memory: ``before`` and ``after`` it (None: absent), when, by whom.

    ``ref`` names the record (a button restoring the version it left carries it).
    """

    op: str
    memory_id: int
    before: Memory | None
    after: Memory | None
    author: Author
    at: str = field(default_factory=now_iso)
    ref: str = field(default_factory=new_change_id)

    @property
    def change(self) -> str:
        """The id of the change this record is part of."""
        return self.author.change

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (one line of the file store's ``memory.history``)."""
        return {
            "ref": self.ref,
            "at": self.at,
            "op": self.op,
            "id": self.memory_id,
            "before": self.before.to_dict() if self.before is not None else None,
            "after": self.after.to_dict() if self.after is not None else None,
            **self.author.to_dict(),
        }

    @classmethod
    def from_dict(cls, record: Any) -> ChangeRecord:
        """Read a record (``MemoryInvalid`` if it is not one: a damaged or hand-made line)."""
        if not isinstance(record, dict) or record.get("op") not in OPS:
            raise MemoryInvalid(f"not a change record: {str(record)[:80]!r}", field="op")
        memory_id, ref, at = record.get("id"), record.get("ref"), record.get("at")
        if isinstance(memory_id, bool) or not isinstance(memory_id, int) or memory_id <= 0:
            raise MemoryInvalid("a change record needs a memory id", field="id")
        if not isinstance(ref, str) or not isinstance(at, str):
            raise MemoryInvalid("a change record needs ref and at", field="ref")
        before, after = record.get("before"), record.get("after")
        return cls(
            record["op"],
            memory_id,
            Memory.from_dict(before) if before is not None else None,
            Memory.from_dict(after) if after is not None else None,
            Author.from_dict(record),
            at,
            ref,
        )


def new_record(
    op: str, memory_id: int, before: Memory | None, after: Memory | None
) -> ChangeRecord:
    """A record of a change the store is making now, by the current author."""
    return ChangeRecord(op, memory_id, before, after, current_author())


@dataclass(frozen=True)
class History:
    """The records a namespace keeps, oldest first; ``unreadable`` lines were skipped, and a
    copy of the file that held them was kept at ``kept``."""

    records: tuple[ChangeRecord, ...] = ()
    unreadable: int = 0
    kept: PurePath | None = None

    def of(self, memory_id: int) -> list[ChangeRecord]:
        """The records of one memory, oldest first."""
        return [r for r in self.records if r.memory_id == memory_id]

    def find(self, ref: str) -> ChangeRecord | None:
        """The record named ``ref``."""
        return next((r for r in self.records if r.ref == ref), None)

    def undone(self) -> set[str]:
        """The changes an undo has reverted."""
        return {r.author.undoes for r in self.records if r.author.undoes is not None}

    def change(self, change: str) -> list[ChangeRecord]:
        """The records of one change, oldest first (an undo's own records are not in it)."""
        return [r for r in self.records if r.change == change and r.author.undoes != change]

    def last_change(
        self, *, chat: int | None = None, may_undo: Callable[[str], bool] | None = None
    ) -> str | None:
        """The newest change not undone yet (and not an undo itself), made in ``chat`` if
        given, by someone ``may_undo`` accepts (their ``by``) if given."""
        undone = self.undone()
        for record in reversed(self.records):
            author = record.author
            if author.undoes is not None or author.change in undone:
                continue
            if chat is not None and author.chat != chat:
                continue
            if may_undo is not None and not may_undo(author.by):
                continue
            return author.change
        return None


@dataclass(frozen=True)
class Retention:
    """How much history a store keeps per namespace: at most ``max`` records, none older than
    ``days`` days."""

    days: int = DEFAULT_DAYS
    max: int = DEFAULT_MAX

    def __post_init__(self) -> None:
        for name, value in (("history_days", self.days), ("history_max", self.max)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise MemoryInvalid(f"{name} must be a whole number of at least 1", field=name)

    def cutoff(self) -> str:
        """The time before which records are past retention (``days`` ago)."""
        return format_time(datetime.now(UTC) - timedelta(days=self.days))


def copied_records(
    held: Iterable[str], incoming: Sequence[ChangeRecord], retention: Retention
) -> list[ChangeRecord]:
    """The records of ``incoming`` (another store's history, oldest first) that a namespace
    holding the refs ``held`` still lacks, within its ``retention``: what a migration copies,
    so that copying again copies nothing."""
    cutoff = retention.cutoff()
    refs = set(held)
    fresh = []
    for record in incoming[-retention.max :]:
        if record.ref not in refs and record.at >= cutoff:
            refs.add(record.ref)
            fresh.append(record)
    return fresh


@dataclass(frozen=True)
class Left:
    """A memory an undo left as it is: how the change left it, and the later record that
    changed it since (None when no kept record explains it: a hand edit, or trimmed)."""

    record: ChangeRecord
    since: ChangeRecord | None


@dataclass(frozen=True)
class Undone:
    """What ``undo`` did to a change: the records it reverted, and the memories it left."""

    change: str
    reverted: tuple[ChangeRecord, ...] = ()
    left: tuple[Left, ...] = ()


def state(memory: Memory | None) -> tuple[str, tuple[str, ...], str] | None:
    """What a person stored in a memory (None: absent), access bookkeeping aside."""
    return None if memory is None else (memory.content, memory.tags, memory.category)


class Revertible(Protocol):
    """What ``undo`` needs of a namespace (``memory.interface.MemoryNamespace`` has it)."""

    def revert(self, record: ChangeRecord) -> bool | None: ...


def undo(namespace: Revertible, history: History, change: str) -> Undone:
    """Revert ``change`` in ``namespace`` (its records newest first), as the module doc says.

    The undo's records are written by the current
    author with ``undoes=change``. A change already undone, or unknown, reverts nothing
    (``Undone`` with nothing in it), and so does one another undo has begun since ``history``
    was read (each record is checked and reverted in one step: ``MemoryNamespace.revert``).
    """
    records = history.change(change)
    if not records or change in history.undone():
        return Undone(change)
    reverted: list[ChangeRecord] = []
    left: list[Left] = []
    author = current_author()
    with acting(replace(author, undoes=change)):
        for record in reversed(records):
            done = namespace.revert(record)
            if done is None:
                break  # another undo of this change is at work: it reverts the rest
            if done:
                reverted.append(record)
            else:
                left.append(Left(record, _since(history, record)))
    return Undone(change, tuple(reverted), tuple(left))


def undone_elsewhere(records: Iterable[ChangeRecord], author: Author) -> bool:
    """Whether ``records`` hold a record of another undo (not ``author``'s own change) of the
    change ``author`` undoes: that undo began first, and this one must revert nothing."""
    if author.undoes is None:
        return False
    return any(
        r.author.undoes == author.undoes and r.author.change != author.change for r in records
    )


def _since(history: History, record: ChangeRecord) -> ChangeRecord | None:
    """The newest record of ``record``'s memory after it (who changed it since)."""
    later: ChangeRecord | None = None
    seen = False
    for other in history.records:
        if other is record:
            seen = True
        elif seen and other.memory_id == record.memory_id and other.op != "keep":
            later = other
    return later


def versions(records: Sequence[ChangeRecord]) -> list[ChangeRecord]:
    """The records of one memory that left a version of it (not its deletions or keeps)."""
    return [r for r in records if r.after is not None and r.op != "keep"]
