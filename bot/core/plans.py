"""What a person says they will do, and when: the reminder the bot offers for it.

``plan_in(text, now, zone)`` reads a message ("I need to call the plumber tomorrow morning",
"明天下午三点要去接孩子", a stored note, a forwarded message, a transcribed voice note) and
returns a ``Plan``: what to remind of and the ``Due`` it would be, or None. Nothing is set
here: the bot offers the plan with Yes / another time / No (``bot.core.reminder_offers``), and
only a Yes sets a reminder.

A plan is an intention with a future time, both read by code in both languages:

- the time is the reminders' own parser's (``bot.core.when``), in the chat's zone, so that an
  offer and ``/remind`` read the same words the same way; a time that has passed, one the
  parser had to move to its next occurrence (said of a moment already gone), and a vague one
  ("next week", "someday", 下个月, 改天) are no plan;
- the intention is a cue (``bot.core.planwords``): a modal or future word said by the person
  ("need to", "have to", "will", "going to", "I'm meeting", 要, 得, 打算, 准备, 记得), a to-do
  that starts with its verb ("call the bank tomorrow at 10am", 明天去医院复查), or an event the
  person has ("a dentist appointment on Thursday at 2:30pm", "my flight is on …", 有个会);
- what says it is no plan wins over any cue: a question, a negation ("I don't have to work
  tomorrow", 明天不用上班, cancelled, 取消), the past ("I called the plumber at 9", 今天早上跑了五
  公里). Numbers that only look like dates ("B2层 23号", "3号楼", "the 14th floor") are no time
  in the parser itself.

A deadline, "before March 1" / "周五之前", is the parser's own reading, as ``/remind`` has it:
the day before at the default hour (an hour before, when it names a clock time: "before 8am"
is 07:00), and "by Friday" is Friday itself. One reading beyond the parser: a birthday or an
anniversary stated with its date ("Mia's birthday is May 3", "我妈妈的生日是10月5号") is a
yearly reminder on that date.

Measured on ``bench/data/offers_*.jsonl`` (``python -m bench.offers``). A message of several
sentences is read one sentence at a time, the first plan found is offered; a sentence longer
than ``MAX_SENTENCE_CHARS`` is not read (a forwarded article's dates are not plans).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from bot.core import intents, planwords, timephrase
from bot.core.due import Due, Repeat, wall_time
from bot.core.planwords import CJK
from bot.core.timewords import EN_DAY
from bot.core.when import parse_reminder, resolve

MAX_SENTENCES = 6
MAX_SENTENCE_CHARS = 240


@dataclass(frozen=True)
class Plan:
    """A reminder to offer: what to remind of, and when (``due.repeat``: a yearly birthday)."""

    text: str
    due: Due


def plan_in(text: str, now: datetime, zone: ZoneInfo, *, default_hour: int = 9) -> Plan | None:
    """The plan ``text`` states (module docstring), or None; ``now`` is aware."""
    for sentence in sentences(text)[:MAX_SENTENCES]:
        if len(sentence) <= MAX_SENTENCE_CHARS:
            plan = _plan(sentence, now, zone, default_hour)
            if plan is not None:
                return plan
    return None


def sentences(text: str) -> list[str]:
    """``text`` cut after ``.``, ``!``, ``?``, ``。`` ... and at line breaks (not after an
    abbreviation: "Mrs. Chen", "9 a.m. tomorrow")."""
    found: list[str] = []
    for piece in planwords.SENTENCE_END.split(text):
        piece = piece.strip()
        if not piece:
            continue
        if found and planwords.ABBREVIATED.search(found[-1]):
            found[-1] = f"{found[-1]} {piece}"
        else:
            found.append(piece)
    return found


def _plan(sentence: str, now: datetime, zone: ZoneInfo, default_hour: int) -> Plan | None:
    said = timephrase.normalise(sentence).strip()
    if not said or intents.is_question(said):
        return None
    body = intents.note_of(said) or said  # "remember to call mom at 5": "call mom at 5"
    parsed = parse_reminder(body, now, zone, default_hour=default_hour)
    if parsed is None:  # "周日晚上要准备下周的会议材料": 下周的 says which, not when
        body = planwords.EN_TIME_OF.sub(" ", planwords.ZH_TIME_OF.sub(" ", body))
        parsed = parse_reminder(body, now, zone, default_hour=default_hour)
    reading = timephrase.read(body)
    if parsed is None or reading is None:
        return None
    english = _spelled_out(body)
    if _denied(body, english, reading.rest) or _vague(body, english):
        return None
    named = parsed.deadline or parsed.due  # the time the sentence names
    birthday = _birthday(body, english, named, parsed.text, now, zone, default_hour)
    if birthday is not None:
        return birthday
    if named.at <= now or (named.moved and _names_a_day(reading)):
        return None  # passed, or a day whose time had passed: said of what is over
    if not _intends(body, english, reading.rest, parsed.text):
        return None
    due = _evening(body, named, reading)
    if parsed.deadline is not None:
        due = due.ahead_of()  # "before Friday": ahead of it, as /remind reads it
        if due.at <= now:
            return None
    return Plan(_what(parsed.text, reading.rest) or body, due)


def _spelled_out(text: str) -> str:
    """``text`` lower-cased with its English contractions spelled out ("i'll" -> "i will")."""
    return _expanded(text.lower())


def _expanded(text: str) -> str:
    """``text`` with its English contractions spelled out, its case kept."""
    for pattern, replacement in planwords.EN_CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return text


def _names_a_day(reading: timephrase.Reading) -> bool:
    """Whether the phrase names a day (not only a clock time: "at 8am" said at 10:00 is
    tomorrow's 8am, as ``/remind`` reads it; "on Tuesday" said on Tuesday afternoon is over)."""
    days = (reading.offset_days, reading.offset_months, reading.day_delta, reading.weekday)
    return any(d is not None for d in (*days, reading.day, reading.frequency))


def _evening(body: str, due: Due, reading: timephrase.Reading) -> Due:
    """An evening's event at 7-11 is p.m.: "dinner on Saturday at 7" is 19:00 (with a day named
    the parser reads "at 7" as 07:00)."""
    hour = reading.hour
    if hour is None or not 7 <= hour <= 11 or reading.meridiem or reading.period:
        return due
    if reading.zero_padded or due.wall.hour != hour or not planwords.EVENING.search(body):
        return due
    wall = due.wall.replace(hour=hour + 12)
    return dataclasses.replace(due, at=wall_time(due.local().date(), wall, due.zone), wall=wall)


def _denied(body: str, english: str, rest: str) -> bool:
    """A negation, the past, someone else's plan or a guess: no plan, whatever else is said."""
    if CJK.search(body):
        # "下周一之前要把合同签了": 了 after a modal is done by then, not done already.
        past = any(
            m.group() != "了" or not planwords.ZH_MODAL.search(body[: m.start()])
            for m in planwords.ZH_PAST.finditer(body)
        )
        if planwords.ZH_NEGATION.search(body) or past:
            return True
        if planwords.ZH_NOT_MINE.search(rest):
            return True
    english = planwords.EN_NOT_NEGATION.sub(" ", english)
    return bool(planwords.EN_NEGATION.search(english) or planwords.EN_PAST.search(english))


def _vague(body: str, english: str) -> bool:
    """A time too vague to remind at: "next week" (no day), "someday", 下个月, 改天."""
    if planwords.EN_VAGUE.search(english) or planwords.ZH_VAGUE.search(body):
        return True
    weekday = re.search(rf"\b{EN_DAY}s?\b", english) is not None
    return bool(planwords.EN_WEEK_ALONE.search(english)) and not weekday


def _intends(body: str, english: str, rest: str, text: str) -> bool:
    """Whether the sentence says the person will do something (module docstring)."""
    if planwords.ZH_MODAL.search(rest) or planwords.ZH_HAVE_EVENT.search(rest):
        return True
    todo = planwords.ZH_LEAD.sub("", rest.strip())
    if CJK.search(rest) and (
        planwords.ZH_TODO_AT_START.match(todo) or planwords.ZH_EVENT_ALONE.match(rest.strip())
    ):
        return True
    cleaned = _spelled_out(text)
    return bool(
        planwords.EN_WILL_DO.search(english)
        or planwords.EN_WILL_DO.match(cleaned)
        or planwords.EN_HAVE_EVENT.search(english)
        or planwords.EN_MY_EVENT.search(english)
        or planwords.EN_IMPERATIVE.match(cleaned)
        or planwords.EN_EVENT_AT_START.match(cleaned)
    )


def _birthday(
    body: str,
    english: str,
    due: Due,
    text: str,
    now: datetime,
    zone: ZoneInfo,
    default_hour: int,
) -> Plan | None:
    """A birthday or an anniversary stated with its day: a yearly reminder on that day."""
    if not (planwords.EN_BIRTHDAY.search(english) or planwords.ZH_BIRTHDAY.search(body)):
        return None
    if not due.date_only or due.repeat is not None or due.at <= now:
        return None
    day = due.local().date()
    yearly = resolve(zone, now, local=day.isoformat(), repeat=Repeat("yearly"))
    if default_hour != yearly.wall.hour:
        yearly = resolve(
            zone, now, local=day.isoformat(), repeat=Repeat("yearly"), default_hour=default_hour
        )
    what = re.sub(r"\s+(?:is|was|falls|will\s+be)$|[是为在]$", "", _tail(text), flags=re.I)
    return Plan(what or body, yearly)


def _tail(text: str) -> str:
    text = planwords.EN_TAIL.sub("", text.strip())
    return planwords.ZH_TAIL.sub("", text).strip()


def _what(text: str, rest: str = "") -> str:
    """The reminder's text: the plan without who intends it and how ("I need to", 我要).
    Chinese is cut from ``rest`` (the sentence without its time), not from the parser's
    ``text``, whose cleaning drops 请 ("please") from 请客户吃饭."""
    what = _tail(text)
    if CJK.search(what[:1]):
        raw = re.sub(r"\s+", " ", rest).strip()
        what = planwords.ZH_LEAD.sub("", _tail(raw) if CJK.search(raw[:1]) else what)
        what = re.sub(r"(?<=[\u3400-\u9fff]) (?=[\u3400-\u9fff])", "", what)
    else:
        what = _expanded(what)
        lead = planwords.EN_LEAD.match(what)
        if lead is not None:
            what = what[lead.end() :]
    return _tail(what) or text.strip()
