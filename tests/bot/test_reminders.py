"""Reminders: /remind, /reminders, /timezone, free text, the buttons, delivery on time and once.

End to end: the real ``Application`` against the fake Bot API on 127.0.0.1, with a controlled
clock (``Clock``: real time plus an offset the test moves, so "in 1 minute" arrives without a
minute's wait). The job alone (``ReminderJob.run``) with a fixed ``now`` for the restart, DST,
claims and failure cases, sending through the real python-telegram-bot ``Bot``.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from bot_harness import ALICE, BOB, LI, Bot
from telegram import Bot as TelegramBot

from bench.fakes.telegram_server import TOKEN, Call, FakeBotAPI
from bot.chat.app import build_application
from bot.chat.running import serving
from bot.chat.services import KEY, Services
from bot.config import ReminderConfig, parse_config
from bot.core import delivery, reminders, when
from bot.core.due import Repeat, wall_time
from bot.core.lease import LEASE, Leases
from bot.core.pacing import Pacer
from bot.core.policy import Actor, Caller
from bot.errors import ReminderPressedAgain
from bot.jobs.reminder_index import DueIndex
from bot.jobs.reminders import ReminderJob
from memory import Store, open_store
from memory.files import MemoryStore

SHANGHAI = ZoneInfo("Asia/Shanghai")
BERLIN = ZoneInfo("Europe/Berlin")
# Tuesday 1 December 2026, 09:00 in Shanghai.
START = datetime(2026, 12, 1, 1, 0, tzinfo=UTC)
CAROL = FakeBotAPI.user(45, "Carol")


class Clock:
    """Real time plus an offset: starts at ``start``, moved on by ``advance``."""

    def __init__(self, start: datetime) -> None:
        self.offset = start - datetime.now(UTC)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, **delta: float) -> None:
        self.offset += timedelta(**delta)


class RemindBot(Bot):
    """The running bot, with its reminder job."""

    def __init__(self, telegram: FakeBotAPI, config: Any, application: Any) -> None:
        super().__init__(telegram, config)
        self.application = application
        self.job: ReminderJob = application.bot_data[KEY].reminders

    async def tick(self) -> None:
        """One whole tick of the job now: what is due has been handled when it returns."""
        await self.job.run(self.application.bot)


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def start(telegram: FakeBotAPI, data_dir: Path, tmp_path: Path, clock: Clock) -> Any:
    @asynccontextmanager
    async def running(**reminder_keys: Any) -> AsyncIterator[RemindBot]:
        data = {
            "data_dir": str(data_dir),
            "telegram": {"token": TOKEN, "base_url": telegram.base_url, "flood_control": False},
            "reminders": {"timezone": "Asia/Shanghai", **reminder_keys},
        }
        config = parse_config(data, base_dir=tmp_path)
        application = build_application(config, MemoryStore(config.data_dir), None, clock=clock)
        async with serving(application, poll_timeout=5):
            yield RemindBot(telegram, config, application)

    return running


def reminder_id(call: Call) -> str:
    """The id in the cancel button of a confirmation."""
    for row in call.params["reply_markup"]["inline_keyboard"]:
        for button in row:
            if button["callback_data"].startswith("rc:"):
                return str(button["callback_data"][3:])
    raise AssertionError(f"no cancel button in {call.params}")


def is_delivery(call: Call) -> bool:
    return "Reminder" in call.text or "提醒</b>" in call.params.get("text", "")


def documents(data_dir: Path) -> list[dict[str, Any]]:
    with MemoryStore(data_dir) as store:
        return [d.value for d in store.bot_documents().list("reminders/")]


async def eventually(condition: Any, timeout: float = 10.0) -> None:
    """Wait until ``condition()`` holds (the job works beside the handlers); the timeout only
    keeps a broken test from hanging."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "the condition never held"
        await asyncio.sleep(0.05)


# -- setting one ---------------------------------------------------------------------------------


async def test_remind_in_one_minute_is_delivered_through_the_fake_bot_api(
    start: Any, telegram: FakeBotAPI, clock: Clock
) -> None:
    async with start() as bot:
        [reply] = await bot.say("/remind in 1 minute stretch your legs", user=ALICE)
        assert "⏰ 2026-12-01 (Tue) 09:01 Asia/Shanghai — stretch your legs" in reply.text
        assert "Asia/Shanghai" in reply.text and "/timezone" in reply.text  # the default, told
        since = telegram.mark()
        clock.advance(seconds=60)
        [delivered] = await telegram.wait("sendMessage", since=since, chat_id=42, where=is_delivery)
        assert "stretch your legs" in delivered.text and "late" not in delivered.text
        data = [b["callback_data"] for row in delivered.params["reply_markup"]["inline_keyboard"]
                for b in row]  # fmt: skip
        rid = reminder_id(reply)
        assert data == [f"rd:{rid}", f"rz:{rid}:10", f"rz:{rid}:60", f"rz:{rid}:t", f"rc:{rid}"]
        # Once: later ticks send nothing more.
        clock.advance(minutes=5)
        await bot.tick()
        assert len(telegram.find("sendMessage", since=since, where=is_delivery)) == 1


async def test_the_confirmation_in_chinese_and_the_default_zone_told_once(start: Any) -> None:
    async with start() as bot:
        [first] = await bot.say("/remind 下周二下午三点 看牙医", user=LI)
        assert "⏰ 2026-12-08 (周二) 15:00 Asia/Shanghai — 看牙医" in first.text
        assert "/timezone" in first.text
        [second] = await bot.say("/remind 每周一早上9点 周会", user=LI)
        assert "⏰ 2026-12-07 (周一) 09:00 Asia/Shanghai — 周会" in second.text
        assert "🔁 每周一" in second.text and "/timezone" not in second.text


@pytest.mark.parametrize(
    ("phrase", "expected"),
    [
        ("tomorrow 9am call mom", "2026-12-02 (Wed) 09:00 Asia/Shanghai — call mom"),
        ("12月24日 买礼物", "2026-12-24 (Thu) 09:00 Asia/Shanghai — 买礼物"),
        ("every monday 9:00 weekly report", "2026-12-07 (Mon) 09:00 Asia/Shanghai — weekly"),
        ("每个工作日 7:30 跑步", "2026-12-02 (Wed) 07:30 Asia/Shanghai — 跑步"),
        ("每月1号 交房租", "2027-01-01 (Fri) 09:00 Asia/Shanghai — 交房租"),
    ],
)
async def test_the_issue_s_phrases_are_confirmed_with_their_local_time(
    start: Any, phrase: str, expected: str
) -> None:
    async with start() as bot:
        [reply] = await bot.say(f"/remind {phrase}", user=ALICE)
        assert expected in reply.text


