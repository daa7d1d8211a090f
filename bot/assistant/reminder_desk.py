"""The model's way to set reminders in one turn: ``scheduleReminder`` (``bot.assistant.tools``).

The model gives the text and a local date-time, a number of minutes from now, or a repeat
rule; the code (``bot.core.when.resolve``) computes the instant in the chat's zone, and the
reminder is set as ``/remind`` sets it (``bot.core.reminders.create``), by the speaker. The
model is told the resolved local time, so that it repeats the code's time, not its own guess;
the bot then shows the confirmation with its buttons (``made``). A failed turn cancels what it
set (``undo``): a turn is all or nothing, reminders included.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.core import reminders, when
from bot.core.policy import Caller
from bot.core.reminders import Reminder
from bot.errors import ReminderNotAllowed, ReminderNotFound
from memory.errors import MemoryInvalid
from memory.interface import Store


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
    made: list[Reminder] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def schedule(
        self,
        text: str,
        *,
        local: str | None = None,
        minutes: int | None = None,
        repeat: str | None = None,
    ) -> dict[str, Any]:
        """Set one reminder; its resolved time for the model (``MemoryInvalid`` if refused)."""
        rule = None
        if repeat is not None:
            if repeat not in when.FREQUENCIES:
                options = ", ".join(when.FREQUENCIES)
                raise MemoryInvalid(f"repeat must be one of {options}", field="repeat")
            rule = when.Repeat(repeat)  # type: ignore[arg-type]
        now = self.clock()
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
        with self._lock:
            number = len(self.made) + 1
            source = f"{self.source}:t{number}" if self.source is not None else None
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
            )
            self.made.append(reminder)
        local_time = due.local()
        answer: dict[str, Any] = {
            "ok": True,
            "id": reminder.id,
            "due": f"{local_time:%Y-%m-%d %H:%M (%a)} {self.zone.key}",
            "note": "The bot shows this time and buttons to the user; do not restate another.",
        }
        if rule is not None:
            answer["repeat"] = rule.describe()
        return answer

    def undo(self) -> None:
        """Cancel what this turn set (the turn failed)."""
        with self._lock:
            for reminder in self.made:
                try:
                    reminders.cancel(self.store, self.caller, reminder.id, self.clock())
                except (ReminderNotFound, ReminderNotAllowed):
                    continue
            self.made.clear()
