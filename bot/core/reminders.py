"""Reminders: what is kept and who may change it.

Storage. Every reminder is one bot-wide document (``Store.bot_documents()``) under
``reminders/<namespace>/<id>`` (``reminders/users/42/k3v9x2ab``): bot-wide, so that start-up
finds every reminder with one ``list("reminders/")`` and the job needs no index of its own
that could drift; keyed by namespace, so that a chat's reminders are one prefix
(``/reminders``) and a button is resolved in the presser's namespace, or another namespace of
the same chat (``locate``: a topic's reminder delivered to the general topic), never another
chat's (a crafted id of another chat's reminder finds nothing). Through the store interface
only, so that a PostgreSQL store keeps them as it keeps the rest.

A reminder is a ``Reminder`` (``bot.core.reminder_record``: its fields, states and JSON).
Ended ones are pruned ``PRUNE_AFTER`` after their last change. Ids are eight lower-case letters
and digits: short and stable for buttons.

Limits: at most ``MAX_PER_NAMESPACE`` reminders that can still fire (pending or paused; one
delivered is not counted while it waits to be pruned), each at most ``MAX_AHEAD`` ahead
(``bot.core.when``: a date such as 9999-12-31 is refused, never stored).

Once per press. A button pressed twice (a double tap, two replicas handling the two presses at
once) acts once: a snooze records which button set it (``snoozed_by``: the chat, the message
and the choice) in the same compare-and-set that sets it, and the same button again raises
``ReminderPressedAgain``; a reminder made from a request (``source``) is set once, and
``create_once`` says whether this call set it.

Permission: the one rule of ``bot.core.policy``. In a group's shared namespace only the member
who set a reminder or an administrator may cancel, change, snooze or finish it; in a private
chat (or ``group_scope = "user"``) everything is the caller's own.

A chat's reminders (``of_chat``) are every reminder that goes to it, whatever namespace keeps
it: with ``group_scope = "topic"`` each topic's (``bot.core.topics``), with ``"user"`` each
member's own. Telegram refusing the chat pauses all of them, and the chat writing again puts
all of them back (``bot.core.delivery``: ``pause_chat``, ``resume_chat``).

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
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from bot.core.due import Due
from bot.core.policy import Caller
from bot.core.reminder_record import CANCELLED, DONE, ENDED, PENDING, PREFIX, key_of
from bot.core.reminder_record import Reminder as Reminder  # also read as reminders.Reminder
from bot.core.topics import chat_namespace
from bot.core.when import MAX_AHEAD
from bot.errors import ReminderNotAllowed, ReminderNotFound, ReminderPressedAgain
from memory import Documents, Store, update_document
from memory.documents import ABSENT
from memory.errors import DocumentConflict, MemoryInvalid

log = logging.getLogger(__name__)

PRUNE_AFTER = timedelta(days=30)  # ended (or sent and never snoozed) reminders are then removed
MAX_TEXT_CHARS = 1000
MAX_PER_NAMESPACE = 200  # reminders that can still fire (pending or paused), per namespace
ID_CHARS = string.ascii_lowercase + string.digits
ID_PATTERN = r"[a-z0-9]{8}"
_ID_LENGTH = 8


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
    """Every readable reminder (of ``namespace``), in key order; unreadable ones are logged.

    A namespace's prefix also holds its topics' reminders (``reminders/chats/-100/topics/5/``
    under ``reminders/chats/-100/``: ``bot.core.topics``); they are another namespace's."""
    prefix = f"{PREFIX}/{namespace}/" if namespace is not None else f"{PREFIX}/"
    found = []
    for document in store.bot_documents().list(prefix):
        if namespace is not None and "/" in document.key[len(prefix) :]:
            continue
        try:
            found.append(Reminder.from_json(document.value))
        except ValueError as e:
            log.warning("ignored the unreadable reminder %s: %s", document.key, e)
    return found


def of_chat(store: Store, chat_id: int) -> list[Reminder]:
    """Every readable reminder that goes to ``chat_id``, whatever namespace keeps it (its
    topics', its members': the module docstring), in key order."""
    return [reminder for reminder in every(store) if reminder.chat_id == chat_id]


def upcoming(store: Store, namespace: str) -> list[Reminder]:
    """The namespace's pending and paused reminders, soonest first."""
    live = [r for r in every(store, namespace) if r.upcoming_at is not None]
    return sorted(live, key=lambda r: (r.upcoming_at, r.id))