async def test_a_date_alone_and_a_time_moved_are_said(start: Any) -> None:
    async with start(default_hour=8) as bot:
        [dated] = await bot.say("/remind 12月24日 买礼物", user=ALICE)
        assert "08:00" in dated.text and "No time given" in dated.text
        [moved] = await bot.say("/remind 8am water the plants", user=ALICE)  # 09:00 now
        assert "2026-12-02 (Wed) 08:00" in moved.text and "has passed" in moved.text


async def test_bad_input_is_answered_and_sets_nothing(start: Any, data_dir: Path) -> None:
    async with start() as bot:
        [empty] = await bot.say("/remind", user=ALICE)
        assert "/remind tomorrow 9am call mom" in empty.text
        [garbage] = await bot.say("/remind flibber <b>gibber</b>", user=ALICE)
        assert "could not tell when" in garbage.text and "&lt;b&gt;" in garbage.params["text"]
        assert "/remind tomorrow 9am call mom" in garbage.text  # examples, never a guess
        [past] = await bot.say("/remind yesterday 9am call mom", user=ALICE)
        assert "already passed" in past.text
        [no_text] = await bot.say("/remind tomorrow 9am", user=ALICE)
        assert "What should I remind you of" in no_text.text
        [huge] = await bot.say("/remind tomorrow 9am " + "x" * 5000, user=ALICE)
        assert "at most 1000 characters" in huge.text
    assert documents(data_dir) == []


async def test_remind_as_a_reply_reminds_of_that_message(
    start: Any, telegram: FakeBotAPI, clock: Clock
) -> None:
    async with start() as bot:
        original = telegram.send("buy oat milk and eggs", user=ALICE)
        await telegram.wait("sendMessage", chat_id=42)  # the search's answer
        [reply] = await bot.say("/remind in 30 minutes", user=ALICE, reply_to=original)
        assert "— buy oat milk and eggs" in reply.text
        since = telegram.mark()
        clock.advance(minutes=30)
        [sent] = await telegram.wait("sendMessage", since=since, chat_id=42, where=is_delivery)
        assert "buy oat milk and eggs" in sent.text
        assert sent.params["reply_parameters"]["message_id"] == original["message_id"]


async def test_free_text_asking_for_a_reminder_sets_one_without_a_model(start: Any) -> None:
    async with start() as bot:
        [en] = await bot.say("remind me tomorrow at 9 to call mom", user=ALICE)
        assert "⏰ 2026-12-02 (Wed) 09:00 Asia/Shanghai — call mom" in en.text
        [zh] = await bot.say("别忘了提醒我 后天 交作业", user=LI)
        assert "⏰ 2026-12-03 (周四) 09:00 Asia/Shanghai — 交作业" in zh.text
        [unclear] = await bot.say("remind me about the thing", user=ALICE)
        assert "could not tell when" in unclear.text  # examples, not a search
        [search] = await bot.say("where is my code", user=ALICE)
        assert "found nothing" in search.text


async def test_a_replayed_remind_sets_one_reminder(start: Any, data_dir: Path) -> None:
    async with start() as bot:
        await bot.say("/remind tomorrow 9am call mom", user=ALICE)
    with MemoryStore(data_dir) as store:
        [only] = reminders.every(store)
        caller = Caller(Actor("user", 42, "Alice"), "users/42")
        # The same message handled again (the inbox after a crash): its id is derived from it.
        again = reminders.create(
            store,
            caller,
            chat_id=42,
            text="call mom",
            due=only.due,
            language="en",
            now=START,
            source="telegram:42:1:0:r",
        )
        assert again.id == only.id and len(reminders.every(store)) == 1


# -- the list, the zone -------------------------------------------------------------------------


async def test_reminders_are_listed_soonest_first_with_a_cancel_button_each(start: Any) -> None:
    async with start() as bot:
        [none] = await bot.say("/reminders", user=ALICE)
        assert "No upcoming reminders" in none.text
        later = reminder_id((await bot.say("/remind in 4 hours later one", user=ALICE))[0])
        soon = reminder_id((await bot.say("/remind in 10 minutes soon one", user=ALICE))[0])
        rule = reminder_id((await bot.say("/remind every day 12:00 lunch", user=ALICE))[0])
        [listing] = await bot.say("/reminders", user=ALICE)
        text = listing.text
        assert text.index("soon one") < text.index("lunch") < text.index("later one")
        assert "🔁 every day" in text
        rows = listing.params["reply_markup"]["inline_keyboard"]
        buttons = [row[0]["callback_data"] for row in rows]
        assert buttons == [f"rc:{soon}", f"rc:{rule}", f"rc:{later}"]
        since = bot.telegram.mark()
        await bot.press(listing, f"rc:{rule}", user=ALICE)
        await bot.telegram.wait("sendMessage", since=since, where=lambda c: "Cancelled" in c.text)
        [after] = await bot.say("/reminders", user=ALICE)
        assert "lunch" not in after.text and "soon one" in after.text
        [other] = await bot.say("/reminders", user=BOB)  # another namespace sees none of them
        assert "No upcoming reminders" in other.text


async def test_timezone_shows_sets_and_refuses_an_unknown_zone(start: Any) -> None:
    async with start() as bot:
        [shown] = await bot.say("/timezone", user=ALICE)
        assert "Asia/Shanghai" in shown.text and "default" in shown.text
        assert "2026-12-01 (Tue) 09:00" in shown.text
        [wrong] = await bot.say("/timezone Mars/Olympus_Mons", user=ALICE)
        assert "not a time zone I know" in wrong.text
        [set_] = await bot.say("/timezone europe/berlin", user=ALICE)
        assert "Europe/Berlin" in set_.text and "2026-12-01 (Tue) 02:00" in set_.text
        [reply] = await bot.say("/remind tomorrow 9am call mom", user=ALICE)
        assert "2026-12-02 (Wed) 09:00 Europe/Berlin" in reply.text
        assert "/timezone" not in reply.text  # a chosen zone is not the default any more


# -- buttons: snooze, done, cancel, change ------------------------------------------------------


