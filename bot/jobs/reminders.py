"""Sending reminders on time, once: the job on the JobQueue.

The job keeps an index of the next occurrence of every pending reminder (key -> instant, and
its chat), built from the store at start-up (``Store.bot_documents().list("reminders/")``, see
``bot.core.reminders``) and kept current by the doors (``track`` after ``/remind``, a snooze,
a cancel). A JobQueue job ticks every ``tick_seconds`` (1 s) and looks at the index only, in
memory; what is due goes to its chat's sender. Every ``rescan_seconds`` the index is rebuilt
from the store, so that reminders set through another process or replica are found too;
whoever claims an occurrence first sends it, the others do nothing.

One sender per chat (``bot.jobs.chat_senders``). Each chat with something due has its own
sender, which sends that chat's reminders one after another, each when Telegram's limits let a
message go to that chat (``bot.core.pacing.Pacer``, shared with every other send of the bot:
about 30 a second overall, 20 a minute to a group); the chats' senders run side by side, at
most ``MAX_SENDING`` of them in the middle of a send at once. So sixty reminders of one group
due together take that group two minutes, and delay nobody else's. A tick does not wait for a
slow chat: the next tick hands on what fell due since. An occurrence is claimed only when its
chat's turn has come, right before its message is sent (``bot.core.delivery``): a claim is
never held through the wait, and a crash while waiting leaves nothing to take over.

``clock`` (UTC now by default) is the job's notion of time, as ``Digest``'s is: tests give a
controlled one, and the JobQueue only says when to look. ``chats`` limits the job to those chats'
reminders (the console sends only its own; the others wait, pending, for the bot that serves them).

Late and missed. The first tick after start-up sends what fell due while the bot was stopped:
an occurrence less than ``grace_hours`` late is sent on its own, marked late ("due at 09:00")
when it is more than ``LATE_AFTER`` late; older ones of a chat are listed in one message. A
repeating reminder then goes on with its next occurrence after now (missed ones are not sent
one by one).

Failures (``bot.jobs.reminder_send`` reads Telegram's answer). A refusal of the chat itself
(403: the user blocked the bot, the bot left the group; or a 400 that says the chat is gone)
pauses every pending reminder of that chat, in every namespace (each topic's, each member's;
``paused``, logged); ``/remind`` or ``/reminders`` there, in any topic and by anyone, puts them
all back (``bot.core.delivery``). A 400 about the forum topic a reminder was set in (closed,
deleted) sends it to the chat's general topic instead, saying so. Any other 400 pauses that
reminder alone and tells the chat in plain words; the chat's other reminders go on. A 429
holds that chat (for the time Telegram asked) and gives the claim back. A network failure (no route,
timeout, 5xx) gives the claim back and tries again after 5 seconds, doubling to 10 minutes
(``bot.jobs.reminder_index``); so does any other failure, logged with its traceback.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from telegram import Bot
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter
from telegram.ext import Application, ContextTypes

from bot.config import ReminderConfig
from bot.core import delivery, reminders
from bot.core.lease import Leases
from bot.core.pacing import Pacer
from bot.core.reminder_record import PAUSED_REFUSED, Reminder
from bot.jobs import reminder_memory, reminder_send
from bot.jobs.chat_senders import ChatSenders
from bot.jobs.reminder_index import DueIndex
from bot.jobs.reminder_send import Outgoing
from bot.schedule import parse_timezone
from bot.view import reminder_view
from memory import Store

log = logging.getLogger(__name__)

JOB_NAME = "reminders"
LATE_AFTER = timedelta(minutes=1)
MAX_SENDING = 16  # chats in the middle of a send (claim, request, record) at once
PAUSED_BLOCKED = "blocked"
PAUSED_GONE = "chat_gone"


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass
class TickResult:
    """What one tick did, by reminder key (for the log and the tests)."""

    sent: list[str] = field(default_factory=list)
    late: list[str] = field(default_factory=list)
    summarised: list[str] = field(default_factory=list)
    paused: list[str] = field(default_factory=list)
    retrying: list[str] = field(default_factory=list)


@dataclass
class _Due:
    """An occurrence handed to its chat's sender by a tick, and what that tick is told."""

    bot: Bot
    key: str
    at: datetime
    now: datetime  # the tick's
    live: bool  # the tick read the clock: by its turn, it is the clock's time then
    result: TickResult
    done: asyncio.Future[None]


