"""The dates a memory or a question names, read in the chat's time zone.

- ``date_named(content, now, zone)``: the local day (and time, when one was named) that a new
  memory speaks of, resolved when it is stored: "下周二下午三点看牙医" saved on 2026-12-01 is
  ``2026-12-08 15:00``. The phrase is read by the reminders' parser (``bot.core.when``), so a
  memory and a reminder understand the same words. Nothing is recorded when the text names no
  day of its own: a time alone ("standup is at 10:00"), a day the parser had to move because
  its time had passed ("今天交了房租" said in the evening), today itself (the memory's
  ``createdAt`` already says so), or a day the content spells out as a date (search reads
  those from the content). Every door reads it in the chat's zone (``/remember``, a note in
  plain words, the model's ``addMemory``), so the same words name the same day whoever stores
  them.
- ``day_asked(question, now, zone)``: the day a question asks about with a relative word
  ("today", "yesterday", "今天", "昨天", "前天"), so that "what did I save today" and
  "今天记了什么" find what was stored, or planned, that day (``on_day``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.core import timephrase
from bot.core.when import parse_reminder
from memory.model import Memory
from memory.text import created_terms, date_terms
from memory.timestamps import parse_time

_DAYS_BACK = (
    (re.compile(r"\bday before yesterday\b|前天|前日", re.IGNORECASE), 2),
    (re.compile(r"\byesterday\b|昨天|昨日|昨晚", re.IGNORECASE), 1),
    (re.compile(r"\btoday\b|\btonight\b|\bthis morning\b|今天|今日|今晚|今早", re.IGNORECASE), 0),
    (re.compile(r"\bday after tomorrow\b|后天|後天", re.IGNORECASE), -2),
    (re.compile(r"\btomorrow\b|明天|明日", re.IGNORECASE), -1),
)


def date_named(content: str, now: datetime, zone: ZoneInfo | Callable[[], ZoneInfo]) -> str | None:
    """The local ``YYYY-MM-DD[ HH:MM]`` that ``content`` names, or None (module docstring).

    ``zone`` may be how to read it (the chat's setting, a round trip to a shared store): it is
    read only when the content names a time at all, which the zone does not decide.
    """
    if callable(zone):
        if timephrase.read(content) is None:
            return None
        zone = zone()
    try:
        parsed = parse_reminder(content, now, zone)
    except ValueError:
        return None
    if parsed is None:
        return None
    due = parsed.deadline or parsed.due  # "周五之前交报告" speaks of Friday, not of the reminder
    if due.moved or due.repeat is not None:
        return None
    local = due.local()
    if local.date() == now.astimezone(zone).date():
        return None
    day = local.strftime("%Y-%m-%d")
    if created_terms(day)[0] in date_terms(content):
        return None  # spelled out in the content ("5月3日"): search reads it there
    return day if due.date_only else local.strftime("%Y-%m-%d %H:%M")


# A question about the memories themselves (what was saved, said, planned), not about the world:
# "what did I save today", "今天记了什么", "明天有什么安排" ask for a day's memories;
# "今天的天气怎么样" names a day but asks about the weather: searched as any other question.
_ABOUT_MEMORIES = re.compile(
    r"\b(sav|stor|remember|not|add|wr[io]t|told|tell|said|say|talk|chat|plan|schedul|agenda|"
    r"appointment|meeting|do\b|happen|on\b)|记|存|保存|添加|写|说|聊|安排|计划|日程|要做|做了|干了|约|会议|有什么事",
    re.IGNORECASE,
)
_FILLER = re.compile(r"[\W_]+")


def day_asked(question: str, now: datetime, zone: ZoneInfo) -> date | None:
    """The day a question about the memories names with a relative word ("today", "昨天"), or
    None: a question that only mentions the day ("今天的天气怎么样") is not about that day's
    memories. A question that is the day alone ("/recall today") is."""
    today = now.astimezone(zone).date()
    for pattern, back in _DAYS_BACK:
        if pattern.search(question):
            rest = _FILLER.sub("", pattern.sub("", question))
            if not rest or _ABOUT_MEMORIES.search(question):
                return today - timedelta(days=back)
            return None
    return None


def on_day(memories: Iterable[Memory], day: date, zone: ZoneInfo) -> list[Memory]:
    """The memories stored on ``day`` (local) or speaking of it, newest first."""
    wanted = day.isoformat()
    found = [
        m
        for m in memories
        if parse_time(m.created_at).astimezone(zone).date() == day or (m.date or "")[:10] == wanted
    ]
    return found[::-1]