async def test_snooze_then_done(start: Any, telegram: FakeBotAPI, clock: Clock) -> None:
    async with start() as bot:
        [reply] = await bot.say("/remind in 5 minutes tea", user=ALICE)
        rid = reminder_id(reply)
        since = telegram.mark()
        clock.advance(minutes=5)
        [first] = await telegram.wait("sendMessage", since=since, chat_id=42, where=is_delivery)
        await bot.press(first, f"rz:{rid}:10", user=ALICE)
        [edit] = await telegram.wait("editMessageText", since=since)
        assert "Snoozed until 2026-12-01 (Tue) 09:15" in edit.text
        since = telegram.mark()
        clock.advance(minutes=10)
        [second] = await telegram.wait("sendMessage", since=since, chat_id=42, where=is_delivery)
        assert "tea" in second.text
        await bot.press(second, f"rd:{rid}", user=ALICE)
        [done] = await telegram.wait("editMessageText", since=since)
        assert "Done: tea" in done.text
        clock.advance(hours=2)
        await bot.tick()
        assert len(telegram.find("sendMessage", since=since, where=is_delivery)) == 1


async def test_change_asks_for_a_new_time_and_reschedules(start: Any, telegram: FakeBotAPI) -> None:
    async with start() as bot:
        [reply] = await bot.say("/remind tomorrow 9am call mom", user=ALICE)
        rid = reminder_id(reply)
        since = telegram.mark()
        await bot.press(reply, f"re:{rid}", user=ALICE)
        [prompt] = await telegram.wait("sendMessage", since=since, chat_id=42)
        assert "Reply to this message" in prompt.text
        [changed] = await bot.say("friday 18:00", user=ALICE, reply_to=prompt.result)
        assert "Changed" in changed.text
        assert "2026-12-04 (Fri) 18:00 Asia/Shanghai — call mom" in changed.text


async def test_a_repeating_reminder_goes_on_after_done_and_cancel_ends_it(
    start: Any, telegram: FakeBotAPI, clock: Clock, data_dir: Path
) -> None:
    async with start() as bot:
        [reply] = await bot.say("/remind every day 9:30 stand up", user=ALICE)
        rid = reminder_id(reply)
        for day in range(2):
            since = telegram.mark()
            clock.advance(hours=24 if day else 0.5)
            [sent] = await telegram.wait("sendMessage", since=since, chat_id=42, where=is_delivery)
            await bot.press(sent, f"rd:{rid}", user=ALICE)
            [edit] = await telegram.wait("editMessageText", since=since)
            assert f"Next: 2026-12-0{2 + day} (" in edit.text
        await bot.press(sent, f"rc:{rid}", user=ALICE)
        since = telegram.mark()
        clock.advance(hours=24)
        await bot.tick()
        assert telegram.find("sendMessage", since=since, where=is_delivery) == []
    [stored] = documents(data_dir)
    assert stored["state"] == "cancelled"


async def test_a_group_reminder_is_cancelled_by_its_author_or_an_admin_only(
    start: Any, telegram: FakeBotAPI, clock: Clock
) -> None:
    group = telegram.group()
    telegram.admins[group["id"]] = {CAROL["id"]}
    async with start() as bot:
        [reply] = await bot.say("/remind in 1 hour team lunch", user=ALICE, chat=group)
        rid = reminder_id(reply)
        since = telegram.mark()
        await bot.press(reply, f"rc:{rid}", user=BOB)
        [refused] = telegram.find("answerCallbackQuery", since=since)
        assert "Only the member who set this reminder" in refused.params["text"]
        since = telegram.mark()
        clock.advance(hours=1)
        [sent] = await telegram.wait("sendMessage", since=since, where=is_delivery)
        assert 'href="tg://user?id=42"' in sent.params["text"]  # mentions who set it
        await bot.press(sent, f"rd:{rid}", user=BOB)  # nor may Bob finish it
        assert "Only the member" in telegram.find("answerCallbackQuery")[-1].params["text"]
        await bot.press(sent, f"rz:{rid}:10", user=ALICE)
        since = telegram.mark()
        await bot.press(sent, f"rc:{rid}", user=ALICE)
        [cancelled] = await telegram.wait("sendMessage", since=since)
        assert "Cancelled: team lunch" in cancelled.text
        [second] = await bot.say("/remind in 1 hour standup", user=ALICE, chat=group)
        since = telegram.mark()
        await bot.press(second, f"rc:{reminder_id(second)}", user=CAROL)  # an administrator
        [cancelled] = await telegram.wait("sendMessage", since=since)
        assert "Cancelled: standup" in cancelled.text


async def test_a_crafted_button_of_another_namespace_finds_nothing(start: Any) -> None:
    async with start() as bot:
        [reply] = await bot.say("/remind in 1 hour secret", user=ALICE)
        rid = reminder_id(reply)
        [bobs] = await bot.say("/help", user=BOB)
        await bot.press(bobs, f"rc:{rid}", user=BOB)
        [listing] = await bot.say("/reminders", user=ALICE)
        assert "secret" in listing.text


# -- a reminder is a memory, and a memory with a time offers one ----------------------------


async def test_recall_finds_the_reminder_with_its_time(start: Any) -> None:
    async with start() as bot:
        await bot.say("/remind 下周二下午三点 看牙医", user=LI)
        [found] = await bot.say("/recall 牙医", user=LI)
        assert "看牙医" in found.text and "2026-12-08 (周二) 15:00" in found.text


async def test_a_memory_of_a_plan_offers_a_reminder_set_once_on_yes(
    telegram: FakeBotAPI, data_dir: Path, tmp_path: Path
) -> None:
    real = Clock(datetime.now(UTC))  # memories are stamped with the real time
    data = {
        "data_dir": str(data_dir),
        "telegram": {"token": TOKEN, "base_url": telegram.base_url, "flood_control": False},
        "reminders": {"timezone": "Asia/Shanghai"},
    }
    config = parse_config(data, base_dir=tmp_path)
    application = build_application(config, MemoryStore(data_dir), None, clock=real)
    async with serving(application, poll_timeout=5):
        bot = Bot(telegram, config)
        [stored] = await bot.say("/remember 下周二下午三点看牙医", user=LI)
        [[yes, other, no]] = stored.params["reply_markup"]["inline_keyboard"]
        assert [yes["text"], other["text"], no["text"]] == ["✅ 好", "🕒 换个时间", "✖️ 不用"]
        assert "⏰ 要在 " in stored.text and "15:00 Asia/Shanghai 提醒你吗？— 看牙医" in stored.text
        since = telegram.mark()
        await bot.press(stored, yes["callback_data"], user=LI)
        [confirmation] = await telegram.wait("sendMessage", since=since, chat_id=LI["id"])
        again = await bot.press(stored, yes["callback_data"], user=LI)  # twice: one reminder
        assert "15:00 Asia/Shanghai — 看牙医" in confirmation.text
        [answer] = telegram.find("answerCallbackQuery", callback_query_id=again)
        assert answer.params["text"] == "这个提醒已经设好了：见 /reminders。"  # no second one
        [plain] = await bot.say("/remember the wifi password is hunter2", user=LI)
        assert plain.params.get("reply_markup") is None
    assert len(documents(data_dir)) == 1