@dataclass(frozen=True)
class _Claimed:
    item: _Due
    reminder: Reminder
    repeat: bool  # a send before this one may have arrived


class ReminderJob:
    """The reminders' delivery (module docstring) and the index the doors keep current."""

    def __init__(
        self,
        config: ReminderConfig,
        store: Store,
        *,
        clock: Callable[[], datetime] = _utc_now,
        tick_seconds: float = 1.0,
        rescan_seconds: float = 60.0,
        owner: str | None = None,
        pacer: Pacer | None = None,
        chats: Collection[int] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self.zone = parse_timezone(config.timezone)
        self.grace = timedelta(hours=config.grace_hours)
        self.tick_seconds = tick_seconds
        self.rescan = timedelta(seconds=rescan_seconds)
        self.chats = frozenset(chats) if chats is not None else None  # None: every chat
        # Telegram's limits, shared with the Application's other sends (bot.chat.pacing).
        self.pacer = pacer if pacer is not None else Pacer(limits=False)
        # Who holds a claim: unique per process (and per job, for tests with two in one).
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self._index = DueIndex()
        self._scanned: datetime | None = None
        self._leases = Leases()  # claims seen held, timed on this job's clock
        self._dispatching = asyncio.Lock()
        self._senders = ChatSenders(self.pacer, self._send_next, self._left, slots=MAX_SENDING)
        self._in_flight: set[str] = set()  # keys queued or being sent: no tick takes them
        self._ticks: set[asyncio.Task[TickResult]] = set()
        self._stopping = False

    # -- the index ------------------------------------------------------------------------

    def track(self, reminder: Reminder | None) -> None:
        """Keep the index current for ``reminder`` (after a change; None: nothing)."""
        if reminder is not None and self._serves(reminder):
            self._index.track(reminder)

    def _serves(self, reminder: Reminder) -> bool:
        return self.chats is None or reminder.chat_id in self.chats

    def next_due(self) -> datetime | None:
        """The earliest occurrence in the index."""
        return self._index.next_due()

    def _load(self, now: datetime) -> list[Reminder]:
        """Prune, and read every reminder this job serves (in a worker thread)."""
        removed = delivery.prune(self.store, now)
        if removed:
            log.info("pruned %d ended reminders", removed)
        return [r for r in reminders.every(self.store) if self._serves(r)]

    # -- the job --------------------------------------------------------------------------

    async def callback(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The JobQueue callback: start a tick unless one is handing out (it returns at once)."""
        if self._dispatching.locked() or self._stopping:
            return
        tick = asyncio.create_task(self.run(context.bot))
        self._ticks.add(tick)
        tick.add_done_callback(self._ticks.discard)

    async def run(self, bot: Bot, now: datetime | None = None) -> TickResult:
        """Hand what is due now to the chats' senders (the first run, and every ``rescan``,
        reads the store); returns once each of those occurrences was handled."""
        result = TickResult()
        handed: list[asyncio.Future[None]] = []
        live = now is None
        async with self._dispatching:
            now = now or self.clock()
            if self._scanned is None or now - self._scanned >= self.rescan:
                mark = self._index.mark()
                found = await asyncio.to_thread(self._load, now)
                self._index.rebuild(found, mark)  # here, on the loop: the doors track here too
                self._scanned = now
            for key, at in self._index.take_due(now, self._in_flight):
                handed.append(self._hand(_Due(bot, key, at, now, live, result, self._future())))
        if handed:
            await asyncio.gather(*handed)
        if result.sent or result.summarised or result.paused or result.retrying:
            log.info(
                "reminders: %d sent (%d late), %d summarised, %d paused, %d to retry",
                len(result.sent),
                len(result.late),
                len(result.summarised),
                len(result.paused),
                len(result.retrying),
            )
        return result

    @staticmethod
    def _future() -> asyncio.Future[None]:
        return asyncio.get_running_loop().create_future()

    def _now(self, item: _Due) -> datetime:
        """The time at ``item``'s turn: the clock's, or the tick's own ``now`` if it was given."""
        return self.clock() if item.live else item.now

    def _hand(self, item: _Due) -> asyncio.Future[None]:
        self._in_flight.add(item.key)
        self._senders.hand(self._index.chat(item.key), item)
        return item.done

    async def _send_next(self, chat: int, queue: deque[_Due]) -> None:
        """The chat's turn (``ChatSenders``): its next message, claimed, sent and recorded."""
        batch = self._next(queue)
        try:
            await self._handle(chat, batch)
        finally:
            for item in batch:
                self._finish(item)

    def _left(self, item: _Due) -> None:
        """A sender stopped before ``item``'s turn: it is due again, not lost."""
        self._index.put(item.key, item.at)
        self._finish(item)

    def _next(self, queue: deque[_Due]) -> list[_Due]:
        """The next message's occurrences: one recent enough to be sent alone, else every one
        left (all too late: they go in one message)."""
        fresh = next((item for item in queue if item.now - item.at <= self.grace), None)
        if fresh is not None:
            queue.remove(fresh)
            return [fresh]
        stale = list(queue)
        queue.clear()
        return stale

    def _finish(self, item: _Due) -> None:
        self._in_flight.discard(item.key)
        if not item.done.done():
            item.done.set_result(None)

    async def _handle(self, chat: int, batch: Sequence[_Due]) -> None:
        """Claim ``batch`` (one chat's) now, send what was claimed in one message, record it."""
        claimed: list[_Claimed] = []
        for item in batch:
            now = self._now(item)
            try:
                got = await asyncio.to_thread(
                    delivery.claim, self.store, item.key, item.at, self.owner, now, self._leases
                )
            except Exception:
                # The store failed (disk, a bug): try again later, never lose the reminder.
                log.exception("reminder %s could not be claimed", item.key)
                self._index.backoff(item.key, item.at, now)
                item.result.retrying.append(item.key)
                continue
            if not got.send or got.reminder is None:
                self.track(got.reminder)  # moved, ended or someone else's now
                continue
            claimed.append(_Claimed(item, got.reminder, got.retaken))
        if not claimed:
            return
        first = claimed[0]
        now = self._now(first.item)
        group, repeat = chat < 0, any(c.repeat for c in claimed)
        language = first.reminder.language
        if len(batch) > 1 or now - first.item.at > self.grace:
            pairs = [(c.reminder, c.item.at) for c in claimed]
            text = reminder_view.summary(pairs, language, repeat=repeat)
            outgoing = Outgoing(chat, text, language, thread_id=first.reminder.thread_id)
            if await self._deliver(outgoing, claimed, now):
                for c in claimed:
                    c.item.result.summarised.append(c.item.key)
            return
        late = now - first.item.at > LATE_AFTER
        text, keyboard = reminder_view.delivery(
            first.reminder, first.item.at, late=late, group=group, repeat=repeat
        )
        reminder = first.reminder
        outgoing = Outgoing(chat, text, language, keyboard, reminder.thread_id, reminder.message_id)
        if await self._deliver(outgoing, claimed, now):
            first.item.result.sent.append(reminder.key)
            if late:
                first.item.result.late.append(reminder.key)

    async def _deliver(
        self, outgoing: Outgoing, claimed: Sequence[_Claimed], now: datetime
    ) -> bool:
        """Send ``outgoing`` for the claimed occurrences of one chat and record them."""
        bot, chat = claimed[0].item.bot, outgoing.chat_id
        try:
            await reminder_send.send(bot, outgoing)
        except (Forbidden, BadRequest) as e:
            if reminder_send.chat_gone(e):
                reason = PAUSED_BLOCKED if isinstance(e, Forbidden) else PAUSED_GONE
                await self._pause(chat, claimed, reason, e.message)
            else:
                await self._refused(bot, chat, claimed, e.message)
            return False
        except RetryAfter as e:
            seconds = _seconds(e)
            self.pacer.hold(chat, seconds)  # this chat only (the Application's limiter, too)
            log.warning("reminder to chat %s: flood control, again in %.0f s", chat, seconds)
            await self._give_back(claimed, now, wait=seconds)
            return False
        except NetworkError as e:
            log.warning("reminder to chat %s not sent, trying again: %s", chat, e)
            await self._give_back(claimed, now)
            return False
        except Exception:
            # Whatever else fails for one chat must not stop the others; tried again later.
            log.exception("reminder to chat %s failed", chat)
            await self._give_back(claimed, now)
            return False
        for c in claimed:
            key = c.item.key
            self._index.sent(key)
            try:
                moved = await asyncio.to_thread(delivery.delivered, self.store, key, c.item.at, now)
                await asyncio.to_thread(reminder_memory.follow, self.store, moved)
            except Exception:
                # Sent but not recorded: the claim stays, and after its lease the occurrence
                # is sent once more, marked as a possible repeat.
                log.exception("reminder %s sent but not recorded", key)
                continue
            self.track(moved)
        return True

    async def _give_back(
        self, claimed: Sequence[_Claimed], now: datetime, wait: float = 0.0
    ) -> None:
        for c in claimed:
            key, at = c.item.key, c.item.at
            try:
                await asyncio.to_thread(delivery.release, self.store, key, at)
            except Exception:
                log.exception("reminder %s: the claim could not be given back", key)
            self._index.backoff(key, at, now, wait)
            c.item.result.retrying.append(key)

    async def _pause(
        self, chat_id: int, claimed: Sequence[_Claimed], reason: str, message: str
    ) -> None:
        log.warning("reminders of chat %s paused: Telegram refused (%s)", chat_id, message)

        def pause() -> list[Reminder]:
            for c in claimed:
                delivery.release(self.store, c.item.key, c.item.at, pause=reason)
            return delivery.pause_chat(self.store, chat_id, reason)

        try:
            paused = await asyncio.to_thread(pause)
        except Exception:
            log.exception("reminders of chat %s could not be paused", chat_id)
            return
        result = claimed[0].item.result
        for key in [*(c.item.key for c in claimed), *(r.key for r in paused)]:
            self._index.forget(key)
            if key not in result.paused:
                result.paused.append(key)

    async def _refused(
        self, bot: Bot, chat_id: int, claimed: Sequence[_Claimed], message: str
    ) -> None:
        """Telegram refused this message, not the chat: its reminders pause, the chat is told."""
        log.warning("chat %s refused a reminder (%s); that one is paused", chat_id, message)
        refused = PAUSED_REFUSED

        def pause() -> None:
            for c in claimed:
                delivery.release(self.store, c.item.key, c.item.at, pause=refused)

        try:
            await asyncio.to_thread(pause)
        except Exception:
            log.exception("reminders of chat %s could not be paused", chat_id)
            return
        for c in claimed:
            self._index.forget(c.item.key)
            c.item.result.paused.append(c.item.key)
        first = claimed[0].reminder
        try:
            await reminder_send.tell_refused(bot, chat_id, first.language, first.text, message)
        except Exception:
            # The chat could not be told either: the reminder stays paused, /reminders shows it.
            log.exception("chat %s could not be told of its refused reminder", chat_id)

    # -- wiring ---------------------------------------------------------------------------

    def register(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Tick on ``application``'s JobQueue from start-up on."""
        queue = application.job_queue
        if queue is None:
            raise RuntimeError("the JobQueue is missing: install python-telegram-bot[job-queue]")
        queue.run_repeating(
            self.callback,
            interval=self.tick_seconds,
            first=0,
            name=JOB_NAME,
            job_kwargs={"misfire_grace_time": None, "coalesce": True},
        )

    async def stop(self) -> None:
        """Let the sends under way finish and be recorded (before the store closes); what
        still waits for its chat's turn is left due, for the next start (or replica)."""
        self._stopping = True
        await self._senders.stop()
        if self._ticks:
            await asyncio.wait(list(self._ticks))


def _seconds(error: RetryAfter) -> float:
    asked = error.retry_after
    return asked.total_seconds() if isinstance(asked, timedelta) else float(asked)


__all__ = ["JOB_NAME", "LATE_AFTER", "ReminderJob", "TickResult"]
