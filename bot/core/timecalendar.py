"""The day and the time of day a phrase names: dates, weekdays, day words, clock, part of the day.

The readers of ``bot.core.timephrase`` that find a point on the calendar and the clock, in the
order ``timephrase.read`` calls them, after repeats and offsets: years and dates ("2027-03-05",
"3月5号", "dec 24", "12/24"), weekdays and weeks ("下周五", "next friday", "next week"), day
words ("后天", "tomorrow", "tonight"), then clock times ("3点半", "at 5pm", "half past 7") and,
last, a part of the day alone ("下午", "in the evening"), and a deadline word right against what
was read ("before Friday", "3月1日之前", "周五前": ``read_deadline``). Each takes the ``Scanner``
and the ``Reading`` being filled (``bot.core.timewords``); what a reader matches is masked for
the next.
"""

from __future__ import annotations

import re

from bot.core.timewords import (
    CN_WEEK,
    EN_DAY,
    EN_MONTH,
    EN_NUMBERS,
    LAST_DAY,
    MONTHS_EN,
    NUM,
    ORD,
    WEEKDAYS_CN,
    WEEKDAYS_EN,
    B,
    E,
    Reading,
    Scanner,
    cn_number,
    en_number,
    set_part,
    words,
)

# --- dates ---------------------------------------------------------------------------------

YEAR_CN = re.compile(r"(今年|明年|后年)")
YEAR_EN = re.compile(rf"{B}this\s+year{E}")
DATE_ISO = re.compile(r"(?<!\d)(\d{4})\s*[-/.]\s*(\d{1,2})\s*[-/.]\s*(\d{1,2})(?!\d)")
# "3号楼", "2号线", "5号电池", "9号球衣": a number that names a thing, not a day of the month.
CN_LABELLED = (
    r"楼|线|房|门|床|位|窗|柜|台|桌|座|厅|馆|院|车|口|电池|球|字|码|机|包|箱|站|坑|道|层|栋|单元"
    r"|教室|病房|展|仓|库|间|铺|盒|店|厂|闸|出口|入口|通道|场|仓|货架|选手|种子|队员|病人|患者"
)
# "B2层 23号", "12排5号", "第3号": after a place's part or an ordinal, a number is a label.
CN_LABEL_BEFORE = re.compile(r"(?:[层楼栋幢座区排室房号第列组#]|[a-z]\d*)\s*$")
# "the 14th floor", "the 5th grade": an ordinal that counts something, not a day.
EN_ORDINAL_NOUNS = (
    r"floor|fl|grade|street|st|avenue|ave|row|century|place|time|edition|round|lap|percentile"
    r"|hole|inning|chapter|page|level|storey|story|term|semester|attempt|try|position"
    r"|amendment|anniversary|birthday|draft|version|gen|generation|season|episode|seat|lane"
)
DATE_CN = re.compile(
    rf"(?:({NUM})\s*年\s*)?({NUM}|下个?|这个?|本)\s*月\s*(?:份\s*)?(?:的\s*)?({NUM})\s*[日号]?"
    rf"|(?<![月\d])(?<![零〇一二两三四五六七八九十])({NUM})\s*[号日](?!子|本|元|记|{CN_LABELLED})"
)
DATE_EN = re.compile(
    rf"{B}(?:on\s+)?(?:the\s+)?(\d{{1,2}}){ORD}?\s+(?:of\s+)?({EN_MONTH})\.?(?:,?\s+(\d{{4}}))?{E}"
    rf"|{B}(?:on\s+)?({EN_MONTH})\.?\s+(?:the\s+)?(\d{{1,2}}){ORD}?(?:,?\s+(\d{{4}}))?{E}"
    rf"|{B}(?:on\s+)?the\s+(\d{{1,2}}){ORD}(?:\s+of\s+(?:the|this|next)\s+month)?{E}"
    rf"(?!\s+(?:{EN_ORDINAL_NOUNS}){E})"
    rf"|{B}(?:on\s+)?(?<![\d/])(\d{{1,2}})/(\d{{1,2}})(?![\d/]){E}"
)


# The month's last day: "by the end of the month", "end of next month", 月底, 下个月底, 本月末;
# not 每月月底 (a repeat, read before).
MONTH_END = re.compile(
    rf"{B}(?:(?:on|at|by)\s+)?(?:the\s+)?end\s+of\s+(?:the\s+|this\s+|(next)\s+)?month{E}"
    r"|(?<!每)(?<!每个)(?:(下个?)|这个?|本)?月(?:底|末)"
)


