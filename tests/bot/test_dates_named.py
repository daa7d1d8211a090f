"""Dates a memory names, resolved when it is stored, and questions about a day (issue 15)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot_harness import ALICE, LI, Bot

from bot.core import adding, operations
from bot.core.dating import date_named, day_asked
from memory.files import MemoryStore

SHANGHAI = ZoneInfo("Asia/Shanghai")
SAVED = datetime(2026, 12, 1, 10, 0, tzinfo=SHANGHAI)


def test_a_relative_date_is_resolved_and_found_by_searches_for_that_date(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/1")
        ns.add("牙医诊所在人民路")  # another memory, of another day
        done = adding.remember(ns, "下周二下午三点看牙医", zone=SHANGHAI, now=SAVED)
        memory = done.memory
        assert memory is not None and memory.content == "下周二下午三点看牙医"
        assert memory.date == "2026-12-08 15:00"
        for question in ["12月8日", "what is on December 8?", "2026-12-08"]:
            assert ns.search(question, 1)[0].memory.id == memory.id, question
        store.close()
        with MemoryStore(tmp_path) as again:  # kept on disk, beside the article's keys
            [record] = [r for r in again.namespace("users/1").export() if "date" in r]
            assert record["date"] == "2026-12-08 15:00"


def test_no_date_is_recorded_for_text_that_names_no_day_of_its_own() -> None:
    for text in [
        "standup is at 10:00",
        "Password: hunter2",
        "my code is in D:\\projects",
        "小王的生日是5月3日",  # spelled out: search reads it from the content
        "今天上午交了房租",
        "车停在B2层 23号",  # a parking spot, not the 23rd
        "我住在3号楼502",
        "the meeting room is on the 14th floor",
    ]:
        assert date_named(text, SAVED, SHANGHAI) is None, text
    assert date_named("昨天去了医院", SAVED, SHANGHAI) == "2026-11-30"
    assert date_named("next Tuesday 3pm dentist", SAVED, SHANGHAI) == "2026-12-08 15:00"


async def test_the_date_is_shown_and_questions_about_today_find_what_was_saved(bot: Bot) -> None:
    before = date_named("下周二下午三点看牙医", datetime.now(UTC), ZoneInfo("UTC"))
    [reply] = await bot.say("/remember 下周二下午三点看牙医", user=LI)
    after = date_named("下周二下午三点看牙医", datetime.now(UTC), ZoneInfo("UTC"))
    shown = re.search(r"📅 ([\d-]+ [\d:]+)", reply.text)
    assert shown is not None and shown[1] in {before, after}
    day = shown[1][:10]
    month, date = int(day[5:7]), int(day[8:10])
    [found] = await bot.say(f"/recall {month}月{date}日", user=LI)
    assert "看牙医" in found.text
    await bot.say("/remember the plumber fixed the sink", user=ALICE)
    [found] = await bot.say("/recall what did I save today", user=ALICE)
    assert "plumber" in found.text
    [found] = await bot.say("/recall 今天记了什么", user=LI)
    assert "看牙医" in found.text


def test_recall_about_yesterday_does_not_list_today(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/1")
        ns.add("the plumber fixed the sink")
        assert operations.recall(ns, "what did I save yesterday") == []
        assert [m.content for m in operations.recall(ns, "today")] == ["the plumber fixed the sink"]


def test_only_questions_about_the_memories_of_a_day_are_read_as_that_day() -> None:
    now = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)
    asked = {
        "今天记了什么": "2026-12-01",
        "what did I save today": "2026-12-01",
        "today": "2026-12-01",
        "昨天说了什么": "2026-11-30",
        "明天有什么安排": "2026-12-02",
        "what did we talk about yesterday?": "2026-11-30",
    }
    for question, day in asked.items():
        found = day_asked(question, now, SHANGHAI)
        assert found is not None and found.isoformat() == day, question
    for question in ("今天的天气怎么样", "what's the weather tomorrow", "today is sunny"):
        assert day_asked(question, now, SHANGHAI) is None, question
