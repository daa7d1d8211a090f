"""The words of time phrases and the scanner that reads them: the lexical layer of ``timephrase``.

Here are the pieces every reader of ``bot.core.timephrase`` shares: numbers as people write them
(digits, Chinese numerals 一 十二 两 〇, English words "a couple of"), the names of weekdays and
months in both languages, the word boundaries English needs and Chinese does not, the parts of
the day, the ``Reading`` a phrase is read into, and the ``Scanner`` that holds the phrase.

The scanner matches against a normalised, lower-cased copy of the text (full-width digits and
punctuation to ASCII): every character maps to exactly one, so a span found in the copy is the
same span in the original, and the unmatched rest keeps the user's own spelling. A matched span
is masked so that a later pattern cannot read it again; ``set_part`` records a part and marks a
second, different value for the same part as a conflict (the phrase is then unreadable).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A number as people write it: digits, or Chinese numerals (一, 十二, 二十四, 两, 〇).
CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4}
CN_DIGITS |= {"五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
NUM = r"(?:\d{1,4}|[零〇一二两三四五六七八九十]{1,4})"
EN_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50,
    "sixty": 60, "ninety": 90, "couple of": 2, "a couple of": 2, "few": 3, "a few": 3,
}  # fmt: skip
EN_NUM = (
    r"(?:\d+(?:\.\d+)?|a couple of|couple of|a few|forty-five|"
    + "|".join(sorted((k for k in EN_NUMBERS if " " not in k), key=len, reverse=True))
    + ")"
)
WEEKDAYS_EN = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
    "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5, "sunday": 6, "sun": 6,
}  # fmt: skip
EN_DAY = r"(?:" + "|".join(sorted(WEEKDAYS_EN, key=len, reverse=True)) + r")"
WEEKDAYS_CN = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6, "末": 5}
WEEKDAYS_CN |= {str(i + 1): i for i in range(7)}
CN_DAY = r"[一二三四五六日天1-7]"
CN_WEEK = r"(?:周|星期|礼拜)"
MONTHS_EN = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4,
    "apr": 4, "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
    "december": 12, "dec": 12,
}  # fmt: skip
EN_MONTH = r"(?:" + "|".join(sorted(MONTHS_EN, key=len, reverse=True)) + r")"
ORD = r"(?:st|nd|rd|th)"
# English words are bounded by non-letters; Chinese needs no boundary.
B = r"(?<![a-z0-9])"
E = r"(?![a-z0-9])"

# Parts of the day: the hour they stand for alone, and how a clock hour within them reads.
PERIOD_DEFAULT = {"dawn": 6, "morning": 9, "noon": 12, "afternoon": 15, "dusk": 18}
PERIOD_DEFAULT |= {"evening": 20, "night": 21, "midnight": 0}
# When a part of the day is over, in minutes from that day's midnight ("tonight" lasts until
# 01:00; "today" named alone until the day ends): ``bot.core.when`` reads a part of today said
# after its default hour as later in it, while it lasts.
PERIOD_END = {"morning": 12 * 60, "noon": 14 * 60, "afternoon": 18 * 60, "dusk": 20 * 60}
PERIOD_END |= {"evening": 25 * 60, "night": 25 * 60}
DAY_END = 24 * 60
LAST_DAY = -1  # ``Reading.day`` of "the end of the month": its last day, whatever its length


@dataclass
class Reading:
    """What a phrase says, part by part (``None``: the phrase does not say)."""

    text: str = ""
    offset_minutes: float | None = None  # "in 2 hours", "半小时后"
    offset_days: int | None = None  # "in 3 days", "两周后"
    offset_months: int | None = None  # "in 2 months", "三个月后"
    day_delta: int | None = None  # today 0, tomorrow 1, 后天 2, yesterday -1
    week_shift: int | None = None  # this week 0, next week 1, 下下周 2; None with a weekday: next
    weekday: int | None = None  # 0 Monday
    year: int | None = None
    year_shift: int | None = None  # this year 0, next year 1, 后年 2
    month: int | None = None
    day: int | None = None  # LAST_DAY: the month's last day ("end of the month", 月底)
    hour: int | None = None
    minute: int = 0
    zero_padded: bool = False  # the hour written "02": a 24-hour time ("02:30" is 02:30)
    meridiem: str | None = None  # "am", "pm"
    period: str | None = None  # a key of PERIOD_DEFAULT
    frequency: str | None = None  # daily, weekdays, weekly, monthly, yearly
    interval: int = 1
    weekdays: tuple[int, ...] = ()
    unsupported: bool = False  # "every hour": a rule a Due cannot hold
    before: bool = False  # "before Friday", "周五之前": a deadline, the reminder comes ahead of it
    parts: list[str] = field(default_factory=list)
    rest: str = ""  # the phrase with each time expression replaced by a space (``text`` uncleaned)

    @property
    def has_time(self) -> bool:
        return bool(self.parts)


def cn_number(token: str) -> int | None:
    """``"二十四"`` -> 24, ``"12"`` -> 12, ``"二〇二七"`` -> 2027; ``None`` if not a number."""
    if token.isdigit():
        return int(token)
    if "十" in token:
        head, _, tail = token.partition("十")
        if "十" in tail or (head and head not in CN_DIGITS) or (tail and tail not in CN_DIGITS):
            return None
        return CN_DIGITS.get(head, 1) * 10 + CN_DIGITS.get(tail, 0)
    if all(c in CN_DIGITS for c in token):
        value = 0
        for c in token:
            value = value * 10 + CN_DIGITS[c]
        return value
    return None


def en_number(token: str) -> float | None:
    token = token.strip()
    try:
        return float(token)
    except ValueError:
        value = EN_NUMBERS.get(words(token))
        return None if value is None else float(value)


def words(text: str) -> str:
    """``text``'s words joined by one space: the patterns take any whitespace between words,
    and what they matched is compared with phrases written with one ("day  after\ttomorrow")."""
    return " ".join(text.split())


def normalise(text: str) -> str:
    """Full-width ASCII to ASCII, the ideographic space to a space, curly quotes to straight.

    Every character maps to exactly one, so positions in the result are positions in ``text``.
    """
    out = []
    for c in text:
        code = ord(c)
        if 0xFF01 <= code <= 0xFF5E:
            c = chr(code - 0xFEE0)
        elif c == "\u3000":
            c = " "
        elif c in "\u2019\u2018":
            c = "'"
        out.append(c)
    return "".join(out)


class Scanner:
    """The phrase being read: the lower-cased text, with the spans already read masked."""

    def __init__(self, text: str) -> None:
        self.original = normalise(text)
        self.work = "".join(c.lower() if len(c.lower()) == 1 else c for c in self.original)
        self.masked = [False] * len(self.work)
        self.conflict = False

    def find(self, pattern: re.Pattern[str]) -> list[re.Match[str]]:
        """Every match of ``pattern`` in the unmasked text; each is masked as it is found."""
        found = []
        for match in pattern.finditer(self.current()):
            found.append(match)
            for i in range(match.start(), match.end()):
                self.masked[i] = True
        return found

    def current(self) -> str:
        return "".join("\0" if m else c for c, m in zip(self.work, self.masked, strict=True))

    def rest(self) -> str:
        """The unmasked original text, each masked run replaced by one space."""
        out: list[str] = []
        for c, m in zip(self.original, self.masked, strict=True):
            if not m:
                out.append(c)
            elif not out or out[-1] != "\0":
                out.append("\0")
        return "".join(out).replace("\0", " ")


def set_part(reading: Reading, scanner: Scanner, name: str, value: object) -> None:
    """Set one part; a second, different value for the same part is a conflict."""
    old = getattr(reading, name)
    if old is not None and old != value:
        scanner.conflict = True
    setattr(reading, name, value)
