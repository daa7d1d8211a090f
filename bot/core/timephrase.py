"""The words of a reminder phrase, read into parts: no clock, no zone, no arithmetic.

``read(text)`` finds the time expressions of a phrase (Chinese and English) and returns a
``Reading``: the day it names (relative, a weekday, a date), the clock time and the part of the
day, an offset ("in 2 hours", "半小时后"), a repeat rule's words, and the rest of the text (the
reminder's "what"). ``bot.core.when`` turns a ``Reading`` into an instant in a zone.

How it reads: the text is normalised (full-width digits and punctuation to ASCII, lower case for
matching; the two strings keep the same length so spans line up), then each family of patterns
is matched in turn, most specific first (repeats, offsets, dates, weekdays, day words, clock,
part of the day). A matched span is masked so that a later pattern cannot read it again, and the
unmasked rest is the reminder's text once request words ("remind me to", "提醒我") are stripped.
Two parts of the same kind (two clock times, two days) make the phrase unreadable (``None``),
and so does a time-looking leftover ("at 25:00"): a phrase is understood whole or not at all.

Three modules, each under STYLE.md's ~400 lines: ``bot.core.timewords`` is the lexical layer
(numbers, word tables, ``normalise``, the ``Scanner``, the ``Reading``); ``bot.core.timecalendar``
reads the points on the calendar and the clock (dates, weekdays, day words, clock, part of the
day); this module reads the counted spans (repeats "every 2 weeks", offsets "in 2 weeks"), which
run first, strips the request words from the rest, and holds ``read``, the one entry point.
"""

from __future__ import annotations

import re

from bot.core.timecalendar import read_clock, read_dates, read_days, read_deadline, read_weeks
from bot.core.timewords import (
    CN_DAY,
    CN_WEEK,
    DAY_END,
    EN_DAY,
    EN_NUM,
    NUM,
    PERIOD_DEFAULT,
    PERIOD_END,
    WEEKDAYS_CN,
    WEEKDAYS_EN,
    B,
    E,
    Reading,
    Scanner,
    cn_number,
    en_number,
    normalise,
    set_part,
    words,
)

# What other modules read from here; the lexical layer lives in ``bot.core.timewords``.
__all__ = ["DAY_END", "PERIOD_DEFAULT", "PERIOD_END", "Reading", "normalise", "read"]


# --- repeats -------------------------------------------------------------------------------

# 周二、四 and 周一三五; but in 每周一三点 the 三 is the hour.
CN_WEEKDAY_LIST = (
    rf"{CN_WEEK}?{CN_DAY}(?:\s*[、,，和及与跟/]\s*{CN_WEEK}?{CN_DAY}|{CN_DAY}(?![点时:\d十半]))*"
)
EN_WEEKDAY_LIST = rf"{EN_DAY}s?(?:\s*(?:,|and|&|/|,\s*and)\s*{EN_DAY}s?{E})*"

