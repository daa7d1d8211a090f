"""The reminders' index: the next occurrence of every pending reminder, soonest first.

The delivery (``bot.jobs.reminders``) looks at this, in memory, every tick, and at the store only
to claim what is due. ``rebuild`` fills it from every reminder in the store (at start-up and
every rescan); ``track`` keeps one reminder's entry current after a change (the doors, a
delivery); an entry tracked while the store was being read for a rebuild stands over what that
read found. Used from the event loop's thread only. A key whose send failed waits
(``backoff``: ``RETRY_FIRST`` seconds, doubling to ``RETRY_MAX``, or as long as Telegram
asked) before ``take_due`` hands it out again; so does a key still being sent (``busy``), so
that no occurrence is in two senders at once.
"""

from __future__ import annotations

import heapq
from collections.abc import Container, Iterable
from datetime import datetime, timedelta

from bot.core.reminder_record import Reminder

RETRY_FIRST = 5.0  # seconds
RETRY_MAX = 600.0


class DueIndex:
    """Key -> next occurrence and chat, with a heap for the soonest (module docstring)."""

    def __init__(self) -> None:
        self._due: dict[str, datetime] = {}  # key -> next occurrence
        self._chat: dict[str, int] = {}  # key -> the chat it goes to
        self._heap: list[tuple[datetime, str]] = []  # the same, lazily cleaned
        self._retry: dict[str, tuple[int, datetime]] = {}  # key -> (failures, not before)
        self._changes = 0  # how many entries were tracked so far: a scan's mark
        self._tracked: dict[str, int] = {}  # key -> the change that tracked it last

    def mark(self) -> int:
        """A mark to give ``rebuild`` for a read of the store that starts now."""
        return self._changes

    def track(self, reminder: Reminder | None) -> None:
        """Keep the entry of ``reminder`` current (None: nothing)."""
        if reminder is None:
            return
        self._changes += 1
        self._tracked[reminder.key] = self._changes
        at = reminder.next_at
        if at is None:
            self.forget(reminder.key)
            return
        self._chat[reminder.key] = reminder.chat_id
        if self._due.get(reminder.key) != at:
            self.put(reminder.key, at)

    def put(self, key: str, at: datetime) -> None:
        """``key`` is due at ``at`` (again)."""
        self._due[key] = at
        heapq.heappush(self._heap, (at, key))

    def forget(self, key: str) -> None:
        """Nothing of ``key`` is due (paused, ended)."""
        self._due.pop(key, None)
        self._retry.pop(key, None)

    def sent(self, key: str) -> None:
        """``key`` was delivered: its failures are over."""
        self._retry.pop(key, None)

    def chat(self, key: str) -> int:
        """The chat ``key`` goes to."""
        return self._chat[key]

    def next_due(self) -> datetime | None:
        """The earliest occurrence."""
        while self._heap and self._due.get(self._heap[0][1]) != self._heap[0][0]:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def rebuild(self, found: Iterable[Reminder], since: int) -> None:
        """Every entry anew, from ``found`` (the store's reminders, read since ``mark`` gave
        ``since``); the failures are kept, and so is every entry tracked since that mark (a
        /remind while the store was read is newer than the read)."""
        newer = {key for key, change in self._tracked.items() if change > since}
        kept = {key: (self._due.get(key), self._chat.get(key)) for key in newer}
        self._due.clear()
        self._heap.clear()
        self._chat.clear()
        self._tracked.clear()
        for reminder in found:
            if reminder.key not in newer:
                self.track(reminder)
        for key, (at, chat) in kept.items():
            if chat is not None:
                self._chat[key] = chat
            if at is not None:
                self.put(key, at)

    def take_due(self, now: datetime, busy: Container[str]) -> list[tuple[str, datetime]]:
        """The occurrences due by ``now``, soonest first, out of the index; those waiting for
        a retry and those ``busy`` stay in it, for a later look."""
        due = []
        while (first := self.next_due()) is not None and first <= now:
            at, key = heapq.heappop(self._heap)
            del self._due[key]
            due.append((key, at))
        ready: list[tuple[str, datetime]] = []
        for key, at in due:
            _, not_before = self._retry.get(key, (0, now))
            if not_before > now or key in busy:
                self.put(key, at)
            else:
                ready.append((key, at))
        return ready

    def backoff(self, key: str, at: datetime, now: datetime, wait: float = 0.0) -> None:
        """Sending ``key`` failed: due again after the next wait (at least ``wait`` s)."""
        failures = self._retry.get(key, (0, now))[0] + 1
        delay = max(min(RETRY_FIRST * 2 ** (failures - 1), RETRY_MAX), wait)
        self._retry[key] = (failures, now + timedelta(seconds=delay))
        self.put(key, at)
