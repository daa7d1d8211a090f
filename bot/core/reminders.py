"""Reminders: what is kept and who may change it.

Storage. Every reminder is one bot-wide document (``Store.bot_documents()``) under
``reminders/<namespace>/<id>`` (``reminders/users/42/k3v9x2ab``): bot-wide, so that start-up
finds every reminder with one ``list("reminders/")`` and the job needs no index of its own
that could drift; keyed by namespace, so that a chat's reminders are one prefix
(``/reminders``) and a button is resolved in the presser's namespace only (a crafted id of
another namespace's reminder finds nothing). Through the store interface only, so that a
PostgreSQL store keeps them as it keeps the rest.

A reminder holds its text, who set it (``Actor.key`` and the display name the delivery
mentions in a group), the chat it goes to, its ``Due`` (``bot.core.when``: instant, zone, local
wall time, repeat rule) and two instants: ``series_at``, the next occurrence of the series (for
a one-off, its instant until it is sent), and ``snooze_at``, a snoozed extra occurrence. The
next one to send is the earlier of the two. ``change`` is the change (``memory.history``) that
set it, when the model's turn or an Apply all did: the ↩ Undo of that change cancels it
(``bot.assistant.reminder_desk.cancel_change``). ``state`` is ``pending`` (something is due),
``sent`` (a one-off was delivered; a snooze brings it back), ``paused`` (Telegram refused the
chat: 403), ``done`` or ``cancelled``. Ended ones are pruned ``PRUNE_AFTER`` after their last
change. Ids are eight lower-case letters and digits: short and stable for buttons.

Permission: the one rule of ``bot.core.policy``. In a group's shared namespace only the member
who set a reminder or an administrator may cancel, change, snooze or finish it; in a private
chat (or ``group_scope = "user"``) everything is the caller's own.

How an occurrence is then sent once (claim, deliver, release, pause) is ``bot.core.delivery``,
the job's side, and the lease a claim holds (shared with the digest) is ``bot.core.lease``. A
chat's time zone is ``bot.core.chat_zones``.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import string
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from bot.core.lease import Claim
from bot.core.policy import Caller
from bot.core.when import Due
from bot.errors import ReminderNotAllowed, ReminderNotFound
from memory import Documents, Store, update_document
from memory.errors import DocumentConflict, MemoryInvalid
from memory.interface import ABSENT
from memory.model import format_time, parse_time

log = logging.getLogger(__name__)

PREFIX = "reminders"
PENDING, SENT, PAUSED, DONE, CANCELLED = "pending", "sent", "paused", "done", "cancelled"
STATES = (PENDING, SENT, PAUSED, DONE, CANCELLED)
ENDED = (DONE, CANCELLED)
PRUNE_AFTER = timedelta(days=30)  # ended (or sent and never snoozed) reminders are then removed
MAX_TEXT_CHARS = 1000
MAX_PER_NAMESPACE = 200  # reminders not ended, per namespace
ID_CHARS = string.ascii_lowercase + string.digits
ID_PATTERN = r"[a-z0-9]{8}"
_ID_LENGTH = 8


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except MemoryInvalid:
        return None


def _iso(value: datetime | None) -> str | None:
    return format_time(value) if value is not None else None


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
            message_id, change = value.get("message_id"), value.get("change")
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
                pause_reason=value.get("pause_reason")
                if isinstance(value.get("pause_reason"), str)
                else None,
                change=change if isinstance(change, str) else None,
            )
        except (KeyError, TypeError) as e:
            raise ValueError(f"not a reminder: {e}") from e


def key_of(namespace: str, reminder_id: str) -> str:
    """The document key of reminder ``reminder_id`` of ``namespace``."""
    return f"{PREFIX}/{namespace}/{reminder_id}"


def may_change(caller: Caller, reminder: Reminder) -> bool:
    """Whether ``caller`` may cancel, change, snooze or finish ``reminder`` (module docstring)."""
    return not caller.shared or caller.admin or reminder.author == caller.actor.key


def _parse(documents: Documents, key: str) -> Reminder | None:
    found = documents.get(key)
    if found is None:
        return None
    try:
        return Reminder.from_json(found.value)
    except ValueError as e:
        log.warning("ignored the unreadable reminder %s: %s", key, e)
        return None


def _random_id() -> str:
    return "".join(secrets.choice(ID_CHARS) for _ in range(_ID_LENGTH))


def _derived_id(source: str) -> str:
    digest = hashlib.sha256(source.encode()).digest()
    return "".join(ID_CHARS[b % len(ID_CHARS)] for b in digest[:_ID_LENGTH])


def _valid_id(reminder_id: str) -> bool:
    return len(reminder_id) == _ID_LENGTH and all(c in ID_CHARS for c in reminder_id)


# -- reading -----------------------------------------------------------------------------------


def every(store: Store, namespace: str | None = None) -> list[Reminder]:
    """Every readable reminder (of ``namespace``), in key order; unreadable ones are logged."""
    prefix = f"{PREFIX}/{namespace}/" if namespace is not None else f"{PREFIX}/"
    found = []
    for document in store.bot_documents().list(prefix):
        try:
            found.append(Reminder.from_json(document.value))
        except ValueError as e:
            log.warning("ignored the unreadable reminder %s: %s", document.key, e)
    return found


def upcoming(store: Store, namespace: str) -> list[Reminder]:
    """The namespace's pending and paused reminders, soonest first."""
    live = [r for r in every(store, namespace) if r.upcoming_at is not None]
    return sorted(live, key=lambda r: (r.upcoming_at, r.id))


