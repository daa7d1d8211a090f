"""One sender per chat: each chat's messages one after another, the chats side by side.

A job that has messages for many chats (the reminders) hands each item to its chat
(``ChatSenders.hand``). Every chat with something queued has a sender of its own, a task that
waits for the chat's turn (``bot.core.pacing.Pacer.ready``: Telegram's limits, overall and for
that chat), takes one of ``slots`` and calls ``work(chat, queue)``, which takes from the front
of the queue what its next message is for, and sends it. So a group at its 20 messages a
minute waits alone, and a private chat due at the same moment is served at once; ``slots``
bounds how many chats are in the middle of a send together.

A sender waiting for its turn holds nothing and may be stopped (``stop``): what it still had
queued is handed to ``left``; one in the middle of ``work`` is let finish.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from bot.core.pacing import Pacer

T = TypeVar("T")


class ChatSenders(Generic[T]):
    """The chats' senders (module docstring)."""

    def __init__(
        self,
        pacer: Pacer,
        work: Callable[[int, deque[T]], Awaitable[None]],
        left: Callable[[T], None],
        *,
        slots: int,
    ) -> None:
        self.pacer = pacer
        self.work = work
        self.left = left
        self._slots = asyncio.Semaphore(slots)
        self._queues: dict[int, deque[T]] = {}
        self._senders: dict[int, asyncio.Task[None]] = {}
        self._busy: set[int] = set()  # chats in the middle of ``work``
        self._stopping = False

    def hand(self, chat: int, item: T) -> None:
        """Queue ``item`` for ``chat``; its sender starts if none runs."""
        self._queues.setdefault(chat, deque()).append(item)
        if chat not in self._senders:
            self._senders[chat] = asyncio.create_task(self._serve(chat))

    async def _serve(self, chat: int) -> None:
        queue = self._queues[chat]
        try:
            while queue and not self._stopping:
                await self._turn(chat)
                self._busy.add(chat)
                try:
                    await self.work(chat, queue)
                finally:
                    self._busy.discard(chat)
                    self._slots.release()
        finally:  # stopped, or cancelled while it waited: the rest is not sent here
            while queue:
                self.left(queue.popleft())
            del self._queues[chat]
            del self._senders[chat]

    async def _turn(self, chat: int) -> None:
        """Wait until a message may go to ``chat`` and a slot is free (holding it)."""
        while True:
            await self.pacer.ready(chat)
            await self._slots.acquire()
            if self.pacer.wait(chat) <= 0:
                return
            self._slots.release()  # another send to the chat took its turn meanwhile

    async def stop(self) -> None:
        """Stop every sender: those waiting for a turn at once, the others after their work."""
        self._stopping = True
        for chat, sender in list(self._senders.items()):
            if chat not in self._busy:
                sender.cancel()
        senders = list(self._senders.values())
        if senders:
            await asyncio.wait(senders)
