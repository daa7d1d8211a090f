"""/timezone as people say it, end to end: places, offsets, choices, a shared location, moving
the chat's reminders, and the digest in the chat's zone.

The real ``Application`` against the fake Bot API on 127.0.0.1, with a controlled clock (real
time plus an offset), a file store in ``tmp_path``; the reader itself is tabled in
``test_places.py``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from bot_harness import ALICE, BOB, LI, Bot

from bench.fakes.telegram_server import TOKEN, Call, FakeBotAPI
from bot.chat.app import build_application
from bot.chat.running import serving
from bot.chat.services import KEY, Services
from bot.config import parse_config
from memory.files import MemoryStore

# Tuesday 1 December 2026, 09:00 in Shanghai (the bot's default zone here), 02:00 in Berlin.
START = datetime(2026, 12, 1, 1, 0, tzinfo=UTC)
NEXT_MONDAY = datetime(2026, 12, 7, tzinfo=UTC)


class Clock:
    """Real time plus an offset: starts at ``start``, moved on by ``advance``."""

    def __init__(self, start: datetime) -> None:
        self.offset = start - datetime.now(UTC)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, **delta: float) -> None:
        self.offset += timedelta(**delta)


class ZoneBot(Bot):
    """The running bot, with its jobs."""

    def __init__(self, telegram: FakeBotAPI, config: Any, application: Any) -> None:
        super().__init__(telegram, config)
        self.application = application
        self.services: Services = application.bot_data[KEY]


@pytest.fixture
def clock() -> Clock:
    return Clock(START)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def start(telegram: FakeBotAPI, data_dir: Path, tmp_path: Path, clock: Clock) -> Any:
    @asynccontextmanager
    async def running(**telegram_keys: Any) -> AsyncIterator[ZoneBot]:
        data = {
            "data_dir": str(data_dir),
            "telegram": {
                "token": TOKEN,
                "base_url": telegram.base_url,
                "flood_control": False,
                **telegram_keys,
            },
            "reminders": {"timezone": "Asia/Shanghai"},
            "digest": {"schedule": "0 9 * * mon", "timezone": "Asia/Shanghai"},
        }
        config = parse_config(data, base_dir=tmp_path)
        application = build_application(config, MemoryStore(config.data_dir), None, clock=clock)
        async with serving(application, poll_timeout=5):
            yield ZoneBot(telegram, config, application)

    return running


def chat_zone(data_dir: Path, chat_id: int) -> str | None:
    with MemoryStore(data_dir) as store:
        found = store.bot_documents().get(f"reminder-chats/{chat_id}")
    return found.value.get("timezone") if found is not None else None


def reminder_documents(data_dir: Path) -> list[dict[str, Any]]:
    with MemoryStore(data_dir) as store:
        return [d.value for d in store.bot_documents().list("reminders/")]


def buttons(call: Call) -> dict[str, str]:
    """callback data -> label of the inline buttons of a message the bot sent."""
    markup = call.params.get("reply_markup") or {}
    return {b["callback_data"]: b["text"] for row in markup.get("inline_keyboard", []) for b in row}


def delivered(bot: ZoneBot, text: str) -> int:
    """How many times the reminder ``text`` was delivered."""
    calls = bot.telegram.find("sendMessage")
    return sum(1 for call in calls if call.text.startswith(f"⏰ Reminder: {text}"))


async def edited(bot: ZoneBot, since: int) -> Call:
    [call] = await bot.telegram.wait("editMessageText", since=since)
    return call


# -- names, offsets, choices ---------------------------------------------------------------------


async def test_a_city_a_country_or_chinese_sets_the_zone_and_says_what_was_set(start: Any) -> None:
    async with start() as bot:
        [set_] = await bot.say("/timezone Beijing", user=ALICE)
        assert set_.text == (
            "🕒 Time zone set to Asia/Shanghai (Beijing, UTC+08:00); "
            "it's now 2026-12-01 (Tue) 09:00."
        )
        [new_york] = await bot.say("/timezone New York", user=ALICE)  # two words
        assert "America/New_York (New York, UTC−05:00)" in new_york.text
        assert "2026-11-30 (Mon) 20:00" in new_york.text
        [chinese] = await bot.say("/timezone 柏林", user=LI)
        assert chinese.text.startswith("🕒 时区已设为 Europe/Berlin（柏林，UTC+01:00）；现在是 ")
        [japan] = await bot.say("/timezone japan", user=ALICE)
        assert "Asia/Tokyo (japan, UTC+09:00)" in japan.text
        [reply] = await bot.say("/remind tomorrow 9am call mom", user=ALICE)
        assert "2026-12-02 (Wed) 09:00 Asia/Tokyo" in reply.text
        [shown] = await bot.say("/timezone", user=ALICE)
        assert "Asia/Tokyo" in shown.text and "Tokyo" in shown.text and "default" not in shown.text


async def test_an_offset_is_a_fixed_zone_shown_with_its_real_sign(
    start: Any, data_dir: Path
) -> None:
    async with start() as bot:
        [set_] = await bot.say("/timezone UTC+8", user=ALICE)
        assert set_.text.startswith(
            "🕒 Time zone set to UTC+08:00; it's now 2026-12-01 (Tue) 09:00."
        )
        assert "does not follow daylight saving" in set_.text and "/timezone Shanghai" in set_.text
        assert chat_zone(data_dir, ALICE["id"]) == "Etc/GMT-8"
        [reply] = await bot.say("/remind tomorrow 9am call mom", user=ALICE)
        assert "2026-12-02 (Wed) 09:00 UTC+08:00" in reply.text and "Etc/GMT" not in reply.text
        [west] = await bot.say("/timezone 西五区", user=LI)
        assert "UTC−05:00" in west.text and "夏令时" in west.text


async def test_an_ambiguous_name_asks_and_the_chosen_button_sets_it(
    start: Any, data_dir: Path
) -> None:
    async with start() as bot:
        [asked] = await bot.say("/timezone CST", user=ALICE)
        assert "more than one time zone" in asked.text
        offered = buttons(asked)
        assert {"tzs:America/Chicago", "tzs:Asia/Shanghai"} <= set(offered)
        assert "Chicago" in offered["tzs:America/Chicago"]
        assert chat_zone(data_dir, ALICE["id"]) is None  # nothing set without a choice
        since = bot.telegram.mark()
        await bot.press(asked, "tzs:America/Chicago", user=ALICE)
        assert "Time zone set to America/Chicago" in (await edited(bot, since)).text
        assert chat_zone(data_dir, ALICE["id"]) == "America/Chicago"
        [usa] = await bot.say("/timezone USA", user=ALICE)
        assert {"tzs:America/New_York", "tzs:America/Los_Angeles"} <= set(buttons(usa))


async def test_an_unknown_name_sets_nothing_and_a_misspelling_is_offered(
    start: Any, data_dir: Path
) -> None:
    async with start() as bot:
        [wrong] = await bot.say("/timezone hello there", user=ALICE)
        assert "not a time zone I know" in wrong.text and "/timezone Berlin" in wrong.text
        assert buttons(wrong) == {}
        [near] = await bot.say("/timezone Berln", user=ALICE)
        assert "Did you mean" in near.text and "tzs:Europe/Berlin" in buttons(near)
        [forged] = await bot.say("/timezone", user=ALICE)
        since = bot.telegram.mark()
        await bot.press(forged, "tzs:Mars/Olympus_Mons", user=ALICE)  # crafted data
        assert not bot.telegram.find("editMessageText", since=since)
        assert chat_zone(data_dir, ALICE["id"]) is None


# -- groups --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scope", ["chat", "user"])
async def test_only_a_group_s_administrators_set_its_zone_whatever_the_scope(
    start: Any, data_dir: Path, scope: str
) -> None:
    """The zone is the chat's: with group_scope "user" every member has their own namespace,
    and still only an administrator changes the group's zone."""
    async with start(group_scope=scope) as bot:
        group = bot.telegram.group()
        bot.telegram.admins[group["id"]] = {ALICE["id"]}
        [refused] = await bot.say("/timezone Berlin", user=BOB, chat=group)
        assert "Only the group's administrators" in refused.text
        assert chat_zone(data_dir, group["id"]) is None
        [asked] = await bot.say("/timezone CST", user=BOB, chat=group)
        since = bot.telegram.mark()
        await bot.press(asked, "tzs:America/Chicago", user=BOB)
        [alert] = bot.telegram.find("answerCallbackQuery", since=since)
        assert "administrators" in alert.params["text"]
        assert chat_zone(data_dir, group["id"]) is None
        [set_] = await bot.say("/timezone Berlin", user=ALICE, chat=group)
        assert "Time zone set to Europe/Berlin" in set_.text
        assert chat_zone(data_dir, group["id"]) == "Europe/Berlin"