# -- the job: restart, DST, replicas, failures ------------------------------------------------


@pytest.fixture
def store(data_dir: Path) -> Iterator[MemoryStore]:
    with MemoryStore(data_dir) as opened:
        yield opened


@pytest.fixture
async def sender(telegram: FakeBotAPI) -> AsyncIterator[TelegramBot]:
    async with TelegramBot(TOKEN, base_url=telegram.base_url) as bot:
        yield bot


def alice_sets(
    store: Store, phrase: str, now: datetime, zone: ZoneInfo = SHANGHAI, chat_id: int = 42
) -> reminders.Reminder:
    parsed = when.parse_reminder(phrase, now, zone)
    assert parsed is not None, phrase
    caller = Caller(Actor("user", 42, "Alice"), f"users/{chat_id}" if chat_id > 0 else "chats/1")
    return reminders.create(
        store, caller, chat_id=chat_id, text=parsed.text, due=parsed.due, language="en", now=now
    )


def job(store: Store, **config: Any) -> ReminderJob:
    return ReminderJob(ReminderConfig(**config), store, owner=f"test-{id(config)}")


async def test_after_a_restart_a_missed_one_is_sent_late_and_older_ones_summarised(
    start: Any, telegram: FakeBotAPI, clock: Clock
) -> None:
    async with start() as bot:
        await bot.say("/remind in 1 hour water the plants", user=ALICE)  # 10:00
        await bot.say("/remind in 2 hours call the bank", user=ALICE)  # 11:00
        await bot.say("/remind in 20 hours pay rent", user=ALICE)  # 05:00 tomorrow
        await bot.say("/remind in 30 hours dentist", user=ALICE)  # 15:00 tomorrow
    clock.advance(hours=25)  # stopped for a day: it is 10:00 on Wednesday
    since = telegram.mark()
    async with start() as bot:
        [late, summary] = await telegram.wait("sendMessage", count=2, since=since, chat_id=42)
        assert "pay rent" in late.text and "late: due at 2026-12-02 (Wed) 05:00" in late.text
        assert "While I was offline" in summary.text
        assert "water the plants" in summary.text and "call the bank" in summary.text
        assert "2026-12-01 (Tue) 10:00" in summary.text
        [listing] = await bot.say("/reminders", user=ALICE)
        assert "dentist" in listing.text and "pay rent" not in listing.text


async def test_a_weekly_reminder_stays_at_nine_local_across_the_dst_change(
    store: MemoryStore, telegram: FakeBotAPI, sender: TelegramBot
) -> None:
    telegram.private_chat(ALICE)
    monday = datetime(2026, 3, 23, 6, 0, tzinfo=UTC)  # CET (UTC+1); summer time from the 29th
    reminder = alice_sets(store, "every monday 9:00 standup", monday, BERLIN)
    assert reminder.series_at == datetime(2026, 3, 23, 8, 0, tzinfo=UTC)
    runner = job(store, timezone="Europe/Berlin")
    assert (await runner.run(sender, now=monday)).sent == []
    assert (await runner.run(sender, now=datetime(2026, 3, 23, 8, 0, 1, tzinfo=UTC))).sent
    [after] = reminders.every(store)
    assert after.series_at == datetime(2026, 3, 30, 7, 0, tzinfo=UTC)  # 09:00 CEST
    assert (await runner.run(sender, now=datetime(2026, 3, 30, 7, 0, 1, tzinfo=UTC))).sent
    [autumn] = reminders.every(store)
    assert autumn.series_at is not None
    assert autumn.series_at.astimezone(BERLIN).hour == 9


def test_a_wall_time_skipped_or_repeated_by_dst_is_handled() -> None:
    skipped = wall_time(datetime(2026, 3, 29), datetime(2026, 1, 1, 2, 30).time(), BERLIN)
    assert skipped == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)  # 03:30 CEST
    twice = wall_time(datetime(2026, 10, 25), datetime(2026, 1, 1, 2, 30).time(), BERLIN)
    assert twice == datetime(2026, 10, 25, 0, 30, tzinfo=UTC)  # the first 02:30 (CEST)
    daily = Repeat("daily")
    due = when.resolve(BERLIN, datetime(2026, 3, 28, 12, tzinfo=UTC), local="02:30", repeat=daily)
    assert due.next_after(due.at) == datetime(2026, 3, 30, 0, 30, tzinfo=UTC)


@pytest.fixture(params=["files", "postgres"])
def location(request: pytest.FixtureRequest, data_dir: Path) -> str:
    """Where the replicas' store is: a data directory, or a fresh PostgreSQL database."""
    return str(data_dir) if request.param == "files" else str(request.getfixturevalue("pg_url"))


async def test_two_processes_on_one_store_send_each_reminder_once(
    location: str, telegram: FakeBotAPI
) -> None:
    telegram.private_chat(ALICE)
    with open_store(location) as setter:
        for minute in range(8):
            alice_sets(setter, f"in {minute + 1} minutes task {minute}", START)
    due = START + timedelta(minutes=10)
    with open_store(location) as one, open_store(location) as two:  # a store each, as replicas
        async with (
            TelegramBot(TOKEN, base_url=telegram.base_url) as first,
            TelegramBot(TOKEN, base_url=telegram.base_url) as second,
        ):
            results = await asyncio.gather(
                job(one).run(first, now=due), job(two).run(second, now=due)
            )
    sent = [call.text for call in telegram.find("sendMessage", chat_id=42)]
    assert sorted(re.findall(r"task \d", "\n".join(sent))) == [f"task {m}" for m in range(8)]
    assert sum(len(r.sent) for r in results) == 8


