"""Issue 26 part 3 through the fake Bot API: /tidy merges duplicates, marks past events, ends
finished reminders' memories, replaces older values and asks about the rest; one /undo reverts
it; /tidy off and on; only a group's administrators; the digest says what it did; replicas
tidy a night once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bot_harness import ALICE, BOB, LI, Bot, StartBot
from telegram import Bot as TelegramBot

from bench.fakes.telegram_server import TOKEN, FakeBotAPI
from bot.config import TidyConfig
from bot.core import reminders, when
from bot.core.policy import Actor, Caller, source_of
from bot.core.reminder_record import DONE, key_of
from bot.jobs import reminder_memory
from bot.jobs.tidy import TidyJob
from bot.view import reminder_view
from memory import update_document
from memory.files import MemoryStore

NOW = datetime.now(UTC)


def _at(days: float) -> str:
    """An ISO time ``days`` before now."""
    return (NOW - timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _day(days: float) -> str:
    """The day ``days`` before now, as "December 3"."""
    moment = NOW - timedelta(days=days)
    return f"{moment:%B} {moment.day}"


def prepare(data_dir: Path, namespace: str, records: list[dict[str, Any]]) -> None:
    """Memories as an older version of the bot, an import or a hand edit left them."""
    with MemoryStore(data_dir) as store:
        store.namespace(namespace).import_memories(records, skip_duplicates=False)


def messy(author: int | None = None) -> list[dict[str, Any]]:
    """Two copies of one note, a plan whose day is over, an old and a new wifi password, two
    values of a membership without a word of which is new, and two look-alikes."""
    source = {"source": f"telegram:{author}:1:{author}"} if author is not None else {}
    return [
        {"id": 1, "content": "The wifi password at the cabin is pinecone42", "createdAt": _at(40)},
        {"id": 2, "content": "the cabin wifi password is now pinecone43", "createdAt": _at(39)},
        {"id": 3, "content": "Buy milk", "tags": ["shop"], "createdAt": _at(38)},
        {"id": 4, "content": "buy  milk!", "tags": ["groceries"], "createdAt": _at(37)},
        {"id": 5, "content": f"Dentist appointment on {_day(5)} at 3pm", "createdAt": _at(30)},
        {"id": 6, "content": "My gym membership costs $40 a month", "createdAt": _at(36)},
        {"id": 7, "content": "My gym membership costs $45 a month", "createdAt": _at(35)},
        {"id": 8, "content": "Mia's birthday is May 3", "createdAt": _at(34), **source},
        {"id": 9, "content": "Leo's birthday is June 9", "createdAt": _at(33), **source},
    ]


def contents(bot: Bot, namespace: str) -> dict[str, tuple[str, ...]]:
    return {m["content"]: tuple(m["tags"]) for m in bot.memories(namespace)}


async def test_tidy_does_it_all_and_one_undo_reverts_it(
    start_bot: StartBot, tmp_path: Path
) -> None:
    prepare(tmp_path / "data", "users/42", messy())
    async with start_bot() as bot:
        [report] = await bot.say("/tidy", user=ALICE)
        text = report.text
        assert text.startswith("🧹 Tidied up your memories:")
        assert "merged 1 duplicate(s): “buy milk!”" in text
        assert f"marked 1 past event(s) #past: “Dentist appointment on {_day(5)}" in text
        assert "replaced 1 older value(s): “The wifi password at the cabin is pinecone42”" in text
        assert "These give one thing different values. Keep which?" in text
        assert "1. My gym membership costs $45 a month (newer)" in text
        assert "Mia" not in text and "Leo" not in text  # look-alikes are left alone
        labels = [label for label, _ in report.buttons]
        assert labels == ["1: keep the newer", "1: keep the older", "1: keep both", "↩ Undo"]
        tidied = contents(bot, "users/42")
        assert "The wifi password at the cabin is pinecone42" not in tidied
        assert "buy  milk!" not in tidied and tidied["Buy milk"] == ("shop", "groceries")
        assert tidied[f"Dentist appointment on {_day(5)} at 3pm"] == ("past",)
        assert {"Mia's birthday is May 3", "Leo's birthday is June 9"} <= set(tidied)

        newer = report.buttons[0][1]
        since = bot.telegram.mark()
        await bot.press(report, newer, user=ALICE)
        [kept] = await bot.telegram.wait("sendMessage", since=since, chat_id=42)
        assert kept.text.startswith("👍 Kept: My gym membership costs $45 a month")
        assert "My gym membership costs $40 a month" not in contents(bot, "users/42")
        [edited] = bot.telegram.find("editMessageReplyMarkup", since=since)
        assert len(edited.params["reply_markup"]["inline_keyboard"]) == 1  # ↩ Undo is left
        since = bot.telegram.mark()
        await bot.press(report, newer, user=ALICE)  # answered: pressing again does nothing
        [alert] = bot.telegram.find("answerCallbackQuery", since=since)
        assert alert.params["show_alert"] is True

        since = bot.telegram.mark()
        await bot.press(report, report.buttons[-1][1], user=ALICE)  # ↩ Undo: the whole tidy
        [undone] = await bot.telegram.wait("sendMessage", since=since, chat_id=42)
        assert undone.text.startswith("↩ Undone:")
        after = contents(bot, "users/42")
        assert "The wifi password at the cabin is pinecone42" in after and "buy  milk!" in after
        assert after["Buy milk"] == ("shop",)
        assert after[f"Dentist appointment on {_day(5)} at 3pm"] == ()
        assert "My gym membership costs $40 a month" not in after  # that choice was its own

        [again] = await bot.say("/tidy", user=ALICE)  # the question was answered: not again
        assert "Keep which" not in again.text


async def test_in_chinese_off_and_on_and_a_tidy_with_nothing_to_do(
    start_bot: StartBot, tmp_path: Path
) -> None:
    prepare(
        tmp_path / "data",
        "users/44",
        [
            {"id": 1, "content": "门禁密码是4821", "createdAt": _at(10)},
            {"id": 2, "content": "门禁密码现在是9034", "createdAt": _at(9)},
            {"id": 3, "content": "我爸的手机号是13800001111", "createdAt": _at(8)},
            {"id": 4, "content": "我妈的手机号是13900002222", "createdAt": _at(7)},
        ],
    )
    async with start_bot() as bot:
        [off] = await bot.say("/tidy off", user=LI)
        assert off.text.startswith("🧹 每晚整理已关闭")
        [report] = await bot.say("/tidy", user=LI)  # off at night, still now when asked
        assert report.text.startswith("🧹 已整理你的记忆：")
        assert "替换了 1 条旧值：“门禁密码是4821”" in report.text
        assert [label for label, _ in report.buttons] == ["↩ 撤销"]
        assert set(contents(bot, "users/44")) == {
            "门禁密码现在是9034",
            "我爸的手机号是13800001111",
            "我妈的手机号是13900002222",
        }
        [nothing] = await bot.say("/tidy", user=LI)
        assert nothing.text.startswith("🧹 没有需要整理的")
        [on] = await bot.say("/tidy on", user=LI)
        assert on.text.startswith("🧹 每晚整理已开启（下次：")
        [usage] = await bot.say("/tidy now please", user=LI)
        assert usage.text.startswith("用法：/tidy")
        [undo] = await bot.say("/undo", user=LI)  # the last change here: the tidy
        assert "门禁密码是4821" in undo.text
        assert "门禁密码是4821" in contents(bot, "users/44")


async def test_in_a_group_only_an_administrator_tidies_and_undoes_it(
    start_bot: StartBot, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    group = telegram.group()
    telegram.admins[group["id"]] = {ALICE["id"]}
    name = f"chats/{group['id']}"
    prepare(tmp_path / "data", name, messy(author=BOB["id"]))
    async with start_bot() as bot:
        [refused] = await bot.say("/tidy", user=BOB, chat=group)
        assert "only its administrators" in refused.text
        [refused] = await bot.say("/tidy off", user=BOB, chat=group)
        assert "only its administrators" in refused.text
        [report] = await bot.say("/tidy", user=ALICE, chat=group)
        assert report.text.startswith("🧹 Tidied up this group's memories:")
        [nothing] = await bot.say("/undo", user=BOB, chat=group)  # not his to undo
        assert "Nothing of yours to undo" in nothing.text
        assert "buy  milk!" not in contents(bot, name)
        [undone] = await bot.say("/undo", user=ALICE, chat=group)
        assert undone.text.startswith("↩ Undone:")
        assert "buy  milk!" in contents(bot, name)


async def test_the_digest_says_what_the_last_tidy_did(start_bot: StartBot, tmp_path: Path) -> None:
    prepare(tmp_path / "data", "users/42", messy())
    async with start_bot() as bot:
        await bot.say("/tidy", user=ALICE)
        [digest] = await bot.say("/digest now", user=ALICE)
        assert "🧹 Last tidy (" in digest.text
        assert "1 merged, 1 past event(s) marked, 1 older value(s) replaced" in digest.text
        assert "1 question(s) for you" in digest.text


async def test_a_finished_reminder_s_memory_is_ended(start_bot: StartBot, tmp_path: Path) -> None:
    data = tmp_path / "data"
    caller = Caller(Actor("user", 42, "Alice"), "users/42")
    due = NOW - timedelta(days=1)
    with MemoryStore(data) as store:
        reminder = reminders.create(
            store,
            caller,
            chat_id=42,
            text="call mom",
            due=when.Due(due, ZoneInfo("UTC"), due.time().replace(tzinfo=None)),
            language="en",
            now=due - timedelta(hours=1),
        )
        namespace = store.namespace("users/42")
        memory = namespace.add(
            reminder_view.memory_line(reminder), category="reminder", source=source_of(42, 7, None)
        )
        reminder_memory.link(store, reminder, memory)

        def done(value: Any) -> Any:  # done, but its memory never followed (a crash, say)
            return {**value, "state": DONE}

        update_document(store.bot_documents(), key_of("users/42", reminder.id), done)
    async with start_bot() as bot:
        [report] = await bot.say("/tidy", user=ALICE)
        assert "1 finished or cancelled reminder(s) ended: “⏰" in report.text
        [(content, _)] = contents(bot, "users/42").items()
        assert content.startswith("✅") and content.endswith("— call mom")


async def test_replicas_tidy_a_night_once(telegram: FakeBotAPI, tmp_path: Path) -> None:
    prepare(tmp_path / "data", "users/42", messy())
    telegram.private_chat(ALICE)
    night = datetime(2026, 12, 10, 3, 30, 20, tzinfo=UTC)
    with MemoryStore(tmp_path / "data") as store:
        jobs = [
            TidyJob(TidyConfig(), store, default_zone=ZoneInfo("UTC"), clock=lambda: night)
            for _ in range(2)
        ]
        async with TelegramBot(TOKEN, base_url=telegram.base_url) as bot:
            first = await jobs[0].run(bot)
            second = await jobs[1].run(bot)
            later = await jobs[1].run(bot, night + timedelta(minutes=5))
        assert [o.name for o in first] == ["users/42"] and second == [] and later == []
        # At start-up only a night missed is caught up: a namespace never tidied missed none.
        prepare(tmp_path / "data", "users/43", messy())
        async with TelegramBot(TOKEN, base_url=telegram.base_url) as bot:
            assert await jobs[1].run(bot, catch_up=True) == []
        [told] = telegram.find("sendMessage", chat_id=42)
        assert told.text.startswith("🧹 Tidied up your memories:")
        deleted = [r for r in store.namespace("users/42").history().records if r.op == "delete"]
        authors = {(r.author.by, r.author.door, r.author.chat, r.change) for r in deleted}
        assert len(authors) == 1  # one change, by the bot, in the chat: /undo there reverts it
        assert next(iter(authors))[:3] == ("bot", "tidy", 42)
