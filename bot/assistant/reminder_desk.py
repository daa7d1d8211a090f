"""The model's way to set reminders in one turn: ``scheduleReminder`` (``bot.assistant.tools``).

The model gives the text and a local date-time, a number of minutes from now, or a repeat
rule; the code (``bot.core.when.resolve``) computes the instant in the chat's zone, and the
reminder is set as ``/remind`` sets it (``bot.core.reminders.create``), by the speaker. The
model is told the resolved local time, written as the confirmation writes it
(``bot.core.time_text``), so that it repeats the code's time, not its own guess;
the bot then shows the confirmation with its buttons (``made``). A failed turn cancels what it
set (``undo``): a turn is all or nothing, reminders included.

A turn sets at most ``MAX_REMINDERS`` (3) on its own, as it changes at most three memories
(``bot.assistant.limits``): a message that really asks for reminders asks for one or two ("every
day at 8 and at 20"), and one prompt-injected text must not fill a chat with them. Past the cap
a reminder is not set: it is resolved and checked as if it were, kept as a
``bot.assistant.changes.ReminderProposal`` (``waiting``) and listed, with its time, in the
turn's one Apply all / Discard message; the model is told it waits for the user. Apply all sets
the waiting ones the presser may set (``set_waiting``: in a group the member who asked, or an
administrator), each once however often or wherever it is pressed (the reminder's id derives
from the request, ``reminders.create``). Each reminder records the change (``memory.history``)
that set it, so that the ↩ Undo of the turn, or of the Apply all, cancels it
(``cancel_change``).

``offerReminder`` sets nothing: the model proposes a reminder for what the user said they will
do ("I need to call the plumber tomorrow morning"), the time resolved by the same code, and the
bot offers it after the turn with Yes / another time / No (``bot.chat.offering``), as it offers
one without a model. At most ``MAX_OFFERS`` per message; a failed turn offers none.
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.assistant.changes import ReminderProposal
from bot.core import reminders, when
from bot.core.due import FREQUENCIES, Due, Repeat
from bot.core.policy import Caller
from bot.core.reminder_record import ENDED, Reminder
from bot.core.time_text import time_text
from bot.errors import ReminderNotAllowed, ReminderNotFound
from memory.errors import MemoryInvalid
from memory.history import current_author
from memory.interface import Store

MAX_REMINDERS = 3  # set per turn without the user's confirmation
MAX_OFFERS = 3  # offered per turn, each with its own buttons


@dataclass
class ReminderDesk:
    """Reminders set by one turn, for one speaker in one chat."""

    store: Store
    caller: Caller
    chat_id: int
    zone: ZoneInfo
    clock: Callable[[], datetime]
    language: str
    default_hour: int = 9
    source: str | None = None  # the message; the n-th reminder of the turn is <source>:t<n>
    thread_id: int | None = None
    limit: int = MAX_REMINDERS
    made: list[Reminder] = field(default_factory=list)
    waiting: list[ReminderProposal] = field(default_factory=list)  # past the limit
    offered: list[tuple[str, Due]] = field(default_factory=list)  # offerReminder's
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def schedule(
        self,
        text: str,
        *,
        local: str | None = None,
        minutes: int | None = None,
        repeat: str | None = None,
    ) -> dict[str, Any]:
        """Set one reminder, or past the limit keep it for the user's confirmation; its
        resolved time for the model (``MemoryInvalid`` if refused)."""
        now = self.clock()
        due, rule = self._due(text, now, local, minutes, repeat)
        shown = time_text(due.at, due.zone)
        with self._lock:
            number = len(self.made) + len(self.waiting) + 1
            source = f"{self.source}:t{number}" if self.source is not None else None
            if len(self.made) >= self.limit:
                self.waiting.append(
                    ReminderProposal(
                        reminders.clean_text(text),  # refused now, as the store would refuse it
                        due,
                        self.language,
                        self.chat_id,
                        self.caller.actor,
                        source or f"pending:{secrets.token_urlsafe(9)}",
                        self.thread_id,
                    )
                )
                return self._waits(shown, rule)
            reminder = reminders.create(
                self.store,
                self.caller,
                chat_id=self.chat_id,
                text=text,
                due=due,
                language=self.language,
                now=now,
                thread_id=self.thread_id,
                source=source,
                change=current_author().change,  # the turn's (``ToolExecutor`` acts as it)
            )
            self.made.append(reminder)
        answer: dict[str, Any] = {
            "ok": True,
            "id": reminder.id,
            "due": shown,
            "note": "The bot shows this time and buttons to the user; do not restate another.",
        }
        if rule is not None:
            answer["repeat"] = rule.describe()
        return answer

    def _due(
        self,
        text: str,
        now: datetime,
        local: str | None,
        minutes: int | None,
        repeat: str | None,
    ) -> tuple[Due, Repeat | None]:
        """The time the model gave, resolved by the code (``MemoryInvalid`` if refused)."""
        rule = None
        if repeat is not None:
            if repeat not in FREQUENCIES:
                options = ", ".join(FREQUENCIES)
                raise MemoryInvalid(f"repeat must be one of {options}", field="repeat")
            rule = Repeat(repeat)  # type: ignore[arg-type]
        try:
            due = when.resolve(
                self.zone,
                now,
                local=local,
                offset_minutes=minutes,
                repeat=rule,
                default_hour=self.default_hour,
            )
        except ValueError as e:
            raise MemoryInvalid(str(e), field="time") from e
        if not text.strip():
            raise MemoryInvalid("text must say what to remind of", field="text")
        return due, rule

    def offer(
        self,
        text: str,
        *,
        local: str | None = None,
        minutes: int | None = None,
        repeat: str | None = None,
    ) -> dict[str, Any]:
        """Keep one reminder to offer after the turn (nothing is set); its resolved time for
        the model (``MemoryInvalid`` if refused)."""
        due, rule = self._due(text, self.clock(), local, minutes, repeat)
        shown = time_text(due.at, due.zone)
        with self._lock:
            if len(self.offered) >= MAX_OFFERS:
                raise MemoryInvalid(f"at most {MAX_OFFERS} offers per message", field="count")
            self.offered.append((reminders.clean_text(text), due))
        answer: dict[str, Any] = {
            "ok": True,
            "offered": True,
            "set": False,
            "due": shown,
            "note": "Not set: the bot shows the user this time with Yes / Another time / No "
            "buttons and sets the reminder only if they press Yes. Say so in a few words; do "
            "not call scheduleReminder for it.",
        }
        if rule is not None:
            answer["repeat"] = rule.describe()
        return answer

    def _waits(self, shown: str, rule: Repeat | None) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "ok": False,
            "needsConfirmation": True,
            "due": shown,
            "message": f"Not set yet: it waits for the user's confirmation. At most "
            f"{self.limit} reminders per message are set without it. The user gets one "
            "message listing the waiting reminders with their times and Apply all / Discard "
            "buttons. Do not call it again; tell the user it waits for their confirmation.",
        }
        if rule is not None:
            answer["repeat"] = rule.describe()
        return answer

    def undo(self) -> None:
        """Cancel what this turn set, and forget what waits (the turn failed)."""
        with self._lock:
            for reminder in self.made:
                try:
                    reminders.cancel(self.store, self.caller, reminder.id, self.clock())
                except (ReminderNotFound, ReminderNotAllowed):
                    continue
            self.made.clear()
            self.waiting.clear()
            self.offered.clear()


def may_set(caller: Caller, proposal: ReminderProposal) -> bool:
    """Whether ``caller`` may set a waiting reminder: in a group's shared namespace the member
    who asked for it or an administrator (``bot.core.reminders.may_change``), else anyone."""
    return not caller.shared or caller.admin or proposal.author.key == caller.actor.key


@dataclass(frozen=True)
class Set:
    """What ``set_waiting`` did: the reminders set (each with its proposal), and how many
    could not be (their time passed, or the chat has too many)."""

    made: tuple[tuple[ReminderProposal, Reminder], ...] = ()
    not_set: int = 0


def set_waiting(
    store: Store, caller: Caller, proposals: Iterable[ReminderProposal], now: datetime
) -> Set:
    """Set the waiting reminders ``proposals`` (the caller may set them: ``may_set``), each
    for the member who asked, as part of the current change (``memory.history``).

    A repeating one whose first time passed meanwhile starts at its next occurrence; a
    one-off that passed is not set. Each is set once: a proposal applied again (a second press,
    another process) finds its reminder, as it is, and counts it as set if it is still on.
    """
    made: list[tuple[ReminderProposal, Reminder]] = []
    not_set = 0
    change = current_author().change
    for proposal in proposals:
        due = proposal.due
        if due.at <= now:
            later = due.next_after(now)
            if later is None:
                not_set += 1
                continue
            due = dataclasses.replace(due, at=later)
        speaker = dataclasses.replace(caller, actor=proposal.author)
        try:
            reminder = reminders.create(
                store,
                speaker,
                chat_id=proposal.chat_id,
                text=proposal.text,
                due=due,
                language=proposal.language,
                now=now,
                thread_id=proposal.thread_id,
                source=proposal.source,
                change=change,
            )
        except MemoryInvalid:  # too many reminders in the chat
            not_set += 1
            continue
        if reminder.state in ENDED:
            not_set += 1  # set before and cancelled since: not brought back
            continue
        made.append((proposal, reminder))
    return Set(tuple(made), not_set)


def cancel_change(
    store: Store, caller: Caller, change: str, now: datetime
) -> tuple[list[Reminder], int]:
    """Cancel the live reminders of the caller's namespace that ``change`` set (the ↩ Undo of
    a turn or an Apply all): those cancelled, and how many the caller may not cancel."""
    cancelled: list[Reminder] = []
    refused = 0
    for reminder in reminders.every(store, caller.namespace):
        if reminder.change != change or reminder.state in ENDED:
            continue
        try:
            cancelled.append(reminders.cancel(store, caller, reminder.id, now))
        except ReminderNotAllowed:
            refused += 1
        except ReminderNotFound:
            continue  # ended meanwhile
    return cancelled, refused