async def test_a_crash_between_send_and_record_repeats_it_once_marked_as_a_repeat(
    location: str, telegram: FakeBotAPI, sender: TelegramBot
) -> None:
    telegram.private_chat(ALICE)
    with open_store(location) as dead:  # a replica that claims, sends, and dies
        reminder = alice_sets(dead, "in 5 minutes backup", START)
        at = reminder.due.at
        assert delivery.claim(dead, reminder.key, at, "dead", at).send
    with open_store(location) as store:
        assert not delivery.claim(store, reminder.key, at, "other", at).send  # its lease holds
        survivor = job(store)
        assert (await survivor.run(sender, now=at + timedelta(seconds=1))).sent == []  # 1st look
        later = at + LEASE + timedelta(seconds=1)
        assert (await survivor.run(sender, now=later)).sent == [reminder.key]  # the one repeat
        [repeat] = telegram.find("sendMessage", chat_id=42)
        assert "backup" in repeat.text and "(may be a repeat" in repeat.text
        assert reminders.every(store)[0].state == "sent"
        # Taken over and cut off by a crash again: sent once more, still marked.
        second = alice_sets(store, "in 6 minutes restore", START)
        t = second.due.at
        assert delivery.claim(store, second.key, t, "dead-1", t).send
        watched = Leases()
        assert not delivery.claim(store, second.key, t, "dead-2", t, watched).send
        retaken = delivery.claim(store, second.key, t, "dead-2", t + LEASE, watched)
        assert retaken.send and retaken.retaken
        since = telegram.mark()
        third = job(store)
        assert (await third.run(sender, now=t + LEASE * 2)).sent == []  # its first look
        assert (await third.run(sender, now=t + LEASE * 4)).sent == [second.key]
        [again] = telegram.find("sendMessage", since=since)
        assert "restore" in again.text and "(may be a repeat" in again.text
        # Cut off by crashes delivery.MAX_SENDS times, each request possibly delivered: it is
        # recorded as sent, so that a process dying on every send cannot flood the chat.
        last = alice_sets(store, "in 7 minutes verify", START)
        u = last.due.at
        assert delivery.claim(store, last.key, u, "dead-0", u).send
        for n in range(1, delivery.MAX_SENDS):  # each taken over after its lease, and left
            seen = Leases()
            assert not delivery.claim(store, last.key, u, f"dead-{n}", u, seen).send
            assert delivery.claim(store, last.key, u, f"dead-{n}", u + LEASE, seen).send
        since = telegram.mark()
        fourth = job(store)
        assert (await fourth.run(sender, now=u + LEASE * 5)).sent == []
        assert (await fourth.run(sender, now=u + LEASE * 7)).sent == []
        assert telegram.find("sendMessage", since=since) == []
        assert [r.state for r in reminders.every(store) if r.id == last.id] == ["sent"]


async def test_a_replica_whose_clock_runs_ahead_does_not_take_over_a_send_under_way(
    location: str, telegram: FakeBotAPI
) -> None:
    """The lease is timed on each replica's own clock, from its first look at the claim."""
    telegram.private_chat(ALICE)
    with open_store(location) as setter:
        reminder = alice_sets(setter, "in 5 minutes backup", START)
    at = reminder.due.at
    first_send = [True]
    slow = telegram.hold("sendMessage", when=lambda _: bool(first_send and first_send.pop()))
    with open_store(location) as one, open_store(location) as two:
        async with (
            TelegramBot(TOKEN, base_url=telegram.base_url) as first,
            TelegramBot(TOKEN, base_url=telegram.base_url) as second,
        ):
            sending = asyncio.create_task(job(one).run(first, now=at))
            await eventually(lambda: reminders.every(two)[0].claim is not None)
            ahead = job(two)  # its clock is ten minutes ahead of the first replica's
            for seconds in (600, 630, 660):  # within a lease of its first look, by its clock
                assert (await ahead.run(second, now=at + timedelta(seconds=seconds))).sent == []
            slow.set()
            assert (await sending).sent == [reminder.key]
            assert (await ahead.run(second, now=at + timedelta(minutes=20))).sent == []
    assert len(telegram.find("sendMessage", chat_id=42, where=is_delivery)) == 1


async def test_a_blocked_chat_pauses_its_reminders_until_it_writes_again(
    start: Any, telegram: FakeBotAPI, clock: Clock, data_dir: Path
) -> None:
    async with start() as bot:
        await bot.say("/remind in 1 hour one", user=ALICE)
        await bot.say("/remind in 2 hours two", user=ALICE)
        telegram.fail("sendMessage", 403, "Forbidden: bot was blocked by the user", times=1)
        since = telegram.mark()
        clock.advance(hours=3)
        await telegram.wait("sendMessage", since=since, ok=False)
        clock.advance(hours=1)
        await bot.tick()
        attempts = telegram.find("sendMessage", since=since, ok=None, where=is_delivery)
        assert len(attempts) == 1  # not retried
        await eventually(lambda: {d["state"] for d in documents(data_dir)} == {"paused"})
        since = telegram.mark()
        [resumed, listing] = await bot.say("/reminders", user=ALICE, replies=2)
        assert "2 paused reminders are on again" in resumed.text
        assert "one" in listing.text and "two" in listing.text and "paused" not in listing.text
        # Back on, they are sent, late (within the grace period).
        late = await telegram.wait("sendMessage", count=2, since=since, where=is_delivery)
        assert all("late: due at" in call.text for call in late)


async def test_a_network_error_is_retried_with_backoff_and_sent_once(
    store: MemoryStore, telegram: FakeBotAPI, sender: TelegramBot
) -> None:
    telegram.private_chat(ALICE)
    reminder = alice_sets(store, "in 5 minutes laundry", START)
    runner = job(store)
    now = reminder.due.at
    telegram.fail("sendMessage", 502, "Bad Gateway", times=2)
    assert (await runner.run(sender, now=now)).retrying == [reminder.key]
    assert (await runner.run(sender, now=now + timedelta(seconds=1))).retrying == []  # waits
    assert (await runner.run(sender, now=now + timedelta(seconds=6))).retrying == [reminder.key]
    result = await runner.run(sender, now=now + timedelta(seconds=20))
    assert result.sent == [reminder.key]
    assert len(telegram.find("sendMessage", chat_id=42)) == 1
    assert reminders.every(store)[0].state == "sent"


async def test_unreadable_reminder_documents_are_skipped(
    store: MemoryStore, telegram: FakeBotAPI, sender: TelegramBot
) -> None:
    telegram.private_chat(ALICE)
    store.bot_documents().put("reminders/users/42/broken00", {"id": "x", "due": "["})
    good = alice_sets(store, "in 5 minutes fine", START)
    result = await job(store).run(sender, now=good.due.at)
    assert result.sent == [good.key]
    assert json.dumps(store.bot_documents().get("reminders/users/42/broken00").value)  # kept


