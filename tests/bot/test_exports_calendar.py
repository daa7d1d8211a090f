"""``/export ics`` and ``/calendar`` through the real bot and the fake Bot API.

The file the bot sends and the feed its HTTP server answers (fetched with aiohttp's client)
are read back by ``icalendar`` and expanded by ``recurring-ical-events``: the occurrences of
the next year are the instants the bot will send each reminder at (its own ``next_after``
from the reminder kept in the store), across the daylight saving changes of Berlin.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import icalendar
import pytest
import recurring_ical_events
from bot_harness import ALICE, BOB, LI, Bot, StartBot

from bench.fakes.telegram_server import FakeBotAPI
from bot.chat.app import build_application
from bot.chat.running import serving
from bot.chat.webhook import inbox_server
from bot.config import parse_config
from bot.core import reminders
from bot.core.calendar_export import uid_of
from bot.core.reminder_record import Reminder
from memory.files import MemoryStore


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def occurrences(ics: bytes, start: datetime, end: datetime) -> dict[str, set[datetime]]:
    """Each event's occurrences between ``start`` and ``end``, as a calendar expands them."""
    found: dict[str, set[datetime]] = {}
    for event in recurring_ical_events.of(icalendar.Calendar.from_ical(ics)).between(start, end):
        found.setdefault(str(event["UID"]), set()).add(event.start.astimezone(UTC))
    return found


def sent_by_bot(reminder: Reminder, start: datetime, end: datetime) -> set[datetime]:
    """The instants the bot will send ``reminder`` at between ``start`` and ``end``."""
    found = set()
    at = reminder.next_at
    while at is not None and at < end:
        if at >= start:
            found.add(at)
        at = reminder.due.next_after(at) if reminder.due.repeat is not None else None
    return found


def kept(bot: Bot, namespace: str) -> list[Reminder]:
    return reminders.every(bot.store, namespace)


async def set_reminders(bot: Bot, user: dict[str, Any], *phrases: str, zone: str) -> None:
    await bot.say(f"/timezone {zone}", user=user)
    for phrase in phrases:
        [confirmed] = await bot.say(f"/remind {phrase}", user=user)
        assert "⏰" in confirmed.text, confirmed.text


async def export_ics(bot: Bot, user: dict[str, Any], chat: dict[str, Any] | None = None) -> Any:
    [document] = await bot.say("/export ics", user=user, chat=chat, method="sendDocument")
    return document


def check_against_the_bot(bot: Bot, namespace: str, ics: bytes) -> dict[str, set[datetime]]:
    start = datetime.now(UTC)
    end = start + timedelta(days=366)
    found = occurrences(ics, start, end)
    live = kept(bot, namespace)
    assert live
    for reminder in live:
        expected = sent_by_bot(reminder, start, end)
        assert expected
        assert found[uid_of(reminder)] == expected, reminder.text
    assert set(found) == {uid_of(r) for r in live}
    return found


async def test_export_ics_sends_the_chat_s_reminders_as_the_bot_will_send_them(bot: Bot) -> None:
    await set_reminders(
        bot,
        ALICE,
        "every monday 9:00 weekly report",
        "every weekday 7:30 run",
        "every day at 2:30 water the plants",  # skipped on the spring-forward Sunday: 03:30
        "tomorrow 10am dentist",
        zone="Europe/Berlin",
    )
    document = await export_ics(bot, ALICE)
    name, content = document.files["document"]
    assert name == "reminders.ics"
    assert "📅 4 reminders as a calendar" in document.text and "/calendar" in document.text
    found = check_against_the_bot(bot, "users/42", content)
    assert sum(len(times) for times in found.values()) > 52 + 250 + 360
    calendar = icalendar.Calendar.from_ical(content)
    assert str(calendar["X-WR-CALNAME"]) == "Reminders"
    tzids = {str(event["DTSTART"].params.get("TZID")) for event in calendar.walk("VEVENT")}
    assert tzids == {"Europe/Berlin"}
    # a second export has the same events (the same UIDs): a calendar updates, never doubles
    again = icalendar.Calendar.from_ical((await export_ics(bot, ALICE)).files["document"][1])
    assert [e["UID"] for e in again.walk("VEVENT")] == [e["UID"] for e in calendar.walk("VEVENT")]


