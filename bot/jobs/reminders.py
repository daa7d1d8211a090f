"""Sending reminders on time, once: the job on the JobQueue.

The job keeps an index of the next occurrence of every pending reminder (key -> instant),
built from the store at start-up (``Store.bot_documents().list("reminders/")``, see
``bot.core.reminders``) and kept current by the doors (``track`` after ``/remind``, a snooze,
a cancel). A JobQueue job ticks every ``tick_seconds`` (1 s) and looks at the index only, in
memory; what is due is claimed in the store, sent, and recorded. Every ``rescan_seconds`` the
index is rebuilt from the store, so that reminders set through another process or replica
are found too; whoever claims an occurrence first sends it, the others do nothing.

``clock`` (UTC now by default) is the job's notion of time, as ``Digest``'s is: tests give a
controlled one, and the JobQueue only says when to look. ``chats`` limits the job to those chats'
reminders (the console sends only its own; the others wait, pending, for the bot that serves them).

Late and missed. The first tick after start-up sends what fell due while the bot was stopped:
an occurrence less than ``grace_hours`` late is sent on its own, marked late ("due at 09:00")
when it is more than ``LATE_AFTER`` late; older ones of a chat are listed in one message. A
repeating reminder then goes on with its next occurrence after now (missed ones are not sent
one by one).

Failures. Telegram's 403 (the user blocked the bot, the bot left the group) and 400 for the
chat (it is gone) pause every pending reminder of that chat (``paused``, logged); ``/remind``
or ``/reminders`` there puts them back. A network failure (no route, timeout, 5xx) gives the
claim back and tries again after ``RETRY_FIRST`` seconds, doubling to ``RETRY_MAX``; so does
any other failure, logged with its traceback.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import os
import secrets
import socket
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from telegram import Bot, InlineKeyboardMarkup, Message, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter
from telegram.ext import Application, ContextTypes

from bot.config import ReminderConfig
from bot.core import delivery, reminders
from bot.core.lease import Leases
from bot.core.reminders import Reminder
from bot.jobs import reminder_view
from bot.jobs.schedule import parse_timezone
from bot.view.render import to_plain
from bot.view.replies import is_parse_error
from memory import Store

log = logging.getLogger(__name__)

JOB_NAME = "reminders"
LATE_AFTER = timedelta(minutes=1)
RETRY_FIRST = 5.0  # seconds
RETRY_MAX = 600.0
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
        chats: Collection[int] | None = None,
    ) -> None:
        self.config = config
        self.chats = frozenset(chats) if chats is not None else None  # None: every chat
        self.store = store
        self.clock = clock
        self.zone = parse_timezone(config.timezone)
        self.grace = timedelta(hours=config.grace_hours)
        self.tick_seconds = tick_seconds
        self.rescan = timedelta(seconds=rescan_seconds)
        # Who holds a claim: unique per process (and per job, for tests with two in one).
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self._due: dict[str, datetime] = {}  # key -> next occurrence
        self._heap: list[tuple[datetime, str]] = []  # the same, lazily cleaned
        self._retry: dict[str, tuple[int, datetime]] = {}  # key -> (failures, not before)
        self._scanned: datetime | None = None
        self._leases = Leases()  # claims seen held, timed on this job's clock
        self._running = asyncio.Lock()
        self._task: asyncio.Task[TickResult] | None = None

    # -- the index ------------------------------------------------------------------------

    def track(self, reminder: Reminder | None) -> None:
        """Keep the index current for ``reminder`` (after a change; None: nothing)."""
        if reminder is None or (self.chats is not None and reminder.chat_id not in self.chats):
            return
        at = reminder.next_at
        if at is None:
            self._due.pop(reminder.key, None)
            self._retry.pop(reminder.key, None)
            return
        if self._due.get(reminder.key) != at:
            self._due[reminder.key] = at
            heapq.heappush(self._heap, (at, reminder.key))

    def next_due(self) -> datetime | None:
        """The earliest occurrence in the index."""
        while self._heap and self._due.get(self._heap[0][1]) != self._heap[0][0]:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def _load(self, now: datetime) -> None:
        """Rebuild the index from the store (in a worker thread)."""
        removed = delivery.prune(self.store, now)
        if removed:
            log.info("pruned %d ended reminders", removed)
        found = reminders.every(self.store)
        self._due.clear()
        self._heap.clear()
        for reminder in found:
            self.track(reminder)
        self._scanned = now

    def _take_due(self, now: datetime) -> list[tuple[str, datetime]]:
        due = []
        while (first := self.next_due()) is not None and first <= now:
            at, key = heapq.heappop(self._heap)
            del self._due[key]
            due.append((key, at))
        ready: list[tuple[str, datetime]] = []
        later: list[tuple[str, datetime]] = []
        for key, at in due:
            _, not_before = self._retry.get(key, (0, now))
            (ready if not_before <= now else later).append((key, at))
        for key, at in later:  # waiting for their retry: back in, looked at again next tick
            self._due[key] = at
            heapq.heappush(self._heap, (at, key))
        return ready

    def _backoff(self, key: str, at: datetime, now: datetime) -> None:
        failures = self._retry.get(key, (0, now))[0] + 1
        delay = min(RETRY_FIRST * 2 ** (failures - 1), RETRY_MAX)
        self._retry[key] = (failures, now + timedelta(seconds=delay))
        self._due[key] = at
        heapq.heappush(self._heap, (at, key))

    # -- the job --------------------------------------------------------------------------

    async def callback(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The JobQueue callback: start a tick unless one is running (it returns at once)."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.run(context.bot))

    async def run(self, bot: Bot, now: datetime | None = None) -> TickResult:
        """Send whatever is due now; the first run (and every ``rescan``) reads the store."""
        result = TickResult()
        async with self._running:
            now = now or self.clock()
            if self._scanned is None or now - self._scanned >= self.rescan:
                await asyncio.to_thread(self._load, now)
            by_chat: dict[int, list[tuple[Reminder, datetime]]] = {}
            for key, at in self._take_due(now):
                try:
                    claimed = await asyncio.to_thread(
                        delivery.claim, self.store, key, at, self.owner, now, self._leases
                    )
                except Exception:
                    # The store failed (disk, a bug): try again later, never lose the reminder.
                    log.exception("reminder %s could not be claimed", key)
                    self._backoff(key, at, now)
                    result.retrying.append(key)
                    continue
                reminder = claimed.reminder
                if not claimed.send or reminder is None:
                    self.track(reminder)  # moved, ended or someone else's now
                    continue
                if now - at > self.grace:
                    by_chat.setdefault(reminder.chat_id, []).append((reminder, at))
                    continue
                await self._send_one(bot, reminder, at, now, result)
            for items in by_chat.values():
                await self._send_summary(bot, items, now, result)
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

    async def _send_one(
        self, bot: Bot, reminder: Reminder, at: datetime, now: datetime, result: TickResult
    ) -> None:
        late = now - at > LATE_AFTER
        group = reminder.chat_id < 0
        text, keyboard = reminder_view.delivery(reminder, at, late=late, group=group)
        sent = await self._deliver(bot, [(reminder, at)], text, keyboard, now, result)
        if sent:
            result.sent.append(reminder.key)
            if late:
                result.late.append(reminder.key)

    async def _send_summary(
        self,
        bot: Bot,
        items: Sequence[tuple[Reminder, datetime]],
        now: datetime,
        result: TickResult,
    ) -> None:
        text = reminder_view.summary(items, items[0][0].language)
        if await self._deliver(bot, items, text, None, now, result):
            result.summarised.extend(r.key for r, _ in items)

    async def _deliver(
        self,
        bot: Bot,
        items: Sequence[tuple[Reminder, datetime]],
        text: str,
        keyboard: InlineKeyboardMarkup | None,
        now: datetime,
        result: TickResult,
    ) -> bool:
        """Send ``text`` for the claimed occurrences ``items`` of one chat and record them."""
        first = items[0][0]
        try:
            await _send(bot, first, text, keyboard, reply=len(items) == 1)
        except Forbidden as e:
            await self._pause(first.chat_id, items, PAUSED_BLOCKED, e.message, result)
            return False
        except BadRequest as e:  # the chat is gone, or the request can never succeed
            await self._pause(first.chat_id, items, PAUSED_GONE, e.message, result)
            return False
        except (NetworkError, RetryAfter) as e:
            log.warning("reminder to chat %s not sent, trying again: %s", first.chat_id, e)
            await self._give_back(items, now, result)
            return False
        except Exception:
            # Whatever else fails for one chat must not stop the others; tried again later.
            log.exception("reminder to chat %s failed", first.chat_id)
            await self._give_back(items, now, result)
            return False
        for reminder, at in items:
            self._retry.pop(reminder.key, None)
            try:
                moved = await asyncio.to_thread(
                    delivery.delivered, self.store, reminder.key, at, now
                )
            except Exception:
                # Sent but not recorded: the claim stays, and after its lease the occurrence
                # is sent once more (the documented at-most-one repeat).
                log.exception("reminder %s sent but not recorded", reminder.key)
                continue
            self.track(moved)
        return True

    async def _give_back(
        self, items: Sequence[tuple[Reminder, datetime]], now: datetime, result: TickResult
    ) -> None:
        for reminder, at in items:
            try:
                await asyncio.to_thread(delivery.release, self.store, reminder.key, at)
            except Exception:
                log.exception("reminder %s: the claim could not be given back", reminder.key)
            self._backoff(reminder.key, at, now)
            result.retrying.append(reminder.key)

    async def _pause(
        self,
        chat_id: int,
        items: Sequence[tuple[Reminder, datetime]],
        reason: str,
        message: str,
        result: TickResult,
    ) -> None:
        log.warning("reminders of chat %s paused: Telegram refused (%s)", chat_id, message)

        def pause() -> list[Reminder]:
            for reminder, at in items:
                delivery.release(self.store, reminder.key, at, pause=reason)
            return delivery.pause_chat(self.store, chat_id, reason)

        try:
            paused = await asyncio.to_thread(pause)
        except Exception:
            log.exception("reminders of chat %s could not be paused", chat_id)
            return
        for reminder in [*(r for r, _ in items), *paused]:
            self._due.pop(reminder.key, None)
            self._retry.pop(reminder.key, None)
            if reminder.key not in result.paused:
                result.paused.append(reminder.key)

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
        """Let a tick in progress finish (before the store closes)."""
        if self._task is not None and not self._task.done():
            await asyncio.wait([self._task])


async def _send(
    bot: Bot,
    reminder: Reminder,
    text: str,
    keyboard: InlineKeyboardMarkup | None,
    *,
    reply: bool,
) -> Message:
    """Send one reminder message; as a reply to the message it is about, if any."""
    reply_to = None
    if reply and reminder.message_id is not None:
        reply_to = ReplyParameters(reminder.message_id, allow_sending_without_reply=True)
    options: dict[str, Any] = {
        "reply_markup": keyboard,
        "message_thread_id": reminder.thread_id,
        "reply_parameters": reply_to,
    }
    try:
        return await bot.send_message(reminder.chat_id, text, parse_mode=ParseMode.HTML, **options)
    except BadRequest as e:
        if not is_parse_error(e):
            raise
        log.warning("Telegram refused a reminder's HTML (%s); sent as plain text", e.message)
        return await bot.send_message(reminder.chat_id, to_plain(text), **options)


__all__ = ["JOB_NAME", "LATE_AFTER", "ReminderJob", "TickResult"]
