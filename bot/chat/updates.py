"""Handling updates concurrently across chats, in order within a chat.

python-telegram-bot handles one update at a time by default: while a handler waits (on the
disk, on Telegram, and above all on a language model, which takes seconds), every other chat
waits too. With ``concurrent_updates`` it handles many at once, but in no particular order, and
a user who sends ``/remember X`` then ``/recall X`` must get both answers in that order, from a
store that already holds X.

``ChatOrderedUpdateProcessor`` gives each chat a lane (``lane_key``): an update waits for the
updates of its chat that came before it (an ``asyncio.Lock`` per lane, which wakes its waiters
first come, first served), and runs alongside the other chats' updates. The Application starts
one task per update in the order Telegram sent them, and each task reaches its chat's lock
before anything in it can wait, so the lock is taken in update order. Lanes are dropped when
idle, so memory stays proportional to the chats active right now.

At most ``limit`` updates (the argument ``max_concurrent_updates``, 256) are handled at once,
and only an update whose turn has come counts: it takes one of those slots once it holds its
lane. python-telegram-bot's own limit (``BaseUpdateProcessor.process_update``, which cannot be
overridden) is taken before ``do_process_update``, that is before the chat's turn: the updates
waiting behind one chat's backlog (10,000 ``/remember`` from a script, three forwards of 100
messages) held every slot, and every other chat waited for that backlog (issue 23). So that
limit is set to none (``max_concurrent_updates`` reads ``sys.maxsize``), and the slots are this
class's. A waiting update costs its task and its ``Update`` (about 5 KB), nothing more.

``on_start`` hears of each update as its handler is about to run, once its lane and a slot
are its own (``bot.chat.inbox`` then knows it is in progress: a crash from here on counts
against it, not against the updates waiting behind it); ``on_done`` of each update handled to
the end (``bot.chat.inbox`` then forgets it); one whose handling was cancelled by a shutdown is
not done, and is handled again on the next start. With a ``deadline``, an update still being
handled after it is cancelled (``bot.chat.deadlines``), its lane goes on with the next update,
and ``on_overdue`` hears of it instead of ``on_done`` (the bot sets it aside and tells the
admins); the Application sets that hook once it exists.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

from bot.chat.deadlines import within
from memory.views import one_view

MAX_CONCURRENT_UPDATES = 256


def lane_key(update: object) -> str:
    """The lane of an update: its chat, else its user (an inline query: one user's typing
    waits for nobody else's), else the one lane of updates from nobody."""
    if not isinstance(update, Update):
        return ""
    if update.effective_chat is not None:
        return str(update.effective_chat.id)
    if update.effective_user is not None:
        return f"user/{update.effective_user.id}"
    return ""


class ChatOrderedUpdateProcessor(BaseUpdateProcessor):
    """Concurrent across chats, sequential within one chat; ``limit`` updates handled at once,
    not counting those that wait for their chat."""

    def __init__(
        self,
        max_concurrent_updates: int = MAX_CONCURRENT_UPDATES,
        *,
        on_start: Callable[[object], None] | None = None,
        on_done: Callable[[object], None] | None = None,
        deadline: float | None = None,
    ) -> None:
        if max_concurrent_updates < 1:
            raise ValueError("max_concurrent_updates must be at least 1")
        if deadline is not None and deadline <= 0:
            raise ValueError("deadline must be positive")
        super().__init__(sys.maxsize)  # no limit before the chat's turn: see the docstring
        self.limit = max_concurrent_updates
        self.deadline = deadline
        self.on_overdue: Callable[[object], None] | None = None
        self._slots = asyncio.Semaphore(max_concurrent_updates)
        self._on_start = on_start
        self._on_done = on_done
        self._lanes: dict[str, asyncio.Lock] = {}
        self._queued: dict[str, int] = {}  # updates holding or awaiting each lane

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Run ``coroutine`` once the earlier updates of the same chat are done and a slot is
        free."""
        key = lane_key(update)
        chat = self._lanes.setdefault(key, asyncio.Lock())
        self._queued[key] = self._queued.get(key, 0) + 1
        try:
            async with chat, self._slots:
                if self._on_start is not None:
                    self._on_start(update)
                with one_view():  # one view of the store per update (memory.views)
                    in_time = await self._within_deadline(update, coroutine)
            if in_time and self._on_done is not None:
                self._on_done(update)
            elif not in_time and self.on_overdue is not None:
                self.on_overdue(update)
        finally:
            self._queued[key] -= 1
            if not self._queued[key]:
                del self._queued[key], self._lanes[key]

    async def _within_deadline(self, update: object, coroutine: Awaitable[Any]) -> bool:
        """Run ``coroutine``; False if it was cut short at the deadline."""
        if self.deadline is None:
            await coroutine
            return True
        what = f"update {update.update_id}" if isinstance(update, Update) else "an update"
        return await within(coroutine, self.deadline, what)

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to tear down."""