def test_help_and_the_command_menu_have_the_reminder_commands() -> None:
    from bot.chat.app import bot_commands

    for language in ("en", "zh"):
        names = [command.command for command in bot_commands(language)]
        assert {"remind", "reminders", "timezone"} <= set(names)
    from bot.view.i18n import t

    assert "/remind" in t("en", "help") and "/timezone" in t("zh", "help")


def test_services_know_the_reminder_job() -> None:
    assert "reminders" in Services.__dataclass_fields__ and KEY == "services"
    assert re.fullmatch(reminders.ID_PATTERN, "k3v9x2ab")


# -- with a language model: the scheduleReminder tool -------------------------------------------


async def test_the_model_sets_a_reminder_whose_time_the_code_computes(
    telegram: FakeBotAPI, data_dir: Path, tmp_path: Path, clock: Clock
) -> None:
    from bench.fakes.openai_server import API_KEY, Answer, FakeOpenAI, Request, ToolCalls
    from bot.__main__ import make_llm

    told: list[str] = []  # the times the model was told, as the tool wrote them

    def answer(request: Request) -> Answer:
        [refused, accepted] = request.tool_results()[-2:]
        assert refused["ok"] is False and "has passed" in refused["error"]["message"]
        told.append(accepted["due"])
        return Answer("Done, I'll ping you.")

    def again(request: Request) -> Answer:
        told.append(request.tool_results()[-1]["due"])
        return Answer("Noted.")

    async with FakeOpenAI() as llm:
        llm.script(
            ToolCalls(
                ("scheduleReminder", {"text": "passport", "local": "2026-11-30 10:00"}),
                ("scheduleReminder", {"text": "renew the passport", "local": "2026-12-08 10:00"}),
            ),
            answer,
            ToolCalls(
                ("scheduleReminder", {"text": "the tax return", "local": "2026-12-04 10:00"})
            ),
            again,
        )
        table = {"base_url": llm.base_url, "api_key": API_KEY, "model": "test-model"}
        data = {
            "data_dir": str(data_dir),
            "telegram": {"token": TOKEN, "base_url": telegram.base_url, "flood_control": False},
            "reminders": {"timezone": "Asia/Shanghai"},
            "llm": table,
        }
        config = parse_config(data, base_dir=tmp_path)
        application = build_application(
            config, MemoryStore(data_dir), make_llm(config), clock=clock
        )
        async with serving(application, poll_timeout=5):
            bot = Bot(telegram, config)
            [said, confirmed] = await bot.say("ping me next tuesday about my passport", user=ALICE,
                                              replies=2)  # fmt: skip
            assert "ping you" in said.text
            assert "⏰ 2026-12-08 (Tue) 10:00 Asia/Shanghai — renew the passport" in confirmed.text
            asked = len(llm.requests)
            # A request the code can read is set by the code, without the model.
            [code] = await bot.say("remind me tomorrow at 9 to call mom", user=ALICE)
            assert "2026-12-02 (Wed) 09:00 Asia/Shanghai — call mom" in code.text
            assert len(llm.requests) == asked
            [found] = await bot.say("/recall passport", user=ALICE)
            assert "2026-12-08 (Tue) 10:00" in found.text
            # The model is told the time as the confirmation writes it, a fixed offset too.
            await bot.say("/timezone UTC+8", user=ALICE)
            [_, fixed] = await bot.say("ping me on friday about taxes", user=ALICE, replies=2)
    assert told == ["2026-12-08 (Tue) 10:00 Asia/Shanghai", "2026-12-04 (Fri) 10:00 UTC+08:00"]
    assert told[0] in confirmed.text and told[1] in fixed.text
    texts = sorted(d["text"] for d in documents(data_dir))
    assert texts == ["call mom", "renew the passport", "the tax return"]


def test_done_pressed_while_its_occurrence_is_being_delivered_moves_on_to_the_next(
    store: MemoryStore,
) -> None:
    # The delivery job has sent occurrence `at` and not yet recorded it when ✅ comes in (a
    # test presses faster than a person; a slow store widens the gap): the occurrence done is
    # that one, and recording the delivery afterwards changes nothing more.
    reminder = alice_sets(store, "every day 9:30 stand up", START)
    at = reminder.series_at
    assert at is not None and delivery.claim(store, reminder.key, at, "job", at).send
    caller = Caller(Actor("user", 42, "Alice"), "users/42")
    pressed = reminders.done(store, caller, reminder.id, at + timedelta(seconds=1))
    assert pressed.series_at == at + timedelta(days=1)
    recorded = delivery.delivered(store, reminder.key, at, at + timedelta(seconds=2))
    assert recorded is not None
    assert (recorded.series_at, recorded.sent_at, recorded.state) == (
        at + timedelta(days=1),
        at,
        "pending",
    )
    assert recorded.claim is None


# -- limits: what counts against the cap, how far ahead --------------------------------------


def test_delivered_reminders_leave_room_under_the_cap(store: MemoryStore) -> None:
    """Only reminders that can still fire count: a chat whose reminders all went out may set
    new ones (they used to count until pruned, 30 days later, with /reminders listing none)."""
    for minute in range(reminders.MAX_PER_NAMESPACE):
        reminder = alice_sets(store, f"in {minute + 1} minutes task {minute}", START)
        at = reminder.due.at
        assert delivery.claim(store, reminder.key, at, "job", at).send
        delivery.delivered(store, reminder.key, at, at)
    assert reminders.upcoming(store, "users/42") == []
    more = alice_sets(store, "in 2 hours one more", START)  # refused before: "at most 200"
    assert [r.text for r in reminders.upcoming(store, "users/42")] == [more.text]


async def test_a_reminder_years_ahead_is_refused_with_a_clear_answer(
    start: Any, data_dir: Path
) -> None:
    async with start() as bot:
        for phrase in ("9999-12-31 party", "2999-06-01 10:00 party", "9999年12月31日 派对"):
            [far] = await bot.say(f"/remind {phrase}", user=ALICE)
            assert "more than 5 years ahead" in far.text, phrase
        [past] = await bot.say("/remind 0001-01-01 10:00 party", user=ALICE)
        assert "already passed" in past.text
    assert documents(data_dir) == []


# -- a button pressed twice ------------------------------------------------------------------


