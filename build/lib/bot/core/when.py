"""When a reminder is due: what people type ("tomorrow 9am", "下周二下午三点") as instants.

The code, never the language model, turns a phrase into a time, in the chat's own zone:

- ``parse_reminder(text, now, zone)`` reads ``/remind``'s argument or a free-text request
  ("remind me tomorrow at 9 to call mom", "提醒我明天早上9点给妈妈打电话") and returns a
  ``Parsed``: the ``Due`` it means and the text of the reminder, or ``None`` when it cannot be
  understood (the door then answers with examples; it never guesses).
- ``resolve(zone, now, local=..., offset=..., repeat=...)`` is the model's way in (the
  ``scheduleReminder`` tool): a local date-time, a relative offset or a repeat rule, checked and
  turned into a ``Due`` by the same code.
- ``Due.next_after(instant)`` is the next occurrence of a repeating reminder, at the same local
  wall time in its zone, whatever daylight saving did in between.

A ``Due`` keeps the instant (aware, UTC) together with the zone and the local wall time it was
asked for, so that a repeat follows the wall clock: a 09:00 weekly reminder in Europe/Berlin is
08:00 UTC in winter and 07:00 UTC in summer. A wall time that does not exist (skipped when the
clocks go forward) is moved forward by the gap; one that happens twice is its first occurrence.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, time
from typing import Literal
from zoneinfo import ZoneInfo

Frequency = Literal["daily", "weekdays", "weekly", "monthly", "yearly"]


@dataclass(frozen=True)
class Repeat:
    """A repeat rule: every ``interval`` days, weeks (on ``weekdays``), months or years.

    ``weekdays`` are 0 (Monday) to 6 (Sunday), for ``weekly``; ``"weekdays"`` is Monday to
    Friday. ``day`` is the day of the month for ``monthly`` (a month without it: its last day).
    """

    frequency: Frequency
    interval: int = 1
    weekdays: tuple[int, ...] = ()
    day: int | None = None

    def to_json(self) -> dict[str, object]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, value: object) -> Repeat:
        raise NotImplementedError


@dataclass(frozen=True)
class Due:
    """When a reminder is due: its first (next) instant, its zone and local wall time, its rule.

    ``at`` is aware (UTC). ``date_only`` says the phrase named a day but no time, so the
    default hour was used; ``moved`` says the phrase's time had passed and the next occurrence
    was taken instead (the reply says so).
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

    def next_after(self, instant: datetime) -> datetime | None:
        """The first occurrence strictly after ``instant`` (UTC); ``None`` if it does not repeat."""
        raise NotImplementedError

    def to_json(self) -> dict[str, object]:
        raise NotImplementedError

    @classmethod
    def from_json(cls, value: object) -> Due:
        """A ``Due`` as ``to_json`` wrote it (``ValueError`` if malformed)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Parsed:
    """A reminder phrase understood: when, and what to remind of (may be empty: a reply's)."""

    due: Due
    text: str


def asks_for_reminder(text: str) -> bool:
    """Whether a free-text message asks for a reminder ("remind me ...", "提醒我 ...")."""
    raise NotImplementedError


def parse_reminder(
    text: str, now: datetime, zone: ZoneInfo, *, default_hour: int = 9
) -> Parsed | None:
    """``text`` ("tomorrow 9am call mom", "remind me in 2 hours to ...") as a reminder, or None.

    ``now`` is aware; ``default_hour`` is the local hour of a phrase that names a day only.
    A leading request ("remind me", "提醒我", "别忘了提醒我") and joining words ("to", "that")
    are not part of the reminder's text.
    """
    raise NotImplementedError


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
    value is malformed.
    """
    raise NotImplementedError


def wall_time(day: datetime, wall: time, zone: ZoneInfo) -> datetime:
    """The instant (UTC) of local ``wall`` on ``day``'s date in ``zone``.

    A wall time skipped by daylight saving is moved forward by the gap; one that happens twice
    is its first occurrence.
    """
    raise NotImplementedError


__all__ = [
    "Due",
    "Frequency",
    "Parsed",
    "Repeat",
    "asks_for_reminder",
    "parse_reminder",
    "resolve",
    "wall_time",
]