def get(store: Store, namespace: str, reminder_id: str) -> Reminder:
    """Reminder ``reminder_id`` of ``namespace`` (``ReminderNotFound`` if none, or ended)."""
    if not _valid_id(reminder_id):
        raise ReminderNotFound(reminder_id)
    reminder = _parse(store.bot_documents(), key_of(namespace, reminder_id))
    if reminder is None or reminder.state in ENDED:
        raise ReminderNotFound(reminder_id)
    return reminder


# -- changing, for a caller ------------------------------------------------------------------


def clean_text(text: str) -> str:
    """A reminder's text as kept (one line's spaces collapsed); ``MemoryInvalid`` if too long
    or not text a document can hold (a lone surrogate, which JSON can spell but not store)."""
    text = " ".join(text.split()) if "\n" not in text else text.strip()
    if len(text) > MAX_TEXT_CHARS:
        raise MemoryInvalid(f"a reminder is at most {MAX_TEXT_CHARS} characters", field="text")
    try:
        text.encode()
    except UnicodeEncodeError as e:
        raise MemoryInvalid(
            "the text has a character that cannot be stored (a lone surrogate)", field="text"
        ) from e
    return text


def create(
    store: Store,
    caller: Caller,
    *,
    chat_id: int,
    text: str,
    due: Due,
    language: str,
    now: datetime,
    memory_id: int | None = None,
    thread_id: int | None = None,
    message_id: int | None = None,
    source: str | None = None,
    change: str | None = None,
) -> Reminder:
    """A new pending reminder. ``MemoryInvalid`` (``field`` says which) for a too long text, a
    time not after ``now``, or a namespace with too many reminders.

    ``source`` names what asked for it (a message, a tool call of a turn, a button pressed on a
    memory): its id is derived from it, so the same request handled twice (Telegram delivering
    an update again, the inbox replaying one after a crash, Apply all pressed in two
    processes) sets one reminder, returned again. ``change`` is the change that sets it.
    """
    text = clean_text(text)
    if due.at <= now:
        raise MemoryInvalid("that time has passed", field="past")
    live = [r for r in every(store, caller.namespace) if r.state not in ENDED]
    if len(live) >= MAX_PER_NAMESPACE:
        raise MemoryInvalid(f"at most {MAX_PER_NAMESPACE} reminders per chat", field="count")
    documents = store.bot_documents()
    if source is not None:
        existing = _parse(documents, key_of(caller.namespace, _derived_id(source)))
        if existing is not None:
            return existing
    for attempt in range(10):
        reminder = Reminder(
            id=_derived_id(source) if source is not None and not attempt else _random_id(),
            namespace=caller.namespace,
            chat_id=chat_id,
            author=caller.actor.key,
            author_name=caller.actor.name,
            text=text,
            due=due,
            language=language,
            created_at=now,
            series_at=due.at,
            changed_at=now,
            memory_id=memory_id,
            thread_id=thread_id,
            message_id=message_id,
            change=change,
        )
        try:
            documents.put(reminder.key, reminder.to_json(), version=ABSENT)
        except DocumentConflict:
            if source is not None and not attempt:
                existing = _parse(documents, reminder.key)
                if existing is not None:
                    return existing  # the same request, handled at the same moment elsewhere
            continue  # the id is taken: draw another
        return reminder
    raise DocumentConflict(f"{PREFIX}/{caller.namespace}", expected=ABSENT, actual="(taken)")


