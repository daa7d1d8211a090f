"""When the digest is due: a crontab expression in an IANA time zone, as an APScheduler trigger.

``Schedule.parse("0 9 * * mon", "Asia/Shanghai")`` checks both at start-up (``ValueError``
naming what is wrong; ``bot.config`` turns it into a ``ConfigError`` naming the key) and is then
the trigger of the JobQueue's job (``run_custom(..., job_kwargs={"trigger": schedule})``) and
the reference for the job itself: ``latest(now)`` is the scheduled time of the current period,
which identifies it (see ``bot.jobs.digest``), ``next_after(now)`` the next run shown by
``/digest``.

It sits beside ``bot.config``, among the bot's basics (it imports nothing of the bot): the
configuration checks ``[digest] schedule`` and every ``timezone`` key with it when it is read,
and ``bot.jobs.digest`` runs on it.

Three places where APScheduler 3's ``CronTrigger.from_crontab`` differs from crontab are
settled here, so that the expression means what crontab(5) says:

- Day-of-week numbers: APScheduler 3 counts 0 as Monday, crontab as Sunday (7 is Sunday too).
  The day-of-week field is expanded here to weekday names (``1-5`` -> ``mon,...,fri``), which
  both read the same way, so ``0 9 * * 1`` runs on Mondays as a crontab user expects.
- A wall-clock time that happens twice when the clocks go back (02:30 on the last Sunday of
  October in Europe) fires once, at its first occurrence; ``CronTrigger`` fires at both. A time
  skipped when the clocks go forward fires once, an hour later in wall-clock time
  (``CronTrigger``'s own behaviour). Fire times are otherwise wall-clock times: ``0 9 * * *``
  in Europe/Berlin is 08:00 UTC in winter and 07:00 UTC in summer.
- When both the day of month and the day of week are restricted, a day must match both
  (APScheduler); crontab runs on a day that matches either.

A schedule that never fires (``0 9 31 2 *``) is refused.

``Schedules`` is one expression in several zones: the digest's trigger, which fires at the
schedule's local time in the configured zone and in every zone a chat chose. ``Waking`` keeps
those zones for a job (the digest's, the tidy's) as chats choose them.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger

log = logging.getLogger(__name__)

# crontab order: 0 (and 7) is Sunday.
WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_ITEM = re.compile(r"(?P<range>\*|(?P<first>\w+)(?:-(?P<last>\w+))?)(?:/(?P<step>\d+))?")
_MICROSECOND = timedelta(microseconds=1)
# How far back ``latest`` looks, widening: a minutely schedule is found in the first step, a
# yearly one (or 29 February) in the last.
_LOOKBACK = tuple(timedelta(days=days) for days in (1 / 720, 1 / 12, 2, 8, 32, 367, 8 * 366 + 1))
_HORIZON = timedelta(days=8 * 366 + 1)


def parse_timezone(name: str) -> ZoneInfo:
    """The IANA time zone ``name`` (``Asia/Shanghai``, ``UTC``); ``ValueError`` if unknown."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as e:
        # OSError: a folder of the zone database ("Europe") where the tzdata package serves it.
        raise ValueError(
            f"unknown time zone {name!r}: use an IANA name such as Asia/Shanghai or UTC"
        ) from e


def _weekday(word: str) -> int:
    if word.isdigit() and int(word) <= 7:
        return int(word)
    if word.lower() in WEEKDAYS:
        return WEEKDAYS.index(word.lower())
    raise ValueError(f"{word!r} is not a day of the week (0-7, 0 and 7 are Sunday, or sun-sat)")


def crontab_weekdays(field: str) -> str:
    """A crontab day-of-week field as weekday names, which APScheduler reads the same way.

    ``*`` is kept; ``1-5`` is ``mon,tue,wed,thu,fri``; ``*/2`` is Sunday, Tuesday, Thursday,
    Saturday; a range may end on Sunday (``5-7``, ``fri-sun``). ``ValueError`` if malformed.
    """
    if field == "*":
        return field
    days: set[int] = set()
    for item in field.split(","):
        match = _ITEM.fullmatch(item)
        if match is None:
            raise ValueError(f"{item!r} is not a day of the week")
        if match["range"] == "*":
            first, last = 0, 6
        else:
            first = _weekday(match["first"])
            if match["last"]:
                last = _weekday(match["last"])
                last = 7 if last == 0 and first > 0 else last  # "fri-sun"
            else:
                last = 6 if match["step"] else first  # "1/2": Monday on, every second day
        step = int(match["step"] or 1)
        if last < first or step < 1:
            raise ValueError(f"{item!r} is not a day-of-week range")
        days.update(day % 7 for day in range(first, last + 1, step))
    return ",".join(WEEKDAYS[day] for day in sorted(days))


