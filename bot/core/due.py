"""When a reminder is due, as a value: the instant, the zone and wall time, the repeat rule.

A ``Due`` keeps the instant (aware, UTC) together with the zone and the local wall time it was
asked for, so that a repeat follows the wall clock: a 09:00 weekly reminder in Europe/Berlin is
08:00 UTC in winter and 07:00 UTC in summer (``wall_time``: a wall time skipped when the clocks
go forward is moved forward by the gap; one that happens twice is its first occurrence).
``Due.next_after(instant)`` is the next occurrence of a repeating reminder (``Repeat``: every
``interval`` days, weeks on some weekdays, months or years), whatever daylight saving did in
between. Both are stored with the reminder (``to_json`` / ``from_json``). What people type is
read into a ``Due`` by ``bot.core.when``.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal, cast, get_args
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

Frequency = Literal["daily", "weekdays", "weekly", "monthly", "yearly"]
FREQUENCIES: tuple[str, ...] = get_args(Frequency)


@dataclass(frozen=True)
class Repeat:
    """A repeat rule: every ``interval`` days, weeks (on ``weekdays``), months or years.

    ``weekdays`` are 0 (Monday) to 6 (Sunday), for ``weekly``; ``"weekdays"`` is Monday to
    Friday. ``day`` is the day of the month for ``monthly`` (a month without it: its last day)
    and ``yearly`` (29 February: the 28th in other years). A weekly rule without weekdays, or a
    monthly or yearly one without a day, takes them from the reminder's first occurrence.
    """

    frequency: Frequency
    interval: int = 1
    weekdays: tuple[int, ...] = ()
    day: int | None = None

    def problem(self) -> str | None:
        """What is wrong with this rule, in words for the model or a user; ``None`` if fine."""
        if self.frequency not in FREQUENCIES:
            return f"frequency must be one of {', '.join(FREQUENCIES)}"
        if not isinstance(self.interval, int) or not 1 <= self.interval <= 1000:
            return "interval must be a whole number from 1 to 1000"
        if any(not isinstance(d, int) or not 0 <= d <= 6 for d in self.weekdays):
            return "weekdays are 0 (Monday) to 6 (Sunday)"
        if self.weekdays and self.frequency != "weekly":
            return "weekdays go with frequency weekly only"
        if self.day is not None and (not isinstance(self.day, int) or not 1 <= self.day <= 31):
            return "day must be a day of the month, 1 to 31"
        return None

    def to_json(self) -> dict[str, object]:
        return {
            "frequency": self.frequency,
            "interval": self.interval,
            "weekdays": list(self.weekdays),
            "day": self.day,
        }

    @classmethod
    def from_json(cls, value: object) -> Repeat:
        """A ``Repeat`` as ``to_json`` wrote it (``ValueError`` if malformed)."""
        if not isinstance(value, dict):
            raise ValueError("a repeat rule must be an object")
        frequency = value.get("frequency")
        interval = value.get("interval", 1)
        weekdays = value.get("weekdays", [])
        day = value.get("day")
        if not isinstance(weekdays, list) or isinstance(interval, bool):
            raise ValueError("a repeat rule's weekdays must be a list")
        if any(isinstance(d, bool) for d in weekdays) or isinstance(day, bool):
            raise ValueError("a repeat rule's weekdays and day are numbers")
        rule = cls(cast(Frequency, frequency), cast(int, interval), tuple(weekdays), day)
        problem = rule.problem()
        if problem:
            raise ValueError(f"malformed repeat rule: {problem}")
        return rule

    def describe(self) -> str:
        """The rule in words: "every day", "every 2 weeks on Mon, Thu", "monthly on day 31"."""
        names = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
        unit = {"daily": "day", "weekly": "week", "monthly": "month", "yearly": "year"}
        if self.frequency == "weekdays":
            return "every weekday (Mon-Fri)"
        every = (
            f"every {self.interval} {unit[self.frequency]}s"
            if self.interval > 1
            else (f"every {unit[self.frequency]}")
        )
        if self.weekdays:
            every += " on " + ", ".join(names[d] for d in self.weekdays)
        elif self.day is not None and self.frequency == "monthly":
            every += f" on day {self.day}"
        return every


@dataclass(frozen=True)
class Due:
    """When a reminder is due: its first (next) instant, its zone and local wall time, its rule.

    ``at`` is aware (UTC). ``date_only`` says the phrase named a day but no time, so the
    default hour was used; ``moved`` says the phrase's time had passed and the next occurrence
    was taken instead (the reply says so). A repeating ``Due``'s ``at`` is also the anchor of
    its series: "every 2 weeks" counts from the week of ``at``.
    """

    at: datetime
    zone: ZoneInfo
    wall: time
    repeat: Repeat | None = None
    date_only: bool = False
    moved: bool = False

    def local(self) -> datetime:
        """``at`` in the reminder's zone."""
        return self.at.astimezone(self.zone)

    def ahead_of(self) -> Due:
        """A reminder before this deadline: a day alone ("before Friday") the day before at the
        same hour, a clock time ("before 8am") an hour before. A reminder before a deadline
        comes before it, in time to act (docs/reminders.md)."""
        if self.date_only:
            day = self.local().date() - timedelta(days=1)
            return replace(self, at=wall_time(day, self.wall, self.zone))
        at = self.at - timedelta(hours=1)
        return replace(self, at=at, wall=at.astimezone(self.zone).time().replace(tzinfo=None))

    def next_after(self, instant: datetime) -> datetime | None:
        """The first occurrence strictly after ``instant`` (UTC); ``None`` if it does not repeat."""
        if self.repeat is None:
            return None
        anchor = self.local().date()
        start = max(anchor, instant.astimezone(self.zone).date() - timedelta(days=1))
        try:
            for day in occurrences(self.repeat, anchor, start):
                at = wall_time(day, self.wall, self.zone)
                if at > instant and at >= self.at:
                    return at
        except (OverflowError, ValueError):
            return None  # the calendar ends (year 9999): so does the series
        return None  # pragma: no cover - _occurrences is endless

    def to_json(self) -> dict[str, object]:
        return {
            "at": self.at.astimezone(UTC).isoformat(),
            "zone": self.zone.key,
            "wall": self.wall.isoformat(),
            "repeat": None if self.repeat is None else self.repeat.to_json(),
            "date_only": self.date_only,
            "moved": self.moved,
        }

    @classmethod
    def from_json(cls, value: object) -> Due:
        """A ``Due`` as ``to_json`` wrote it (``ValueError`` if malformed)."""
        if not isinstance(value, dict):
            raise ValueError("a due time must be an object")
        at, zone, wall = value.get("at"), value.get("zone"), value.get("wall")
        if not isinstance(at, str) or not isinstance(zone, str) or not isinstance(wall, str):
            raise ValueError("a due time needs at, zone and wall as strings")
        try:
            instant = datetime.fromisoformat(at)
            wall_clock = time.fromisoformat(wall)
            tz = ZoneInfo(zone)
        except (ValueError, ZoneInfoNotFoundError, OSError) as e:
            raise ValueError(f"malformed due time: {e}") from e
        if instant.tzinfo is None or wall_clock.tzinfo is not None:
            raise ValueError("a due time's instant must carry its offset, its wall time none")
        raw_repeat = value.get("repeat")
        repeat = None if raw_repeat is None else Repeat.from_json(raw_repeat)
        date_only, moved = value.get("date_only", False), value.get("moved", False)
        if not isinstance(date_only, bool) or not isinstance(moved, bool):
            raise ValueError("a due time's date_only and moved are true or false")
        return cls(instant.astimezone(UTC), tz, wall_clock, repeat, date_only, moved)