def _change(
    store: Store,
    caller: Caller | None,
    namespace: str,
    reminder_id: str,
    change: Callable[[Reminder], Reminder],
) -> Reminder:
    """Apply ``change`` to a live reminder atomically, if ``caller`` (None: the bot) may."""
    if not _valid_id(reminder_id):
        raise ReminderNotFound(reminder_id)
    result: list[Reminder] = []

    def apply(value: Any) -> Any:
        result.clear()
        try:
            current = Reminder.from_json(value)
        except ValueError:
            raise ReminderNotFound(reminder_id) from None
        if current.state in ENDED:
            raise ReminderNotFound(reminder_id)
        if caller is not None and not may_change(caller, current):
            raise ReminderNotAllowed(reminder_id)
        result.append(change(current))
        return result[0].to_json()

    update_document(store.bot_documents(), key_of(namespace, reminder_id), apply)
    return result[0]


def cancel(store: Store, caller: Caller, reminder_id: str, now: datetime) -> Reminder:
    """End the reminder, the whole series for a repeating one."""
    return _change(
        store,
        caller,
        caller.namespace,
        reminder_id,
        lambda r: replace(r, state=CANCELLED, snooze_at=None, claim=None, changed_at=now),
    )


def done(store: Store, caller: Caller, reminder_id: str, now: datetime) -> Reminder:
    """✅ Done: a one-off ends; a repeating one ends this occurrence (its snooze) only."""

    def finish(r: Reminder) -> Reminder:
        if r.due.repeat is not None and r.series_at is not None:
            series_at = r.series_at
            if r.claim is not None and r.claim.at == series_at:
                # Pressed while this occurrence is being delivered, before the delivery is
                # recorded: it is the one done, and the next is the one after it.
                series_at = r.due.next_after(max(series_at, now)) or series_at
            return replace(r, series_at=series_at, snooze_at=None, state=PENDING, changed_at=now)
        return replace(r, state=DONE, snooze_at=None, claim=None, changed_at=now)

    return _change(store, caller, caller.namespace, reminder_id, finish)


def snooze(
    store: Store, caller: Caller, reminder_id: str, until: datetime, now: datetime
) -> Reminder:
    """⏰ Send it again at ``until`` (a repeating one keeps its series)."""
    if until <= now:
        raise MemoryInvalid("that time has passed", field="past")
    return _change(
        store,
        caller,
        caller.namespace,
        reminder_id,
        lambda r: replace(r, snooze_at=until, state=PENDING, pause_reason=None, changed_at=now),
    )


def reschedule(store: Store, caller: Caller, reminder_id: str, due: Due, now: datetime) -> Reminder:
    """Change when it is due (its rule too); the text stays."""
    if due.at <= now:
        raise MemoryInvalid("that time has passed", field="past")
    return _change(
        store,
        caller,
        caller.namespace,
        reminder_id,
        lambda r: replace(
            r, due=due, series_at=due.at, snooze_at=None, state=PENDING, claim=None, changed_at=now
        ),
    )


def resume_chat(store: Store, namespace: str, chat_id: int, now: datetime) -> int:
    """Pending again: the chat's reminders paused because Telegram refused it; how many."""
    count = 0
    for reminder in every(store, namespace):
        if reminder.state == PAUSED and reminder.chat_id == chat_id:
            try:
                _change(
                    store,
                    None,
                    namespace,
                    reminder.id,
                    lambda r: (
                        replace(r, state=PENDING, pause_reason=None, changed_at=now)
                        if r.state == PAUSED
                        else r
                    ),
                )
                count += 1
            except ReminderNotFound:
                continue
    return count
