"""Use that means use: what counts as a use of a memory, what /recall, /list, /related and
/stats show, end to end (the real Application against the fake Bot API, a real store)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from bot_harness import ALICE, BOB, LI, Bot, StartBot

from bench.fakes.openai_server import API_KEY, Answer, FakeOpenAI, Request, ToolCalls
from bot.__main__ import make_llm
from bot.config import parse_config
from bot.view.callbacks import MAX_CALLBACK_DATA
from bot.view.digest_view import build_report
from memory.files import MemoryStore

BIRTHDAY = "小王的生日是3月5日"


def uses(bot: Bot, namespace: str) -> dict[str, int]:
    """accessCount of each memory, by content."""
    return {m["content"]: m["accessCount"] for m in bot.memories(namespace)}


async def remember(bot: Bot, text: str, user: dict[str, Any] = ALICE) -> int:
    [reply] = await bot.say(f"/remember {text}", user=user)
    return int(re.findall(r"🆔 (\d+)", reply.text)[-1])


# -- what counts as a use ------------------------------------------------------------------


async def test_questions_sharing_only_stop_characters_never_count(bot: Bot) -> None:
    await remember(bot, f"{BIRTHDAY} #生日", user=LI)
    await remember(bot, "我的车停在B2层 #车", user=LI)
    for question in ("你是谁", "我的电脑是什么牌子", "今天的天气怎么样", "这是什么"):
        [reply] = await bot.say(f"/recall {question}", user=LI)
        assert BIRTHDAY not in reply.text, question  # not shown: it shares only 的 or 是
        [free] = await bot.say(question, user=LI)  # free text without a model: the same
        assert BIRTHDAY not in free.text, question
    assert uses(bot, "users/44") == {f"{BIRTHDAY} #生日": 0, "我的车停在B2层 #车": 0}

    [reply] = await bot.say("/recall 小王生日", user=LI)
    assert BIRTHDAY in reply.text
    assert uses(bot, "users/44")[f"{BIRTHDAY} #生日"] == 1


async def test_only_the_first_result_of_recall_counts(bot: Bot) -> None:
    for n in range(3):
        await remember(bot, f"standup note {n} #standup")
    [reply] = await bot.say("/recall standup", user=ALICE)
    first = re.search(r"1\.\s*(standup note \d #standup)", reply.text)
    assert first is not None
    counts = uses(bot, "users/42")
    assert counts[first.group(1)] == 1
    assert sorted(counts.values()) == [0, 0, 1]
    # A blank /recall lists the newest: nobody asked for them, nothing counts.
    await bot.say("/recall", user=ALICE)
    assert sorted(uses(bot, "users/42").values()) == [0, 0, 1]


# -- /recall counts and pages --------------------------------------------------------------


async def test_recall_shows_the_answers_then_pages_through_the_weaker_matches(bot: Bot) -> None:
    for n in range(12):
        await remember(bot, f"project note {n:02d} #project")
    await remember(bot, "buy oat milk #shopping")
    [reply] = await bot.say("/recall project note", user=ALICE)
    answers = re.findall(r"project note \d\d", reply.text)
    assert 1 <= len(answers) <= 3  # twelve alike: a few shown, the rest behind More
    *menus, more = reply.buttons
    assert [label for label, _ in menus] == [f"⋯ {n}" for n in range(1, len(answers) + 1)]
    assert more[0] == f"More ({12 - len(answers)}) ▶"
    assert all(len(data.encode()) <= MAX_CALLBACK_DATA for _, data in reply.buttons)

    pages = [reply]
    while pages[-1].buttons[-1][0].startswith("More"):
        since = bot.telegram.mark()
        await bot.press(pages[-1], pages[-1].buttons[-1][1], user=ALICE)
        [page] = await bot.telegram.wait("editMessageText", since=since)
        assert "Weaker matches for “project note”" in page.text
        pages.append(page)
    second = pages[1]
    assert f"1–5 of {12 - len(answers)}" in second.text
    assert f"<b>{len(answers) + 1}.</b>" in second.params["text"]
    assert second.buttons[0][0] == f"⋯ {len(answers) + 1}"
    assert pages[-1].buttons[-1][0] == "◀"
    shown = [note for page in pages for note in re.findall(r"project note \d\d", page.text)]
    assert sorted(shown) == [f"project note {n:02d}" for n in range(12)]  # each once
    assert all("oat milk" not in page.text for page in pages)

    since = bot.telegram.mark()
    assert second.buttons[-2][0] == "◀"
    await bot.press(second, second.buttons[-2][1], user=ALICE)  # ◀ back to the answers
    [back] = await bot.telegram.wait("editMessageText", since=since)
    assert back.text == reply.text
    # Turning pages is looking, not using: only the first answer counted, once.
    assert sorted(uses(bot, "users/42").values()) == [0] * 12 + [1]


async def test_a_recall_page_button_is_resolved_in_the_pressers_namespace(bot: Bot) -> None:
    for n in range(7):
        await remember(bot, f"secret plan {n} #plan")
    [reply] = await bot.say("/recall secret plan", user=ALICE)
    more = reply.buttons[-1][1]
    assert more.startswith("r:1:")
    # Bob crafts the data of Alice's button under a message of his: his namespace holds no
    # such query, so nothing of Alice's is shown.
    await remember(bot, "bob's note", user=BOB)
    [own] = await bot.say("/recall", user=BOB)
    since = bot.telegram.mark()
    query_id = bot.telegram.press(own.result, more, user=BOB)
    [answer] = await bot.telegram.wait(
        "answerCallbackQuery", since=since, callback_query_id=query_id
    )
    assert answer.params.get("show_alert") is True
    assert not bot.telegram.find("editMessageText", since=since)


# -- /list #tag ----------------------------------------------------------------------------


async def test_list_by_tag_as_well_as_by_category(bot: Bot) -> None:
    for n in range(12):
        await remember(bot, f"work: task {n:02d} #买菜" if n % 2 else f"chore {n:02d} #买菜")
    await remember(bot, "work: unrelated #other")
    [by_tag] = await bot.say("/list #买菜", user=ALICE)
    assert "Memories (#买菜): page 1 of 2 (total: 12)" in by_tag.text
    assert "unrelated" not in by_tag.text
    since = bot.telegram.mark()
    await bot.press(by_tag, by_tag.buttons[-1][1], user=ALICE)
    [page_2] = await bot.telegram.wait("editMessageText", since=since)
    assert "Memories (#买菜): page 2 of 2 (total: 12)" in page_2.text
    # A full-width ＃ and the punctuation a phone adds after it are the same tag.
    [wide] = await bot.say("/list ＃买菜，", user=ALICE)
    assert "(total: 12)" in wide.text
    [by_category] = await bot.say("/list work", user=ALICE)
    assert "(work): page 1 of 1 (total: 7)" in by_category.text
    [none] = await bot.say("/list #nothing", user=ALICE)
    assert "No memories (#nothing) yet." in none.text


# -- /related ------------------------------------------------------------------------------


async def test_the_default_category_alone_does_not_make_memories_related(bot: Bot) -> None:
    birthday = await remember(bot, f"{BIRTHDAY} #生日 #小王", user=LI)
    await remember(bot, "买牛奶 #购物", user=LI)
    [none] = await bot.say(f"/related {birthday}", user=LI)
    assert "买牛奶" not in none.text
    await remember(bot, "小王喜欢蓝色 #小王", user=LI)
    [some] = await bot.say(f"/related {birthday}", user=LI)
    assert "小王喜欢蓝色" in some.text and "买牛奶" not in some.text


# -- /stats and the digest -----------------------------------------------------------------


async def test_stats_lists_only_used_memories_in_the_digests_order(
    start_bot: StartBot, tmp_path: Path
) -> None:
    def record(n: int, used: int, at: str) -> dict[str, Any]:
        return {"id": n, "content": f"memory {n}", "createdAt": "2024-01-10T10:00:00.000Z",
                "accessedAt": at, "accessCount": used}  # fmt: skip

    records = [
        record(1, 2, "2024-02-01T10:00:00.000Z"),
        record(2, 2, "2024-03-01T10:00:00.000Z"),  # the same count, used later: first
        record(3, 0, "2024-01-10T10:00:00.000Z"),  # never used: never "most used"
        record(4, 2, "2024-02-01T10:00:00.000Z"),  # the same count and time: the newer id
        record(5, 0, "2024-01-10T10:00:00.000Z"),
    ]
    with MemoryStore(tmp_path / "data") as store:
        store.namespace("users/42").import_memories(records)
    async with start_bot() as bot:
        [reply] = await bot.say("/stats", user=ALICE)
        stored = MemoryStore(tmp_path / "data").namespace("users/42").memories()
    most_used = re.findall(r"\d\. memory (\d)", reply.text.split("Most used:")[1])
    assert most_used == ["2", "4", "1"]
    now = datetime(2024, 4, 1, tzinfo=UTC)
    report = build_report(stored, now=now, since=None, top=5, stale_days=30)
    assert [str(m.id) for m in report.most_used] == most_used


async def test_stats_without_any_use_lists_no_most_used(bot: Bot) -> None:
    await remember(bot, "never recalled")
    [reply] = await bot.say("/stats", user=ALICE)
    assert "Memories: 1" in reply.text and "Most used" not in reply.text


# -- the model -----------------------------------------------------------------------------


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
def start_llm_bot(start_bot: StartBot, llm: FakeOpenAI) -> StartBot:
    def start(**keys: Any) -> AbstractAsyncContextManager[Bot]:
        table = {"base_url": llm.base_url, "api_key": API_KEY, "model": "test-model"}
        config = parse_config({"llm": {**table, "timeout": 5.0}}, base_dir=Path.cwd())
        return start_bot(llm=make_llm(config), sections={"llm": table}, **keys)

    return start


async def test_the_model_uses_the_answers_it_receives_not_stop_word_matches(
    start_llm_bot: StartBot, llm: FakeOpenAI
) -> None:
    async with start_llm_bot() as bot:
        await remember(bot, f"{BIRTHDAY} #生日", user=LI)
        await remember(bot, "小王的电话是13800000000 #电话", user=LI)
        received: list[list[str]] = []

        def answer(request: Request) -> Answer:
            found = request.tool_results()[0]["memories"]
            received.append([m["content"] for m in found])
            return Answer("好的。")

        llm.script(ToolCalls(("searchMemory", {"query": "你是谁"})), answer)
        await bot.say("你是谁", user=LI)
        assert received[-1] == []  # 是 alone is no match: the model is not even given it
        assert set(uses(bot, "users/44").values()) == {0}

        llm.script(ToolCalls(("searchMemory", {"query": "小王 生日"})), answer)
        await bot.say("小王生日是哪天？", user=LI)
        assert received[-1][0] == f"{BIRTHDAY} #生日"
        counts = uses(bot, "users/44")
        assert counts[f"{BIRTHDAY} #生日"] == 1


async def test_a_memory_in_the_prompt_counts_only_when_the_answer_quotes_it(
    start_llm_bot: StartBot, llm: FakeOpenAI
) -> None:
    async with start_llm_bot() as bot:
        await remember(bot, "the staging database password rotates every monday #database")
        code = await remember(bot, "my code lives in D:\\projects\\cogito #code")

        def seen(request: Request, text: str) -> Answer:
            return Answer(text)

        llm.script(lambda r: seen(r, "It changes on Mondays."))
        await bot.say("when does the staging database password rotate?", user=ALICE)
        assert "staging" in llm.requests[-1].system
        # A word or two in common is not a quote: being in the prompt is not a use.
        assert set(uses(bot, "users/42").values()) == {0}

        llm.script(lambda r: seen(r, "It is in D:\\projects\\cogito."))
        await bot.say("where does my code live?", user=ALICE)
        assert f"id {code}" in llm.requests[-1].system
        counts = uses(bot, "users/42")
        assert counts["my code lives in D:\\projects\\cogito #code"] == 1
        assert counts["the staging database password rotates every monday #database"] == 0