REPEAT_CN = [
    (re.compile(rf"每(?:隔)?({NUM})?个?(?:小时|钟头|分钟)|每隔?({NUM})?秒"), "unsupported"),
    (
        re.compile(r"每个?工作日|工作日每天|(?:周|星期)一(?:到|至|-|~)(?:周|星期)?五每?天?"),
        "weekdays",
    ),
    (re.compile(rf"每(隔)?({NUM})?个?{CN_WEEK}\s*({CN_WEEKDAY_LIST})"), "weekly"),
    (re.compile(rf"每个?{CN_WEEK}末"), "weekend"),
    (re.compile(rf"每(隔)?({NUM})?个?{CN_WEEK}"), "weekly"),
    (
        re.compile(
            rf"每(隔)?({NUM})?个?月\s*(?:的)?(?:({NUM})\s*[号日]|(月底|最后一天|底)|(月初|初))"
        ),
        "monthly",
    ),
    (re.compile(rf"每(隔)?({NUM})?个?月"), "monthly"),
    (re.compile(r"每(隔)?(" + NUM + r")?年"), "yearly"),
    (
        re.compile(rf"每(隔)?({NUM})?[天日]|天天|每个?(?=早上|早晨|上午|中午|下午|傍晚|晚上)"),
        "daily",
    ),
    (re.compile(r"每(晚|早|晨)"), "daily-period"),
]
REPEAT_EN = [
    (
        re.compile(
            rf"{B}(?:every|each)\s+(?:{EN_NUM}\s+)?(?:hours?|minutes?|mins?|seconds?){E}|{B}hourly{E}"
        ),
        "unsupported",
    ),
    (
        re.compile(
            rf"{B}(?:every|each|on)\s+(?:week\s*days?|work\s*days?|working\s+days?){E}"
            rf"|{B}(?:week\s*days|monday\s+(?:to|through|thru|-)\s+friday){E}"
        ),
        "weekdays",
    ),
    (
        re.compile(
            rf"{B}(?:every|each)\s+(other\s+|{EN_NUM}\s+)?weeks?\s+on\s+({EN_WEEKDAY_LIST}){E}"
        ),
        "weekly-list",
    ),
    (re.compile(rf"{B}(?:every|each)\s+(other\s+)?({EN_WEEKDAY_LIST}){E}"), "weekly-every"),
    (
        re.compile(
            rf"{B}(?:on\s+)?((?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s"
            rf"(?:\s*(?:,|and|&)\s*(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)s)*){E}"
        ),
        "weekly-plural",
    ),
    (re.compile(rf"{B}(?:every|each)\s+weekend{E}|{B}(?:on\s+)?weekends{E}"), "weekend"),
    (re.compile(rf"{B}(?:every|each)\s+(other\s+|{EN_NUM}\s+)?weeks?{E}"), "weekly-plain"),
    (
        re.compile(
            rf"{B}(?:every|each)\s+(other\s+|{EN_NUM}\s+)?months?{E}"
            rf"|{B}(?:of\s+)?(?:every|each)\s+month(){E}"
        ),
        "monthly-plain",
    ),
    (re.compile(rf"{B}(?:every|each)\s+(other\s+|{EN_NUM}\s+)?years?{E}"), "yearly-plain"),
    (
        re.compile(rf"{B}(?:every|each)\s+(other\s+|{EN_NUM}\s+)?days?{E}|{B}everyday(){E}"),
        "daily-plain",
    ),
    (
        re.compile(rf"{B}(?:every|each)\s+(morning|afternoon|evening|night){E}|{B}nightly(){E}"),
        "daily-period-en",
    ),
    # "weekly report every monday": the adjective is a repeat only when nothing else is.
    (re.compile(rf"{B}(daily|weekly|monthly|yearly|annually){E}"), "adjective"),
]
ADJECTIVE = {"daily": "daily", "weekly": "weekly", "monthly": "monthly", "yearly": "yearly"}
ADJECTIVE["annually"] = "yearly"


def _interval_cn(skip: str | None, count: str | None) -> int:
    """每两周 -> 2, 每隔一天 -> 2 (every other day), 每隔三天 -> 3 (as it is commonly meant)."""
    n = cn_number(count) if count else 1
    n = n or 1
    if skip and n == 1:
        return 2
    return n


def _interval_en(word: str | None) -> int:
    if not word:
        return 1
    word = word.strip()
    if word == "other":
        return 2
    value = en_number(word)
    return int(value) if value and value >= 1 and value == int(value) else 0


def _cn_weekday_list(text: str) -> tuple[int, ...]:
    days = {WEEKDAYS_CN[c] for c in re.findall(CN_DAY, text)}
    return tuple(sorted(days))


def _en_weekday_list(text: str) -> tuple[int, ...]:
    names = re.findall(EN_DAY + "s?", text)
    return tuple(sorted({WEEKDAYS_EN[n.rstrip("s") if n.rstrip("s") in WEEKDAYS_EN else n]
                         for n in names}))  # fmt: skip


def _repeat(scanner: Scanner, reading: Reading) -> None:
    for pattern, kind in REPEAT_CN + REPEAT_EN:
        if kind == "adjective" and reading.frequency is not None:
            continue
        for m in scanner.find(pattern):
            reading.parts.append("repeat")
            if reading.frequency is not None:
                scanner.conflict = True
            if kind == "unsupported":
                reading.unsupported = True
                reading.frequency = "unsupported"
            elif kind == "weekdays":
                reading.frequency = "weekdays"
            elif kind == "weekly" and pattern is REPEAT_CN[2][0]:
                reading.frequency = "weekly"
                reading.interval = _interval_cn(m.group(1), m.group(2))
                reading.weekdays = _cn_weekday_list(m.group(3))
            elif kind == "weekly":
                reading.frequency = "weekly"
                reading.interval = _interval_cn(m.group(1), m.group(2))
            elif kind == "weekend":
                reading.frequency = "weekly"
                reading.weekdays = (5,)
            elif kind == "monthly":
                reading.frequency = "monthly"
                reading.interval = _interval_cn(m.group(1), m.group(2))
                if m.lastindex and m.lastindex >= 3:
                    if m.group(3):
                        set_part(reading, scanner, "day", cn_number(m.group(3)))
                    elif m.group(4):
                        set_part(reading, scanner, "day", 31)
                    elif m.group(5):
                        set_part(reading, scanner, "day", 1)
            elif kind == "yearly":
                reading.frequency = "yearly"
                reading.interval = _interval_cn(m.group(1), m.group(2))
            elif kind == "daily":
                reading.frequency = "daily"
                if m.group(0).startswith("每"):
                    reading.interval = _interval_cn(m.group(1), m.group(2))
            elif kind == "daily-period":
                reading.frequency = "daily"
                set_part(reading, scanner, "period", {"晚": "evening"}.get(m.group(1), "morning"))
            elif kind in ("weekly-list", "weekly-every", "weekly-plural"):
                reading.frequency = "weekly"
                if kind != "weekly-plural":
                    reading.interval = _interval_en(m.group(1))
                reading.weekdays = _en_weekday_list(m.group(m.lastindex or 0))
            elif kind.endswith("-plain"):
                reading.frequency = kind.removesuffix("-plain")
                reading.interval = _interval_en(m.group(1))
            elif kind == "adjective":
                reading.frequency = ADJECTIVE[m.group(1)]
            elif kind == "daily-period-en":
                reading.frequency = "daily"
                word = m.group(1) or "night"
                set_part(reading, scanner, "period", word)
            if reading.interval < 1:
                scanner.conflict = True


