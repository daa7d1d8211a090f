"""Reminders, the job's side: claim, deliver, release, pause (and prune the ended ones).

The record, its states and the changes a user asks for are ``bot.core.reminders``; this module
is what the delivery job (``bot.jobs.reminders``) does to a reminder around sending it, so that
the rules of sending an occurrence once are read in one place.

Once. Before an occurrence is sent, it is claimed: a compare-and-set on the document
(``memory.update_document``) that writes ``claim = {at, by, since, tries}`` only if the
reminder is still pending at that occurrence and nobody holds a live claim. Of two processes
(or replicas) due at once, one claims and sends; the other sees the claim and does nothing.
After the send, ``delivered`` moves the reminder on (the next occurrence of a series, or
``sent``) and clears the claim in one more compare-and-set. A send that failed is released
(``release``), to be tried again.

At least once, a repeat only after a crash. The job claims an occurrence only once its chat may
be written to (``bot.core.pacing``), right before the request leaves the process: a claim is
a request that may have reached Telegram, and ``tries`` counts them. A crash while a request is
on its way leaves the claim; after ``LEASE`` another process (or this one, restarted) takes it
over and sends again, marked as a possible repeat (``Claimed.retaken``), since the one before
may have arrived. A crash before the claim (waiting for the chat's turn) leaves nothing: the
occurrence is simply still due. Only a claim left by ``MAX_SENDS`` crashes in a row is
recorded as delivered without another send, so that a process that dies on every send cannot
flood a chat: an occurrence is sent at least once unless that happens (or the bot is down for
good), and each crash in flight repeats it at most once.

Paused, and back. Telegram refusing a chat pauses every pending reminder that goes to it,
whatever namespace keeps it (``pause_chat``: each forum topic's, each member's with
``group_scope = "user"``: ``bot.core.reminders.of_chat``); a refusal of one message pauses that
reminder alone (``release`` with ``pause``). The chat writing to the bot again (``/remind``,
``/reminders``, in any topic, by any member) puts every paused reminder of it back
(``resume_chat``, the mirror of the pause). So that a resume costs one read when nothing is
paused, every pause first marks the chat (``note_paused``: the bot-wide document
``reminder-pauses/<chat id>``), and only a marked chat's reminders are looked for in every
namespace.

How old a claim is, is measured by ``bot.core.lease`` (``Leases``, on the observer's clock).
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from bot.core.lease import Claim, Leases
from bot.core.reminder_record import ENDED, PAUSED, PENDING, PREFIX, SENT, Reminder
from bot.core.reminders import PRUNE_AFTER, every, of_chat
from memory import Store, update_document
from memory.errors import DocumentConflict

log = logging.getLogger(__name__)

MAX_SENDS = 3  # requests of one occurrence that may have reached Telegram (crashes in flight)
PAUSES = "reminder-pauses"  # bot-wide: reminder-pauses/<chat id>, a chat with paused reminders


@dataclass(frozen=True)
class Claimed:
    """The outcome of ``claim``: ``reminder`` (its state now) and whether to send ``at``."""

    send: bool
    reminder: Reminder | None
    retaken: bool = False  # a request before this one may have reached Telegram: a repeat?


def claim(
    store: Store,
    key: str,
    at: datetime,
    owner: str,
    now: datetime,
    leases: Leases | None = None,
) -> Claimed:
    """Claim occurrence ``at`` of the reminder at ``key`` for sending (module docstring).

    ``leases`` are what the calling process saw before; without, a claim held by anyone is
    live (this is the first look)."""
    result: list[Claimed] = []
    seen = leases if leases is not None else Leases()

    def take(value: Any) -> Any:
        result.clear()
        try:
            current = Reminder.from_json(value)
        except ValueError:
            result.append(Claimed(False, None))
            return value
        held = current.claim
        if current.next_at != at:  # sent, snoozed, changed or ended meanwhile
            result.append(Claimed(False, current))
            return value
        if held is not None and held.at == at and not seen.expired(key, held, now):
            result.append(Claimed(False, current))  # someone is sending it right now
            return value
        tried = held.tries if held is not None and held.at == at else 0
        if tried >= MAX_SENDS:
            # Cut off by a crash that many times, each request possibly delivered: recorded
            # as sent, so that a process dying on every send cannot flood the chat.
            log.error("reminder %s: %d sends cut off by crashes, recorded as sent", key, tried)
            moved = _after_delivery(current, at, now)
            result.append(Claimed(False, moved))
            return moved.to_json()
        claimed = replace(current, claim=Claim(at, owner, now, tried + 1))
        result.append(Claimed(True, claimed, retaken=tried > 0))
        return claimed.to_json()

    if store.bot_documents().get(key) is None:
        seen.forget(key)
        return Claimed(False, None)
    update_document(store.bot_documents(), key, take)
    claimed = result[0]
    if claimed.send or claimed.reminder is None or claimed.reminder.claim is None:
        seen.forget(key)  # ours now, or free: nothing to watch
    return claimed


def _after_delivery(reminder: Reminder, at: datetime, now: datetime) -> Reminder:
    snooze_at = None if reminder.snooze_at == at else reminder.snooze_at
    series_at = reminder.series_at
    if series_at is not None and series_at <= at:
        series_at = reminder.due.next_after(max(at, now)) if reminder.due.repeat else None
    state = PENDING if series_at is not None or snooze_at is not None else SENT
    return replace(
        reminder,
        series_at=series_at,
        snooze_at=snooze_at,
        state=state,
        claim=None,
        sent_at=at,
        changed_at=now,
    )


def delivered(store: Store, key: str, at: datetime, now: datetime) -> Reminder | None:
    """Occurrence ``at`` was sent: move on to the next one (or ``sent``); the reminder now."""
    result: list[Reminder] = []

    def record(value: Any) -> Any:
        result.clear()
        try:
            current = Reminder.from_json(value)
        except ValueError:
            return value
        if current.claim is None or current.claim.at != at:
            result.append(current)  # cancelled, or changed, while it was being sent
            return value
        moved = _after_delivery(current, at, now)
        result.append(moved)
        return moved.to_json()

    if store.bot_documents().get(key) is None:
        return None
    update_document(store.bot_documents(), key, record)
    return result[0] if result else None


def release(store: Store, key: str, at: datetime, *, pause: str | None = None) -> None:
    """Sending occurrence ``at`` failed: give the claim back (``pause``: and pause it, its chat
    marked first: ``bot.core.reminders.note_paused``)."""

    def give_back(value: Any) -> Any:
        try:
            current = Reminder.from_json(value)
        except ValueError:
            return value
        if current.claim is None or current.claim.at != at:
            return value
        if pause is not None and current.state == PENDING:
            return replace(current, claim=None, state=PAUSED, pause_reason=pause).to_json()
        return replace(current, claim=None).to_json()

    found = store.bot_documents().get(key)
    if found is None:
        return
    if pause is not None:
        try:
            note_paused(store, Reminder.from_json(found.value).chat_id)
        except ValueError:
            return  # unreadable: nothing to give back
    update_document(store.bot_documents(), key, give_back)


def pause_chat(store: Store, chat_id: int, reason: str) -> list[Reminder]:
    """Pause every pending reminder of ``chat_id`` (Telegram refused it), in every namespace
    that keeps one (``bot.core.reminders.of_chat``: ``resume_chat`` is its mirror); those
    paused."""
    note_paused(store, chat_id)
    paused = []
    for reminder in of_chat(store, chat_id):
        if reminder.state != PENDING:
            continue

        def stop(value: Any) -> Any:
            current = Reminder.from_json(value)
            if current.state != PENDING:
                return value
            return replace(current, state=PAUSED, pause_reason=reason, claim=None).to_json()

        try:
            update_document(store.bot_documents(), reminder.key, stop)
        except ValueError:
            continue
        paused.append(reminder)
    return paused


def note_paused(store: Store, chat_id: int) -> None:
    """Mark ``chat_id`` as having paused reminders, before any is paused (a crash in between
    leaves a mark with nothing behind it, which ``resume_chat`` clears; never a paused reminder
    without its mark). Each pause changes the mark, so that a resume that read it before knows
    that it no longer covers everything paused."""

    def count(value: Any) -> Any:
        pauses = value.get("pauses") if isinstance(value, dict) else None
        return {"chat_id": chat_id, "pauses": (pauses if isinstance(pauses, int) else 0) + 1}

    update_document(store.bot_documents(), f"{PAUSES}/{chat_id}", count)


def resume_chat(store: Store, namespace: str, chat_id: int, now: datetime) -> list[Reminder]:
    """Pending again: every paused reminder of ``chat_id`` (it writes to the bot again), in
    every namespace when the chat is marked (``note_paused``), else in ``namespace`` (paused
    before pauses were marked); those resumed, as they are now."""
    documents = store.bot_documents()
    mark = documents.get(f"{PAUSES}/{chat_id}")
    if mark is not None:
        candidates = of_chat(store, chat_id)
    else:
        candidates = [r for r in every(store, namespace) if r.chat_id == chat_id]
    resumed: list[Reminder] = []
    for reminder in candidates:
        if reminder.state != PAUSED:
            continue
        result: list[Reminder] = []

        def restart(value: Any, result: list[Reminder] = result) -> Any:
            result.clear()
            try:
                current = Reminder.from_json(value)
            except ValueError:
                return value
            if current.state != PAUSED:
                return value  # resumed, snoozed or ended meanwhile
            result.append(replace(current, state=PENDING, pause_reason=None, changed_at=now))
            return result[0].to_json()

        if documents.get(reminder.key) is None:
            continue
        update_document(documents, reminder.key, restart)
        resumed.extend(result)
    if mark is not None:
        with contextlib.suppress(DocumentConflict):  # paused again since: looked at next time
            documents.delete(mark.key, version=mark.version)
    return resumed


def prune(store: Store, now: datetime) -> int:
    """Remove reminders ended (or sent) more than ``PRUNE_AFTER`` ago; how many."""
    documents = store.bot_documents()
    removed = 0
    for document in documents.list(f"{PREFIX}/"):
        try:
            reminder = Reminder.from_json(document.value)
        except ValueError:
            continue
        last = reminder.changed_at or reminder.created_at
        if reminder.state in (*ENDED, SENT) and now - last > PRUNE_AFTER:
            removed += documents.delete(document.key, version=document.version)
    return removed
