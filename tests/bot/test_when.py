"""Reminder times: phrases read right, repeats that follow the wall clock through DST."""

from __future__ import annotations

import json
from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.reminder_bench import judge
from bench.reminder_phrases import PHRASES
from bot.core.due import Due, Repeat, wall_time
from bot.core.when import asks_for_reminder, parse_reminder, resolve

SHANGHAI = ZoneInfo("Asia/Shanghai")
BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=SHANGHAI)  # a Tuesday


def local(when: datetime, zone: ZoneInfo) -> str:
    return when.astimezone(zone).strftime("%Y-%m-%d %H:%M")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


# --- the phrase set ------------------------------------------------------------------------


def test_the_phrase_set_is_read_at_least_95_percent_right() -> None:
    chinese = [p for p in PHRASES if any("\u4e00" <= c <= "\u9fff" for c in p.text)]
    assert len(PHRASES) >= 100 and len(chinese) >= 40 and len(PHRASES) - len(chinese) >= 40
    outcomes = [judge(p) for p in PHRASES]
    misses = [f"{o.phrase.text!r}: {o.got}" for o in outcomes if not o.right]
    assert (len(outcomes) - len(misses)) / len(outcomes) >= 0.95, misses


def test_text_without_a_time_is_none_never_a_guess() -> None:
    for text in ("call mom", "remind me to call mom", "提醒我买一点水果", "", "   ", "看牙医"):
        assert parse_reminder(text, NOW, SHANGHAI) is None, text


def test_a_time_that_cannot_be_or_a_rule_a_due_cannot_hold_is_none() -> None:
    for text in (
        "tomorrow at 25:00 call",
        "明天25点开会",
        "every hour drink water",
        "每小时喝水",
        "every 15 minutes stretch",
        "每月5号和20号 还款",
        "tomorrow next friday gym",
        "every first monday of the month review",
        "明年 续签",
    ):
        assert parse_reminder(text, NOW, SHANGHAI) is None, text


WORDS = [w for p in PHRASES for w in p.text.split()]
WORDS += ["in 99999999 years", "9999-12-31", "2/30", "31号", "every 0 days", "每0天", "99:99"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS) | st.text(max_size=8), min_size=1, max_size=6))
def test_any_text_is_a_reminder_or_none_never_an_error(words: list[str]) -> None:
    text = " ".join(words)
    asks_for_reminder(text)
    parsed = parse_reminder(text, NOW, SHANGHAI)
    if parsed is not None:
        due = parsed.due
        assert due.at.utcoffset() is not None and due.zone is SHANGHAI
        later = due.next_after(due.at)
        assert later is None or later > due.at


def test_the_reminders_text_leaves_out_the_time_and_the_request() -> None:
    cases = {
        "remind me tomorrow to call mom": "call mom",
        "Please remind me that the rent is due on Friday.": "the rent is due",
        "别忘了提醒我明天下午2点去银行！": "去银行",
        "记得提醒我明天要交房租。": "交房租",
        "明天早上8点提醒我带伞": "带伞",
        "in 2 hours": "",
    }
    for text, what in cases.items():
        parsed = parse_reminder(text, NOW, SHANGHAI)
        assert parsed is not None and parsed.text == what, text


def test_a_passed_time_today_moves_to_its_next_occurrence_and_says_so() -> None:
    ten = datetime(2026, 12, 1, 10, 0, tzinfo=SHANGHAI)
    parsed = parse_reminder("9am call", ten, SHANGHAI)
    assert parsed is not None and parsed.due.moved
    assert local(parsed.due.at, SHANGHAI) == "2026-12-02 09:00"
    ahead = parse_reminder("11am call", ten, SHANGHAI)
    assert ahead is not None and not ahead.due.moved
    assert local(ahead.due.at, SHANGHAI) == "2026-12-01 11:00"


