"""The dates a memory or a question names, read in the chat's time zone.

- ``date_named(content, now, zone)``: the local day (and time, when one was named) that a new
  memory speaks of, resolved when it is stored: "下周二下午三点看牙医" saved on 2026-12-01 is
  ``2026-12-08 15:00``. The phrase is read by the reminders' parser (``bot.core.when``), so a
  memory and a reminder understand the same words. Nothing is recorded when the text names no
  day of its own: a time alone ("standup is at 10:00"), a day the parser had to move because
  its time had passed ("今天交了房租" said in the evening), today itself (the memory's
  ``createdAt`` already says so), or a day the content spells out as a date (search reads
  those from the content).
- ``day_asked(question, now, zone)``: the day a question asks about with a relative word
  ("today", "yesterday", "今天", "昨天", "前天"), so that "what did I save today" and
  "今天记了什么" find what was stored, or planned, that day (``on_day``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from bot.core.when import parse_reminder
from memory.model import Memory, parse_time
from memory.text import created_terms, date_terms

_DAYS_BACK = (
    (re.compile(r"\bday before yesterday\b|前天|前日", re.IGNORECASE), 2),
    (re.compile(r"\byesterday\b|昨天|昨日|昨晚", re.IGNORECASE), 1),
    (re.compile(r"\btoday\b|\btonight\b|\bthis morning\b|今天|今日|今晚|今早", re.IGNORECASE), 0),
    (re.compile(r"\bday after tomorrow\b|后天|後天", re.IGNORECASE), -2),
    (re.compile(r"\btomorrow\b|明天|明日", re.IGNORECASE), -1),
)


def date_named(content: str, now: datetime, zone: ZoneInfo) -> str | None:
    """The local ``YYYY-MM-DD[ HH:MM]`` that ``content`` names, or None (module docstring)."""
    try:
        parsed = parse_reminder(content, now, zone)
    except ValueError:
        return None
    if parsed is None or parsed.due.moved or parsed.due.repeat is not None:
        return None
    local = parsed.due.local()
    if local.date() == now.astimezone(zone).date():
        return None
    day = local.strftime("%Y-%m-%d")
    if created_terms(day)[0] in date_terms(content):
        return None  # spelled out in the content ("5月3日"): search reads it there
    return day if parsed.due.date_only else local.strftime("%Y-%m-%d %H:%M")


def day_asked(question: str, now: datetime, zone: ZoneInfo) -> date | None:
    """The day a question names with a relative word ("today", "昨天"), or None."""
    today = now.astimezone(zone).date()
    for pattern, back in _DAYS_BACK:
        if pattern.search(question):
            return today - timedelta(days=back)
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
