"""Handling updates concurrently across chats, in order within a chat.

python-telegram-bot handles one update at a time by default: while a handler waits (on the
disk, on Telegram, and above all on a language model, which takes seconds), every other chat
waits too. With ``concurrent_updates`` it handles many at once, but in no particular order, and
a user who sends ``/remember X`` then ``/recall X`` must get both answers in that order, from a
store that already holds X.

``ChatOrderedUpdateProcessor`` gives each chat a lane: an update waits for the updates of its
chat that came before it (an ``asyncio.Lock`` per chat, which wakes its waiters first come,
first served), and runs alongside the other chats' updates. The Application starts one task
per update in the order Telegram sent them, and each task reaches its chat's lock before
anything in it can wait, so the lock is taken in update order. Updates without a chat share one
lane. Lanes are dropped when idle, so memory stays proportional to the chats active right now.
``on_start`` hears of each update as its handler is about to run, once its lane is its own
(``bot.chat.inbox`` then knows it is in progress: a crash from here on counts against it, not
against the updates waiting behind it); ``on_done`` of each update handled to the end
(``bot.chat.inbox`` then forgets it); one whose handling was cancelled by a shutdown is not done,
and is handled again on the next start.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

MAX_CONCURRENT_UPDATES = 256


class ChatOrderedUpdateProcessor(BaseUpdateProcessor):
    """Concurrent across chats, sequential within one chat."""

    def __init__(
        self,
        max_concurrent_updates: int = MAX_CONCURRENT_UPDATES,
        *,
        on_start: Callable[[object], None] | None = None,
        on_done: Callable[[object], None] | None = None,
    ) -> None:
        super().__init__(max_concurrent_updates)
        self._on_start = on_start
        self._on_done = on_done
        self._lanes: dict[int | None, asyncio.Lock] = {}
        self._queued: dict[int | None, int] = {}  # updates holding or awaiting each lane

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Run ``coroutine`` once the earlier updates of the same chat are done."""
        chat = update.effective_chat if isinstance(update, Update) else None
        key = chat.id if chat is not None else None
        lane = self._lanes.setdefault(key, asyncio.Lock())
        self._queued[key] = self._queued.get(key, 0) + 1
        try:
            async with lane:
                if self._on_start is not None:
                    self._on_start(update)
                await coroutine
            if self._on_done is not None:
                self._on_done(update)
        finally:
            self._queued[key] -= 1
            if not self._queued[key]:
                del self._queued[key], self._lanes[key]

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to tear down."""
