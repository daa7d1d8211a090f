"""When a reminder is due: what people type ("tomorrow 9am", "下周二下午三点") as instants.

The code, never the language model, turns a phrase into a time, in the chat's own zone:

- ``parse_reminder(text, now, zone)`` reads ``/remind``'s argument or a free-text request
  ("remind me tomorrow at 9 to call mom", "提醒我明天早上9点给妈妈打电话") and returns a
  ``Parsed``: the ``Due`` it means and the text of the reminder, or ``None`` when it cannot be
  understood (the door then answers with examples; it never guesses).
- ``resolve(zone, now, local=..., offset_minutes=..., repeat=...)`` is the model's way in (the
  ``scheduleReminder`` tool): a local date-time, a relative offset or a repeat rule, checked and
  turned into a ``Due`` by the same code.

A ``Due`` (``bot.core.due``) keeps the instant together with the zone and the local wall time
it was asked for, so that a repeat follows the wall clock. Offsets ("in 2 hours") are counted
in UTC: real time, not wall-clock time.

Reading phrases: our own rules (``bot.core.timephrase``), not a library. Measured on the phrase
set of ``bench/reminder_phrases.py`` (235 phrases; ``python -m bench.reminder_bench``): ours
235/235 (instant, text and rule; a batch written blind before its run scored 74/77). The
libraries, scored on the instant alone and generously (``python -m bench.reminder_libraries``):
jionlp 1.5.31 77/114 of the Chinese (68%: 三点一刻 read as 03:15 today, passed; a weekly
rule's first point in the past; 每个工作日 as "every day"; full-width 12月24日 not found, so
given ASCII), dateparser 1.5.0 66/121 of the English (55%), parsedatetime 2.6 74/121 (61%).
jionlp would also add ~170 MB (jiojio), print on import and log tracebacks to stderr. None of
them reads a repeat rule or separates the reminder's text, which we need anyway, so wrapping
one would add a dependency and rules to undo its readings without a gain in accuracy.

Readings where people differ (the confirmation always shows the date, so it can be fixed):
"next Friday" is the Friday of next week, as 下周五; a bare weekday is the next such day
(today if its time is still ahead); "in 3 days", "三天后" are that many days on at the same
local time; a day without a time is at ``default_hour`` (``date_only``); an hour without am/pm
("at 8", "三点") is the next time the clock shows it, and with a day named 1-6 is p.m.
("tomorrow at 3" is 15:00), but a zero-padded hour is the 24-hour clock's, as 13-23 and 00
are ("02:30", "tomorrow 07:05" and "每天02:30" are 02:30 and 07:05, said at any time);
晚上12点 and "midnight" are 00:00 of the next day; 每隔一天 is every other day, 每隔三天
every three days. A part of today named without a clock time ("tonight", "this evening",
今晚, 今天晚上, "this afternoon", "later today", 今天晚些时候, or a bare 晚上 said in the
evening) is its default hour (20:00, 15:00, ``default_hour``) while that is ahead; said later,
while the part lasts, it is the next half hour at least 30 minutes ahead ("tonight" at 21:29
is 22:00, at 23:40 it is 00:30), never the next day's; only once the part is over ("this
afternoon" at 17:45) is it the next day's, and the reply says the time had passed.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import cast
from zoneinfo import ZoneInfo

from bot.core import timephrase
from bot.core.due import Due, Frequency, Repeat, occurrences, wall_time
from bot.core.timewords import LAST_DAY


@dataclass(frozen=True)
class Parsed:
    """A reminder phrase understood: when, and what to remind of (may be empty: a reply's);
    for a deadline ("before Friday"), ``due`` is ahead of it and ``deadline`` the time named."""

    due: Due
    text: str
    deadline: Due | None = None


def _monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _add_months(day: date, months: int, wanted: int | None = None) -> date:
    total = day.month - 1 + months
    year, month = day.year + total // 12, total % 12 + 1
    return date(year, month, min(wanted or day.day, calendar.monthrange(year, month)[1]))


REQUEST = re.compile(
    r"(?<![a-z])(?:remind\s+(?:me|us)|set\s+(?:a\s+|me\s+a\s+|an?\s+)?(?:reminder|alarm)"
    r"|add\s+a\s+reminder|reminder\s*:|don'?t\s+let\s+me\s+forget)(?![a-z])"
    r"|提醒我|提醒一下|提醒下|别忘了提醒|记得提醒|到时提醒|设(?:置)?一?个?提醒|定一?个?提醒|叫我|喊我"
)
# Questions about reminders, or asking to be told something now ("remind me what X is").
NOT_REQUEST = re.compile(
    r"^(?:did|do|does|when|why|how|what|where|who|which|have|has|had|is|are|was|were|whats"
    r"|what's)(?![a-z])"
    r"|remind\s+(?:me|us)\s+(?:what|where|who|which|whether|if|how|why|when)(?![a-z])"
    r"|提醒过|提醒了吗|提醒了没|有没有提醒|什么是提醒|提醒是什么|怎么提醒|如何提醒|为什么|是什么$"
)


def asks_for_reminder(text: str) -> bool:
    """Whether a free-text message asks for a reminder ("remind me ...", "提醒我 ...").

    A question about reminders ("when did you remind me?", "what is a reminder") or a request
    to be told something now ("remind me what my wifi password is") is not one.
    """
    said = timephrase.normalise(text).strip().lower()
    said = re.sub(r"^(?:please|pls|hey|hi|ok|okay)[\s,]+", "", said)
    if not REQUEST.search(said) or NOT_REQUEST.search(said):
        return False
    # "你能提醒我明天交房租吗" asks for one; "你提醒我交房租了吗" asks about one.
    return not re.search(r"(?:了|过)(?:吗|没有?)[?？\s]*$", said)


def parse_reminder(
    text: str, now: datetime, zone: ZoneInfo, *, default_hour: int = 9
) -> Parsed | None:
    """``text`` ("tomorrow 9am call mom", "remind me in 2 hours to ...") as a reminder, or None.

    ``now`` is aware; ``default_hour`` is the local hour of a phrase that names a day only.
    A leading request ("remind me", "提醒我", "别忘了提醒我") and joining words ("to", "that")
    are not part of the reminder's text.

    A deadline ("before Friday", "周五之前", "before 8am") is reminded of ahead of it: the day
    before at ``default_hour`` (or the hour a day names), an hour before a clock time
    (``Due.ahead_of``), ``Parsed.deadline`` keeping the time named; everything that reads times
    (``/remind``, the reminder offers of ``bot.core.plans``) reads it so.

    A time of day that has passed (today, or a weekday or a date without a year that is
    today) is moved to its next occurrence with ``moved=True``. A time the phrase pins in the
    past ("yesterday 9am", "2020-01-01", "last Monday") is returned as it is, with ``at`` not
    after ``now``: the caller refuses it and says the time has passed (it is not a guess).
    """
    if now.tzinfo is None:
        raise ValueError("now must be aware")
    reading = timephrase.read(text)
    if reading is None:
        return None
    try:
        due = _due(reading, now, zone, default_hour)
    except (OverflowError, ValueError):
        return None  # a date beyond the calendar (year 9999 and on): no reminder can be due
    if due is None:
        return None
    if reading.before and due.repeat is None:
        return Parsed(due.ahead_of(), reading.text, deadline=due)
    return Parsed(due, reading.text)


MAX_DAYS = 5 * 366  # "in 99999 years" is not a reminder: at most five years ahead
MAX_AHEAD = timedelta(days=MAX_DAYS)


def _clock(reading: timephrase.Reading, day_given: bool) -> tuple[int, int, int, bool] | None:
    """(hour, minute, days to add, ambiguous) of the reading's clock, or ``None`` if invalid.

    ``ambiguous``: an hour from 1 to 12 with no am/pm and no part of the day ("at 8", "三点"),
    not zero-padded ("08:00" is 08:00, as 13-23 and 00 are: the 24-hour clock).
    """
    hour, minute, period = reading.hour, reading.minute, reading.period
    if hour is None:
        if period is None:
            return None
        shift = 1 if period == "midnight" else 0
        return timephrase.PERIOD_DEFAULT[period], 0, shift, False
    if hour > 24 or minute > 59 or (hour == 24 and minute):
        return None
    if hour == 24:
        return 0, 0, 1, False
    if reading.meridiem == "am":
        return (
            (None if hour > 12 else (hour % 12, minute, 0, False))
            if hour
            else (0, minute, 0, False)
        )
    if reading.meridiem == "pm":
        return (hour % 12 + 12 if hour <= 12 else hour), minute, 0, False
    if period in ("dawn", "morning"):
        return (0 if hour == 12 and period == "dawn" else hour), minute, 0, False
    if period == "noon":
        return (hour + 12 if 1 <= hour <= 4 else hour), minute, 0, False
    if period in ("afternoon", "dusk"):
        return (hour + 12 if hour < 12 else hour), minute, 0, False
    if period in ("evening", "night", "midnight"):
        if hour in (0, 12):
            return 0, minute, 1, False
        if hour <= 4:
            return hour, minute, 1, False
        return (hour + 12 if hour < 12 else hour), minute, 0, False
    if 1 <= hour <= 12 and not reading.zero_padded:
        # With a day named, "3" is 15:00 and "8" is 08:00 (nobody sets 3 a.m. by "at 3").
        return (hour + 12 if hour <= 6 else hour), minute, 0, not day_given
    # The 24-hour clock: "02:30" (zero-padded), 13-23, 00: exactly that time of day.
    return hour, minute, 0, False


def _due(
    reading: timephrase.Reading, now: datetime, zone: ZoneInfo, default_hour: int
) -> Due | None:
    local_now = now.astimezone(zone)
    today = local_now.date()
    r = reading
    has_day_part = any(
        x is not None for x in (r.offset_days, r.offset_months, r.day_delta, r.weekday, r.day)
    )
    has_clock = r.hour is not None or r.period is not None
    if (r.offset_minutes or 0) > MAX_DAYS * 1440 or (r.offset_days or 0) > MAX_DAYS:
        return None
    if (r.offset_months or 0) > MAX_DAYS // 28:
        return None
    if r.offset_minutes is not None:
        if has_day_part or has_clock or r.frequency or r.offset_minutes <= 0:
            return None
        at = (now.astimezone(UTC) + timedelta(minutes=r.offset_minutes)).replace(microsecond=0)
        return Due(at, zone, at.astimezone(zone).time().replace(tzinfo=None))
    kinds = [
        r.offset_days is not None,
        r.offset_months is not None and r.day is None,
        r.day_delta is not None,
        r.weekday is not None and r.frequency is None,
        r.day is not None,
    ]
    if sum(kinds) > 1 or (r.year_shift is not None and (r.day is None or r.month is None)):
        return None  # two days named, or "next year" with no date in it
    # The day: `fixed` when the phrase pins it; otherwise it is the next that fits.
    day: date = today
    fixed = True
    weekday_next = month_day_next = date_next = False
    if r.offset_days is not None:
        day = today + timedelta(days=r.offset_days)
    elif r.offset_months is not None and r.day is None:
        day = _add_months(today, r.offset_months)
    elif r.day_delta is not None:
        day = today + timedelta(days=r.day_delta)
        fixed = r.day_delta != 0
    elif r.weekday is not None and r.frequency is None:
        if r.week_shift is None:
            day = today + timedelta(days=(r.weekday - today.weekday()) % 7)
            weekday_next = True
        else:
            day = _monday(today) + timedelta(days=7 * r.week_shift + r.weekday)
    elif r.day is not None and r.frequency is None:
        found = _date(r, today)
        if found is None:
            return None
        day, month_day_next, date_next = found
    else:
        fixed = False
    clock = _clock(r, day_given=fixed or weekday_next or month_day_next or date_next)
    date_only = clock is None and r.hour is None and r.period is None
    offset = r.offset_days is not None or (r.offset_months is not None and r.day is None)
    if clock is None and date_only and offset:
        # "in 3 days", "两周后": that many calendar days on, at the same local time.
        clock, date_only = (local_now.hour, local_now.minute, 0, False), False
    if clock is None:
        if not date_only or not 0 <= default_hour <= 23:
            return None
        hour, minute, shift, ambiguous = default_hour, 0, 0, False
    else:
        hour, minute, shift, ambiguous = clock
    wall = time(hour, minute)
    if r.frequency is not None:
        return _first_of_series(r, now, zone, wall, day if has_day_part else today, date_only)

    def at_on(d: date) -> datetime:
        return wall_time(d + timedelta(days=shift), wall, zone)

    at = at_on(day)
    if at <= now and (still := _later_today(r, local_now, zone, has_day_part)) is not None:
        return still
    if ambiguous and at <= now and hour < 12:
        # "at 8" said at noon: 20:00 today, the next time the clock says 8.
        wall = time(hour + 12, minute)
        at = at_on(day)
    # Passed: a time today (said or implied), a weekday that is today, or a date without a
    # year that is today, moves to its next occurrence; a day the phrase pins stays, passed.
    moves = not fixed or weekday_next or month_day_next or date_next
    if at > now or not moves:
        return Due(at, zone, wall, None, date_only, False)
    if not fixed:
        day += timedelta(days=1)
    elif weekday_next:
        day += timedelta(days=7)
    elif month_day_next:
        later = _date(r, day + timedelta(days=1))
        if later is None:
            return None
        day = later[0]
    else:
        day = _add_months(day, 12)
    if ambiguous:
        wall = time(hour, minute)  # "at 8" said at 21:00: tomorrow 08:00, the next 8 o'clock
    return Due(at_on(day), zone, wall, None, date_only, True)


SOON_MINUTES = 30  # "tonight" at 21:29: the next half hour at least this far ahead, 22:00


def _later_today(
    r: timephrase.Reading, local_now: datetime, zone: ZoneInfo, has_day_part: bool
) -> Due | None:
    """A part of today named without a clock time, said after its default hour but while it
    lasts ("tonight" at 21:29, "this afternoon" at 16:10, 晚上 at 22:00, "later today" at
    15:00): the next half hour at least ``SOON_MINUTES`` ahead (22:00, 17:00, 23:00, 16:00),
    if that is before the part is over (``PERIOD_END``: noon for the morning, 18:00 for the
    afternoon, 01:00 for the night, the day's end for "today"); None otherwise (the part is
    over: the next day's, as before)."""
    if r.hour is not None or r.frequency is not None or (has_day_part and r.day_delta != 0):
        return None
    if r.period is not None:
        end = timephrase.PERIOD_END.get(r.period)
    else:
        end = timephrase.DAY_END if r.day_delta == 0 else None
    minutes = local_now.hour * 60 + local_now.minute + SOON_MINUTES
    soon = -(-minutes // 30) * 30
    if end is None or soon > end:
        return None
    day = local_now.date() + timedelta(days=soon // 1440)
    wall = time(soon % 1440 // 60, soon % 60)
    return Due(wall_time(day, wall, zone), zone, wall)


def _date(r: timephrase.Reading, today: date) -> tuple[date, bool, bool] | None:
    """The date of a reading's year/month/day, with whether it is the next such day (no
    month: ``month_day_next``; no year: ``date_next``); ``None`` if it is no date."""
    assert r.day is not None
    if r.day == LAST_DAY:  # "by the end of the month", 下个月底
        first = _add_months(date(today.year, today.month, 1), 1 if r.month == -1 else 0, 1)
        last = calendar.monthrange(first.year, first.month)[1]
        return date(first.year, first.month, last), False, False
    if r.month is None or r.month == 0:  # "15号", "本月15号": this month's, else the next
        if r.month == 0:
            return _valid(today.year, today.month, r.day, today, False, False)
        for ahead in range(0, 13):
            candidate = _add_months(date(today.year, today.month, 1), ahead, 1)
            last = calendar.monthrange(candidate.year, candidate.month)[1]
            if r.day <= last and date(candidate.year, candidate.month, r.day) >= today:
                return date(candidate.year, candidate.month, r.day), True, False
        return None
    if r.month == -1:  # next month
        nxt = _add_months(date(today.year, today.month, 1), 1, 1)
        return _valid(nxt.year, nxt.month, r.day, today, False, False)
    if r.year is not None or r.year_shift is not None:
        year = r.year if r.year is not None else today.year + (r.year_shift or 0)
        return _valid(year, r.month, r.day, today, False, False)
    found = _valid(today.year, r.month, r.day, today, False, True)
    if found is not None and found[0] < today:
        found = _valid(today.year + 1, r.month, r.day, today, False, True)
    return found


def _valid(
    year: int, month: int, day: int, today: date, month_day_next: bool, date_next: bool
) -> tuple[date, bool, bool] | None:
    try:
        return date(year, month, day), month_day_next, date_next
    except ValueError:
        return None


def _first_of_series(
    r: timephrase.Reading, now: datetime, zone: ZoneInfo, wall: time, start: date, date_only: bool
) -> Due | None:
    frequency = cast(Frequency, r.frequency)
    weekdays = r.weekdays
    if frequency == "weekly" and not weekdays and r.weekday is not None:
        weekdays = (r.weekday,)
    day = r.day if frequency in ("monthly", "yearly") else None
    if frequency == "yearly" and r.month is not None and r.month > 0 and r.day is not None:
        # The series is anchored on its date this year (or next): the rule keeps only the day.
        found = _date(r, start)
        if found is None:
            return None
        start = found[0]
    elif frequency == "yearly" and (r.month is not None or r.day is not None):
        return None
    rule = Repeat(frequency, r.interval, weekdays, day)
    if rule.problem():
        return None
    # The first occurrence on or after `start` that is still ahead anchors the series.
    probe = Repeat(frequency, 1, weekdays, day)
    for candidate in occurrences(probe, start, start):
        at = wall_time(candidate, wall, zone)
        if at > now:
            return Due(at, zone, wall, rule, date_only, False)
    return None  # pragma: no cover - _occurrences is endless


LOCAL = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})?(?:[ T]?(\d{1,2}:\d{2})(?::(\d{2}))?)?\s*$")


def resolve(
    zone: ZoneInfo,
    now: datetime,
    *,
    local: str | None = None,
    offset_minutes: int | None = None,
    repeat: Repeat | None = None,
    default_hour: int = 9,
) -> Due:
    """The model's reminder time: a local ``YYYY-MM-DD HH:MM`` (or date), an offset, a rule.

    ``ValueError`` with a message fit for the model when none or several are given, or the
    value is malformed. ``local`` may go with ``repeat`` (the time of day, and the first day);
    a time of day alone (``HH:MM``) is its next occurrence; a local time that has passed is
    refused, never moved.
    """
    if now.tzinfo is None:
        raise ValueError("now must be aware")
    given = [local is not None, offset_minutes is not None]
    if not any(given) and repeat is None:
        raise ValueError("give one of: local (YYYY-MM-DD HH:MM), offset_minutes, or repeat")
    if all(given) or (offset_minutes is not None and repeat is not None):
        raise ValueError("give only one of local or offset_minutes (local may go with repeat)")
    if offset_minutes is not None:
        if isinstance(offset_minutes, bool) or not isinstance(offset_minutes, int):
            raise ValueError("offset_minutes must be a whole number of minutes")
        if not 1 <= offset_minutes <= MAX_DAYS * 1440:
            raise ValueError("offset_minutes must be from 1 to 5 years in minutes")
        # In UTC: aware arithmetic in a zone would add wall-clock time, wrong across DST.
        at = (now.astimezone(UTC) + timedelta(minutes=offset_minutes)).replace(microsecond=0)
        return Due(at, zone, at.astimezone(zone).time().replace(tzinfo=None))
    if repeat is not None:
        problem = repeat.problem() if isinstance(repeat, Repeat) else "repeat must be a rule"
        if problem:
            raise ValueError(f"bad repeat rule: {problem}")
    today = now.astimezone(zone).date()
    day: date | None = None
    wall: time | None = None
    if local is not None:
        match = LOCAL.match(local) if isinstance(local, str) else None
        if match is None or not (match.group(1) or match.group(2)):
            raise ValueError(
                f"local must be 'YYYY-MM-DD HH:MM', 'YYYY-MM-DD' or 'HH:MM', not {local!r}"
            )
        try:
            day = date.fromisoformat(match.group(1)) if match.group(1) else None
            if match.group(2):
                hour, minute = (int(x) for x in match.group(2).split(":"))
                wall = time(hour, minute, int(match.group(3) or 0))
        except ValueError as e:
            raise ValueError(f"local {local!r} is not a real date and time: {e}") from e
    if day is not None and (day - today).days > MAX_DAYS:
        raise ValueError(f"{local} is too far ahead: a reminder is at most 5 years ahead")
    if day is not None and day < today and repeat is None:
        shown = now.astimezone(zone).strftime("%Y-%m-%d %H:%M")
        raise ValueError(f"{local} has passed: it is now {shown} in {zone.key}")
    date_only = wall is None
    if wall is None:
        if not 0 <= default_hour <= 23:
            raise ValueError("default_hour must be 0 to 23")
        wall = time(default_hour)
    if repeat is not None:
        start = day or today
        if start < today:
            raise ValueError(f"the first day {start} has passed (today is {today} in {zone.key})")
        probe = Repeat(repeat.frequency, 1, repeat.weekdays, repeat.day)
        for candidate in occurrences(probe, start, start):
            at = wall_time(candidate, wall, zone)
            if at > now:
                return Due(at, zone, wall, repeat, date_only)
    if day is None:
        at = wall_time(today, wall, zone)
        if at <= now:
            at = wall_time(today + timedelta(days=1), wall, zone)
        return Due(at, zone, wall, None, date_only)
    at = wall_time(day, wall, zone)
    if at <= now:
        shown = now.astimezone(zone).strftime("%Y-%m-%d %H:%M")
        raise ValueError(f"{local} has passed: it is now {shown} in {zone.key}")
    return Due(at, zone, wall, None, date_only)


__all__ = ["Parsed", "asks_for_reminder", "parse_reminder", "resolve"]