class Schedule(BaseTrigger):
    """A crontab schedule in a time zone; an APScheduler trigger (see the module docstring)."""

    __slots__ = ("_cron", "expression", "timezone")

    def __init__(self, expression: str, timezone: tzinfo) -> None:
        self.expression = expression
        self.timezone = timezone
        self._cron = CronTrigger.from_crontab(expression, timezone=timezone)

    @classmethod
    def parse(cls, expression: str, timezone: tzinfo, *, now: datetime | None = None) -> Schedule:
        """Check ``expression`` (five crontab fields) in ``timezone``; ``ValueError`` if bad.

        An expression that does not fire in the eight years after ``now`` is refused too.
        """
        fields = expression.split()
        if len(fields) != 5:
            raise ValueError(
                f"{expression!r} has {len(fields)} fields; a cron expression has five: minute, "
                'hour, day of month, month, day of week (e.g. "0 9 * * mon")'
            )
        try:
            fields[4] = crontab_weekdays(fields[4])
            schedule = cls(" ".join(fields), timezone)
        except ValueError as e:
            raise ValueError(f"{expression!r} is not a valid cron expression: {e}") from e
        schedule.expression = expression
        start = now or datetime.now(UTC)
        first = schedule.next_after(start)
        if first is None or first - start > _HORIZON:
            raise ValueError(f"the cron expression {expression!r} never fires")
        return schedule

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        """APScheduler's trigger protocol: the next fire time at or after ``now``."""
        fire: datetime | None = self._cron.get_next_fire_time(previous_fire_time, now)
        while fire is not None and _repeated(fire):
            fire = self._cron.get_next_fire_time(fire, fire)
        return fire

    def next_after(self, moment: datetime) -> datetime | None:
        """The first fire time strictly after ``moment``, in the schedule's time zone."""
        return self.get_next_fire_time(None, moment + _MICROSECOND)

    def latest(self, moment: datetime) -> datetime | None:
        """The last fire time at or before ``moment`` (None if none in the last eight years)."""
        for back in _LOOKBACK:
            fire = self.get_next_fire_time(None, moment - back)
            if fire is not None and fire <= moment:
                while (later := self.next_after(fire)) is not None and later <= moment:
                    fire = later
                return fire
        return None

    def __str__(self) -> str:
        return f"{self.expression} ({self.timezone})"

    def __repr__(self) -> str:
        return f"Schedule({self.expression!r}, {str(self.timezone)!r})"


class Schedules(BaseTrigger):
    """One schedule's expression in several time zones, as one APScheduler trigger: it fires at
    the schedule's local time in each (the digest in every zone a chat chose)."""

    __slots__ = ("schedules",)

    def __init__(self, schedules: Sequence[Schedule]) -> None:
        self.schedules = tuple(schedules)

    def get_next_fire_time(
        self, previous_fire_time: datetime | None, now: datetime
    ) -> datetime | None:
        """The earliest next fire time of any of the zones."""
        fires = [s.get_next_fire_time(previous_fire_time, now) for s in self.schedules]
        found = [fire for fire in fires if fire is not None]
        return min(found, key=lambda fire: fire.astimezone(UTC)) if found else None

    def __str__(self) -> str:
        return ", ".join(str(schedule) for schedule in self.schedules)


def _repeated(fire: datetime) -> bool:
    """Whether ``fire`` is the second occurrence of a wall-clock time (clocks went back)."""
    return fire.fold == 1 and fire.replace(fold=0).utcoffset() != fire.utcoffset()


__all__ = ["WEEKDAYS", "Schedule", "Schedules", "crontab_weekdays", "parse_timezone"]


class Waking:
    """The time zones a job wakes in, its schedule's local time in each (the digest's and the
    tidy's: every chat's own); ``learn`` adds the zones chats chose, ``trigger`` is the job's."""

    def __init__(self, zone: ZoneInfo, schedule_in: Callable[[ZoneInfo], Schedule], job: str):
        self.keys = {zone.key}
        self._schedule_in = schedule_in
        self._job = job

    def learn(self, zones: Collection[str]) -> bool:
        """Wake in ``zones`` too (one that cannot be read is logged and left out); whether any
        was new, so that the job is given its new trigger."""
        new = set()
        for key in set(zones) - self.keys:
            try:
                self._schedule_in(ZoneInfo(key))
            except (ValueError, KeyError, OSError):
                log.warning("the %s ignores the unknown time zone %r", self._job, key)
                continue
            new.add(key)
        self.keys |= new
        return bool(new)

    def trigger(self) -> Schedules:
        """When the job runs: the schedule in every zone it wakes in."""
        return Schedules([self._schedule_in(ZoneInfo(key)) for key in sorted(self.keys)])