async def test_export_ics_in_chinese_and_with_nothing_to_export(bot: Bot) -> None:
    [empty] = await bot.say("/export ics", user=LI)
    assert "还没有可以放进日历的提醒" in empty.text
    await set_reminders(bot, LI, "每个工作日 7:30 跑步", "每月1号 交房租", zone="Asia/Shanghai")
    document = await export_ics(bot, LI)
    assert "2 个提醒，日历格式" in document.text
    content = document.files["document"][1]
    check_against_the_bot(bot, "users/44", content)
    calendar = icalendar.Calendar.from_ical(content)
    assert str(calendar["X-WR-CALNAME"]) == "提醒"
    assert {str(e["SUMMARY"]) for e in calendar.walk("VEVENT")} == {"跑步", "交房租"}
    [usage] = await bot.say("/export pdf", user=LI)
    assert "/export md" in usage.text and "/export ics" in usage.text


async def test_calendar_without_an_http_server_says_how_to_enable_one(bot: Bot) -> None:
    [reply] = await bot.say("/calendar", user=ALICE)
    assert "no web server" in reply.text and "[calendar] listen" in reply.text
    [reply] = await bot.say("/calendar", user=LI)
    assert "没有可以提供日历链接的网页服务" in reply.text


@pytest.fixture
async def feed_bot(start_bot: StartBot) -> AsyncIterator[Bot]:
    port = free_port()
    calendar = {"listen": "127.0.0.1", "port": port, "public_url": f"http://127.0.0.1:{port}/"}
    async with start_bot(sections={"calendar": calendar}) as running:
        yield running


async def fetch(url: str, **headers: str) -> tuple[int, str, bytes, Any]:
    async with aiohttp.ClientSession() as http, http.get(url, headers=headers) as response:
        return response.status, response.content_type, await response.read(), response.headers


def link_in(text: str) -> str:
    [url] = [word for word in text.split() if word.startswith("http://")]
    return url


async def test_calendar_gives_a_private_feed_url_that_reset_revokes(feed_bot: Bot) -> None:
    bot = feed_bot
    await set_reminders(bot, ALICE, "every monday 9:00 weekly report", zone="Europe/Berlin")
    [reply] = await bot.say("/calendar", user=ALICE)
    assert "Keep it private" in reply.text
    url = link_in(reply.text)
    token = url.rsplit("/", 1)[1].removesuffix(".ics")
    assert len(token) == 43 and url.startswith(f"{bot.config.calendar.public_url}calendar/")
    status, kind, body, headers = await fetch(url)
    assert (status, kind) == (200, "text/calendar")
    check_against_the_bot(bot, "users/42", body)
    assert b"REFRESH-INTERVAL" in body
    # the same as /export ics, the same events
    document = await export_ics(bot, ALICE)
    exported = icalendar.Calendar.from_ical(document.files["document"][1]).walk("VEVENT")
    served = icalendar.Calendar.from_ical(body).walk("VEVENT")
    assert [e.to_ical() for e in exported] == [e.to_ical() for e in served]
    # an unchanged feed: 304 to a calendar that has it
    status, _, _, _ = await fetch(url, **{"If-None-Match": headers["ETag"]})
    assert status == 304
    # asked again: the same link; Bob gets his own, which shows none of Alice's reminders
    [again] = await bot.say("/calendar", user=ALICE)
    assert link_in(again.text) == url
    [bobs] = await bot.say("/calendar", user=BOB)
    bob_url = link_in(bobs.text)
    assert bob_url != url
    status, _, body, _ = await fetch(bob_url)
    assert status == 200 and b"VEVENT" not in body
    # unknown tokens, other shapes, other paths: one and the same 404, no hint
    base = url.rsplit("/", 1)[0]
    not_found = await fetch(f"{base}/{'A' * 43}.ics")
    assert not_found[0] == 404
    for other in (f"{base}/{token}", f"{base}/x.ics", f"{base}/../healthz", url + "x"):
        status, _, body, _ = await fetch(other)
        assert (status, body) == (404, not_found[2])
    # reset: a new link; the old one is gone at once
    [reset] = await bot.say("/calendar reset", user=ALICE)
    assert "the old one no longer works" in reset.text
    new_url = link_in(reset.text)
    assert new_url != url
    assert (await fetch(url))[0] == 404
    assert (await fetch(new_url))[0] == 200
    [usage] = await bot.say("/calendar please", user=ALICE)
    assert "/calendar reset" in usage.text


