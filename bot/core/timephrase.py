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
"""

from __future__ import annotations

import re

from bot.core.timewords import (
    CN_DAY,
    CN_WEEK,
    EN_DAY,
    EN_MONTH,
    EN_NUM,
    EN_NUMBERS,
    MONTHS_EN,
    NUM,
    ORD,
    PERIOD_DEFAULT,
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
)

# What other modules read from here; the lexical layer lives in ``bot.core.timewords``.
__all__ = ["PERIOD_DEFAULT", "Reading", "normalise", "read"]


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
            if "and a half" in m.group(0):
                amount += 0.5
        _add_offset(reading, scanner, amount, m.group(3))
        if m.group(5):
            extra = en_number(m.group(5))
            if extra is None:
                scanner.conflict = True
                continue
            _add_offset(reading, scanner, extra, m.group(6))


# --- dates ---------------------------------------------------------------------------------

YEAR_CN = re.compile(r"(今年|明年|后年)")
YEAR_EN = re.compile(rf"{B}this\s+year{E}")
DATE_ISO = re.compile(r"(?<!\d)(\d{4})\s*[-/.]\s*(\d{1,2})\s*[-/.]\s*(\d{1,2})(?!\d)")
DATE_CN = re.compile(
    rf"(?:({NUM})\s*年\s*)?({NUM}|下个?|这个?|本)\s*月\s*(?:份\s*)?(?:的\s*)?({NUM})\s*[日号]?"
    rf"|(?<![月\d])(?<![零〇一二两三四五六七八九十])({NUM})\s*[号日](?!子|本|元|记)"
)
DATE_EN = re.compile(
    rf"{B}(?:on\s+)?(?:the\s+)?(\d{{1,2}}){ORD}?\s+(?:of\s+)?({EN_MONTH})\.?(?:,?\s+(\d{{4}}))?{E}"
    rf"|{B}(?:on\s+)?({EN_MONTH})\.?\s+(?:the\s+)?(\d{{1,2}}){ORD}?(?:,?\s+(\d{{4}}))?{E}"
    rf"|{B}(?:on\s+)?the\s+(\d{{1,2}}){ORD}(?:\s+of\s+(?:the|this|next)\s+month)?{E}"
    rf"|{B}(?:on\s+)?(?<![\d/])(\d{{1,2}})/(\d{{1,2}})(?![\d/]){E}"
)


def _dates(scanner: Scanner, reading: Reading) -> None:
    for m in scanner.find(YEAR_CN):
        reading.parts.append("year")
        set_part(reading, scanner, "year_shift", {"今年": 0, "明年": 1, "后年": 2}[m.group(1)])
    for _ in scanner.find(YEAR_EN):
        reading.parts.append("year")
        set_part(reading, scanner, "year_shift", 0)
    for m in scanner.find(DATE_ISO):
        reading.parts.append("date")
        set_part(reading, scanner, "year", int(m.group(1)))
        set_part(reading, scanner, "month", int(m.group(2)))
        set_part(reading, scanner, "day", int(m.group(3)))
    for m in scanner.find(DATE_CN):
        reading.parts.append("date")
        if m.group(4):
            set_part(reading, scanner, "day", cn_number(m.group(4)))
            continue
        if m.group(1):
            set_part(reading, scanner, "year", cn_number(m.group(1)))
        month = m.group(2)
        if month.startswith("下"):
            set_part(reading, scanner, "month", -1)
        elif month[0] in "这本":
            set_part(reading, scanner, "month", 0)
        else:
            set_part(reading, scanner, "month", cn_number(month))
        set_part(reading, scanner, "day", cn_number(m.group(3)))
    for m in scanner.find(DATE_EN):
        reading.parts.append("date")
        if m.group(1):
            day, month, year = m.group(1), m.group(2), m.group(3)
        elif m.group(4):
            month, day, year = m.group(4), m.group(5), m.group(6)
        elif m.group(7):
            set_part(reading, scanner, "day", int(m.group(7)))
            if "next month" in m.group(0):
                set_part(reading, scanner, "month", -1)
            continue
        else:
            first, second = int(m.group(8)), int(m.group(9))
            # Month first (12/24), unless that cannot be a date (24/12).
            if first > 12 >= second:
                first, second = second, first
            set_part(reading, scanner, "month", first)
            set_part(reading, scanner, "day", second)
            continue
        set_part(reading, scanner, "month", MONTHS_EN[month.rstrip(".")])
        set_part(reading, scanner, "day", int(day))
        if year:
            set_part(reading, scanner, "year", int(year))


# --- weekdays and day words ----------------------------------------------------------------

WEEK_CN = re.compile(
    rf"(?:在|于)?(下下个?|下个?|这个?|本|上个?)?\s*{CN_WEEK}\s*([一二三四五六日天末1-7])"
    rf"|(下下个?|下个?|这个?|本)\s*{CN_WEEK}(?![一二三四五六日天末1-7])"
)
WEEK_EN = re.compile(
    rf"{B}(?:on\s+)?(?:(this|next|coming|this\s+coming|the\s+next|the\s+following|last)\s+)?"
    rf"({EN_DAY}|weekend){E}(?:\s+after\s+next{E})?"
    rf"|{B}(next|this)\s+week{E}(?:\s+after\s+next{E})?"
    rf"|{B}(?:of\s+)?next\s+(month|year){E}"
)
SHIFT_CN = {"下下": 2, "下": 1, "这": 0, "本": 0, "上": -1}
DAY_CN = re.compile(
    r"(?:在|于)?(大后天|后天|明天|明日|明儿|今天|今日|今儿|昨天|昨日|前天)"
    r"|(今|明|昨)(晚|早|晨|夜)(?!点)"
)
DAY_CN_DELTA = {"大后天": 3, "后天": 2, "明天": 1, "明日": 1, "明儿": 1, "今天": 0, "今日": 0}
DAY_CN_DELTA |= {"今儿": 0, "昨天": -1, "昨日": -1, "前天": -2, "今": 0, "明": 1, "昨": -1}
DAY_EN = re.compile(
    rf"{B}(?:on\s+)?(?:the\s+)?day\s+after\s+tomorrow{E}|{B}overmorrow{E}"
    rf"|{B}(today|tomorrow|tmrw?|tmr|tomorow|tonight|tonite|yesterday){E}"
    rf"|{B}this\s+(morning|afternoon|evening){E}"
    rf"|{B}(?:the\s+)?day\s+before\s+yesterday{E}"
)


def _weeks(scanner: Scanner, reading: Reading) -> None:
    for m in scanner.find(WEEK_CN):
        reading.parts.append("week")
        if m.group(3):  # 下周 alone: its Monday
            set_part(reading, scanner, "week_shift", SHIFT_CN[m.group(3).rstrip("个")])
            set_part(reading, scanner, "weekday", 0)
            continue
        shift = m.group(1)
        if shift:
            set_part(reading, scanner, "week_shift", SHIFT_CN[shift.rstrip("个")])
        set_part(reading, scanner, "weekday", WEEKDAYS_CN[m.group(2)])
    for m in scanner.find(WEEK_EN):
        reading.parts.append("week")
        after_next = "after next" in m.group(0)
        if m.group(3):  # next week / this week: its Monday, or today for "this"
            if m.group(3) == "this":
                set_part(reading, scanner, "day_delta", 0)
            else:
                set_part(reading, scanner, "week_shift", 2 if after_next else 1)
                set_part(reading, scanner, "weekday", 0)
            continue
        if m.group(4):  # "the 5th next month", "dec 24 next year"; alone they say no day
            if m.group(4) == "month":
                set_part(reading, scanner, "month", -1)
            else:
                set_part(reading, scanner, "year_shift", 1)
            continue
        word = (m.group(1) or "").replace("  ", " ")
        day = m.group(2)
        set_part(reading, scanner, "weekday", 5 if day == "weekend" else WEEKDAYS_EN[day])
        if after_next:
            set_part(reading, scanner, "week_shift", 2)
        elif word in ("next", "the following"):
            set_part(reading, scanner, "week_shift", 1)
        elif word == "last":
            set_part(reading, scanner, "week_shift", -1)


def _days(scanner: Scanner, reading: Reading) -> None:
    for m in scanner.find(DAY_CN):
        reading.parts.append("day")
        if m.group(1):
            set_part(reading, scanner, "day_delta", DAY_CN_DELTA[m.group(1)])
        else:
            set_part(reading, scanner, "day_delta", DAY_CN_DELTA[m.group(2)])
            kind = m.group(3)
            set_part(reading, scanner, "period", "evening" if kind in "晚夜" else "morning")
    for m in scanner.find(DAY_EN):
        reading.parts.append("day")
        text = m.group(0)
        if "after tomorrow" in text or "overmorrow" in text:
            set_part(reading, scanner, "day_delta", 2)
        elif "before yesterday" in text:
            set_part(reading, scanner, "day_delta", -2)
        elif m.group(2):
            set_part(reading, scanner, "day_delta", 0)
            set_part(reading, scanner, "period", m.group(2))
        else:
            word = m.group(1)
            if word.startswith("tom") or word.startswith("tm"):
                set_part(reading, scanner, "day_delta", 1)
            elif word == "yesterday":
                set_part(reading, scanner, "day_delta", -1)
            else:
                set_part(reading, scanner, "day_delta", 0)
                if word.startswith("toni"):
                    set_part(reading, scanner, "period", "evening")


# --- clock and part of the day -------------------------------------------------------------

PERIOD_CN = {
    "凌晨": "dawn", "清晨": "dawn", "早上": "morning", "早晨": "morning", "上午": "morning",
    "早": "morning", "中午": "noon", "正午": "noon", "下午": "afternoon", "午后": "afternoon",
    "傍晚": "dusk", "黄昏": "dusk", "晚上": "evening", "晚": "evening", "夜里": "night",
    "夜间": "night", "夜晚": "night", "半夜": "midnight", "午夜": "midnight", "深夜": "night",
}  # fmt: skip
CN_PERIOD = "|".join(sorted((p for p in PERIOD_CN if len(p) > 1), key=len, reverse=True))
CLOCK_CN = re.compile(
    rf"(?:在|于|到)?\s*({CN_PERIOD}|晚|早)?\s*的?\s*({NUM})\s*(?:点钟?|时|:)\s*"
    rf"(?:(半)|(一刻|1刻)|(三刻|3刻)|(整)|({NUM})\s*分?)?"
)
PERIOD_CN_RE = re.compile(rf"(?:在|于|到)?({CN_PERIOD})")
HOUR_WORDS = "|".join(
    k for k, v in EN_NUMBERS.items() if 1 <= v <= 12 and len(k) > 2 and " " not in k
)
CLOCK_EN = re.compile(
    rf"{B}(?:(?:at|by|around|about|@)\s+)?(?:(half|quarter)\s+(past|to|after)\s+)?"
    rf"(\d{{1,2}})(?:\s*[:.]\s*(\d{{2}}))?\s*(a\.?m\.?|p\.?m\.?|o'?clock|h(?![a-z]))?{E}"
    rf"(?:\s+(?:in\s+the\s+|at\s+)?(morning|afternoon|evening|night){E})?"
    rf"|{B}(?:(?:at|by|around|about)\s+)?(noon|midday|midnight){E}"
    rf"|{B}(?:at\s+)({HOUR_WORDS})"
    rf"(?:\s+(o'?clock))?{E}(?:\s+(?:in\s+the\s+|at\s+)?(morning|afternoon|evening|night){E})?"
)  # fmt: skip
PERIOD_EN = re.compile(rf"{B}(?:in\s+the\s+|at\s+)?(morning|afternoon|evening|night){E}")


def _clock(scanner: Scanner, reading: Reading) -> None:
    for m in scanner.find(CLOCK_EN):
        if m.group(7):
            reading.parts.append("clock")
            word = m.group(7)
            set_part(reading, scanner, "hour", 0 if word == "midnight" else 12)
            set_part(reading, scanner, "period", "midnight" if word == "midnight" else "noon")
            continue
        if m.group(8):
            hour_word, suffix, period = m.group(8), m.group(9), m.group(10)
            value = en_number(hour_word)
            hour, minute_text, frac = int(value or 0), None, None
        else:
            frac = m.group(1)
            hour, minute_text = int(m.group(3)), m.group(4)
            suffix, period = m.group(5), m.group(6)
            # "at 5" is a time; a bare "5" is not (it may be "buy 5 apples").
            said = m.group(0)
            explicit = bool(minute_text or suffix or period or frac) or said[:1] in "ab@"
            if not explicit:
                for i in range(m.start(), m.end()):
                    scanner.masked[i] = False
                continue
        reading.parts.append("clock")
        minute = int(minute_text) if minute_text else 0
        if frac:
            quarter = 30 if frac == "half" else 15
            if m.group(2) == "to":
                hour, minute = hour - 1, 60 - quarter
            else:
                minute = quarter
        if minute > 59:
            scanner.conflict = True
        set_part(reading, scanner, "hour", hour)
        reading.minute = minute
        if suffix:
            suffix = suffix.replace(".", "")
            if suffix in ("am", "pm"):
                reading.meridiem = suffix
        if period:
            set_part(reading, scanner, "period", period)
    for m in scanner.find(CLOCK_CN):
        cn_hour = cn_number(m.group(2))
        if cn_hour is None:
            scanner.conflict = True
            continue
        is_cn_numeral = not m.group(2).isdigit()
        said = m.group(0)
        has_minutes = any(m.group(i) for i in range(3, 8))
        # "买一点水果": a Chinese-numeral hour alone, inside a sentence, is not a time.
        if is_cn_numeral and not m.group(1) and not has_minutes and "钟" not in said:
            before = scanner.current()[: m.start()].rstrip()
            if before and before[-1] not in "\0,，。 在于到是我":
                for i in range(m.start(), m.end()):
                    scanner.masked[i] = False
                continue
        reading.parts.append("clock")
        if m.group(1):
            set_part(reading, scanner, "period", PERIOD_CN[m.group(1)])
        minute = 0
        if m.group(3):
            minute = 30
        elif m.group(4):
            minute = 15
        elif m.group(5):
            minute = 45
        elif m.group(7):
            value = cn_number(m.group(7))
            if value is None or value > 59:
                scanner.conflict = True
                continue
            minute = value
        set_part(reading, scanner, "hour", cn_hour)
        reading.minute = minute
    for m in scanner.find(PERIOD_CN_RE):
        reading.parts.append("period")
        set_part(reading, scanner, "period", PERIOD_CN[m.group(1)])
    for m in scanner.find(PERIOD_EN):
        reading.parts.append("period")
        set_part(reading, scanner, "period", m.group(1))


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
    _dates(scanner, reading)
    _weeks(scanner, reading)
    _days(scanner, reading)
    _clock(scanner, reading)
    if scanner.conflict or reading.unsupported or not reading.has_time:
        return None
    rest = scanner.rest()
    if LEFTOVER_TIME.search(rest.lower()):
        return None
    reading.text = _clean(rest)
    return reading