@pytest.mark.parametrize(
    ("said_at", "text", "due", "moved"),
    [
        # Before the part's default hour: that hour, as always.
        ("09:00", "tonight call mom", "2026-12-01 20:00", False),
        ("14:30", "今晚 给妈妈打电话", "2026-12-01 20:00", False),
        ("09:40", "this afternoon buy milk", "2026-12-01 15:00", False),
        # Said after it, while the part lasts: the next half hour at least 30 minutes ahead.
        ("21:29", "tonight call mom", "2026-12-01 22:00", False),
        ("21:31", "this evening call mom", "2026-12-01 22:30", False),
        ("20:00", "今晚 给妈妈打电话", "2026-12-01 20:30", False),
        ("22:05", "今天晚上给妈妈打电话", "2026-12-01 23:00", False),
        ("23:40", "tonight take the bins out", "2026-12-02 00:30", False),  # still tonight
        ("21:29", "晚上 打电话给妈妈", "2026-12-01 22:00", False),  # it is the evening now
        ("16:10", "this afternoon pick up the parcel", "2026-12-01 17:00", False),
        ("16:10", "今天下午 取快递", "2026-12-01 17:00", False),
        ("15:00", "later today call the bank", "2026-12-01 15:30", False),
        ("08:00", "later today call the bank", "2026-12-01 09:00", False),  # the default hour
        ("14:10", "今天晚些时候 回电话", "2026-12-01 15:00", False),
        ("13:00", "today water the plants", "2026-12-01 13:30", False),
        ("10:30", "this morning send the form", "2026-12-01 11:00", False),
        # The part is over: the next day's, and the reply says the time had passed.
        ("17:45", "this afternoon pick up the parcel", "2026-12-02 15:00", True),
        ("21:29", "this afternoon call mom", "2026-12-02 15:00", True),
        ("12:30", "this morning send the form", "2026-12-02 09:00", True),
        ("23:40", "later today call the bank", "2026-12-02 09:00", True),
        # A clock time that has passed is still its next occurrence.
        ("21:29", "tonight at 9 call mom", "2026-12-02 21:00", True),
    ],
)
def test_a_part_of_today_said_while_it_lasts_means_later_in_it(
    said_at: str, text: str, due: str, moved: bool
) -> None:
    hour, minute = map(int, said_at.split(":"))
    parsed = parse_reminder(text, NOW.replace(hour=hour, minute=minute), SHANGHAI)
    assert parsed is not None
    assert (local(parsed.due.at, SHANGHAI), parsed.due.moved) == (due, moved)
    assert not any(word in parsed.text for word in ("later", "tonight", "晚些", "今晚"))


def test_tonight_late_in_berlin_crosses_midnight_on_the_local_clock() -> None:
    said = datetime(2026, 3, 28, 23, 50, tzinfo=BERLIN)  # the night the clocks go forward
    parsed = parse_reminder("tonight lock the door", said, BERLIN)
    assert parsed is not None and local(parsed.due.at, BERLIN) == "2026-03-29 00:30"


def test_a_zero_padded_hour_is_the_24_hour_clock_and_a_bare_one_the_next_time_it_shows() -> None:
    noon = datetime(2026, 12, 1, 12, 0, tzinfo=SHANGHAI)  # a Tuesday
    cases = {
        # Issue 23: each was read twelve hours late (14:30, 19:05).
        "every day 02:30 pills": "2026-12-02 02:30",
        "tomorrow 02:30 pills": "2026-12-02 02:30",
        "at 07:05 pills": "2026-12-02 07:05",
        "每天02:30吃药": "2026-12-02 02:30",
        "明天03:00 吃药": "2026-12-02 03:00",
        "on friday 04:00 pills": "2026-12-04 04:00",
        # Unpadded, without a day: the next time the clock shows it; with one, 1-6 is p.m.
        "at 7:05 pills": "2026-12-01 19:05",
        "tomorrow 2:30 pills": "2026-12-02 14:30",
        "tomorrow at 3 pills": "2026-12-02 15:00",
        # am/pm and a part of the day decide, padded or not.
        "at 02:30 pm pills": "2026-12-01 14:30",
        "下午02:30 吃药": "2026-12-01 14:30",
        "tonight 02:30 pills": "2026-12-02 02:30",
    }
    for text, expected in cases.items():
        parsed = parse_reminder(text, noon, SHANGHAI)
        assert parsed is not None and local(parsed.due.at, SHANGHAI) == expected, text