# --- offsets ("in 2 hours", "半小时后") ------------------------------------------------------

CN_UNIT_MINUTES = {"分钟": 1.0, "分": 1.0, "小时": 60.0, "钟头": 60.0, "刻钟": 15.0}
OFFSET_CN = re.compile(
    rf"(?:过|再过)?\s*(?:({NUM})\s*个?\s*(半)?|(半)\s*个?)\s*"
    r"(分钟|分|小时|钟头|刻钟|天|日|周|星期|礼拜|个月|月|年)\s*(?:以|之)?后"
)
OFFSET_CN_BEFORE = re.compile(rf"过\s*({NUM})\s*个?\s*(分钟|小时|钟头|天)")
OFFSET_CN_COMPOUND = re.compile(
    rf"({NUM})\s*个?\s*(?:小时|钟头)\s*零?\s*({NUM})\s*分钟?\s*(?:以|之)?后"
)
OFFSET_EN = re.compile(
    rf"{B}(?:in|after)\s+(?:(?:about|around|roughly|another)\s+)?"
    rf"(?:({EN_NUM})\s*(?:and\s+a\s+half\s+)?|(half\s+an?|a\s+half))\s*"
    rf"(minutes?|mins?|m|hours?|hrs?|h|days?|d|weeks?|wks?|months?|years?|fortnight)"
    rf"(\s+and\s+a\s+half)?"
    rf"(?:\s*(?:and\s+)?({EN_NUM})\s*(minutes?|mins?|m))?{E}"
    rf"|{B}({EN_NUM})\s*(minutes?|mins?|hours?|hrs?|days?|weeks?)\s+from\s+(?:now|today){E}"
    rf"|{B}in\s+(an?|one)\s+(minute|hour){E}"
)


def _add_offset(reading: Reading, scanner: Scanner, amount: float, unit: str) -> None:
    reading.parts.append("offset")
    unit = unit.strip()
    if unit in ("天", "日") or unit.startswith("d"):
        days = amount
    elif unit in ("周", "星期", "礼拜", "fortnight") or unit.startswith("w"):
        days = amount * (14 if unit == "fortnight" else 7)
    elif unit in ("个月", "月") or unit.startswith("mo"):
        if amount != int(amount):
            scanner.conflict = True
        set_part(reading, scanner, "offset_months", int(amount))
        return
    elif unit == "年" or unit.startswith("y"):
        if amount != int(amount):
            scanner.conflict = True
        set_part(reading, scanner, "offset_months", int(amount) * 12)
        return
    else:
        minutes = CN_UNIT_MINUTES.get(unit)
        if minutes is None:
            minutes = 60.0 if unit.startswith("h") else 1.0
        total = (reading.offset_minutes or 0.0) + amount * minutes
        reading.offset_minutes = total
        return
    if days != int(days):
        reading.offset_minutes = (reading.offset_minutes or 0.0) + days * 1440
    else:
        set_part(reading, scanner, "offset_days", int(days))