def read_dates(scanner: Scanner, reading: Reading) -> None:
    for m in scanner.find(MONTH_END):
        reading.parts.append("date")
        set_part(reading, scanner, "month", -1 if m.group(1) or m.group(2) else 0)
        set_part(reading, scanner, "day", LAST_DAY)
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
        if m.group(4) and CN_LABEL_BEFORE.search(scanner.current()[: m.start()]):
            for i in range(m.start(), m.end()):
                scanner.masked[i] = False  # "B2层 23号": the place's number, read as text
            continue
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
            if "next month" in words(m.group(0)):
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
    r"(?:在|于)?(大后天|后天|明天|明日|明儿|今天|今日|今儿|昨天|昨日|前天)(?:晚些时候|晚点儿?|稍后)?"
    r"|(今|明|昨)(晚|早|晨|夜)(?!点)"
)
DAY_CN_DELTA = {"大后天": 3, "后天": 2, "明天": 1, "明日": 1, "明儿": 1, "今天": 0, "今日": 0}
DAY_CN_DELTA |= {"今儿": 0, "昨天": -1, "昨日": -1, "前天": -2, "今": 0, "明": 1, "昨": -1}
DAY_EN = re.compile(
    rf"{B}(?:on\s+)?(?:the\s+)?day\s+after\s+tomorrow{E}|{B}overmorrow{E}"
    rf"|{B}(?:later\s+(?:on\s+)?)?(today|tomorrow|tmrw?|tmr|tomorow|tonight|tonite|yesterday){E}"
    rf"|{B}(?:later\s+(?:on\s+)?)?this\s+(morning|afternoon|evening){E}"
    rf"|{B}(?:the\s+)?day\s+before\s+yesterday{E}"
)


def read_weeks(scanner: Scanner, reading: Reading) -> None:
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
        after_next = "after next" in words(m.group(0))
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
        word = words(m.group(1) or "")
        day = m.group(2)
        set_part(reading, scanner, "weekday", 5 if day == "weekend" else WEEKDAYS_EN[day])
        if after_next:
            set_part(reading, scanner, "week_shift", 2)
        elif word in ("next", "the following"):
            set_part(reading, scanner, "week_shift", 1)
        elif word == "last":
            set_part(reading, scanner, "week_shift", -1)


def read_days(scanner: Scanner, reading: Reading) -> None:
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
        text = words(m.group(0))
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
    "下班后": "dusk", "下班以后": "dusk", "下班之后": "dusk", "放学后": "afternoon",
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
PERIOD_EN = re.compile(
    rf"{B}(?:in\s+the\s+|at\s+)?(morning|afternoon|evening|night){E}"
    rf"|{B}(after\s+work|after\s+school){E}"
)
AFTER = {"after work": "dusk", "after school": "afternoon"}  # the part of the day they begin


def _zero_padded(hour: str | None) -> bool:
    """Whether an hour is written with a leading zero ("02", "07"): the 24-hour clock's way."""
    return hour is not None and len(hour) == 2 and hour.startswith("0")


def read_clock(scanner: Scanner, reading: Reading) -> None:
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
        reading.zero_padded = _zero_padded(m.group(3))
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
        reading.zero_padded = _zero_padded(m.group(2))
    for m in scanner.find(PERIOD_CN_RE):
        reading.parts.append("period")
        set_part(reading, scanner, "period", PERIOD_CN[m.group(1)])
    for m in scanner.find(PERIOD_EN):
        reading.parts.append("period")
        after = " ".join(m.group(2).lower().split()) if m.group(2) else None
        set_part(reading, scanner, "period", AFTER[after] if after else m.group(1))


# --- a deadline ----------------------------------------------------------------------------

# "before" right before what was read ("before friday", "before March 1", "before 8am"), or
# 之前 / 以前 / 前 right after it ("周五之前", "3月1日以前", "明天下午三点前"); not 前 that
# starts another word (前台, 前面, 前往, 前后: "三点前后" is "around three").
BEFORE_EN = re.compile(r"(?<![a-z])before\s*(?=\0)")
BEFORE_CN = re.compile(r"(?<=\0)\s*(?:之前|以前|前)(?![天年面台门排夕辈往去来进后])")


def read_deadline(scanner: Scanner, reading: Reading) -> None:
    """Mark a day or a time said as a deadline (``Reading.before``): a reminder before it comes
    ahead of it (``bot.core.due.Due.ahead_of``). Not for an offset ("两小时前" is two hours
    ago) nor a repeat (its words stay in the text)."""
    if reading.frequency is not None or not reading.has_time:
        return
    if any(x is not None for x in (reading.offset_minutes, reading.offset_days)):
        return
    if reading.offset_months is not None:
        return
    if scanner.find(BEFORE_EN) or scanner.find(BEFORE_CN):
        reading.before = True
