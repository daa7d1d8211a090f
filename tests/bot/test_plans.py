"""What people say they will do, and when: the plans a reminder is offered for (issue 26).

The table of phrases the rules of ``bot.core.plans`` (words in ``bot.core.planwords``) are held
to; the benchmark (``python -m bench.offers``) measures them on two larger sets.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from bench.offers import DATA, figures, judge, read_cases
from bot.core.dating import date_named
from bot.core.plans import plan_in, sentences
from bot.core.when import parse_reminder

SHANGHAI = ZoneInfo("Asia/Shanghai")
BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 12, 1, 10, 0, tzinfo=SHANGHAI)  # a Tuesday


def offered(text: str, now: datetime = NOW) -> str | None:
    """The offered local time (with its rule) and text, or None."""
    plan = plan_in(text, now, now.tzinfo)  # type: ignore[arg-type]
    if plan is None:
        return None
    rule = f" {plan.due.repeat.frequency}" if plan.due.repeat is not None else ""
    return f"{plan.due.local():%Y-%m-%d %H:%M}{rule} | {plan.text}"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I need to call the plumber tomorrow morning", "2026-12-02 09:00 | call the plumber"),
        ("明天下午三点要去接孩子", "2026-12-02 15:00 | 去接孩子"),
        ("I'll pick up the parcel at 4pm tomorrow", "2026-12-02 16:00 | pick up the parcel"),
        ("下周一要交报告", "2026-12-07 09:00 | 交报告"),
        ("Call the bank tomorrow at 10am", "2026-12-02 10:00 | Call the bank"),
        ("下周二下午三点看牙医", "2026-12-08 15:00 | 看牙医"),
        (
            "I have a dentist appointment on Thursday at 2:30pm",
            "2026-12-03 14:30 | a dentist appointment",
        ),
        ("明天上午九点半有个会", "2026-12-02 09:30 | 有个会"),
        ("Tomorrow I'm driving to Chicago", "2026-12-02 09:00 | driving to Chicago"),
        (
            "I booked a table at Luigi's for Friday at 8pm",
            "2026-12-04 20:00 | booked a table at Luigi's",
        ),
        ("I need to leave in 45 minutes", "2026-12-01 10:45 | leave"),
        ("我们打算周末去看电影", "2026-12-05 09:00 | 去看电影"),
        ("remember to buy flowers for Jane on Saturday", "2026-12-05 09:00 | buy flowers for Jane"),
        ("记得明天交水电费", "2026-12-02 09:00 | 交水电费"),
        # a clock time alone that has passed today is tomorrow's, as /remind reads it
        ("Must call the electrician at 8am", "2026-12-02 08:00 | call the electrician"),
        # an evening's event: "at 7" with a day named is 19:00
        ("I'm hosting a dinner on Saturday at 7", "2026-12-05 19:00 | hosting a dinner"),
        ("明天七点吃晚饭", "2026-12-02 19:00 | 吃晚饭"),
        (
            "I'll water Mrs. Chen's plants on Thursday",
            "2026-12-03 09:00 | water Mrs. Chen's plants",
        ),
        (
            "The kids have a dentist check-up on the 14th at 4pm",
            "2026-12-14 16:00 | The kids have a dentist check-up",
        ),
        ("明天七点半的火车去苏州", "2026-12-02 07:30 | 火车去苏州"),
        ("周五中午要请客户吃饭", "2026-12-04 12:00 | 请客户吃饭"),
        ("下周一之前要把合同签了", "2026-12-06 09:00 | 把合同签"),  # done by then
        # repeats
        ("I need to water the plants every Sunday", "2026-12-06 09:00 weekly | water the plants"),
        ("每天晚上十点要吃药", "2026-12-01 22:00 daily | 吃药"),
        # after work: the evening's start; after school: the afternoon's
        (
            "I have to return the library books Friday after work",
            "2026-12-04 18:00 | return the library books",
        ),
        ("周四下班后要去修手机", "2026-12-03 18:00 | 去修手机"),
        ("明天放学后要带女儿去剪头发", "2026-12-02 15:00 | 带女儿去剪头发"),
    ],
)
def test_an_intention_with_a_time_is_offered_at_that_time(text: str, expected: str) -> None:
    assert offered(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I have to renew my visa before March 1", "2027-02-28 09:00 | renew my visa"),
        ("I need to move my car before 8am tomorrow", "2026-12-02 07:00 | move my car"),
        ("我得在周五之前交房租", "2026-12-03 09:00 | 交房租"),
        ("今天下午4点前要把合同发给客户", "2026-12-01 15:00 | 把合同发给客户"),
        ("I have to submit the report by Friday", "2026-12-04 09:00 | submit the report"),
        (
            "I need to pay the gas bill by the end of the month",
            "2026-12-31 09:00 | pay the gas bill",
        ),
        ("下个月底要续签合同", "2027-01-31 09:00 | 续签合同"),
    ],
)
def test_before_a_day_is_the_day_before_and_by_a_day_is_that_day(text: str, expected: str) -> None:
    assert offered(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mia's birthday is May 3", "2027-05-03 09:00 yearly | Mia's birthday"),
        ("我妈妈的生日是10月5号", "2027-10-05 09:00 yearly | 我妈妈的生日"),
        ("Our anniversary is June 12", "2027-06-12 09:00 yearly | Our anniversary"),
        (
            "My brother's birthday is on the 19th of December",
            "2026-12-19 09:00 yearly | My brother's birthday",
        ),
    ],
)
def test_a_birthday_or_an_anniversary_is_offered_every_year(text: str, expected: str) -> None:
    assert offered(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        # statements, with dates or numbers that look like them
        "my car is at B2 spot 23",
        "车停在B2层 23号",
        "我住在3号楼502",
        "坐地铁2号线到人民广场",
        "Room 1203 is on the 12th floor",
        "The door code is 12/05",
        "My passport expires on March 3 2028",
        "The store closes at 9pm tomorrow",
        "The game starts at 8 tonight",
        "Dinner is at 7",
        "明天是星期三",
        "超市晚上十点关门",
        "明天可能要下雨",
        "It's going to rain tomorrow afternoon",
        "他明天要去北京",
        # past events
        "Yesterday I went to the dentist",
        "我上周去了杭州",
        "I called the plumber at 9",
        "I went to the gym this morning",
        "今天早上跑了五公里",
        "The meeting was moved to next Tuesday",
        # questions
        "What time is it in Tokyo?",
        "Should I call the plumber tomorrow morning?",
        "明天几点开会？",
        "明天要不要带伞",
        # no time, or a vague one
        "I need to buy milk",
        "我要减肥",
        "I'll call you later",
        "Let's catch up sometime next week",
        "下个月要搬家",
        "改天请你吃饭",
        "I might go to the gym tomorrow",
        # negated, cancelled
        "I don't have to work tomorrow",
        "明天不用上班",
        "周五的会取消了",
        "明天别打电话给我",
    ],
)
def test_statements_questions_past_events_and_vague_times_get_no_offer(text: str) -> None:
    assert offered(text) is None


def test_a_time_that_has_passed_or_that_the_parser_moved_is_no_plan() -> None:
    evening = datetime(2026, 12, 1, 19, 0, tzinfo=SHANGHAI)
    assert offered("I need to call him this afternoon", evening) is None
    assert offered("I have to pay rent on December 1", evening) is None  # not next year's
    assert offered("I need to call him this afternoon") == "2026-12-01 15:00 | call him"


def test_a_message_of_several_sentences_offers_its_first_plan() -> None:
    text = "Long day. The plumber is coming at 9 tomorrow, I need to be home! Thanks"
    assert sentences(text) == [
        "Long day.",
        "The plumber is coming at 9 tomorrow, I need to be home!",
        "Thanks",
    ]
    assert offered(text) == "2026-12-02 09:00 | The plumber is coming , I need to be home"
    assert offered("Sure. " + "blah " * 60 + "I need to call him tomorrow") is None
    assert sentences("Call Dr. Li at 9 a.m. tomorrow. Then rest.") == [
        "Call Dr. Li at 9 a.m. tomorrow.",
        "Then rest.",
    ]
    assert offered("Call Dr. Li at 9 a.m. tomorrow. Then rest.") == "2026-12-02 09:00 | Call Dr. Li"


def test_the_zone_and_the_default_hour_are_the_chats() -> None:
    now = datetime(2026, 12, 1, 10, 0, tzinfo=BERLIN)
    plan = plan_in("Need to call mom tomorrow", now, BERLIN, default_hour=8)
    assert plan is not None and f"{plan.due.local():%Y-%m-%d %H:%M %Z}" == "2026-12-02 08:00 CET"


def test_a_number_naming_a_place_is_no_date_for_reminders_or_memories() -> None:
    for text in [
        "车停在B2层 23号",
        "我们坐在15排8号",
        "他住在23号房间",
        "the office is on the 14th floor",
    ]:
        assert parse_reminder(text, NOW, SHANGHAI) is None, text
        assert date_named(text, NOW, SHANGHAI) is None, text
    parsed = parse_reminder("明天下午4点要去3号楼开会", NOW, SHANGHAI)
    assert parsed is not None and f"{parsed.due.local():%d %H:%M}" == "02 16:00"
    parsed = parse_reminder("23号交房租", NOW, SHANGHAI)  # a day of the month, as before
    assert parsed is not None and f"{parsed.due.local():%m-%d}" == "12-23"


def test_the_benchmark_sets_are_well_formed_and_their_times_are_real() -> None:
    cases = read_cases(DATA)
    assert {(c.lang, c.half) for c in cases} == {
        (lang, half) for lang in ("en", "zh") for half in ("visible", "hidden")
    }
    assert len({c.text for c in cases}) == len(cases)
    for case in cases:
        assert case.offer == (case.local is not None), case.id
        if case.local is not None:
            assert datetime.strptime(case.local, "%Y-%m-%d %H:%M").replace(tzinfo=case.zone) > (
                case.now
            ), case.id
    visible = figures([judge(c) for c in cases if c.half == "visible"])
    assert visible.offered_rate >= 0.85 and visible.wrong_rate <= 0.05
