"""bot.core.entry: the syntax of what users type after /remember and /edit."""

from __future__ import annotations

import pytest

from bot.core.entry import Entry, parse_entry, split_command
from bot.core.keywords import keywords


@pytest.mark.parametrize(
    ("text", "entry"),
    [
        (
            "work: standup at 10:00 #meeting #Daily",
            Entry("standup at 10:00 #meeting #Daily", ("meeting", "daily"), "work"),
        ),
        ("工作：明天十点开会 #会议", Entry("明天十点开会 #会议", ("会议",), "work")),
        ("健康: 每天吃维生素", Entry("每天吃维生素", (), "health")),
        ("#健康：每天吃维生素", Entry("每天吃维生素", (), "health")),
        ("Ideas: a bot that remembers", Entry("a bot that remembers", (), "idea")),
        ("#菜谱：松饼要两个鸡蛋", Entry("松饼要两个鸡蛋", (), "菜谱")),
        ("Buy #milk and eggs", Entry("Buy #milk and eggs", ("milk",), None)),
        ("my #car is blue", Entry("my #car is blue", ("car",), None)),
        ("C# and F# are languages #lang", Entry("C# and F# are languages #lang", ("lang",), None)),
        ("see https://x.org/#top #web", Entry("see https://x.org/#top #web", ("web",), None)),
        ("room #123 is free #rooms", Entry("room #123 is free #rooms", ("rooms",), None)),
        ("home:\nline one\nline two #x", Entry("line one\nline two #x", ("x",), "home")),
        ("买菜 ＃周末，＃超市。", Entry("买菜 ＃周末，＃超市。", ("周末", "超市"), None)),
        ("#only #tags", Entry("", ("only", "tags"), None)),
        (" #only, #tags. ", Entry("", ("only", "tags"), None)),
        ("#recipes: pancakes need 2 eggs", Entry("pancakes need 2 eggs", (), "recipes")),
    ],
)
def test_hashtags_and_category(text: str, entry: Entry) -> None:
    assert parse_entry(text, derive_tags=False) == entry


@pytest.mark.parametrize(
    "text", ["D:\\projects is where the code is", "10:30 call mom", "https://example.org page"]
)
def test_a_colon_without_a_space_is_not_a_category(text: str) -> None:
    assert parse_entry(text).category is None
    assert parse_entry(text).content == text


def test_without_hashtags_keywords_become_tags() -> None:
    entry = parse_entry("Buy milk, eggs and bread for Sam")
    assert entry.derived_tags and entry.tags == ("milk", "eggs", "bread", "sam")
    chinese = parse_entry("我的代码在哪里？项目文件夹在D盘")
    assert "代码" in chinese.tags and "项目" in chinese.tags
    assert all(len(tag) > 1 for tag in chinese.tags) and "哪里" not in chinese.tags
    assert keywords("a an the of") == []


@pytest.mark.parametrize(
    ("text", "picked", "never"),
    [
        # Things, names and places are picked; verbs, times, pronouns and ordinals are not.
        ("我的护照放在书房第二个抽屉里", {"护照", "书房", "抽屉"}, {"放在", "第二个", "我的"}),
        ("明天下午三点看牙医", {"牙医"}, {"明天", "下午", "三点", "看"}),
        ("下周去上海出差见张经理", {"上海"}, {"下周", "去", "见"}),
        ("the car is parked near the elevator now", {"car", "elevator"}, {"parked", "near", "now"}),
        ("dentist next Tuesday at 3pm with Dr. Patel", {"dentist", "patel"}, {"tuesday", "3pm"}),
        ("the second drawer of the old desk", {"drawer", "desk"}, {"second", "old"}),
        # jieba's guesses are words only where its two models agree and no dictionary word
        # runs across them; everyday words its dictionary lacks are words there too.
        ("公司年会定在1月18日晚上", {"公司", "年会"}, {"会定"}),
        ("这周会很忙，周五交报告", {"报告"}, {"周会"}),  # "busy this week", no weekly meeting
        ("明年会议在上海开", {"会议", "上海"}, {"年会"}),
        ("礼品卡里还有两百块", {"礼品卡"}, {"卡里", "礼品"}),
        ("读书会在朱莉家", {"读书会", "朱莉"}, {"朱莉家"}),
        # Numbers that identify stay; amounts, days, pieces of a phone number do not.
        ("locker 117 at the gym", {"locker", "117", "gym"}, set()),
        ("flight BA123 to Lisbon, seat 12A", {"ba123", "lisbon", "12a"}, set()),
        ("驾照2027年到期", {"驾照", "2027"}, {"到期"}),
        ("I owe Chris 20 euros since May 2nd", {"chris"}, {"20", "euros", "2nd"}),
        ("我欠小陈200块", {"小陈"}, {"200", "块"}),
        ("call Sam on 555 0199", {"sam"}, {"555", "0199", "call"}),
        # A secret is never a tag (tags are shown in /stats and the digest).
        ("the wifi password is hunter2", {"wifi"}, {"hunter2"}),
        ("my bank pin is 4455", {"bank"}, {"4455"}),
        ("公司WiFi密码是Tr0ub4dor", {"wifi"}, {"tr0ub4dor"}),
        ("健身房的柜子是117号，密码是4455", {"健身房", "柜子", "117"}, {"4455"}),
        # Paths and addresses stay in the content only.
        ("the code is in D:\\projects, see https://x.org/a", set(), {"projects", "https", "x"}),
    ],
)
def test_automatic_tags_are_words_a_person_would_pick(
    text: str, picked: set[str], never: set[str]
) -> None:
    tags = set(keywords(text))
    assert picked <= tags and not tags & never, tags


def test_split_command_keeps_inner_lines() -> None:
    assert split_command("/remember@CogitoBot  first\nsecond ") == ("remember", "first\nsecond")
    assert split_command("/recall") == ("recall", "")
    assert split_command("no command") == ("", "no command")


def test_a_word_too_long_for_a_tag_stays_in_the_content_only() -> None:
    key = "sk-proj-" + "a1b2c3d4" * 10
    entry = parse_entry(f"my openai key is {key}")
    assert entry.content.endswith(key)
    assert entry.tags and all(len(tag) <= 64 for tag in entry.tags)
