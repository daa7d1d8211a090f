"""One reply for an album or a burst of forwards, not ten.

Forwarding ten messages, or sending an album of photos, gives the bot ten updates in a row.
Each is remembered at once (on disk before the next is handled); only the reply waits: the
chat's ``Burst`` collects what was remembered and answers once, ``QUIET_SECONDS`` after the
last message of the burst, or as soon as anything else arrives in that chat (a command, a
question: handled after the burst's reply, so replies keep the order of what they answer).

A reply that is never sent (the bot stopped inside those seconds) loses nothing: the memories
are stored, and a redelivered message finds its memory by its ``source`` and adds nothing.
``Application.create_task`` runs the waiting, so a stopping bot sends what is pending first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from telegram import InlineKeyboardMarkup, Message
from telegram.error import TelegramError
from telegram.ext import Application

from memory.model import Memory

log = logging.getLogger(__name__)

QUIET_SECONDS = 1.0  # Telegram delivers an album's parts within a fraction of a second
KEY = "bursts"


@dataclass
class Item:
    """One message remembered in a burst, and what its reply should add (HTML lines)."""

    memory: Memory
    notes: list[str] = field(default_factory=list)
    offer: tuple[str, InlineKeyboardMarkup] | None = None  # a reminder offered for its words


Reply = Callable[[Message, list[Item]], Awaitable[None]]


@dataclass
class Burst:
    """What one chat remembered since its last reply."""

    first: Message
    items: list[Item] = field(default_factory=list)
    timer: asyncio.Task[Any] | None = None
    sending: bool = False


class Bursts:
    """Every chat's pending burst; ``reply`` renders and sends one burst's answer."""

    def __init__(
        self, application: Application[Any, Any, Any, Any, Any, Any], reply: Reply
    ) -> None:
        self.application = application
        self.reply = reply
        self._pending: dict[int, Burst] = {}

    def add(self, message: Message, item: Item) -> None:
        """Count ``item`` in its chat's burst and (re)start the wait for quiet."""
        chat = message.chat_id
        burst = self._pending.get(chat)
        if burst is None or burst.sending:
            burst = self._pending[chat] = Burst(message)
        burst.items.append(item)
        if burst.timer is not None:
            burst.timer.cancel()
        burst.timer = self.application.create_task(self._after_quiet(chat, burst))

    async def flush(self, chat: int) -> None:
        """Send the chat's pending reply now (or wait for the one being sent)."""
        burst = self._pending.get(chat)
        if burst is None:
            return
        if burst.sending:
            if burst.timer is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(burst.timer)
            return
        if burst.timer is not None:
            burst.timer.cancel()
        await self._send(chat, burst)

    async def _after_quiet(self, chat: int, burst: Burst) -> None:
        await asyncio.sleep(QUIET_SECONDS)
        await self._send(chat, burst)

    async def _send(self, chat: int, burst: Burst) -> None:
        burst.sending = True  # from here on, a new message starts a new burst
        if self._pending.get(chat) is burst:
            del self._pending[chat]
        try:
            await self.reply(burst.first, burst.items)
        except TelegramError as e:  # the memories are stored; only the confirmation is lost
            log.warning("could not confirm %d remembered messages: %s", len(burst.items), e)


def bursts_of(application: Application[Any, Any, Any, Any, Any, Any]) -> Bursts:
    """The application's ``Bursts`` (made by ``bot.chat.media.register``)."""
    found = application.bot_data[KEY]
    assert isinstance(found, Bursts)
    return found
