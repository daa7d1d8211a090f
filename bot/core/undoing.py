"""The operations on the history of memories: undo a change, read a memory's versions, put
one back.

The store records every change itself, with who acts (``memory.history``: one *change* per
update, the model's whole turn included); these operations read that record for a door and
apply the one permission rule to it (``bot.core.policy``): ``undo`` reverts a change the caller
may undo (``Caller.may_undo``), ``restore_version`` puts back a version of a memory the caller
may change, and a deleted memory only if they may bring it back (``Caller.may_restore``). As
every operation of ``bot.core.operations``, each is a plain function of a namespace, run off
the event loop by the doors (``bot.chat.versions``: /undo, /history and their buttons).
"""

from __future__ import annotations

from bot.core.policy import Caller
from bot.errors import NotAllowed, RestoreNotAllowed
from memory import history
from memory.errors import MemoryNotFound
from memory.history import ChangeRecord, History, Undone
from memory.interface import MemoryNamespace
from memory.model import Memory, parse_id


def _refuse(records: list[ChangeRecord]) -> NotAllowed:
    memory = next(m for r in records for m in (r.after, r.before) if m is not None)
    return NotAllowed(memory)


def undo(
    namespace: MemoryNamespace, caller: Caller, *, chat: int | None, change: str | None = None
) -> tuple[Undone | None, History]:
    """Revert ``change``, or without it the caller's newest change in ``chat`` not undone yet
    (``Caller.may_undo``: in a group a member's own, an administrator's anyone's); None when
    there is nothing to undo (or ``change`` is unknown, too old, undone already, or being
    undone by another press meanwhile), with the history it was read from. ``NotAllowed`` if
    ``change`` is not the caller's to undo."""
    found = namespace.history()
    if change is None:
        change = found.last_change(chat=chat, may_undo=caller.may_undo)
        if change is None:
            return None, found
    records = found.change(change)
    if not records or change in found.undone():
        return None, found
    if not all(caller.may_undo(r.author.by) for r in records):
        raise _refuse(records)
    done = history.undo(namespace, found, change)
    return (done if done.reverted or done.left else None), found


def memory_history(
    namespace: MemoryNamespace, value: object | None
) -> tuple[History, Memory | None]:
    """The history of the memory whose id is ``value`` (all of it without one), and the memory
    as it is now (None: deleted, or no id)."""
    if value is None:
        return namespace.history(), None
    memory_id = parse_id(value)
    found = namespace.history(memory_id)
    try:
        current: Memory | None = namespace.get(memory_id)
    except MemoryNotFound:
        if not found.records:
            raise
        current = None
    return found, current


def restore_version(namespace: MemoryNamespace, caller: Caller, ref: str) -> Memory | None:
    """Put back the version of a memory that the record ``ref`` left (for a deletion: the
    memory as it was), if the caller may change it (and, if it is deleted, may bring it back:
    ``Caller.may_restore``); None if there is no such record."""
    found = namespace.history()
    record = found.find(ref)
    if record is None:
        return None
    version = record.after if record.after is not None else record.before
    if version is None:
        return None
    try:
        current: Memory | None = namespace.get(record.memory_id)
    except MemoryNotFound:
        current = None
    if current is not None and not caller.may_change(current):
        raise NotAllowed(version)
    if current is None:
        deletions = [r for r in found.of(record.memory_id) if r.op == "delete"]
        deleted_by = deletions[-1].author.by if deletions else None
        if not caller.may_restore(version, deleted_by):
            raise RestoreNotAllowed(version, deleted_by)
    return namespace.restore(version)
