"""Forum topics (``telegram.group_scope = "topic"``), end to end against the fake Bot API.

Each topic of a forum keeps its own memories, reminders and digest; the general topic is the
group's own namespace; a private chat's topics work alike; a topic closed or deleted stops
nothing else.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bot_harness import ALICE, BOB, Bot, StartBot
from telegram import Bot as TelegramBot

from bench.fakes.telegram_server import BOT_USERNAME, TOKEN, Call, FakeBotAPI
from bot.chat.app import build_application
from bot.chat.running import serving
from bot.config import DigestConfig, parse_config
from bot.jobs.digest import Digest
from bot.jobs.digest_plan import SETTINGS_FILE
from memory.files import MemoryStore
from memory.timestamps import format_time

FORUM = -1001234567891
GENERAL = f"chats/{FORUM}"


def topic(thread: int) -> str:
    return f"chats/{FORUM}/topics/{thread}"


def contents(bot: Bot, namespace: str) -> list[str]:
    return [record["content"] for record in bot.memories(namespace)]


@pytest.fixture
def forum(telegram: FakeBotAPI) -> dict[str, Any]:
    chat = telegram.forum(FORUM)
    telegram.topics[FORUM].update({5: "open", 7: "open"})
    return chat


async def test_each_topic_keeps_its_own_memories_and_the_general_topic_the_groups(
    start_bot: StartBot, telegram: FakeBotAPI, forum: dict[str, Any]
) -> None:
    async with start_bot(group_scope="topic") as bot:
        [stored] = await bot.say(
            "/remember the deploy key is in vault A", user=ALICE, chat=forum, thread=5
        )
        assert "Remembered" in stored.text and stored.params["message_thread_id"] == 5
        await bot.say("/remember the deploy key is in vault B", user=BOB, chat=forum, thread=7)
        await bot.say("/remember lunch is at noon", user=ALICE, chat=forum)  # the general topic

        [five] = await bot.say("/recall deploy key", user=BOB, chat=forum, thread=5)
        assert "vault A" in five.text and "vault B" not in five.text
        assert five.params["message_thread_id"] == 5  # answered in the topic asked in
        [seven] = await bot.say("/recall deploy key", user=ALICE, chat=forum, thread=7)
        assert "vault B" in seven.text and "vault A" not in seven.text
        [general] = await bot.say("/recall deploy key", user=ALICE, chat=forum)
        assert "vault" not in general.text and "message_thread_id" not in general.params
        [listed] = await bot.say("/list", user=ALICE, chat=forum)
        assert "lunch is at noon" in listed.text and "vault" not in listed.text

        # Free text addressed to the bot, in a topic: that topic's memories answer.
        [answer] = await bot.say(
            f"@{BOT_USERNAME} where is the deploy key?", user=BOB, chat=forum, thread=7
        )
        assert "vault B" in answer.text and answer.params["message_thread_id"] == 7
        # Telegram sets every topic message's reply_to_message to the topic's first message:
        # that is no reply to the bot, so a plain message in a topic is not for the bot.
        assert await bot.exchange("where is the key?", user=BOB, chat=forum, thread=7) == []

    assert contents(bot, topic(5)) == ["the deploy key is in vault A"]
    assert contents(bot, topic(7)) == ["the deploy key is in vault B"]
    assert contents(bot, GENERAL) == ["lunch is at noon"]
    assert bot.namespaces() == sorted([GENERAL, topic(5), topic(7)])


async def test_buttons_in_a_topic_act_there_and_only_the_author_or_an_admin_may_forget(
    start_bot: StartBot, telegram: FakeBotAPI, forum: dict[str, Any]
) -> None:
    async with start_bot(group_scope="topic") as bot:
        await bot.say("/remember alice's parking spot is 12", user=ALICE, chat=forum, thread=5)
        await bot.say("/remember alice's parking spot is 12", user=ALICE, chat=forum, thread=7)
        [results] = await bot.say("/recall parking", user=BOB, chat=forum, thread=5)
        since = telegram.mark()
        await bot.press(results, results.buttons[0][1], user=BOB)  # the memory's menu
        [menu] = await telegram.wait("sendMessage", since=since, chat_id=FORUM)
        assert menu.params["message_thread_id"] == 5
        since = telegram.mark()
        await bot.press(menu, menu.buttons[0][1], user=BOB)  # 🗑 Forget: Bob is not the author
        [refused] = telegram.find("answerCallbackQuery", since=since)
        assert refused.params["show_alert"] is True
        assert len(bot.memories(topic(5))) == 1

        since = telegram.mark()
        await bot.press(menu, menu.buttons[0][1], user=ALICE)
        [prompt] = await telegram.wait("sendMessage", since=since, chat_id=FORUM)
        assert "Forget this memory?" in prompt.text and prompt.params["message_thread_id"] == 5
        await bot.press(prompt, prompt.buttons[0][1], user=ALICE)
        assert bot.memories(topic(5)) == []
        assert contents(bot, topic(7)) == ["alice's parking spot is 12"]  # the other topic's


async def test_a_private_chat_with_topics_keeps_one_namespace_a_topic(
    start_bot: StartBot, telegram: FakeBotAPI
) -> None:
    chat = telegram.private_topics(telegram.private_chat(ALICE))
    telegram.topics[ALICE["id"]].update({3: "open", 4: "open"})
    async with start_bot(group_scope="topic") as bot:
        [stored] = await bot.say("/remember the trip is in May", user=ALICE, chat=chat, thread=3)
        assert stored.params["message_thread_id"] == 3
        await bot.say("/remember my bike is blue", user=ALICE, chat=chat)
        [other] = await bot.say("/recall trip", user=ALICE, chat=chat, thread=4)
        assert "trip is in May" not in other.text and other.params["message_thread_id"] == 4
        [found] = await bot.say("/recall trip", user=ALICE, chat=chat, thread=3)
        assert "trip is in May" in found.text
    assert contents(bot, "users/42/topics/3") == ["the trip is in May"]
    assert contents(bot, "users/42") == ["my bike is blue"]


async def test_with_chat_scope_the_topics_share_the_groups_memories_and_answers_stay_put(
    start_bot: StartBot, telegram: FakeBotAPI, forum: dict[str, Any]
) -> None:
    async with start_bot() as bot:
        await bot.say("/remember the wifi password is hunter2", user=ALICE, chat=forum, thread=5)
        [found] = await bot.say("/recall wifi", user=BOB, chat=forum, thread=7)
        assert "hunter2" in found.text and found.params["message_thread_id"] == 7
    assert contents(bot, GENERAL) == ["the wifi password is hunter2"]
    assert bot.namespaces() == [GENERAL]


# -- reminders and the digest ------------------------------------------------------------------

# Tuesday 1 December 2026, 09:00 in Shanghai.
START = datetime(2026, 12, 1, 1, 0, tzinfo=UTC)


class Clock:
    """Real time plus an offset, moved on by ``advance``."""

    def __init__(self, start: datetime) -> None:
        self.offset = start - datetime.now(UTC)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, **delta: float) -> None:
        self.offset += timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


@asynccontextmanager
async def topic_bot(
    telegram: FakeBotAPI, tmp_path: Path, clock: Clock, scope: str = "topic", **sections: Any
) -> AsyncIterator[Bot]:
    """The bot with ``group_scope = "topic"`` (or ``scope``), its jobs on ``clock``."""
    data = {
        "data_dir": str(tmp_path / "data"),
        "telegram": {
            "token": TOKEN,
            "base_url": telegram.base_url,
            "flood_control": False,
            "group_scope": scope,
        },
        "reminders": {"timezone": "Asia/Shanghai"},
        **sections,
    }
    config = parse_config(data, base_dir=tmp_path)
    store = MemoryStore(config.data_dir)
    application = build_application(config, store, None, clock=clock)
    async with serving(application, poll_timeout=5):
        yield Bot(telegram, config, store)


def is_delivery(call: Call) -> bool:
    return "Reminder" in call.text


async def test_a_reminder_set_in_a_topic_rings_there_and_a_deleted_topic_stops_no_other(
    telegram: FakeBotAPI, forum: dict[str, Any], tmp_path: Path, clock: Clock
) -> None:
    topics = telegram.topics[FORUM]
    async with topic_bot(telegram, tmp_path, clock) as bot:
        for thread in (5, 7):
            [confirmed] = await bot.say(
                f"/remind in 1 hour the review of topic {thread}",
                user=ALICE,
                chat=forum,
                thread=thread,
            )
            assert "⏰" in confirmed.text and confirmed.params["message_thread_id"] == thread
        await bot.say("/remind in 1 hour the review of the general topic", user=ALICE, chat=forum)
        # A topic's messages all "reply" to its first message (Telegram's way): no text to
        # remind of comes from there.
        [asked] = await bot.say("/remind in 1 hour", user=ALICE, chat=forum, thread=5)
        assert "What should I remind you of?" in asked.text
        [listed] = await bot.say("/reminders", user=ALICE, chat=forum, thread=5)
        assert "topic 5" in listed.text and "topic 7" not in listed.text
        assert "general topic" not in listed.text
        [general] = await bot.say("/reminders", user=ALICE, chat=forum)
        assert "general topic" in general.text and "topic 5" not in general.text

        del topics[7]  # deleted: Telegram answers "message thread not found"
        since = telegram.mark()
        clock.advance(hours=1)
        sent = await telegram.wait("sendMessage", count=3, since=since, where=is_delivery)
        rung = {k: c for c in sent for k in ("topic 5", "topic 7", "general") if k in c.text}
        assert rung["topic 5"].params["message_thread_id"] == 5  # rung into its own topic
        assert "message_thread_id" not in rung["topic 7"].params  # to the general topic, saying so
        assert "the topic it was set in is closed or gone" in rung["topic 7"].text
        assert "message_thread_id" not in rung["general"].params

        # The group's reminders go on: one set later in topic 5 rings there as well.
        await bot.say("/remind in 1 hour the second one", user=BOB, chat=forum, thread=5)
        since = telegram.mark()
        clock.advance(hours=1)
        [later] = await telegram.wait("sendMessage", since=since, where=is_delivery)
        assert "second one" in later.text and later.params["message_thread_id"] == 5


async def test_a_reminder_rung_in_the_general_topic_is_acted_on_where_it_lives(
    telegram: FakeBotAPI, forum: dict[str, Any], tmp_path: Path, clock: Clock
) -> None:
    """Its topic deleted, a topic's reminder rings in the general topic: its buttons there act
    on it in its topic's namespace, under the group rule, and in no other chat."""
    other = telegram.forum(-1009999999999, "Another forum")
    async with topic_bot(telegram, tmp_path, clock) as bot:
        await bot.say("/remind in 1 hour water the plants", user=ALICE, chat=forum, thread=7)
        del telegram.topics[FORUM][7]
        since = telegram.mark()
        clock.advance(hours=1)
        [rung] = await telegram.wait("sendMessage", since=since, where=is_delivery)
        assert "message_thread_id" not in rung.params  # in the general topic
        data = dict((label[:1], data) for label, data in rung.buttons)
        done, snooze = data["✅"], next(d for d in data.values() if d.startswith("rz:"))

        since = telegram.mark()
        await bot.press(rung, done, user=BOB)  # not his, and no administrator
        [refused] = telegram.find("answerCallbackQuery", since=since)
        assert "Only the member who set this reminder" in refused.params["text"]
        moved = dict(rung.result, chat=other)  # the same button, forged into another forum
        since = telegram.mark()
        await bot.press(moved, done, user=ALICE)
        [elsewhere] = telegram.find("answerCallbackQuery", since=since)
        assert "not here" in elsewhere.params["text"]
        assert reminder_states(tmp_path) == {"water the plants": "sent"}

        since = telegram.mark()
        await bot.press(rung, snooze, user=ALICE)
        [snoozed] = await telegram.wait("editMessageText", since=since)
        assert "Snoozed until" in snoozed.text
        assert reminder_states(tmp_path) == {"water the plants": "pending"}
        since = telegram.mark()
        clock.advance(hours=1)
        [again] = await telegram.wait("sendMessage", since=since, where=is_delivery)
        since = telegram.mark()
        await bot.press(again, done, user=ALICE)
        [finished] = await telegram.wait("editMessageText", since=since)
        assert finished.text.startswith("✅ Done: water the plants")
    assert reminder_states(tmp_path) == {"water the plants": "done"}
    with MemoryStore(tmp_path / "data") as store:
        [document] = store.bot_documents().list("reminders/")
    assert document.key.startswith(f"reminders/{topic(7)}/")