async def test_a_snooze_pressed_twice_snoozes_once(
    start: Any, telegram: FakeBotAPI, clock: Clock, data_dir: Path
) -> None:
    async with start() as bot:
        [reply] = await bot.say("/remind in 5 minutes tea", user=ALICE)
        rid = reminder_id(reply)
        since = telegram.mark()
        clock.advance(minutes=5)
        [sent] = await telegram.wait("sendMessage", since=since, chat_id=42, where=is_delivery)
        await bot.press(sent, f"rz:{rid}:10", user=ALICE)
        clock.advance(minutes=1)  # a second tap, in before the edit took the buttons away
        again = await bot.press(sent, f"rz:{rid}:10", user=ALICE)
        [edit] = telegram.find("editMessageText", since=since)
        assert "Snoozed until 2026-12-01 (Tue) 09:15" in edit.text
        [answer] = telegram.find("answerCallbackQuery", callback_query_id=again)
        assert answer.params["text"] == "Done already: that button was pressed before."
    [stored] = documents(data_dir)
    snoozed = reminders.Reminder.from_json(stored).snooze_at
    assert snoozed is not None and snoozed.replace(second=0, microsecond=0) == START + timedelta(
        minutes=15
    )


def test_the_same_snooze_pressed_in_two_processes_at_once_acts_once(location: str) -> None:
    with open_store(location) as setter:
        reminder = alice_sets(setter, "in 5 minutes tea", START)
    caller = Caller(Actor("user", 42, "Alice"), "users/42")
    at = reminder.due.at
    barrier = threading.Barrier(2)

    def press(minutes: int) -> str:
        with open_store(location) as store:  # each replica its own store
            barrier.wait()
            until = at + timedelta(minutes=minutes)
            try:
                reminders.snooze(store, caller, reminder.id, until, at, press="42:7:10")
            except ReminderPressedAgain:
                return "again"
            return "snoozed"

    with ThreadPoolExecutor(2) as pool:
        outcomes = sorted(pool.map(press, (10, 11)))
    assert outcomes == ["again", "snoozed"]
    with open_store(location) as store:
        [after] = reminders.every(store)
        assert after.snooze_at in (at + timedelta(minutes=10), at + timedelta(minutes=11))


# -- Telegram refuses one reminder, not the chat ---------------------------------------------


async def test_a_reminder_of_a_deleted_or_closed_topic_comes_to_the_chat_and_pauses_nothing(
    start: Any, telegram: FakeBotAPI, clock: Clock, data_dir: Path
) -> None:
    forum = telegram.forum()
    topics = telegram.topics[forum["id"]]
    topics.update({7: "open", 8: "open", 9: "open"})
    async with start():
        for thread, what in ((7, "deleted"), (8, "closed"), (9, "open")):
            since = telegram.mark()
            telegram.post(
                user=ALICE,
                chat=forum,
                text=f"/remind in 1 hour the one of the {what} topic",
                message_thread_id=thread,
                is_topic_message=True,
            )
            [confirmed] = await telegram.wait("sendMessage", since=since, chat_id=forum["id"])
            assert confirmed.params["message_thread_id"] == thread
        del topics[7]  # Telegram: "message thread not found"
        topics[8] = "closed"  # Telegram: TOPIC_CLOSED
        since = telegram.mark()
        clock.advance(hours=1)
        sent = await telegram.wait("sendMessage", count=3, since=since, where=is_delivery)
        of = {what: c for c in sent for what in ("deleted", "closed", "open") if what in c.text}
        assert of["open"].params["message_thread_id"] == 9
        for gone in (of["deleted"], of["closed"]):
            assert "message_thread_id" not in gone.params
            assert "the topic it was set in is closed or gone" in gone.text
    assert {d["state"] for d in documents(data_dir)} == {"sent"}


async def test_a_reminder_telegram_refuses_pauses_alone_and_the_chat_is_told(
    start: Any, telegram: FakeBotAPI, clock: Clock, data_dir: Path
) -> None:
    group = telegram.group()
    async with start() as bot:
        await bot.say("/remind in 59 minutes the refused one", user=ALICE, chat=group)
        await bot.say("/remind in 1 hour the other one", user=ALICE, chat=group)
        telegram.fail(
            "sendMessage",
            400,
            "Bad Request: BUTTON_DATA_INVALID",
            when=lambda p: "the refused one" in str(p.get("text")),
        )
        since = telegram.mark()
        clock.advance(hours=1)
        [told] = await telegram.wait(
            "sendMessage", since=since, where=lambda c: "Telegram refused" in c.text
        )
        assert "“the refused one”" in told.text and "button_data_invalid" in told.text.lower()
        [other] = await telegram.wait("sendMessage", since=since, where=is_delivery)
        assert "the other one" in other.text
        since = telegram.mark()
        [resumed, _] = await bot.say("/reminders", user=ALICE, chat=group, replies=2)
        assert "1 paused reminders are on again" in resumed.text  # tried again, and sent
        [late] = await telegram.wait("sendMessage", since=since, where=is_delivery)
        assert "the refused one" in late.text
    assert {d["text"]: d["state"] for d in documents(data_dir)} == {
        "the refused one": "sent",
        "the other one": "sent",
    }


# -- killed while a send is on its way -------------------------------------------------------


async def test_a_reminder_cut_off_twice_in_flight_is_sent_again_marked_never_dropped(
    location: str, telegram: FakeBotAPI
) -> None:
    """Two replicas in turn claim the reminder, send it, and die while Telegram has the request
    (held here, then refused: it never arrived). The third sends it, marked as a possible
    repeat; it used to be recorded as sent, and never delivered."""
    telegram.private_chat(ALICE)
    with open_store(location) as setter:
        reminder = alice_sets(setter, "in 5 minutes backup", START)
    at = reminder.due.at
    arrived: list[dict[str, Any]] = []

    def cut_off(params: dict[str, Any]) -> bool:  # the first two requests never get an answer
        arrived.append(params)
        return len(arrived) <= 2

    held = telegram.hold("sendMessage", when=cut_off)
    async with AsyncExitStack() as stack:
        stores = [stack.enter_context(open_store(location)) for _ in range(3)]
        bots = [
            await stack.enter_async_context(TelegramBot(TOKEN, base_url=telegram.base_url))
            for _ in range(3)
        ]
        jobs = [
            ReminderJob(ReminderConfig(), s, owner=f"replica-{n}") for n, s in enumerate(stores)
        ]
        first = asyncio.create_task(jobs[0].run(bots[0], now=at))
        await eventually(lambda: len(arrived) == 1)
        first.cancel()  # killed while Telegram has its request
        assert (await jobs[1].run(bots[1], now=at + timedelta(seconds=1))).sent == []
        second = asyncio.create_task(jobs[1].run(bots[1], now=at + LEASE + timedelta(seconds=2)))
        await eventually(lambda: len(arrived) == 2)
        second.cancel()  # the replica that took it over is killed the same way
        assert (await jobs[2].run(bots[2], now=at + timedelta(seconds=3))).sent == []
        later = at + LEASE + timedelta(seconds=4)
        assert (await jobs[2].run(bots[2], now=later)).sent == [reminder.key]
        [delivered] = telegram.find("sendMessage", chat_id=42)
        assert "backup" in delivered.text and "(may be a repeat" in delivered.text
        telegram.fail("sendMessage", 500, "Internal Server Error", times=2)  # the held two
        held.set()
        for dead in jobs[:2]:
            await dead.stop()
    assert len(telegram.find("sendMessage", chat_id=42)) == 1
    with open_store(location) as store:
        assert [r.state for r in reminders.every(store)] == ["sent"]