async def test_a_group_s_feed_is_the_group_s_and_only_admins_reset_it(feed_bot: Bot) -> None:
    bot = feed_bot
    group = bot.telegram.group(-100777, "Family")
    bot.telegram.admins[group["id"]] = {ALICE["id"]}
    await set_reminders(bot, ALICE, "every friday 17:00 pizza", zone="Asia/Shanghai")
    # in the group: set there, shared by its members
    await bot.say("/remind every friday 18:00 team call", user=ALICE, chat=group)
    [reply] = await bot.say("/calendar", user=BOB, chat=group)
    url = link_in(reply.text)
    status, _, body, _ = await fetch(url)
    assert status == 200
    calendar = icalendar.Calendar.from_ical(body)
    assert str(calendar["X-WR-CALNAME"]) == "Reminders · Family"
    assert [str(e["SUMMARY"]) for e in calendar.walk("VEVENT")] == ["team call"]
    [refused] = await bot.say("/calendar reset", user=BOB, chat=group)
    assert "Only the group's administrators" in refused.text
    assert (await fetch(url))[0] == 200
    [reset] = await bot.say("/calendar reset", user=ALICE, chat=group)
    assert (await fetch(url))[0] == 404 and (await fetch(link_in(reset.text)))[0] == 200


async def test_the_feed_in_chinese(feed_bot: Bot) -> None:
    await set_reminders(feed_bot, LI, "每周一 9:00 周会", zone="Asia/Shanghai")
    [reply] = await feed_bot.say("/calendar", user=LI)
    assert "以订阅方式添加" in reply.text
    status, _, body, _ = await fetch(link_in(reply.text))
    assert status == 200
    calendar = icalendar.Calendar.from_ical(body)
    assert str(calendar["X-WR-CALNAME"]) == "提醒"
    check_against_the_bot(feed_bot, "users/44", body)


async def test_webhook_mode_serves_the_feed_on_the_webhook_s_server(
    telegram: FakeBotAPI, tmp_path: Any
) -> None:
    port = free_port()
    config = parse_config(
        {
            "data_dir": str(tmp_path / "data"),
            "telegram": {
                "token": telegram.token,
                "base_url": telegram.base_url,
                "flood_control": False,
                "webhook_url": f"http://127.0.0.1:{port}/hook",
                "listen": "127.0.0.1",
                "port": port,
            },
        },
        base_dir=tmp_path,
        environ={},
    )
    application = build_application(config, MemoryStore(config.data_dir), None, jobs=False)
    async with serving(application, webhook=inbox_server(application)):
        bot = Bot(telegram, config, application.bot_data["services"].store)
        await set_reminders(bot, ALICE, "every monday 9:00 report", zone="Europe/Berlin")
        [reply] = await bot.say("/calendar", user=ALICE)
        url = link_in(reply.text)
        assert url.startswith(f"http://127.0.0.1:{port}/calendar/")
        status, kind, body, _ = await fetch(url)
        assert (status, kind) == (200, "text/calendar")
        check_against_the_bot(bot, "users/42", body)
        assert (await fetch(f"http://127.0.0.1:{port}/calendar/{'B' * 43}.ics"))[0] == 404


def test_calendar_config_is_checked_key_by_key(tmp_path: Any) -> None:
    from bot.errors import ConfigError

    def load(**calendar: Any) -> Any:
        return parse_config({"calendar": calendar}, base_dir=tmp_path, environ={})

    assert load().calendar.enabled
    with pytest.raises(ConfigError, match=r"calendar.public_url must be set"):
        load(listen="127.0.0.1")
    with pytest.raises(ConfigError, match=r"calendar.public_url must be an http"):
        load(public_url="ftp://example.com")
    with pytest.raises(ConfigError, match=r"calendar.port"):
        load(port=0)
    with pytest.raises(ConfigError, match=r"calendar.colour"):
        load(colour="red")