def reminder_states(tmp_path: Path) -> dict[str, str]:
    """Each reminder's text -> its state, as the store keeps it."""
    with MemoryStore(tmp_path / "data") as store:
        documents = store.bot_documents().list("reminders/")
    return {d.value["text"]: d.value["state"] for d in documents}


async def eventually(condition: Any, timeout: float = 10.0) -> None:
    """Wait until ``condition()`` holds (the job works beside the handlers)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "the condition never held"
        await asyncio.sleep(0.05)


@pytest.mark.parametrize(
    ("scope", "where"),
    [("topic", {"one": 5, "two": 7, "three": None}), ("user", {"one": None, "two": None})],
)
async def test_a_refused_chat_pauses_every_namespace_and_one_message_resumes_them_all(
    telegram: FakeBotAPI,
    forum: dict[str, Any],
    tmp_path: Path,
    clock: Clock,
    scope: str,
    where: dict[str, int | None],
) -> None:
    """Telegram refusing the group pauses the reminders of each of its topics (each member's,
    with group_scope "user"); the group writing again, in one topic, by one member, resumes
    them all: the resume is the pause's mirror."""
    people = [ALICE, BOB, ALICE]
    async with topic_bot(telegram, tmp_path, clock, scope) as bot:
        for (text, thread), person in zip(where.items(), people, strict=False):
            await bot.say(
                f"/remind in 1 hour the task {text}", user=person, chat=forum, thread=thread
            )
        telegram.fail("sendMessage", 403, "Forbidden: bot was kicked from the supergroup chat")
        since = telegram.mark()
        clock.advance(hours=1, minutes=1)
        await telegram.wait("sendMessage", since=since, ok=False)
        names = {f"the task {text}" for text in where}
        await eventually(lambda: reminder_states(tmp_path) == dict.fromkeys(names, "paused"))

        since = telegram.mark()
        [resumed, _] = await bot.say("/reminders", user=ALICE, chat=forum, thread=5, replies=2)
        assert f"{len(where)} paused reminders are on again" in resumed.text
        sent = await telegram.wait("sendMessage", count=len(where), since=since, where=is_delivery)
        rung = {name: call for call in sent for name in names if name in call.text}
        assert set(rung) == names
        for text, thread in where.items():  # each into the topic it was set in
            assert rung[f"the task {text}"].params.get("message_thread_id") == (
                thread if scope == "topic" else None
            )
    assert reminder_states(tmp_path) == dict.fromkeys(names, "sent")