HOURS_24 = [f"{h:02d}" for h in range(10)] + ["0"] + [str(h) for h in range(13, 24)]
CLOCK_PHRASES = [
    "at {} pills",
    "{} pills",
    "tomorrow {} pills",
    "every day at {} pills",
    "on friday at {} pills",
    "next monday {} pills",
    "dec 24 {} pills",
    "明天{}吃药",
    "每天{}吃药",
    "下周三{}开会",
]


@settings(max_examples=400, deadline=None)
@given(
    hour=st.sampled_from(HOURS_24),
    minute=st.integers(0, 59),
    phrase=st.sampled_from(CLOCK_PHRASES),
    zone=st.sampled_from([SHANGHAI, BERLIN, ZoneInfo("America/New_York"), ZoneInfo("UTC")]),
    now=st.datetimes(datetime(2026, 1, 1), datetime(2030, 12, 31)),
)
def test_a_24_hour_clock_time_is_that_time_of_day_whenever_it_is_said(
    hour: str, minute: int, phrase: str, zone: ZoneInfo, now: datetime
) -> None:
    text = phrase.format(f"{hour}:{minute:02d}")
    parsed = parse_reminder(text, now.replace(tzinfo=zone), zone)
    assert parsed is not None, text
    asked = time(int(hour), minute)
    assert parsed.due.wall == asked, text
    shown = parsed.due.local()
    # Only a wall time the clocks skip that day (daylight saving) shows otherwise.
    exists = wall_time(shown, asked, zone).astimezone(zone).time() == asked
    assert shown.time() == asked or not exists, text


def test_a_date_without_a_year_is_the_next_one_and_a_pinned_past_is_left_for_refusal() -> None:
    march = parse_reminder("3月1日 交税", NOW, SHANGHAI)
    assert march is not None and not march.due.moved and march.due.date_only
    assert local(march.due.at, SHANGHAI) == "2027-03-01 09:00"
    for text in ("yesterday at 9am call", "昨天下午三点 开会", "2026-11-30 10:00 report"):
        past = parse_reminder(text, NOW, SHANGHAI)
        assert past is not None and past.due.at <= NOW and not past.due.moved, text


def test_a_day_without_a_time_is_at_the_default_hour() -> None:
    parsed = parse_reminder("后天 体检", NOW, SHANGHAI, default_hour=8)
    assert parsed is not None and parsed.due.date_only
    assert local(parsed.due.at, SHANGHAI) == "2026-12-03 08:00"
    timed = parse_reminder("后天下午三点 体检", NOW, SHANGHAI, default_hour=8)
    assert timed is not None and not timed.due.date_only


def test_weekdays_in_a_rule_are_kept_not_read_as_every_day() -> None:
    parsed = parse_reminder("每个工作日 7:30 跑步", NOW, SHANGHAI)
    assert parsed is not None and parsed.due.repeat == Repeat("weekdays")
    friday = datetime(2026, 12, 4, 7, 30, tzinfo=SHANGHAI)
    due = Due(friday.astimezone(UTC), SHANGHAI, time(7, 30), Repeat("weekdays"))
    assert local(due.next_after(friday) or NOW, SHANGHAI) == "2026-12-07 07:30"  # Monday


# --- daylight saving in Europe/Berlin (2026: forward 29 March, back 25 October) ------------


def test_a_weekly_0900_stays_at_0900_local_across_both_changes() -> None:
    spring = parse_reminder(
        "every monday at 9:00 report", datetime(2026, 3, 20, tzinfo=BERLIN), BERLIN
    )
    assert spring is not None and spring.due.at == utc(2026, 3, 23, 8)  # CET
    assert spring.due.next_after(spring.due.at) == utc(2026, 3, 30, 7)  # CEST
    autumn = parse_reminder(
        "every monday at 9:00 report", datetime(2026, 10, 16, tzinfo=BERLIN), BERLIN
    )
    assert autumn is not None and autumn.due.at == utc(2026, 10, 19, 7)  # CEST
    assert autumn.due.next_after(autumn.due.at) == utc(2026, 10, 26, 8)  # CET