# -- a shared location ---------------------------------------------------------------------------

BEIJING = {"latitude": 39.9042, "longitude": 116.4074}
BERLIN = {"latitude": 52.52, "longitude": 13.405}


async def test_in_private_the_location_button_sets_the_zone_and_is_not_remembered(
    start: Any, data_dir: Path
) -> None:
    pytest.importorskip("tzfpy")
    async with start() as bot:
        [shown] = await bot.say("/timezone", user=ALICE)
        [[button]] = shown.params["reply_markup"]["keyboard"]
        assert button["request_location"] is True and "location" in button["text"]
        since = bot.telegram.mark()
        bot.telegram.post(user=ALICE, location=BERLIN)  # what the button sends
        [set_] = await bot.telegram.wait("sendMessage", since=since, chat_id=ALICE["id"])
        assert set_.text.startswith("🕒 Time zone set to Europe/Berlin (from your location, ")
        assert set_.params["reply_markup"] == {"remove_keyboard": True}
        assert chat_zone(data_dir, ALICE["id"]) == "Europe/Berlin"
        assert bot.memories("users/42") == []
        # Asked once: the next location is a memory again, with a button to use it.
        since = bot.telegram.mark()
        bot.telegram.post(user=ALICE, location=BEIJING)
        [kept] = await bot.telegram.wait("sendMessage", since=since, chat_id=ALICE["id"])
        assert "📍" in kept.text and len(bot.memories("users/42")) == 1
        [(data, label)] = buttons(kept).items()
        assert label == "🕒 Use for my time zone" and data.startswith("tzl:39.9042")
        since = bot.telegram.mark()
        await bot.press(kept, data, user=ALICE)
        [set_] = await bot.telegram.wait("sendMessage", since=since, chat_id=ALICE["id"])
        assert "Asia/Shanghai (from your location, UTC+08:00)" in set_.text
        assert chat_zone(data_dir, ALICE["id"]) == "Asia/Shanghai"


