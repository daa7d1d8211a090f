"""Telegram's flood limits, kept: when the next message to a chat may go.

Telegram's published limits for a bot: about 30 messages a second overall, at most 20 a minute
to one group, and about one a second to one private chat, where short bursts are tolerated
(https://core.telegram.org/bots/faq#my-bot-is-hitting-limits-how-do-i-avoid-this). ``Pacer``
holds each as a sliding window (``Window``: at most ``count`` messages in any ``seconds``),
overall and per chat. A sliding window, not a leaky bucket: a bucket of 30 refilled at 30 a
second lets 60 go within one second (python-telegram-bot's ``AIORateLimiter`` let 45 reach the
fake Bot API in one), and one of 20 a minute lets 40 reach a group in its first minute.

Counted as Telegram sees them. A message is counted from the moment its request starts until
it is answered, and then at the time it was answered: a request still on its way always counts,
and one answered at ``t`` counts until ``t + seconds``. Telegram received it before it answered,
so however the network delays one request against another, no window of ``seconds`` at
Telegram's end holds more than ``count`` of them.

A 429 (``hold``) stops the messages of that chat alone for as long as Telegram asked; every
other chat goes on. Waiting for one chat never holds up another: each waiter sleeps until its
own chat's window (and the overall one) has room, or until a request on its way is answered.

Every request that sends a message goes through ``sending`` (``bot.chat.pacing.PacedLimiter``,
the Application's rate limiter). The reminders' delivery waits for ``ready`` before it claims an
occurrence (``bot.jobs.reminders``), so that a claim is not held through the wait.

Times are the ``clock``'s (monotonic seconds); chats are Telegram's ids: below zero a group or a
channel, and so is a ``@username``; None is a request of no chat, which is not counted and waits
for a ``hold`` of its own only.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

Chat = int | str | None

SWEEP_AFTER = 4096  # chats remembered before the idle ones are forgotten


@dataclass(frozen=True)
class Window:
    """At most ``count`` messages in any ``seconds``."""

    count: int
    seconds: float


OVERALL = Window(30, 1.0)
GROUP = Window(20, 60.0)
PRIVATE = Window(10, 10.0)  # one a second on average; a burst of ten (a reply and its follow-ups)


def is_group(chat: Chat) -> bool:
    """Whether ``chat`` is a group or a channel (a negative id, or a ``@username``)."""
    return isinstance(chat, str) or (chat is not None and chat < 0)


@dataclass
class _Sent:
    """The messages of one window: those on their way, and when the others were answered."""

    flying: int = 0
    answered: deque[float] = field(default_factory=deque)  # oldest first

    def wait(self, window: Window, now: float) -> float:
        while self.answered and self.answered[0] <= now - window.seconds:
            self.answered.popleft()
        over = self.flying + len(self.answered) - window.count + 1
        if over <= 0:
            return 0.0
        if over > len(self.answered):
            return math.inf  # full of requests on their way: until one is answered
        return self.answered[over - 1] + window.seconds - now


class Pacer:
    """The bot's sends, per chat and overall, in Telegram's windows (module docstring).

    ``limits=False``: no window applies (a local Bot API server, tests), only the holds a 429
    asked for."""

    def __init__(
        self,
        *,
        limits: bool = True,
        overall: Window = OVERALL,
        group: Window = GROUP,
        private: Window = PRIVATE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits
        self.overall, self.group, self.private = overall, group, private
        self.clock = clock
        self._all = _Sent()
        self._chats: dict[Chat, _Sent] = {}
        self._held: dict[Chat, float] = {}  # chat -> not before (a 429)
        self._answered = asyncio.Event()  # set (and replaced) whenever a request is answered

    def wait(self, chat: Chat) -> float:
        """Seconds until a message to ``chat`` may go (0: now; ``math.inf``: once a request
        on its way is answered)."""
        now = self.clock()
        held = self._held.get(chat, 0.0)
        if held <= now:
            self._held.pop(chat, None)
        wait = max(0.0, held - now)
        if not self.limits or chat is None:
            return wait
        window = self.group if is_group(chat) else self.private
        sent = self._chats.get(chat)
        if sent is not None:
            wait = max(wait, sent.wait(window, now))
        return max(wait, self._all.wait(self.overall, now))

    async def ready(self, chat: Chat) -> None:
        """Wait until a message to ``chat`` may go; nothing is counted."""
        while (seconds := self.wait(chat)) > 0:
            answered = self._answered
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(answered.wait(), None if seconds == math.inf else seconds)

    @contextlib.asynccontextmanager
    async def sending(self, chat: Chat) -> AsyncIterator[None]:
        """Wait for ``chat``'s turn, then count the request made inside as one message, on its
        way until the block ends (answered, or failed)."""
        await self.ready(chat)
        if not self.limits or chat is None:
            yield
            return
        if len(self._chats) > SWEEP_AFTER:
            self._sweep()
        sent = self._chats.setdefault(chat, _Sent())
        for counted in (self._all, sent):
            counted.flying += 1
        try:
            yield
        finally:
            answered_at = self.clock()
            for counted in (self._all, sent):
                counted.flying -= 1
                counted.answered.append(answered_at)
            self._answered.set()
            self._answered = asyncio.Event()

    def hold(self, chat: Chat, seconds: float) -> None:
        """Telegram asked (429) to wait ``seconds`` before the next message to ``chat``."""
        until = self.clock() + max(0.0, seconds)
        self._held[chat] = max(self._held.get(chat, 0.0), until)

    def _sweep(self) -> None:
        longest = max(self.group.seconds, self.private.seconds)
        idle_since = self.clock() - longest
        for chat, sent in list(self._chats.items()):
            if not sent.flying and (not sent.answered or sent.answered[-1] <= idle_since):
                del self._chats[chat]
