"""A reminder's memory follows the reminder: its time when it moves, done when it is over.

Each reminder is also a memory (``bot.chat.reminding.remember_reminder``: "⏰ 2026-12-02 (Wed)
09:00 Asia/Shanghai — call mom", category ``reminder``), so that /recall finds it with its time.
Left alone, that memory would go on saying "⏰ tomorrow at 9" after the reminder was sent,
cancelled or moved, and answer questions about it wrongly. So, after each change of a reminder
(``follow``):

- moved (✏️ Change, a new time zone) or snoozed: the memory states its next time again;
- a one-off sent or ✅ done: the memory is marked done ("✅ … — call mom"), and kept: what one
  was reminded of, and when, is worth finding;
- cancelled: the memory is removed (an undoable change in the memory's history, as any other):
  a reminder called off is not a fact to answer with.

The link is the reminder's ``memory_id`` (set by ``link`` once the memory is stored). A memory
the person edited by hand since (its content is no longer what this module wrote) is left as
it is. Failures are logged and change nothing else: the reminder is what matters.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from bot.core.reminder_record import CANCELLED, DONE, ENDED, SENT, Reminder, key_of
from bot.view import reminder_view
from memory import Store, update_document
from memory.errors import MemoryNotFound, MemoryStoreError
from memory.model import Memory

log = logging.getLogger(__name__)

DONE_MARK = "✅"


def link(store: Store, reminder: Reminder, memory: Memory) -> Reminder:
    """Record ``memory`` as ``reminder``'s (in its document); the reminder as it is now."""
    result: list[Reminder] = [replace(reminder, memory_id=memory.id)]

    def record(value: Any) -> Any:
        try:
            current = Reminder.from_json(value)
        except ValueError:
            return value
        result[0] = replace(current, memory_id=memory.id)
        return result[0].to_json()

    try:
        update_document(store.bot_documents(), key_of(reminder.namespace, reminder.id), record)
    except (MemoryStoreError, ValueError) as e:
        log.warning("reminder %s: its memory %s not linked: %s", reminder.key, memory.id, e)
    return result[0]


def line(reminder: Reminder) -> str:
    """What the memory of ``reminder`` says now."""
    current = reminder_view.memory_line(reminder)
    if reminder.state in (SENT, DONE) and reminder.next_at is None:
        return DONE_MARK + current.removeprefix("⏰")
    return current


def follow(store: Store, reminder: Reminder | None) -> None:
    """Bring ``reminder``'s memory in line with it (module docstring)."""
    if reminder is None or reminder.memory_id is None:
        return
    namespace = store.namespace(reminder.namespace)
    try:
        memory = namespace.get(reminder.memory_id)
    except MemoryNotFound:
        return  # forgotten by the person, or by an undo: nothing to follow
    except MemoryStoreError as e:
        log.warning("reminder %s: its memory not read: %s", reminder.key, e)
        return
    if not _ours(memory):
        return  # edited by hand since: the person's words stand
    try:
        if reminder.state == CANCELLED:
            namespace.delete(memory.id)
        elif reminder.state not in ENDED or reminder.state == DONE:
            wanted = line(reminder)
            if memory.content != wanted:
                namespace.update(memory.id, content=wanted)
    except MemoryNotFound:
        return
    except MemoryStoreError as e:
        log.warning("reminder %s: its memory %s not updated: %s", reminder.key, memory.id, e)


def follow_all(store: Store, changed: Iterable[Reminder]) -> None:
    """``follow`` each of ``changed``."""
    for reminder in changed:
        follow(store, reminder)


def _ours(memory: Memory) -> bool:
    """Whether ``memory``'s content is one this module (or ``remember_reminder``) wrote."""
    head = memory.content[:1]
    return memory.category == "reminder" and head in ("⏰", DONE_MARK) and " — " in memory.content