async def test_in_a_group_a_location_replying_to_the_prompt_sets_the_zone(
    start: Any, data_dir: Path
) -> None:
    pytest.importorskip("tzfpy")
    async with start() as bot:
        group = bot.telegram.group()
        bot.telegram.admins[group["id"]] = {ALICE["id"]}
        [prompt] = await bot.say("/timezone", user=ALICE, chat=group)
        assert "reply to this message with a location" in prompt.text
        assert "keyboard" not in (prompt.params.get("reply_markup") or {})  # none in groups
        since = bot.telegram.mark()
        bot.telegram.post(user=ALICE, chat=group, location=BERLIN, reply_to_message=prompt.result)
        [set_] = await bot.telegram.wait("sendMessage", since=since, chat_id=group["id"])
        assert "Time zone set to Europe/Berlin" in set_.text
        # /timezone as a reply to a location shared earlier.
        shared = bot.telegram.post(user=ALICE, chat=group, location=BEIJING)
        [set_] = await bot.say("/timezone", user=ALICE, chat=group, reply_to=shared)
        assert "Time zone set to Asia/Shanghai" in set_.text
        assert chat_zone(data_dir, group["id"]) == "Asia/Shanghai"


# -- the chat's reminders ----------------------------------------------------------------------


async def test_moving_reminders_keeps_their_local_time_in_the_new_zone(
    start: Any, data_dir: Path, clock: Clock
) -> None:
    async with start() as bot:
        await bot.say("/remind tomorrow 9am call mom", user=ALICE)  # 09:00 Shanghai
        await bot.say("/remind every monday 9:00 weekly report", user=ALICE)
        [offer] = await bot.say("/timezone Berlin", user=ALICE)
        assert "2 reminders here are set in other time zones" in offer.text
        assert "2026-12-02 (Wed) 09:00 Asia/Shanghai" in offer.text  # before
        assert "2026-12-02 (Wed) 09:00 Europe/Berlin" in offer.text  # moved
        assert "2026-12-02 (Wed) 02:00 Europe/Berlin" in offer.text  # kept
        assert buttons(offer) == {
            "tzm:Europe/Berlin": "Move 2 reminders to the same local time",
            "tzk": "Keep them at the same instant",
        }
        since = bot.telegram.mark()
        await bot.press(offer, "tzm:Europe/Berlin", user=ALICE)
        moved = await edited(bot, since)
        assert "Moved 2 reminders to the same local time in Europe/Berlin" in moved.text
        by_text = {d["text"]: d for d in reminder_documents(data_dir)}
        once, weekly = by_text["call mom"], by_text["weekly report"]
        assert once["due"]["zone"] == weekly["due"]["zone"] == "Europe/Berlin"
        assert once["series_at"] == "2026-12-02T08:00:00.000Z"  # 09:00 in Berlin
        assert weekly["series_at"] == "2026-12-07T08:00:00.000Z"
        # The job follows: nothing at 01:00 UTC any more, the reminder at 08:00 UTC.
        clock.advance(hours=24)  # Wednesday 01:00 UTC: 09:00 in Shanghai
        await bot.services.reminders.run(bot.application.bot)  # type: ignore[union-attr]
        assert delivered(bot, "call mom") == 0
        clock.advance(hours=7, minutes=1)
        await bot.services.reminders.run(bot.application.bot)  # type: ignore[union-attr]
        assert delivered(bot, "call mom") == 1