def _offsets(scanner: Scanner, reading: Reading) -> None:
    for m in scanner.find(OFFSET_CN_COMPOUND):
        hours, minutes = cn_number(m.group(1)), cn_number(m.group(2))
        if hours is None or minutes is None or minutes > 59:
            scanner.conflict = True
            continue
        _add_offset(reading, scanner, float(hours * 60 + minutes), "分钟")
    for m in scanner.find(OFFSET_CN):
        if m.group(3):
            amount = 0.5
        else:
            value = cn_number(m.group(1))
            if value is None:
                scanner.conflict = True
                continue
            amount = value + (0.5 if m.group(2) else 0.0)
        _add_offset(reading, scanner, amount, m.group(4))
    for m in scanner.find(OFFSET_CN_BEFORE):
        value = cn_number(m.group(1))
        if value is None:
            scanner.conflict = True
            continue
        _add_offset(reading, scanner, float(value), m.group(2))
    for m in scanner.find(OFFSET_EN):
        if m.group(9):  # "in an hour"
            _add_offset(reading, scanner, 1.0, m.group(10))
            continue
        if m.group(7):  # "20 minutes from now"
            count = en_number(m.group(7))
            if count is None:
                scanner.conflict = True
                continue
            _add_offset(reading, scanner, count, m.group(8))
            continue
        if m.group(2):
            amount = 0.5
        else:
            number = en_number(m.group(1))
            if number is None:
                scanner.conflict = True
                continue
            amount = number
            if "and a half" in words(m.group(0)):
                amount += 0.5
        _add_offset(reading, scanner, amount, m.group(3))
        if m.group(5):
            extra = en_number(m.group(5))
            if extra is None:
                scanner.conflict = True
                continue
            _add_offset(reading, scanner, extra, m.group(6))


# --- the rest: the reminder's text ---------------------------------------------------------

LEADING = re.compile(
    r"^(?:[\s,.;:!?，。；：！？、~-]+"
    r"|(?:please|pls|plz|hey|hi|ok|okay|bot|can\s+you|could\s+you|would\s+you|will\s+you"
    r"|kindly|also|and|then)(?![a-z])"
    r"|(?:set\s+(?:a\s+|me\s+a\s+)?reminder|add\s+a\s+reminder|reminder|remind\s+(?:me|us))"
    r"(?:\s+(?:to|that|about|of|for))?(?![a-z])"
    r"|(?:to|that|about|of|for)(?=\s)"
    r"|请你?|麻烦你?|帮我|帮忙|到时候?|记得|别忘了|不要忘了|别忘记|不要忘记|你"
    r"|(?:要|得)(?!求)|设(?:置)?一?个?提醒|定一?个?提醒|提醒我?一下|提醒我|提醒一?下|提醒|叫我|喊我"
    r"|的(?!士)|一下|在(?=\s|$)|,)",
    re.IGNORECASE,
)
TRAILING = re.compile(
    r"(?:[\s,.;:!?，。；：！？、~-]+|提醒我一下|提醒我|提醒一下|提醒|叫我|喊我|吧|哦|哈|啊|呀"
    r"|please|pls|thanks|thank\s+you|(?<![a-z])(?:at|on|in|by|to)|的(?=\s*$)|在)$",
    re.IGNORECASE,
)
# A time-looking leftover: the phrase said more about the time than was understood.
LEFTOVER_TIME = re.compile(
    r"\d{1,2}\s*:\s*\d{2}|(?<![a-z])\d{1,2}\s*(?:am|pm)(?![a-z])|\d+\s*[点时](?!心|子)"
    r"|(?<![a-z])(?:tomorrow|tonight|today|yesterday|next\s+(?:week|month|"
    + EN_DAY
    + r"))(?![a-z])"
    r"|明天|后天|今天|下周|下星期|(?<![a-z])(?:in|after)\s+\d+\s*(?:min|hour|day|week)"
    # A repeat not understood ("every first monday", "每月5号和20号") is not a one-off.
    r"|(?<![a-z])(?:every|each)\s+(?:[a-z]+\s+){0,3}(?:days?|weeks?|months?|years?|hours?"
    r"|minutes?|mornings?|evenings?|nights?|weekends?|" + EN_DAY + r"s?)(?![a-z])"
    r"|每(?:天|日|周|星期|礼拜|月|年|隔|晚|早|小时|分钟|个(?:月|周|星期|工作日))"
)


def _clean(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    for _ in range(12):
        before = text
        text = LEADING.sub("", text, count=1).strip()
        text = TRAILING.sub("", text, count=1).strip()
        text = re.sub(r"^(?:on|at|in|by)\s+(?=\S)", "", text) if text.startswith(" ") else text
        if text == before:
            break
    return text


def read(text: str) -> Reading | None:
    """The parts of the time expression in ``text``, or ``None`` if it has none or is unclear."""
    scanner = Scanner(text)
    reading = Reading()
    _repeat(scanner, reading)
    _offsets(scanner, reading)
    read_dates(scanner, reading)
    read_weeks(scanner, reading)
    read_days(scanner, reading)
    read_clock(scanner, reading)
    read_deadline(scanner, reading)
    if scanner.conflict or reading.unsupported or not reading.has_time:
        return None
    rest = scanner.rest()
    if LEFTOVER_TIME.search(rest.lower()):
        return None
    reading.rest = rest
    reading.text = _clean(rest)
    return reading
