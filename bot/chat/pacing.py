"""The Application's rate limiter: every message the bot sends waits for its turn (``Pacer``).

python-telegram-bot hands each Bot API request to the rate limiter (``BaseRateLimiter``).
``PacedLimiter`` lets a request that sends or edits a message go once ``bot.core.pacing.Pacer``
says its chat (and the bot overall) is within Telegram's limits, and counts it as Telegram sees
it (from the request to its answer, then at the answer's time); other requests
(``getUpdates``, ``answerCallbackQuery``, ``getChatMember`` ...) are not counted. A 429 holds
that chat only, for the ``retry_after`` Telegram asked, and the request is made again, up to
``max_retries`` times (``rate_limit_args``: this request's own number, 0 for none): a group that
hit its limit never holds up a private chat's reply, where python-telegram-bot's
``AIORateLimiter`` stops every request of the bot.

The reminders' job shares the same ``Pacer`` (``build_application``): it waits for a chat's turn
before it claims a reminder, and sends with ``rate_limit_args=0`` so that a 429 comes back to it
(and its claim is given back) instead of being waited out while the claim is held.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Coroutine
from datetime import timedelta
from typing import Any

from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

from bot.core.pacing import Chat, Pacer

log = logging.getLogger(__name__)

_NOT_MESSAGES = {"sendChatAction"}  # "send…" requests that post no message


def counts(endpoint: str) -> bool:
    """Whether the Bot API method ``endpoint`` posts or changes a message (Telegram counts it)."""
    if endpoint in _NOT_MESSAGES:
        return False
    return endpoint.startswith(("send", "copyMessage", "forwardMessage", "editMessage"))


def retry_seconds(error: RetryAfter) -> float:
    """How long Telegram asked to wait (``retry_after``, seconds or a timedelta by PTB's mode)."""
    asked = error.retry_after
    return asked.total_seconds() if isinstance(asked, timedelta) else float(asked)


def chat_of(data: dict[str, Any]) -> Chat:
    """The chat a request is for (an id, a ``@username``), or None."""
    chat = data.get("chat_id")
    if chat is None or isinstance(chat, int):
        return chat
    with contextlib.suppress(ValueError, TypeError):
        return int(chat)
    return str(chat)


class PacedLimiter(BaseRateLimiter[int]):
    """Each message in Telegram's limits (``Pacer``); a 429 waited out for its chat only."""

    def __init__(self, pacer: Pacer, *, max_retries: int) -> None:
        self.pacer = pacer
        self.max_retries = max_retries

    async def initialize(self) -> None:
        """Nothing to open."""

    async def shutdown(self) -> None:
        """Nothing to close."""

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, bool | dict[str, Any] | list[dict[str, Any]]]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> bool | dict[str, Any] | list[dict[str, Any]]:
        """Make the request in its chat's turn; after a 429, again once the chat may be
        written to, at most ``rate_limit_args`` (else ``max_retries``) times."""
        retries = self.max_retries if rate_limit_args is None else rate_limit_args
        chat, paced = chat_of(data), counts(endpoint)
        attempt = 0
        while True:
            try:
                if not paced:
                    await self.pacer.ready(chat)  # a 429's hold applies to every request of it
                    return await callback(*args, **kwargs)
                async with self.pacer.sending(chat):
                    return await callback(*args, **kwargs)
            except RetryAfter as e:
                seconds = retry_seconds(e)
                self.pacer.hold(chat, seconds)
                if attempt >= retries:
                    raise
                attempt += 1
                log.info("%s to chat %s: flood control, again in %.0f s", endpoint, chat, seconds)