def test_a_daily_0230_moves_forward_by_the_gap_and_fires_once_in_the_repeated_hour() -> None:
    now = datetime(2026, 3, 27, 12, 0, tzinfo=BERLIN)
    due = resolve(BERLIN, now, local="2026-03-28 02:30", repeat=Repeat("daily"))
    assert due.at == utc(2026, 3, 28, 1, 30)  # 02:30 CET
    gap = due.next_after(due.at)
    assert gap == utc(2026, 3, 29, 1, 30) and local(gap, BERLIN) == "2026-03-29 03:30"
    after = due.next_after(gap)
    assert after == utc(2026, 3, 30, 0, 30) and local(after, BERLIN) == "2026-03-30 02:30"

    now = datetime(2026, 10, 23, 12, 0, tzinfo=BERLIN)
    due = resolve(BERLIN, now, local="2026-10-24 02:30", repeat=Repeat("daily"))
    first = due.next_after(due.at)
    assert first == utc(2026, 10, 25, 0, 30)  # the first 02:30 (CEST)
    # The clocks then show 02:30 again an hour later (CET): that is not a second occurrence.
    assert due.next_after(first) == utc(2026, 10, 26, 1, 30)
    assert due.next_after(utc(2026, 10, 25, 1, 0)) == utc(2026, 10, 26, 1, 30)


def test_wall_time_of_a_skipped_and_a_repeated_wall_time() -> None:
    assert wall_time(datetime(2026, 3, 29), time(2, 30), BERLIN) == utc(2026, 3, 29, 1, 30)
    assert wall_time(datetime(2026, 10, 25), time(2, 30), BERLIN) == utc(2026, 10, 25, 0, 30)
    assert wall_time(datetime(2026, 7, 1), time(9, 0), BERLIN) == utc(2026, 7, 1, 7, 0)


def test_an_offset_is_counted_in_real_time_across_the_change() -> None:
    now = datetime(2026, 3, 29, 1, 0, tzinfo=BERLIN)  # 00:00 UTC, an hour before the gap
    parsed = parse_reminder("in 2 hours parking", now, BERLIN)
    assert parsed is not None and parsed.due.at == utc(2026, 3, 29, 2, 0)
    assert resolve(BERLIN, now, offset_minutes=120).at == utc(2026, 3, 29, 2, 0)


# --- repeats -------------------------------------------------------------------------------


def test_monthly_on_day_31_takes_a_short_months_last_day() -> None:
    start = datetime(2027, 1, 31, 9, 0, tzinfo=SHANGHAI)
    due = Due(start.astimezone(UTC), SHANGHAI, time(9), Repeat("monthly", day=31))
    seen, at = [], due.at
    for _ in range(4):
        at = due.next_after(at) or at
        seen.append(local(at, SHANGHAI)[:10])
    assert seen == ["2027-02-28", "2027-03-31", "2027-04-30", "2027-05-31"]
    # A Due re-made from an occurrence in a short month still returns to the 31st.
    again = Due(datetime(2027, 4, 30, 1, 0, tzinfo=UTC), SHANGHAI, time(9), due.repeat)
    assert local(again.next_after(again.at) or NOW, SHANGHAI) == "2027-05-31 09:00"
    parsed = parse_reminder("每月31号 交报告", datetime(2027, 2, 1, tzinfo=SHANGHAI), SHANGHAI)
    assert parsed is not None and local(parsed.due.at, SHANGHAI) == "2027-02-28 09:00"


def test_the_end_of_a_month_is_its_last_day_whatever_its_length() -> None:
    january = datetime(2027, 1, 15, 10, 0, tzinfo=SHANGHAI)
    cases = {
        "pay the rent at the end of the month": "2027-01-31 09:00",
        "end of next month: renew the lease": "2027-02-28 09:00",
        "下个月底 续签合同": "2027-02-28 09:00",
        "本月底 交报告": "2027-01-31 09:00",
        "月底前 交房租": "2027-01-30 09:00",  # before it: the day before, as every deadline
    }
    for text, expected in cases.items():
        parsed = parse_reminder(text, january, SHANGHAI)
        assert parsed is not None and local(parsed.due.at, SHANGHAI) == expected, text
    monthly = parse_reminder("每月月底 交房租", january, SHANGHAI)  # a repeat, read as before
    assert monthly is not None and monthly.due.repeat is not None


