"""Telegram's limits, kept by the real Application with ``flood_control`` on, as in production.

The fake Bot API on 127.0.0.1 records when it received each request (``Call.received``): the
bot's pace is checked where Telegram would count it. Every send goes through the Application's
rate limiter (``bot.chat.pacing``); the reminders' job shares its ``Pacer``, and delivers each
chat's reminders on their own, so that one chat's limit holds up that chat only.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bench.fakes.telegram_server import TOKEN, Call, FakeBotAPI
from bot.chat.app import BotApplication, build_application
from bot.chat.running import serving
from bot.config import parse_config
from bot.core import reminders, when
from bot.core.policy import Actor, Caller
from memory.files import MemoryStore

START = datetime(2026, 12, 1, 1, 0, tzinfo=UTC)
SHANGHAI = ZoneInfo("Asia/Shanghai")


class Clock:
    """Real time plus an offset the test moves (as in test_reminders)."""

    def __init__(self, start: datetime) -> None:
        self.offset = start - datetime.now(UTC)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, **delta: float) -> None:
        self.offset += timedelta(**delta)


def set_reminder(store: MemoryStore, chat_id: int, text: str) -> None:
    """A reminder of ``text`` due a minute after ``START``, in chat ``chat_id``."""
    parsed = when.parse_reminder(f"in 1 minute {text}", START, SHANGHAI)
    assert parsed is not None
    namespace = f"chats/{chat_id}" if chat_id < 0 else f"users/{chat_id}"
    caller = Caller(Actor("user", 42, "Alice"), namespace)
    reminders.create(
        store, caller, chat_id=chat_id, text=parsed.text, due=parsed.due, language="en", now=START
    )


@asynccontextmanager
async def paced_bot(
    telegram: FakeBotAPI, tmp_path: Path, clock: Clock, *, jobs: bool = True
) -> AsyncIterator[BotApplication]:
    """The Application with flood control on (the default), running."""
    data = {
        "data_dir": str(tmp_path / "data"),
        "telegram": {"token": TOKEN, "base_url": telegram.base_url},
        "reminders": {"timezone": "Asia/Shanghai"},
    }
    config = parse_config(data, base_dir=tmp_path)
    application = build_application(
        config, MemoryStore(config.data_dir), None, clock=clock, jobs=jobs
    )
    async with serving(application, poll_timeout=5):
        yield application


def to_chat(chat_id: int) -> Callable[[dict[str, Any]], bool]:
    """The requests (their parameters) of chat ``chat_id``."""
    return lambda params: str(params.get("chat_id")) == str(chat_id)


def deliveries(telegram: FakeBotAPI, **match: Any) -> list[Call]:
    return telegram.find("sendMessage", where=lambda c: "Reminder" in c.text, **match)


async def test_sixty_reminders_of_a_group_do_not_hold_up_a_private_one(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    """The group's 20 a minute hold up that group alone: the private reminder due with its 60
    goes out among its first 20 (it used to wait two minutes, behind all 60)."""
    group = telegram.group()
    telegram.private_chat(FakeBotAPI.user(42, "Alice"))
    with MemoryStore(tmp_path / "data") as store:
        for number in range(60):
            set_reminder(store, group["id"], f"group task {number}")
        set_reminder(store, 42, "the private one")
    clock = Clock(START)
    async with paced_bot(telegram, tmp_path, clock):
        clock.advance(minutes=1, seconds=1)
        [private] = await telegram.wait("sendMessage", chat_id=42, where=lambda c: True)
        assert "the private one" in private.text
        await telegram.wait("sendMessage", count=20, chat_id=group["id"])
        # The group's next message may go a minute after its first twenty were answered.
        assert len(deliveries(telegram, chat_id=group["id"])) == 20


async def test_the_bot_sends_at_most_thirty_messages_in_any_second(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    """40 chats answered at once (replies, reminders: every send goes through the limiter):
    no second at Telegram's end receives more than 30 of them (python-telegram-bot's
    AIORateLimiter, a bucket of 30 refilled at 30 a second, let all 40 through in one)."""
    chats = range(1001, 1041)
    for chat in chats:
        telegram.private_chat(FakeBotAPI.user(chat, f"user{chat}"))
    async with paced_bot(telegram, tmp_path, Clock(START), jobs=False) as application:
        bot = application.bot
        await asyncio.gather(*(bot.send_message(chat, f"to {chat}") for chat in chats))
    received = sorted(c.received for c in telegram.find("sendMessage"))
    assert len(received) == len(chats)
    busiest = max(sum(1 for t in received if start <= t < start + 1.0) for start in received)
    assert busiest <= 30


async def test_a_429_holds_up_that_chat_only(telegram: FakeBotAPI, tmp_path: Path) -> None:
    """Telegram asks a group to wait a minute: a private chat's message goes at once (the whole
    bot used to wait the minute out); another group's message, told to wait a second, is made
    again after that second."""
    group, other = telegram.group(), telegram.group(-1001234567899, "Other")
    telegram.private_chat(FakeBotAPI.user(42, "Alice"))
    for chat, seconds in ((group, 60), (other, 1)):
        telegram.fail(
            "sendMessage",
            429,
            f"Too Many Requests: retry after {seconds}",
            retry_after=seconds,
            when=to_chat(chat["id"]),
        )
    async with paced_bot(telegram, tmp_path, Clock(START), jobs=False) as application:
        bot = application.bot
        held = asyncio.create_task(bot.send_message(group["id"], "to the group"))
        await telegram.wait("sendMessage", ok=False, where=lambda c: c.status == 429)
        sent = await asyncio.wait_for(bot.send_message(42, "to Alice"), timeout=10)
        assert sent.text == "to Alice" and not held.done()
        held.cancel()
        again = await bot.send_message(other["id"], "to the other group")
        assert again.text == "to the other group"
    attempts = telegram.find("sendMessage", ok=None, chat_id=other["id"])
    assert [c.status for c in attempts] == [429, 200]