async def test_a_reminder_waiting_for_its_chat_s_turn_holds_no_claim(
    location: str, telegram: FakeBotAPI, sender: TelegramBot
) -> None:
    """A group at its limit: its reminder waits for the group's turn before it is claimed, so a
    replica killed while it waits leaves nothing to wait a lease for, and no repeat."""
    group = telegram.group()
    with open_store(location) as setter:
        reminder = alice_sets(setter, "in 5 minutes standup", START, chat_id=group["id"])
    at = reminder.due.at
    asked: list[float] = []

    def clock() -> float:  # the pacer's: each look at a chat's turn reads it
        asked.append(time.monotonic())
        return asked[-1]

    full = Pacer(clock=clock)
    for _ in range(full.group.count):
        async with full.sending(group["id"]):
            pass
    asked.clear()
    with open_store(location) as one, open_store(location) as two:
        waiting = ReminderJob(ReminderConfig(), one, owner="waits", pacer=full)
        tick = asyncio.create_task(waiting.run(sender, now=at))
        await eventually(lambda: bool(asked))  # its sender waits for the group's turn
        assert not tick.done() and reminders.every(two)[0].claim is None
        await waiting.stop()  # stopped while it waits (a kill leaves the same store behind)
        await tick
        assert (await job(two).run(sender, now=at + timedelta(seconds=1))).sent == [reminder.key]
    [sent] = telegram.find("sendMessage", chat_id=group["id"])
    assert "standup" in sent.text and "repeat" not in sent.text


# -- the reminder's memory -----------------------------------------------------------------------


async def test_a_reminders_memory_follows_it_done_when_sent_gone_when_cancelled(
    start: Any, telegram: FakeBotAPI, clock: Clock
) -> None:
    async with start() as bot:
        [tea] = await bot.say("/remind in 1 minute make tea", user=ALICE)
        [call] = await bot.say("/remind in 2 hours call the plumber", user=ALICE)
        [line] = [m["content"] for m in bot.memories("users/42") if "tea" in m["content"]]
        assert line.startswith("⏰ 2026-12-01 (Tue) 09:01") and line.endswith("— make tea")
        # Sent: the memory says so, and stays findable.
        since = telegram.mark()
        clock.advance(seconds=60)
        await bot.tick()
        await telegram.wait("sendMessage", since=since, chat_id=42, where=is_delivery)
        await eventually(
            lambda: any(m["content"].startswith("✅") for m in bot.memories("users/42"))
        )
        [done] = [m["content"] for m in bot.memories("users/42") if "tea" in m["content"]]
        assert done == "✅" + line.removeprefix("⏰")
        # Moved: the memory states the new time.
        await bot.say("/reminders", user=ALICE)
        since = telegram.mark()
        await bot.press(call, f"re:{reminder_id(call)}", user=ALICE)
        [prompt] = await telegram.wait("sendMessage", since=since, chat_id=42)
        await bot.say("in 3 hours", user=ALICE, reply_to=prompt.result)
        [moved] = [m["content"] for m in bot.memories("users/42") if "plumber" in m["content"]]
        assert moved.startswith("⏰ 2026-12-01 (Tue) 12:01") and moved.endswith(
            "— call the plumber"
        )
        # Cancelled: the memory goes (an undoable change, as any other).
        since = telegram.mark()
        await bot.press(call, f"rc:{reminder_id(call)}", user=ALICE)
        await telegram.wait("sendMessage", since=since, chat_id=42)
        await eventually(
            lambda: not any("plumber" in m["content"] for m in bot.memories("users/42"))
        )
        # What was asked stays answerable: the delivered reminder is found by its words.
        [found] = await bot.say("/recall tea", user=ALICE)
        assert "✅ 2026-12-01 (Tue) 09:01" in found.text
    assert tea.text  # the first confirmation was sent


async def test_a_hand_edited_reminder_memory_is_left_as_the_person_wrote_it(
    start: Any, telegram: FakeBotAPI, clock: Clock
) -> None:
    async with start() as bot:
        [reply] = await bot.say("/remind in 1 minute water the plants", user=ALICE)
        [memory] = bot.memories("users/42")
        await bot.say(f"/edit {memory['id']} the plants need water twice a week", user=ALICE)
        since = telegram.mark()
        clock.advance(seconds=60)
        await bot.tick()
        await telegram.wait("sendMessage", since=since, chat_id=42, where=is_delivery)
        await bot.press(reply, f"rc:{reminder_id(reply)}", user=ALICE)
        assert [m["content"] for m in bot.memories("users/42")] == [
            "the plants need water twice a week"
        ]


def test_a_reminder_set_while_the_store_is_read_for_a_rescan_stays_in_the_index(
    tmp_path: Path,
) -> None:
    """The job rebuilds its index from a read of the store made in a worker thread; a /remind
    tracked between that read and the rebuild is newer than the read and must not drop out
    (before: it was missing until the next rescan, a minute later)."""
    caller = Caller(Actor("user", 42, "Alice"), "users/42")
    zone = ZoneInfo("Asia/Shanghai")
    with MemoryStore(tmp_path / "data") as store:

        def remind(text: str, minutes: int) -> reminders.Reminder:
            due = when.resolve(zone, START, offset_minutes=minutes)
            return reminders.create(
                store, caller, chat_id=42, text=text, due=due, language="en", now=START
            )

        index = DueIndex()
        first = remind("first", 5)
        index.track(first)
        mark = index.mark()
        read = reminders.every(store)  # the rescan's read, in its worker thread
        second = remind("second", 1)
        index.track(second)  # a /remind handled meanwhile, on the loop
        index.rebuild(read, mark)
        due = [key for key, _ in index.take_due(START + timedelta(hours=1), set())]
        assert due == [second.key, first.key]
