"""A chat's reminders after its zone changed: moved to the same local time, or kept as they are.

A reminder keeps its own zone and local wall time (``bot.core.due.Due``), so a new chat zone
changes no reminder by itself: each still rings at the moment it was set for ("kept"). Moving
one gives it the new zone with the same wall time and date: a 09:00 reminder set while the chat
was on UTC rings at 09:00 in Berlin, and a weekly one at 09:00 Berlin time from then on, across
daylight saving. Its next occurrence is the same local date at that time, or, if that has
passed in the new zone, a repeating one's next occurrence after now; a one-off whose local time
has passed there keeps its moment (``Moved.passed``), never a time in the past. A snooze is a
moment, not a wall time: it stays. A reminder whose occurrence is being sent right now (a claim
on it, ``bot.core.delivery``) is left alone (``Moved.busy``).

Which reminders: all that go to the chat and are still to come, pending or paused, in another
zone than the chat's, whatever namespace keeps them (``bot.core.reminders.of_chat``): the zone
is the chat's, so with ``group_scope = "topic"`` every topic's reminders are offered, and with
``"user"`` every member's. Who moves which is the reminders' rule (``bot.core.reminders.
may_change``, through ``Caller.in_chat``): an administrator moves the group's, a member those
they set; another member's own namespace (``"user"``) only that member. What the mover may not
move is left as it is (``Moved.others``), for who may. Each is changed by a compare-and-set on
its document (``memory.update_document``), so a Done, a snooze or a delivery in between is
never overwritten: the change is worked out again on what the document holds then.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.core import reminder_record, reminders
from bot.core.due import wall_time
from bot.core.policy import Caller
from bot.core.reminders import Reminder
from memory import Store, update_document
from memory.errors import DocumentConflict


@dataclass
class Moved:
    """What ``move_to`` did."""

    moved: list[Reminder] = field(default_factory=list)
    passed: list[Reminder] = field(default_factory=list)  # its local time passed in the zone
    busy: list[Reminder] = field(default_factory=list)  # being sent: left as it is
    others: list[Reminder] = field(default_factory=list)  # not the mover's to move: left


def movable(store: Store, chat_id: int, zone: ZoneInfo) -> list[Reminder]:
    """The reminders of ``chat_id`` (every namespace's) still to come in another zone, soonest
    first."""
    found = [
        reminder
        for reminder in reminders.of_chat(store, chat_id)
        if reminder.upcoming_at is not None
        and reminder.series_at is not None
        and reminder.due.zone.key != zone.key
    ]
    return sorted(found, key=lambda r: (r.upcoming_at, r.id))


def may_move(caller: Caller, chat_id: int, reminder: Reminder) -> bool:
    """Whether ``caller``, acting in chat ``chat_id``, may move ``reminder`` (module docstring)."""
    acting = caller.in_chat(reminder.namespace, chat_id)
    return acting is not None and reminders.may_change(acting, reminder)


def moved(reminder: Reminder, zone: ZoneInfo, now: datetime) -> Reminder | None:
    """``reminder`` at the same local time in ``zone``; None if that has passed (a one-off)."""
    due, series_at = reminder.due, reminder.series_at
    if series_at is None:
        return None
    anchor = wall_time(due.local().date(), due.wall, zone)
    new_due = replace(due, at=anchor, zone=zone)
    next_at = wall_time(series_at.astimezone(due.zone).date(), due.wall, zone)
    if next_at <= now:
        if due.repeat is None:
            return None
        later = new_due.next_after(now)
        if later is None:
            return None
        next_at = later
    return replace(reminder, due=new_due, series_at=next_at, changed_at=now)


def move_to(store: Store, caller: Caller, chat_id: int, zone: ZoneInfo, now: datetime) -> Moved:
    """Move the chat's reminders that ``caller`` may move to the same local time in ``zone``
    (module docstring)."""
    result = Moved()
    documents = store.bot_documents()
    for found in movable(store, chat_id, zone):
        if not may_move(caller, chat_id, found):
            result.others.append(found)
            continue
        outcome: list[tuple[str, Reminder]] = []

        def change(value: Any, zone: ZoneInfo = zone, outcome: list[Any] = outcome) -> Any:
            outcome.clear()
            try:
                current = Reminder.from_json(value)
            except ValueError:
                return value
            if current.state not in (reminder_record.PENDING, reminder_record.PAUSED):
                return value  # ended or sent meanwhile
            if current.claim is not None:
                outcome.append(("busy", current))
                return value
            if current.due.zone.key == zone.key:
                return value  # moved meanwhile (another press, another replica)
            shifted = moved(current, zone, now)
            if shifted is None:
                outcome.append(("passed", current))
                return value
            outcome.append(("moved", shifted))
            return shifted.to_json()

        try:
            update_document(documents, found.key, change)
        except DocumentConflict:
            continue  # changed too often meanwhile: left as it is, shown by /reminders
        for kind, reminder in outcome:
            getattr(result, kind).append(reminder)
    return result


__all__ = ["Moved", "may_move", "movable", "move_to", "moved"]