def settings(data: Path, name: str) -> dict[str, Any]:
    return dict(json.loads((data / name / SETTINGS_FILE).read_text("utf-8")))


async def test_the_digest_is_per_topic_and_a_deleted_topics_is_switched_off(
    telegram: FakeBotAPI, forum: dict[str, Any], tmp_path: Path, clock: Clock
) -> None:
    telegram.admins[FORUM] = {ALICE["id"]}
    digest = {"digest": {"schedule": "0 9 * * mon", "timezone": "Asia/Shanghai"}}
    data = tmp_path / "data"
    async with topic_bot(telegram, tmp_path, clock, **digest) as bot:
        for thread in (5, 7):
            await bot.say(
                f"/remember the plan of topic {thread}", user=ALICE, chat=forum, thread=thread
            )
            [on] = await bot.say("/digest on", user=ALICE, chat=forum, thread=thread)
            assert on.text.startswith("✅ Digest on.") and on.params["message_thread_id"] == thread
        [now] = await bot.say("/digest now", user=BOB, chat=forum, thread=5)
        assert "the plan of topic 5" in now.text and "topic 7" not in now.text
        assert now.params["message_thread_id"] == 5
    assert settings(data, topic(5))["enabled"] is True
    assert not (data / GENERAL / SETTINGS_FILE).exists()  # the general topic did not choose

    del telegram.topics[FORUM][7]
    monday = datetime(2026, 12, 7, 1, 0, tzinfo=UTC)  # 09:00 in Shanghai
    config = DigestConfig(schedule="0 9 * * mon", timezone="Asia/Shanghai")
    since = telegram.mark()
    with MemoryStore(data) as store:
        async with TelegramBot(TOKEN, base_url=telegram.base_url) as sender:
            result = await Digest(config, store, clock=lambda: monday).run(sender)
    assert result.sent == [topic(5)] and result.switched_off == [topic(7)]
    [report] = telegram.find("sendMessage", since=since, chat_id=FORUM)
    assert "the plan of topic 5" in report.text and report.params["message_thread_id"] == 5
    assert settings(data, topic(7))["enabled"] is False
    assert settings(data, topic(7))["off_reason"] == "topic"
    assert settings(data, topic(5))["last_period"] == format_time(monday)