def test_every_other_week_counts_from_the_first_occurrence() -> None:
    parsed = parse_reminder("每两周周一上午10点 复盘", NOW, SHANGHAI)
    assert parsed is not None
    due = parsed.due
    first = due.at
    second = due.next_after(first)
    assert second is not None and local(second, SHANGHAI) == "2026-12-21 10:00"
    assert due.next_after(datetime(2026, 12, 8, tzinfo=UTC)) == second


def test_a_one_off_has_no_next_occurrence() -> None:
    parsed = parse_reminder("tomorrow 9am call mom", NOW, SHANGHAI)
    assert parsed is not None and parsed.due.next_after(parsed.due.at) is None


# --- storage -------------------------------------------------------------------------------


def test_a_due_survives_json() -> None:
    dues = [
        resolve(
            BERLIN,
            datetime(2026, 3, 27, tzinfo=BERLIN),
            local="2026-03-28 02:30",
            repeat=Repeat("weekly", 2, (0, 3)),
        ),
        resolve(SHANGHAI, NOW, local="2026-12-24"),
        resolve(SHANGHAI, NOW, offset_minutes=90),
        resolve(SHANGHAI, NOW, repeat=Repeat("monthly", day=31)),
    ]
    for due in dues:
        again = Due.from_json(json.loads(json.dumps(due.to_json())))
        assert again == due and again.next_after(again.at) == due.next_after(due.at)


@pytest.mark.parametrize(
    "value",
    [
        None,
        [],
        "2026-12-01",
        {},
        {"at": "2026-12-01T04:00:00", "zone": "Asia/Shanghai", "wall": "12:00"},  # naive
        {"at": "yesterday", "zone": "Asia/Shanghai", "wall": "12:00"},
        {"at": "2026-12-01T04:00:00+00:00", "zone": "Mars/Olympus", "wall": "12:00"},
        {"at": "2026-12-01T04:00:00+00:00", "zone": "../../etc", "wall": "12:00"},
        {"at": "2026-12-01T04:00:00+00:00", "zone": "Asia/Shanghai", "wall": "25:00"},
        {"at": "2026-12-01T04:00:00+00:00", "zone": "Asia/Shanghai", "wall": 12},
        {
            "at": "2026-12-01T04:00:00+00:00",
            "zone": "Asia/Shanghai",
            "wall": "12:00",
            "repeat": {"frequency": "hourly"},
        },
        {
            "at": "2026-12-01T04:00:00+00:00",
            "zone": "Asia/Shanghai",
            "wall": "12:00",
            "repeat": {"frequency": "weekly", "weekdays": [7]},
        },
        {
            "at": "2026-12-01T04:00:00+00:00",
            "zone": "Asia/Shanghai",
            "wall": "12:00",
            "repeat": {"frequency": "daily", "interval": 0},
        },
        {
            "at": "2026-12-01T04:00:00+00:00",
            "zone": "Asia/Shanghai",
            "wall": "12:00",
            "repeat": "daily",
        },
        {
            "at": "2026-12-01T04:00:00+00:00",
            "zone": "Asia/Shanghai",
            "wall": "12:00",
            "moved": "no",
        },
    ],
)
def test_a_malformed_due_is_a_value_error(value: object) -> None:
    with pytest.raises(ValueError):
        Due.from_json(value)


# --- the model's way in --------------------------------------------------------------------