async def test_keeping_reminders_changes_nothing_and_a_stale_move_is_refused(
    start: Any, data_dir: Path
) -> None:
    async with start() as bot:
        await bot.say("/remind tomorrow 9am call mom", user=ALICE)
        before = reminder_documents(data_dir)
        [offer] = await bot.say("/timezone Berlin", user=ALICE)
        assert "A reminder here is set in another time zone" in offer.text
        since = bot.telegram.mark()
        await bot.press(offer, "tzk", user=ALICE)
        assert "same moments as before" in (await edited(bot, since)).text
        assert reminder_documents(data_dir) == before
        await bot.say("/timezone Tokyo", user=ALICE)
        since = bot.telegram.mark()
        await bot.press(offer, "tzm:Europe/Berlin", user=ALICE)  # the zone changed since
        [answer] = bot.telegram.find("answerCallbackQuery", since=since)
        assert "changed since" in answer.params["text"]
        assert reminder_documents(data_dir) == before


FORUM = -1001234567891


def zones_by_text(data_dir: Path) -> dict[str, str]:
    return {d["text"]: d["due"]["zone"] for d in reminder_documents(data_dir)}


async def test_in_a_forum_the_new_zone_offers_every_topic_s_reminders_and_each_moves_its_own(
    start: Any, data_dir: Path
) -> None:
    """The zone is the whole forum's, so the offer counts every topic's reminders; a member's
    press moves what they set, an administrator's the rest (the group rule)."""
    async with start(group_scope="topic") as bot:
        forum = bot.telegram.forum(FORUM)
        bot.telegram.topics[FORUM].update({5: "open", 7: "open"})
        bot.telegram.admins[FORUM] = {ALICE["id"]}
        await bot.say("/remind tomorrow 9am plan of five", user=ALICE, chat=forum, thread=5)
        await bot.say("/remind tomorrow 10am plan of seven", user=BOB, chat=forum, thread=7)
        await bot.say("/remind tomorrow 11am plan of all", user=ALICE, chat=forum)
        [offer] = await bot.say("/timezone Berlin", user=ALICE, chat=forum, thread=5)
        assert "3 reminders here are set in other time zones" in offer.text
        assert buttons(offer)["tzm:Europe/Berlin"] == "Move 3 reminders to the same local time"

        since = bot.telegram.mark()
        await bot.press(offer, "tzm:Europe/Berlin", user=BOB)  # a member: what he set
        moved = await edited(bot, since)
        assert "Moved 1 reminders" in moved.text and "plan of seven" in moved.text
        assert "2 set by others stay as they were" in moved.text
        assert "tzm:Europe/Berlin" in buttons(moved)  # still there, for the others
        assert zones_by_text(data_dir) == {
            "plan of five": "Asia/Shanghai",
            "plan of seven": "Europe/Berlin",
            "plan of all": "Asia/Shanghai",
        }
        since = bot.telegram.mark()
        await bot.press(offer, "tzm:Europe/Berlin", user=ALICE)  # an administrator: the rest
        moved = await edited(bot, since)
        assert "Moved 2 reminders" in moved.text and "set by others" not in moved.text
        assert buttons(moved) == {}
    assert set(zones_by_text(data_dir).values()) == {"Europe/Berlin"}
    by_text = {d["text"]: d for d in reminder_documents(data_dir)}
    assert by_text["plan of seven"]["series_at"] == "2026-12-02T09:00:00.000Z"  # 10:00 Berlin
    assert by_text["plan of all"]["namespace"] == f"chats/{FORUM}"


