"""UTC offsets as people write them, and how a zone is named to them.

``read_offset`` reads ``UTC+8``, ``GMT-5``, ``UTC+05:30``, ``+8``, ``-0500``, ``UTC 8``,
``东八区``, ``西五区``: the offset in minutes, or None if the text is not an offset (or one no
place on Earth has: past -12:00 or +14:00, or minutes other than 00, 15, 30, 45).

A whole-hour offset is the IANA zone ``Etc/GMT-8`` (the sign of those names is POSIX's,
inverted: ``Etc/GMT-8`` is UTC+08:00), which never changes; ``zone_label`` shows it as
``UTC+08:00``, everywhere a zone is named, so that nobody reads the inverted sign. Offsets of
half and quarter hours have no such zone: ``bot.core.places`` finds the places that keep them.

``same_clock`` says whether two zones show the same time every day of the coming year, so that
the choices offered for "Brazil" or "Central European Time" are places whose clocks differ,
not every zone that happens to keep the same time.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, tzinfo
from functools import lru_cache
from zoneinfo import ZoneInfo

_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7}
_DIGITS |= {"八": 8, "九": 9}
_SIGNED = re.compile(
    r"(?:(?:utc|gmt|ut)\s*)?(?P<sign>[+\-−–])\s*(?P<hours>\d{1,2})"
    r"(?:\s*[:：h.]\s*(?P<minutes>\d{2})|(?P<packed>\d{2}))?"
)
_UNSIGNED = re.compile(r"(?:utc|gmt)\s*(?P<hours>\d{1,2})(?:\s*[:：]\s*(?P<minutes>\d{2}))?")
_CHINESE = re.compile(
    r"(?:utc|gmt)?\s*(?P<side>[东東西])\s*(?P<hours>\d{1,2}|[零一二两三四五六七八九十]{1,3})\s*"
    r"[区區](?:时间|時間)?"
)
_ETC = re.compile(r"Etc/GMT(?P<sign>[+-])(?P<hours>\d{1,2})")
MOST_EAST, MOST_WEST = 14 * 60, -12 * 60
_DAYS_COMPARED = 366


def _chinese_number(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    if text == "十":
        return 10
    if text.startswith("十") and len(text) == 2:  # 十二
        return 10 + _DIGITS.get(text[1], -100)
    if len(text) == 1:
        return _DIGITS.get(text)
    return None


def read_offset(text: str) -> int | None:
    """The UTC offset ``text`` writes, in minutes east of UTC (module docstring)."""
    words = " ".join(text.casefold().split())
    if found := _SIGNED.fullmatch(words):
        hours, minutes = int(found["hours"]), int(found["minutes"] or found["packed"] or 0)
        sign = -1 if found["sign"] != "+" else 1
    elif found := _UNSIGNED.fullmatch(words):
        hours, minutes, sign = int(found["hours"]), int(found["minutes"] or 0), 1
    elif found := _CHINESE.fullmatch(words):
        number = _chinese_number(found["hours"])
        if number is None:
            return None
        hours, minutes, sign = number, 0, (1 if found["side"] in "东東" else -1)
    else:
        return None
    if minutes not in (0, 15, 30, 45):
        return None
    total = sign * (hours * 60 + minutes)
    return total if MOST_WEST <= total <= MOST_EAST else None


def fixed_zone(minutes: int) -> ZoneInfo | None:
    """The IANA zone that is always ``minutes`` east of UTC, if there is one (whole hours)."""
    if minutes % 60:
        return None
    hours = minutes // 60
    return ZoneInfo("UTC") if hours == 0 else ZoneInfo(f"Etc/GMT{-hours:+d}")


def is_fixed(zone: tzinfo) -> bool:
    """Whether ``zone`` is a fixed offset (``Etc/GMT-8``, ``UTC``): no daylight saving."""
    key = getattr(zone, "key", "")
    return key in ("UTC", "Etc/UTC", "Etc/GMT") or _ETC.fullmatch(key) is not None


def offset_text(minutes: int) -> str:
    """``UTC+08:00``, ``UTC−05:00``, ``UTC+05:30``, ``UTC`` for zero."""
    if minutes == 0:
        return "UTC"
    sign = "+" if minutes > 0 else "−"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def offset_at(zone: tzinfo, at: datetime) -> int:
    """The offset of ``zone`` at ``at``, in minutes east of UTC."""
    offset = at.astimezone(zone).utcoffset() or timedelta(0)
    return int(offset.total_seconds() // 60)


def zone_label(zone: tzinfo) -> str:
    """How a zone is named to people: its IANA name, a fixed offset as ``UTC+08:00``."""
    key = getattr(zone, "key", None) or str(zone)
    found = _ETC.fullmatch(key)
    if found:
        return offset_text(-int(found["sign"] + found["hours"]) * 60)
    return "UTC" if key in ("Etc/UTC", "Etc/GMT", "UTC") else key


@lru_cache(maxsize=2048)
def _clock(key: str, day: str) -> tuple[int, ...]:
    zone, start = ZoneInfo(key), datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)
    return tuple(offset_at(zone, start + timedelta(days=n)) for n in range(_DAYS_COMPARED))


def same_clock(first: ZoneInfo, second: ZoneInfo, now: datetime) -> bool:
    """Whether the two zones show the same time at noon UTC on every day of the next year."""
    day = now.astimezone(UTC).date().isoformat()
    return first.key == second.key or _clock(first.key, day) == _clock(second.key, day)


def keeps(zone: ZoneInfo, minutes: int, now: datetime) -> bool:
    """Whether ``zone`` is ``minutes`` east of UTC every day of the next year."""
    return set(_clock(zone.key, now.astimezone(UTC).date().isoformat())) == {minutes}


__all__ = [
    "fixed_zone",
    "is_fixed",
    "keeps",
    "offset_at",
    "offset_text",
    "read_offset",
    "same_clock",
    "zone_label",
]