def test_resolve_reads_a_local_time_an_offset_a_date_and_a_rule() -> None:
    assert local(resolve(SHANGHAI, NOW, local="2026-12-02 09:00").at, SHANGHAI) == (
        "2026-12-02 09:00"
    )
    assert local(resolve(SHANGHAI, NOW, offset_minutes=120).at, SHANGHAI) == "2026-12-01 14:00"
    date_only = resolve(SHANGHAI, NOW, local="2026-12-24", default_hour=8)
    assert date_only.date_only and local(date_only.at, SHANGHAI) == "2026-12-24 08:00"
    assert local(resolve(SHANGHAI, NOW, local="09:00").at, SHANGHAI) == "2026-12-02 09:00"
    weekly = resolve(SHANGHAI, NOW, local="18:30", repeat=Repeat("weekly", weekdays=(4,)))
    assert local(weekly.at, SHANGHAI) == "2026-12-04 18:30"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give one of"),
        ({"local": "2026-12-02 09:00", "offset_minutes": 5}, "only one"),
        ({"offset_minutes": 5, "repeat": Repeat("daily")}, "only one"),
        ({"local": "tomorrow 9am"}, "YYYY-MM-DD HH:MM"),
        ({"local": "2026-02-30 10:00"}, "not a real date"),
        ({"local": "2026-12-01 25:00"}, "not a real date"),
        ({"local": "2026-11-30 10:00"}, "has passed"),
        ({"offset_minutes": 0}, "offset_minutes"),
        ({"offset_minutes": -30}, "offset_minutes"),
        ({"repeat": Repeat("weekly", 0)}, "interval"),
        ({"repeat": Repeat("monthly", day=32)}, "day"),
        ({"local": "2026-11-01 09:00", "repeat": Repeat("daily")}, "has passed"),
    ],
)
def test_resolve_refuses_with_a_message_for_the_model(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        resolve(SHANGHAI, NOW, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("zone", ["Asia/Shanghai", "America/New_York", "Pacific/Kiritimati"])
@pytest.mark.parametrize("repeat", [None, Repeat("yearly"), Repeat("daily")])
@pytest.mark.parametrize(
    ("local", "message"),
    [
        ("0001-01-01 00:30", "has passed"),
        ("0001-01-01", "has passed"),
        ("9999-12-31 23:59", "5 years ahead"),
        ("9999-12-31", "5 years ahead"),
        ("5000-01-01 10:00", "5 years ahead"),
    ],
)
def test_resolve_refuses_a_date_at_the_calendar_s_ends_like_any_bad_date(
    zone: str, repeat: Repeat | None, local: str, message: str
) -> None:
    """Year 1 or 9999 in a zone east or west of UTC used to raise OverflowError (the tool
    failed with a traceback in the log), or set a reminder for the year 9999."""
    with pytest.raises(ValueError, match=message):
        resolve(ZoneInfo(zone), NOW, local=local, repeat=repeat)


# --- which messages ask for a reminder -----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "remind me tomorrow to call mom",
        "Remind me in 2 hours to take the laundry out",
        "please remind me to pay rent on the 1st",
        "can you remind me to email Bob tomorrow?",
        "set a reminder for 6pm: call the bank",
        "提醒我明天交房租",
        "别忘了提醒我明天下午2点去银行",
        "记得提醒我周五交周报",
        "明天早上8点提醒我带伞",
        "你能提醒我明天交房租吗？",
    ],
)
def test_a_request_for_a_reminder_is_one(text: str) -> None:
    assert asks_for_reminder(text)


@pytest.mark.parametrize(
    "text",
    [
        "when did I remind you?",
        "what is a reminder",
        "did you remind me yesterday?",
        "remind me what my wifi password is",
        "how do reminders work?",
        "where is my project?",
        "你提醒过我吗？",
        "你提醒我交房租了吗",
        "什么是提醒",
        "我的代码在 D:\\projects",
    ],
)
def test_a_question_or_a_statement_is_not_a_request(text: str) -> None:
    assert not asks_for_reminder(text)


@pytest.mark.parametrize("gap", ["  ", "\t", " \n ", "\u3000 ", "\u00a0"])
def test_any_whitespace_between_the_words_reads_the_same_time(gap: str) -> None:
    # The patterns take any whitespace between words; what they matched must then be read
    # the same way ("day  after  tomorrow" once raised AttributeError).
    for phrase in PHRASES:
        if " " not in phrase.text:
            continue
        spaced = phrase.text.replace(" ", gap)
        single = parse_reminder(phrase.text, NOW, SHANGHAI)
        spread = parse_reminder(spaced, NOW, SHANGHAI)
        assert (single and single.due) == (spread and spread.due), (phrase.text, spaced)