async def test_with_a_namespace_per_member_each_moves_their_own_reminders(
    start: Any, data_dir: Path
) -> None:
    """group_scope "user": every member's reminders in the group are offered, and each
    member's own namespace is theirs alone: the administrator moves hers, Bob his."""
    async with start(group_scope="user") as bot:
        group = bot.telegram.group()
        bot.telegram.admins[group["id"]] = {ALICE["id"]}
        await bot.say("/remind tomorrow 9am alice's plan", user=ALICE, chat=group)
        await bot.say("/remind tomorrow 10am bob's plan", user=BOB, chat=group)
        await bot.say("/remind tomorrow 8am bob's private plan", user=BOB)  # another chat
        [offer] = await bot.say("/timezone Berlin", user=ALICE, chat=group)
        assert "2 reminders here are set in other time zones" in offer.text
        since = bot.telegram.mark()
        await bot.press(offer, "tzm:Europe/Berlin", user=ALICE)
        moved = await edited(bot, since)
        assert "Moved 1 reminders" in moved.text and "1 set by others" in moved.text
        assert zones_by_text(data_dir)["bob's plan"] == "Asia/Shanghai"
        since = bot.telegram.mark()
        await bot.press(offer, "tzm:Europe/Berlin", user=BOB)
        assert "Moved 1 reminders" in (await edited(bot, since)).text
    assert zones_by_text(data_dir) == {
        "alice's plan": "Europe/Berlin",
        "bob's plan": "Europe/Berlin",
        "bob's private plan": "Asia/Shanghai",  # the zone of Bob's private chat did not change
    }


# -- the digest in the chat's zone -------------------------------------------------------------


async def test_a_berlin_group_gets_its_digest_at_nine_in_berlin_titled_as_the_group_s(
    start: Any, data_dir: Path
) -> None:
    async with start() as bot:
        group = bot.telegram.group(title="Kiez")
        bot.telegram.admins[group["id"]] = {ALICE["id"]}
        await bot.say("/timezone Berlin", user=ALICE, chat=group)
        await bot.say("/remember the bins go out on Thursday", user=ALICE, chat=group)
        [on] = await bot.say("/digest on", user=ALICE, chat=group)
        assert "2026-12-07 (Mon) 09:00 Europe/Berlin" in on.text  # not Shanghai's, not UTC
        digest = bot.services.digest
        assert digest is not None
        # Monday 09:00 in Shanghai (the configured zone): not this group's time.
        early = await digest.run(bot.application.bot, NEXT_MONDAY + timedelta(hours=1, minutes=5))
        assert early.sent == []
        # Monday 09:00 in Berlin (08:00 UTC): the group's report, once.
        due = NEXT_MONDAY + timedelta(hours=8, minutes=5)
        assert (await digest.run(bot.application.bot, due)).sent == [f"chats/{group['id']}"]
        assert (await digest.run(bot.application.bot, due)).sent == []
        [report] = [
            c for c in bot.telegram.find("sendMessage", chat_id=group["id"]) if "📬" in c.text
        ]
        assert report.text.startswith("📬 Memory digest of Kiez · 1 memories")
        # The JobQueue wakes at Berlin's 09:00 as well as at Shanghai's.
        [cron] = bot.application.job_queue.get_jobs_by_name("digest")
        after_shanghai = NEXT_MONDAY + timedelta(hours=2)
        assert cron.job.trigger.get_next_fire_time(None, after_shanghai) == NEXT_MONDAY + timedelta(
            hours=8
        )
        with MemoryStore(data_dir) as store:
            in_use = store.bot_documents().get("chat-zones")
        assert in_use is not None and in_use.value == {"zones": ["Europe/Berlin"]}
        assert json.dumps(in_use.value)  # a plain document, readable by another replica


async def test_without_the_optional_package_a_location_is_only_remembered(
    start: Any, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tzfpy missing (an import that fails): no location button is offered, a location is a
    memory as before, and one given to /timezone anyway is answered with what to do."""
    monkeypatch.setitem(sys.modules, "tzfpy", None)
    async with start() as bot:
        [shown] = await bot.say("/timezone", user=ALICE)
        assert "reply_markup" not in shown.params and "location" not in shown.text
        since = bot.telegram.mark()
        shared = bot.telegram.post(user=ALICE, location=BERLIN)
        [kept] = await bot.telegram.wait("sendMessage", since=since, chat_id=ALICE["id"])
        assert "📍" in kept.text and buttons(kept) == {}
        assert len(bot.memories("users/42")) == 1
        [told] = await bot.say("/timezone", user=ALICE, reply_to=shared)
        assert "tzfpy is not installed" in told.text and "/timezone Berlin" in told.text
        assert chat_zone(data_dir, ALICE["id"]) is None