def occurrences(rule: Repeat, anchor: date, start: date) -> Iterator[date]:
    """The dates of ``rule``'s series anchored on ``anchor``, from ``start`` on (endless)."""
    n = rule.interval
    if rule.frequency == "daily":
        skip = max(0, (start - anchor).days)
        day = anchor + timedelta(days=-(-skip // n) * n)
        while True:
            yield day
            day += timedelta(days=n)
    if rule.frequency in ("weekdays", "weekly"):
        weekdays = (
            (0, 1, 2, 3, 4)
            if rule.frequency == "weekdays"
            else rule.weekdays or (anchor.weekday(),)
        )
        step = 1 if rule.frequency == "weekdays" else n
        monday = anchor - timedelta(days=anchor.weekday())
        day = start
        while True:
            weeks = (day - timedelta(days=day.weekday()) - monday).days // 7
            if day.weekday() in weekdays and weeks % step == 0:
                yield day
            day += timedelta(days=1)
    months = 12 * n if rule.frequency == "yearly" else n
    wanted = rule.day or anchor.day
    index = max(0, ((start.year - anchor.year) * 12 + start.month - anchor.month) // months - 1)
    while True:
        total = anchor.month - 1 + index * months
        year, month = anchor.year + total // 12, total % 12 + 1
        yield date(year, month, min(wanted, calendar.monthrange(year, month)[1]))
        index += 1


def wall_time(day: date, wall: time, zone: ZoneInfo) -> datetime:
    """The instant (UTC) of local ``wall`` on ``day``'s date in ``zone``.

    A wall time skipped by daylight saving is moved forward by the gap; one that happens twice
    is its first occurrence. (``day`` may be a ``datetime``: its own date is taken.)
    """
    if isinstance(day, datetime):
        day = day.date()
    # fold=0 reads a skipped time with the offset from before the gap (02:30 CET = 03:30 CEST)
    # and a repeated time as its first occurrence (PEP 495).
    naive = datetime.combine(day, wall.replace(tzinfo=None, fold=0))
    return naive.replace(tzinfo=zone).astimezone(UTC)