def locate(store: Store, caller: Caller, chat_id: int, reminder_id: str) -> Caller:
    """``caller`` acting where reminder ``reminder_id`` of chat ``chat_id`` is kept: its own
    namespace when it is there, else the namespace of the chat that keeps it (another forum
    topic: a reminder whose topic was deleted rings in the general topic, its buttons with it),
    as ``Caller.in_chat`` allows; ``caller`` as it is when none does (the change then finds
    nothing). Only the chat's own namespaces are looked in, so a button never reaches another
    chat's reminder."""
    if not _valid_id(reminder_id):
        return caller
    documents = store.bot_documents()
    if _parse(documents, key_of(caller.namespace, reminder_id)) is not None:
        return caller
    found = []
    for document in documents.list(f"{PREFIX}/{chat_namespace(chat_id)}/"):
        if not document.key.endswith(f"/{reminder_id}"):
            continue
        try:
            reminder = Reminder.from_json(document.value)
        except ValueError:
            continue
        acting = caller.in_chat(reminder.namespace, chat_id)
        if reminder.chat_id == chat_id and reminder.key == document.key and acting is not None:
            found.append(acting)
    return found[0] if len(found) == 1 else caller  # two of one id: neither is guessed


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
    time not after ``now`` or too far ahead, or a namespace with too many reminders.

    ``source`` names what asked for it (a message, a tool call of a turn, a button pressed on a
    memory): its id is derived from it, so the same request handled twice (Telegram delivering
    an update again, the inbox replaying one after a crash, Apply all pressed in two
    processes) sets one reminder, returned again. ``change`` is the change that sets it
    (``memory.history``): the ↩ Undo of that change cancels it.
    """
    reminder, _ = create_once(
        store,
        caller,
        chat_id=chat_id,
        text=text,
        due=due,
        language=language,
        now=now,
        memory_id=memory_id,
        thread_id=thread_id,
        message_id=message_id,
        source=source,
        change=change,
    )
    return reminder


def create_once(
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
) -> tuple[Reminder, bool]:
    """``create``, and whether this call set it (False: the same ``source`` set it before,
    here or in another process: the document's compare-and-set decided)."""
    text = clean_text(text)
    _check_time(due.at, now)
    documents = store.bot_documents()
    if source is not None:
        existing = _parse(documents, key_of(caller.namespace, _derived_id(source)))
        if existing is not None:
            return existing, False
    live = [r for r in every(store, caller.namespace) if r.upcoming_at is not None]
    if len(live) >= MAX_PER_NAMESPACE:
        raise MemoryInvalid(f"at most {MAX_PER_NAMESPACE} reminders per chat", field="count")
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
                    return existing, False  # the same request, handled at this moment elsewhere
            continue  # the id is taken: draw another
        return reminder, True
    raise DocumentConflict(f"{PREFIX}/{caller.namespace}", expected=ABSENT, actual="(taken)")


def _check_time(at: datetime, now: datetime) -> None:
    if at <= now:
        raise MemoryInvalid("that time has passed", field="past")
    if at > now + MAX_AHEAD:
        raise MemoryInvalid("a reminder is at most 5 years ahead", field="far")


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
    store: Store,
    caller: Caller,
    reminder_id: str,
    until: datetime,
    now: datetime,
    *,
    press: str | None = None,
) -> Reminder:
    """⏰ Send it again at ``until`` (a repeating one keeps its series). ``press`` names the
    button (chat, message, choice): pressed again, ``ReminderPressedAgain``, nothing changed."""
    if until <= now:
        raise MemoryInvalid("that time has passed", field="past")

    def postpone(r: Reminder) -> Reminder:
        if press is not None and r.snoozed_by == press:
            raise ReminderPressedAgain(reminder_id)
        return replace(
            r, snooze_at=until, snoozed_by=press, state=PENDING, pause_reason=None, changed_at=now
        )

    return _change(store, caller, caller.namespace, reminder_id, postpone)


def reschedule(store: Store, caller: Caller, reminder_id: str, due: Due, now: datetime) -> Reminder:
    """Change when it is due (its rule too); the text stays."""
    _check_time(due.at, now)
    return _change(
        store,
        caller,
        caller.namespace,
        reminder_id,
        lambda r: replace(
            r, due=due, series_at=due.at, snooze_at=None, state=PENDING, claim=None, changed_at=now
        ),
    )
