"""A reminder as it is kept: the record, its states, its document.

Every reminder is one bot-wide document (``Store.bot_documents()``) under
``reminders/<namespace>/<id>`` (``reminders/users/42/k3v9x2ab``, ``key_of``); its value is
``Reminder.to_json`` and reads back with ``Reminder.from_json``. What may be done to it, and by
whom, is ``bot.core.reminders``; how it is sent, ``bot.core.delivery``.

A reminder holds its text, who set it (``Actor.key`` and the display name the delivery
mentions in a group), the chat it goes to, its ``Due`` (``bot.core.when``: instant, zone, local
wall time, repeat rule) and two instants: ``series_at``, the next occurrence of the series (for
a one-off, its instant until it is sent), and ``snooze_at``, a snoozed extra occurrence. The
next one to send is the earlier of the two. ``state`` is ``pending`` (something is due),
``sent`` (a one-off was delivered; a snooze brings it back), ``paused`` (Telegram refused the
chat, or this reminder alone: ``pause_reason``), ``done`` or ``cancelled``. ``claim`` is the
delivery's (``bot.core.lease.Claim``), ``snoozed_by`` the button press that set ``snooze_at``.
``change`` is the change (``memory.history``) that set it, when the model's turn or an Apply all
did: the ↩ Undo of that change cancels it (``bot.assistant.reminder_desk.cancel_change``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.core.due import Due
from bot.core.lease import Claim
from memory.errors import MemoryInvalid
from memory.timestamps import format_time, parse_time

PREFIX = "reminders"
PENDING, SENT, PAUSED, DONE, CANCELLED = "pending", "sent", "paused", "done", "cancelled"
STATES = (PENDING, SENT, PAUSED, DONE, CANCELLED)
ENDED = (DONE, CANCELLED)
PAUSED_REFUSED = "refused"  # a pause_reason: Telegram refused this reminder, not its chat


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except MemoryInvalid:
        return None


def _iso(value: datetime | None) -> str | None:
    return format_time(value) if value is not None else None


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class Reminder:
    """One reminder (see the module docstring)."""

    id: str
    namespace: str
    chat_id: int
    author: str  # Actor.key of who set it
    author_name: str
    text: str
    due: Due
    language: str
    created_at: datetime
    state: str = PENDING
    series_at: datetime | None = None
    snooze_at: datetime | None = None
    claim: Claim | None = None
    sent_at: datetime | None = None  # the last occurrence delivered
    changed_at: datetime | None = None
    memory_id: int | None = None
    thread_id: int | None = None  # the forum topic it was set in
    message_id: int | None = None  # the message it reminds of (/remind as a reply)
    pause_reason: str | None = None
    snoozed_by: str | None = None  # the button press that set ``snooze_at``
    change: str | None = None  # the change that set it (a turn of the model, an Apply all)

    @property
    def key(self) -> str:
        """Its document key."""
        return key_of(self.namespace, self.id)

    @property
    def next_at(self) -> datetime | None:
        """The next occurrence to send (None: nothing more is due)."""
        if self.state != PENDING:
            return None
        times = [t for t in (self.series_at, self.snooze_at) if t is not None]
        return min(times) if times else None

    @property
    def upcoming_at(self) -> datetime | None:
        """When it comes next, paused or not (for listings)."""
        times = [t for t in (self.series_at, self.snooze_at) if t is not None]
        return min(times) if times and self.state in (PENDING, PAUSED) else None

    def to_json(self) -> dict[str, Any]:
        """The document's value."""
        claim = self.claim
        return {
            "id": self.id,
            "namespace": self.namespace,
            "chat_id": self.chat_id,
            "author": self.author,
            "author_name": self.author_name,
            "text": self.text,
            "due": self.due.to_json(),
            "language": self.language,
            "created_at": format_time(self.created_at),
            "state": self.state,
            "series_at": _iso(self.series_at),
            "snooze_at": _iso(self.snooze_at),
            "claim": None
            if claim is None
            else {
                "at": format_time(claim.at),
                "by": claim.by,
                "since": format_time(claim.since),
                "tries": claim.tries,
            },
            "sent_at": _iso(self.sent_at),
            "changed_at": _iso(self.changed_at),
            "memory_id": self.memory_id,
            "thread_id": self.thread_id,
            "message_id": self.message_id,
            "pause_reason": self.pause_reason,
            "snoozed_by": self.snoozed_by,
            "change": self.change,
        }

    @classmethod
    def from_json(cls, value: object) -> Reminder:
        """A reminder as ``to_json`` wrote it; ``ValueError`` if it is not one."""
        if not isinstance(value, dict):
            raise ValueError("a reminder is a JSON object")
        try:
            claim = value.get("claim")
            created = _time(value.get("created_at"))
            state = value.get("state")
            if created is None or state not in STATES:
                raise ValueError(f"bad created_at or state {state!r}")
            parsed_claim = None
            if isinstance(claim, dict):
                at, since = _time(claim.get("at")), _time(claim.get("since"))
                if at is not None and since is not None:
                    parsed_claim = Claim(at, str(claim.get("by")), since, int(claim["tries"]))
            memory_id, thread_id = value.get("memory_id"), value.get("thread_id")
            message_id = value.get("message_id")
            return cls(
                id=str(value["id"]),
                namespace=str(value["namespace"]),
                chat_id=int(value["chat_id"]),
                author=str(value["author"]),
                author_name=str(value.get("author_name") or ""),
                text=str(value["text"]),
                due=Due.from_json(value["due"]),
                language=str(value.get("language") or "en"),
                created_at=created,
                state=state,
                series_at=_time(value.get("series_at")),
                snooze_at=_time(value.get("snooze_at")),
                claim=parsed_claim,
                sent_at=_time(value.get("sent_at")),
                changed_at=_time(value.get("changed_at")),
                memory_id=int(memory_id) if isinstance(memory_id, int) else None,
                thread_id=int(thread_id) if isinstance(thread_id, int) else None,
                message_id=int(message_id) if isinstance(message_id, int) else None,
                pause_reason=_text_or_none(value.get("pause_reason")),
                snoozed_by=_text_or_none(value.get("snoozed_by")),
                change=_text_or_none(value.get("change")),
            )
        except (KeyError, TypeError) as e:
            raise ValueError(f"not a reminder: {e}") from e


def key_of(namespace: str, reminder_id: str) -> str:
    """The document key of reminder ``reminder_id`` of ``namespace``."""
    return f"{PREFIX}/{namespace}/{reminder_id}"
