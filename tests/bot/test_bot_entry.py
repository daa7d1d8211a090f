"""bot.core.entry: the syntax of what users type after /remember and /edit."""

from __future__ import annotations

import pytest

from bot.core.entry import Entry, keywords, parse_entry, split_command


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
    entry = parse_entry("The quick brown fox jumps over the lazy dog and the cat")
    assert entry.derived_tags and entry.tags == ("quick", "brown", "fox", "jumps", "lazy")
    chinese = parse_entry("我的代码在哪里？项目文件夹在D盘")
    assert "代码" in chinese.tags and "项目" in chinese.tags
    assert all(len(tag) > 1 for tag in chinese.tags) and "哪里" not in chinese.tags
    assert keywords("a an the of") == []


def test_split_command_keeps_inner_lines() -> None:
    assert split_command("/remember@CogitoBot  first\nsecond ") == ("remember", "first\nsecond")
    assert split_command("/recall") == ("recall", "")
    assert split_command("no command") == ("", "no command")


def test_a_word_too_long_for_a_tag_stays_in_the_content_only() -> None:
    key = "sk-proj-" + "a1b2c3d4" * 10
    entry = parse_entry(f"my openai key is {key}")
    assert entry.content.endswith(key)
    assert entry.tags and all(len(tag) <= 64 for tag in entry.tags)
