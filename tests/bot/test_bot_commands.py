"""Every command, end to end: the real Application against the fake Bot API, files on disk."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from bot_harness import ALICE, LI, Bot, StartBot, is_help, memory_file

from bench.fakes.telegram_server import FakeBotAPI
from bench.tag_notes import NAMES_PLACES_THINGS
from bot.view.i18n import COMMANDS
from memory.files import MemoryStore


def memory_id(text: str) -> int:
    """The id shown in a reply (the 🆔 of the last memory in it)."""
    return int(re.findall(r"🆔 (\d+)", text)[-1])


async def remember(bot: Bot, text: str, user: dict = ALICE) -> int:
    [reply] = await bot.say(f"/remember {text}", user=user)
    return memory_id(reply.text)


def screen_lines(text: str, columns: int = 40) -> int:
    """How many lines ``text`` takes on a phone about ``columns`` Latin letters wide (a CJK
    character or an emoji takes two)."""
    lines = 0
    for line in text.split("\n"):
        width = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)
        lines += max(1, -(-width // columns))
    return lines


@pytest.mark.parametrize("user", [ALICE, LI])
async def test_start_fits_on_a_phone_screen_with_examples_and_help_buttons(
    bot: Bot, user: dict[str, Any]
) -> None:
    [start] = await bot.say("/start", user=user)
    assert user["first_name"] in start.text and start.params["parse_mode"] == "HTML"
    assert screen_lines(start.text) <= 12, start.text  # a phone shows 12-15 short lines
    [(examples, examples_data), (help_label, help_data)] = start.buttons
    assert examples.startswith("💡") and help_label.startswith("📖")
    since = bot.telegram.mark()
    await bot.press(start, examples_data, user=user)
    [shown] = await bot.telegram.wait("sendMessage", since=since, chat_id=user["id"])
    assert shown.text.startswith("💡") and shown.text.count("\n") >= 5
    assert "<code>" in shown.params["text"]  # each example is tap-to-copy
    since = bot.telegram.mark()
    await bot.press(start, help_data, user=user)
    [manual] = await bot.telegram.wait("sendMessage", since=since, chat_id=user["id"])
    assert is_help(manual) and screen_lines(manual.text) > 12  # the manual, not the greeting


async def test_help_speaks_the_users_language(bot: Bot) -> None:
    [help_zh] = await bot.say("/help", user=LI)
    assert "命令" in help_zh.text and "/recall" in help_zh.text


async def test_the_command_menu_is_published_in_english_and_chinese(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    names = [name for name, _ in COMMANDS]
    assert [c["command"] for c in telegram.commands[""]] == names
    assert [c["command"] for c in telegram.commands["zh"]] == names
    assert telegram.commands["zh"][0]["description"] != telegram.commands[""][0]["description"]


async def test_remember_reads_hashtags_and_category(start_bot: StartBot, tmp_path: Path) -> None:
    async with start_bot() as bot:
        [reply] = await bot.say("/remember work: standup at 10:00 #meeting #Daily", user=ALICE)
        assert "Remembered" in reply.text
        assert "standup at 10:00" in reply.text
        assert "#meeting #daily" in reply.text and "work" in reply.text
        shown = memory_id(reply.text)
    [record] = memory_file(tmp_path / "data", "users/42")
    assert record["id"] == shown
    assert record["content"] == "standup at 10:00 #meeting #Daily"  # as typed
    assert record["tags"] == ["meeting", "daily"]
    assert record["category"] == "work"
    assert set(record) >= {"createdAt", "accessedAt", "accessCount"}


async def test_a_hashtag_stays_in_the_text_as_typed(bot: Bot) -> None:
    [reply] = await bot.say("/remember Buy #milk and eggs", user=ALICE)
    assert "Buy #milk and eggs\n" in reply.text
    [record] = bot.memories("users/42")
    assert record["content"] == "Buy #milk and eggs" and record["tags"] == ["milk"]
    [again] = await bot.say("/remember buy milk and eggs", user=ALICE)  # the same note
    assert "Already remembered" in again.text
    [retag] = await bot.say(f"/edit {record['id']} #groceries", user=ALICE)  # tags alone
    assert "Buy #milk and eggs" in retag.text and "#groceries" in retag.text


async def test_remember_without_hashtags_picks_keywords(bot: Bot) -> None:
    [reply] = await bot.say("/remember 我的代码在 D:\\projects 项目文件夹", user=LI)
    assert "记住了" in reply.text
    [record] = bot.memories("users/44")
    assert record["content"] == "我的代码在 D:\\projects 项目文件夹"
    assert "代码" in record["tags"] and 2 <= len(record["tags"]) <= 5
    assert all(len(tag) > 1 for tag in record["tags"])
    assert record["category"] == "general"


async def test_chinese_tags_are_words_a_person_would_pick(bot: Bot, telegram: FakeBotAPI) -> None:
    """jieba's guesses that are no word never become tags ("公司年会定在…" was #公司 #会定), a
    noun keeps no locative stuck to it (车库里), and everyday words its dictionary lacks are
    words (年会, 猫粮): every note of a set of names, places and things, stored through the
    bot, gets tags a person would pick (``bench.tag_notes``; each its own chat, so that no
    note waits as a near-duplicate of another)."""
    [reply] = await bot.say("/remember 公司年会定在1月18日晚上", user=LI)
    assert "🏷 #公司 #年会 ·" in reply.text and "#会定" not in reply.text
    people = {n.text: telegram.user(5000 + i, f"P{i}") for i, n in enumerate(NAMES_PLACES_THINGS)}
    for text, person in people.items():
        await bot.say(f"/remember {text}", user=person)
    wrong = {}
    for note in NAMES_PLACES_THINGS:
        [record] = bot.memories(f"users/{people[note.text]['id']}")
        if not record["tags"] or not set(record["tags"]) <= note.accept:
            wrong[note.text] = record["tags"]
    assert wrong == {}


async def test_remember_as_a_reply_stores_that_message(bot: Bot) -> None:
    since = bot.telegram.mark()
    message = bot.telegram.send("the wifi password is hunter2", user=ALICE)
    await bot.telegram.wait("sendMessage", since=since, chat_id=42)  # free text: a search
    [reply] = await bot.say("/remember home: #wifi", user=ALICE, reply_to=message)
    assert "hunter2" in reply.text
    [record] = bot.memories("users/42")
    assert record["content"] == "the wifi password is hunter2"
    assert record["tags"] == ["wifi"] and record["category"] == "home"


async def test_remember_with_nothing_to_store_explains_usage(bot: Bot) -> None:
    [reply] = await bot.say("/remember", user=ALICE)
    assert "What should I remember?" in reply.text
    [reply] = await bot.say("/remember #only #tags", user=ALICE)
    assert "What should I remember?" in reply.text
    assert bot.namespaces() == []


async def test_remember_refuses_content_over_the_limit(bot: Bot) -> None:
    [reply] = await bot.say("/remember " + "x" * 4001, user=ALICE)
    assert "couldn't do that" in reply.text and "4000" in reply.text and "4001" in reply.text
    assert bot.memories("users/42") == []


async def test_a_refusal_is_explained_in_the_users_language(bot: Bot) -> None:
    [reply] = await bot.say("/remember " + "长" * 4001, user=LI)
    assert "无法完成" in reply.text and "4000" in reply.text and "4001" in reply.text
    assert "content is" not in reply.text  # not the library's English message
    [reply] = await bot.say("/remember 标签太多 " + " ".join(f"#t{i}" for i in range(25)), user=LI)
    assert "最多 20 个标签" in reply.text
    assert bot.namespaces() == []


async def test_recall_shows_the_answer_alone_with_its_menu(bot: Bot) -> None:
    await remember(bot, "the dentist appointment is on friday #health")
    standup = await remember(bot, "standup is at 10:00 in room 4 #work")
    await remember(bot, "buy oat milk #shopping")
    [reply] = await bot.say("/recall when is standup", user=ALICE)
    assert reply.text.startswith("🔎 “when is standup”")
    assert "dentist" not in reply.text and "oat milk" not in reply.text  # nothing else
    assert memory_id(reply.text.split("\n\n")[1]) == standup
    assert reply.buttons == [("⋯", f"m:{standup}")]  # no 🗑 on a search result


async def test_a_question_nothing_answers_is_told_so_with_a_hint(bot: Bot) -> None:
    await remember(bot, "the wifi password at the cabin is pinecone42")
    await remember(bot, "standup is at 10:00 in room 4 #work")
    for question in ("what is my blood type?", "🎉🎉🎉"):
        [reply] = await bot.say(f"/recall {question}", user=ALICE)
        assert reply.text.startswith(f"I found nothing about “{question}”")
        assert "/list" in reply.text and "/remember" in reply.text
        assert "pinecone42" not in reply.text and "standup" not in reply.text


async def test_recall_without_a_query_shows_the_most_recent(bot: Bot) -> None:
    [empty] = await bot.say("/recall", user=ALICE)
    assert "No memories yet" in empty.text
    for n in range(7):
        await remember(bot, f"note number {n}")
    [reply] = await bot.say("/recall", user=ALICE)
    assert "Most recent" in reply.text
    shown = re.findall(r"note number (\d)", reply.text)
    assert shown == ["6", "5", "4", "3", "2"]
    assert "5 of 7" in reply.text
    assert len(reply.buttons) == 6 and reply.buttons[-1] == ("More (2) ▶", "r:1")


async def test_recall_with_no_match_says_so(bot: Bot) -> None:
    await remember(bot, "standup is at 10:00")
    [reply] = await bot.say("/recall zebra", user=ALICE)
    assert "I found nothing about “zebra”" in reply.text


async def test_forget_asks_then_deletes(bot: Bot) -> None:
    keep = await remember(bot, "keep this one")
    gone = await remember(bot, "forget this one")
    [prompt] = await bot.say(f"/forget {gone}", user=ALICE)
    assert "Forget this memory?" in prompt.text and "forget this one" in prompt.text
    assert prompt.buttons == [("🗑 Delete", f"d:{gone}"), ("Keep", f"k:{gone}")]
    since = bot.telegram.mark()
    await bot.press(prompt, f"d:{gone}", user=ALICE)
    [edit] = await bot.telegram.wait("editMessageText", since=since)
    assert "Forgotten: forget this one" in edit.text and not edit.buttons
    assert [r["id"] for r in bot.memories("users/42")] == [keep]


async def test_forget_keep_leaves_the_memory(bot: Bot) -> None:
    kept = await remember(bot, "a precious thing")
    [prompt] = await bot.say(f"/forget {kept}", user=ALICE)
    since = bot.telegram.mark()
    await bot.press(prompt, f"k:{kept}", user=ALICE)
    [edit] = await bot.telegram.wait("editMessageText", since=since)
    assert "Kept: a precious thing" in edit.text
    assert [r["id"] for r in bot.memories("users/42")] == [kept]


async def test_forget_with_an_unknown_or_malformed_id(bot: Bot) -> None:
    [unknown] = await bot.say("/forget 1700000000000", user=ALICE)
    assert "no memory 1700000000000 here" in unknown.text
    [malformed] = await bot.say("/forget <tomorrow>", user=ALICE)
    assert "“<tomorrow>” is not a memory id" in malformed.text
    [usage] = await bot.say("/forget", user=ALICE)
    assert "Which memory?" in usage.text


async def test_stats_counts_categories_tags_and_use(start_bot: StartBot, tmp_path: Path) -> None:
    def record(n: int, content: str, tags: list[str], category: str, used: int) -> dict:
        return {"id": n, "content": content, "tags": tags, "category": category,
                "createdAt": f"2024-01-1{n}T10:00:00.000Z", "accessCount": used}  # fmt: skip

    with MemoryStore(tmp_path / "data") as store:
        store.namespace("users/42").import_memories(
            [
                record(1, "standup at 10", ["meeting"], "work", 2),
                record(2, "retro on friday", ["meeting", "team"], "work", 7),
                record(3, "buy milk", ["shopping"], "general", 0),
            ]
        )
    async with start_bot() as bot:
        [empty] = await bot.say("/stats", user=LI)
        assert "还没有记忆" in empty.text  # Li's namespace is empty
        [reply] = await bot.say("/stats", user=ALICE)
    assert "Memories: 3" in reply.text
    assert "Categories: work 2 · general 1" in reply.text
    assert "Top tags: #meeting (2)" in reply.text
    assert "Search: keywords only" in reply.text  # this store has no embedder
    most_used = reply.text.split("Most used:")[1].strip().split("\n")
    assert most_used[0].startswith("1. retro on friday (7×)")
    assert most_used[1].startswith("2. standup at 10 (2×)")


async def test_a_known_category_is_one_in_both_languages_and_shown_in_the_readers(
    bot: Bot,
) -> None:
    alice_zh = {**ALICE, "language_code": "zh-hans"}  # the same person, phone set to Chinese
    with MemoryStore(bot.config.data_dir) as store:  # stored with the Chinese word, earlier
        store.namespace("users/42").add("每天吃维生素", category="健康")
    [zh] = await bot.say("/remember 健康：周五看牙医", user=alice_zh)
    assert "📁 健康" in zh.text
    [en] = await bot.say("/remember health: flu shot in october", user=ALICE)
    assert "📁 health" in en.text
    await bot.say("/remember #recipes: pancakes need 2 eggs", user=ALICE)
    assert [m["category"] for m in bot.memories("users/42")] == [
        "健康",  # not rewritten
        "health",
        "health",
        "recipes",
    ]
    for asked, user, title in (
        ("health", ALICE, "Memories (health): page 1 of 1 (total: 3)"),
        ("健康", ALICE, "Memories (health): page 1 of 1 (total: 3)"),
        ("health", alice_zh, "记忆 (健康)：第 1/1 页，共 3 条"),
    ):
        [listed] = await bot.say(f"/list {asked}", user=user)
        assert title in listed.text, listed.text
        assert "每天吃维生素" in listed.text and "pancakes" not in listed.text
    [stats_en] = await bot.say("/stats", user=ALICE)
    assert "Categories: health 3 · recipes 1" in stats_en.text
    [stats_zh] = await bot.say("/stats", user=alice_zh)
    assert "分类：健康 3 · recipes 1" in stats_zh.text
    [recent] = await bot.say("/recall", user=alice_zh)
    assert "📁 健康" in recent.text and "📁 health" not in recent.text


async def test_list_pages_with_buttons(bot: Bot) -> None:
    for n in range(23):
        await remember(bot, f"{'work: ' if n % 2 else ''}item {n:02d}")
    [first] = await bot.say("/list", user=ALICE)
    assert "page 1 of 3 (total: 23)" in first.text
    assert "item 22" in first.text and "item 12" not in first.text  # newest first
    assert first.buttons[-1] == ("▶", "p:1")
    assert [label for label, _ in first.buttons[:-1]] == [f"🗑 {n}" for n in range(1, 11)]
    since = bot.telegram.mark()
    await bot.press(first, "p:1", user=ALICE)
    [second] = await bot.telegram.wait("editMessageText", since=since)
    assert "page 2 of 3" in second.text and "item 12" in second.text
    assert [label for label, _ in second.buttons] == [f"🗑 {n}" for n in range(11, 21)] + ["◀", "▶"]

    [work] = await bot.say("/list Work", user=ALICE)
    assert "Memories (work): page 1 of 2 (total: 11)" in work.text
    label, data = work.buttons[-1]
    assert label == "▶" and re.fullmatch(r"p:1:[0-9a-f]{8}", data)
    since = bot.telegram.mark()
    await bot.press(work, data, user=ALICE)
    [page] = await bot.telegram.wait("editMessageText", since=since)
    assert "Memories (work): page 2 of 2" in page.text and "item 01" in page.text

    [none] = await bot.say("/list nothing-here", user=ALICE)
    assert "No memories (nothing-here) yet" in none.text


async def test_edit_changes_text_tags_and_category(bot: Bot) -> None:
    edited = await remember(bot, "standup at 10 #work")
    [reply] = await bot.say(f"/edit {edited} #office: standup at 9:30 #work #daily", user=ALICE)
    assert "Updated" in reply.text and "standup at 9:30" in reply.text
    [record] = bot.memories("users/42")
    assert record["content"] == "standup at 9:30 #work #daily"
    assert record["tags"] == ["work", "daily"] and record["category"] == "office"
    assert "updatedAt" in record
    [retag] = await bot.say(f"/edit {edited} #meetings", user=ALICE)
    assert "standup at 9:30" in retag.text and "#meetings" in retag.text
    [unknown] = await bot.say("/edit 1700000000000 new text", user=ALICE)
    assert "no memory 1700000000000" in unknown.text
    [usage] = await bot.say(f"/edit {edited}", user=ALICE)
    assert "/edit 1712345678901 new text" in usage.text


async def test_related_finds_shared_tags_and_category(bot: Bot) -> None:
    base = await remember(bot, "work: standup at 10 #meeting")
    await remember(bot, "work: retro on friday #meeting")
    await remember(bot, "buy milk #shopping")
    [reply] = await bot.say(f"/related {base}", user=ALICE)
    assert "Related to “standup at 10 #meeting”" in reply.text
    assert "retro on friday" in reply.text and "buy milk" not in reply.text
    assert reply.buttons[0][1].startswith("f:")
    lonely = await remember(bot, "#misc: nothing in common #zzz")
    [none] = await bot.say(f"/related {lonely}", user=ALICE)
    assert "Nothing shares tags or a category" in none.text


async def test_export_sends_an_article_format_memory_json(bot: Bot) -> None:
    [empty] = await bot.say("/export", user=ALICE)
    assert "Nothing to export" in empty.text
    await remember(bot, "代码在 D:\\projects #代码 #路径")
    [document] = await bot.say("/export", user=ALICE, method="sendDocument")
    name, content = document.files["document"]
    assert name == "memory.json"
    [record] = json.loads(content)
    assert record["content"] == "代码在 D:\\projects #代码 #路径" and record["tags"] == [
        "代码",
        "路径",
    ]
    assert set(record) == {
        "id", "content", "tags", "category", "createdAt", "accessedAt", "accessCount",
    }  # fmt: skip
    assert "Exported: 1" in document.text


HINT = "say it in words"


async def test_free_text_hints_at_remember_only_where_it_helps(bot: Bot) -> None:
    await remember(bot, "my code is in D:\\projects #code")
    [found] = await bot.say("where is my code?", user=ALICE)  # a question that found its answer
    assert "D:\\projects" in found.text and HINT not in found.text
    assert found.buttons  # a forget button per result
    [statement] = await bot.say("the spare key is under the flower pot", user=ALICE)
    assert any(data.startswith("rt:") for _, data in statement.buttons)  # 💾 says it
    assert HINT not in statement.text
    [nothing] = await bot.say("where is my passport?", user=ALICE)  # found nothing: it helps
    assert "I found nothing" in nothing.text and HINT in nothing.text
    [again] = await bot.say("what is my blood type?", user=ALICE)  # not twice in a day
    assert "I found nothing" in again.text and HINT not in again.text
    [other] = await bot.say("where is my passport?", user=LI)  # another chat has its own day
    assert "没有找到" in other.text and "直接说“记住" in other.text


async def test_unknown_command_points_to_help(bot: Bot) -> None:
    [reply] = await bot.say("/frobnicate", user=ALICE)
    assert "/help" in reply.text
