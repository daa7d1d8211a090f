"""Issue 26 part 1 through the fake Bot API: a new value replaces the old one (and ↩ Undo brings
it back), an unsure one is asked about, look-alikes are left alone, recall puts the newer first;
/remember, notes in words, 💾 and the model alike, in both languages."""

from __future__ import annotations

import re
from pathlib import Path

from bot_harness import ALICE, BOB, LI, Bot, StartBot

from bench.fakes.openai_server import API_KEY, Answer, FakeOpenAI, ToolCalls
from bench.fakes.telegram_server import Call, FakeBotAPI
from bot.__main__ import make_llm
from bot.config import parse_config


def memory_id(text: str) -> int:
    return int(re.findall(r"🆔 (\d+)", text)[-1])


async def remember(bot: Bot, text: str, user: dict = ALICE, **kwargs: object) -> Call:
    [reply] = await bot.say(f"/remember {text}", user=user, **kwargs)  # type: ignore[arg-type]
    return reply


def contents(bot: Bot, namespace: str) -> list[str]:
    return [m["content"] for m in bot.memories(namespace)]


async def test_a_new_value_replaces_the_old_and_undo_brings_it_back(bot: Bot) -> None:
    old = memory_id((await remember(bot, "The wifi password at the cabin is pinecone42")).text)
    replaced = await remember(bot, "the cabin wifi password is now pinecone43")
    assert replaced.text.startswith(
        "🔁 Replaced: The wifi password at the cabin is pinecone42 → "
        "the cabin wifi password is now pinecone43"
    )
    assert memory_id(replaced.text) == old  # the same memory, its old version in its history
    [(label, undo)] = replaced.buttons
    assert label == "↩ Undo" and undo.startswith("cu:")
    assert contents(bot, "users/42") == ["the cabin wifi password is now pinecone43"]
    [history] = await bot.say(f"/history {old}", user=ALICE)
    assert "pinecone42" in history.text and "pinecone43" in history.text
    since = bot.telegram.mark()
    await bot.press(replaced, undo, user=ALICE)
    [undone] = await bot.telegram.wait("sendMessage", since=since, chat_id=42)
    assert "pinecone42" in undone.text
    assert contents(bot, "users/42") == ["The wifi password at the cabin is pinecone42"]


async def test_look_alikes_are_left_alone(bot: Bot) -> None:
    for text in ("Mia's birthday is May 3", "The office wifi password is Tr0ub4dor"):
        await remember(bot, text)
    for text in ("Leo's birthday is June 9", "The guest wifi password is now letmein"):
        reply = await remember(bot, text)
        assert reply.text.startswith("✅ Remembered."), reply.text
    await remember(bot, "我爸的手机号是13800001111", user=LI)
    reply = await remember(bot, "我妈的手机号是13900002222", user=LI)
    assert reply.text.startswith("✅ 记住了。")
    assert len(contents(bot, "users/42")) == 4 and len(contents(bot, "users/44")) == 2


async def test_in_words_without_a_model_in_chinese_and_recall_asks_about_whom(bot: Bot) -> None:
    await remember(bot, "我爸的手机号是13800001111", user=LI)
    await remember(bot, "我妈的手机号是13900002222", user=LI)
    [replaced] = await bot.say("帮我记一下：我爸换手机号了，新号码是13700003333", user=LI)
    assert replaced.text.startswith("🔁 已替换：我爸的手机号是13800001111 → 我爸换手机号了")
    assert [label for label, _ in replaced.buttons] == ["↩ 撤销"]
    [answer] = await bot.say("/recall 我爸的手机号是多少", user=LI)
    first = answer.text.split("\n\n")[1]
    assert "13700003333" in first  # about dad, not mum, though both are phone numbers
    assert sorted(contents(bot, "users/44")) == [
        "我妈的手机号是13900002222",
        "我爸换手机号了，新号码是13700003333",
    ]


async def test_the_remember_this_button_replaces_too(bot: Bot) -> None:
    await remember(bot, "My gym locker number is 117")
    [search] = await bot.say("I switched to locker 23 at the gym", user=ALICE)
    keep = next(data for _, data in search.buttons if data.startswith("rt:"))
    since = bot.telegram.mark()
    await bot.press(search, keep, user=ALICE)
    [replaced] = await bot.telegram.wait("sendMessage", since=since, chat_id=42)
    assert replaced.text.startswith(
        "🔁 Replaced: My gym locker number is 117 → I switched to locker 23 at the gym"
    )
    assert contents(bot, "users/42") == ["I switched to locker 23 at the gym"]


async def test_a_statement_of_a_new_value_is_answered_with_what_it_updates(bot: Bot) -> None:
    # Said in passing, without a model: the reply shows the memory the statement updates (not
    # "I found nothing"), and its 💾 replaces that memory; look-alikes are not what it updates.
    await remember(bot, "The wifi password at the cabin is pinecone42")
    await remember(bot, "Mia's birthday is May 3")
    [search] = await bot.say("the cabin wifi password is now pinecone43", user=ALICE)
    assert "The wifi password at the cabin is pinecone42" in search.text
    assert "found nothing" not in search.text
    await remember(bot, "我住在杭州西湖区", user=LI)
    [moved] = await bot.say("我已经搬到上海浦东了", user=LI)
    assert "我住在杭州西湖区" in moved.text and "没有找到" not in moved.text
    [other] = await bot.say("Leo's birthday is June 9", user=ALICE)
    assert "Mia" not in other.text
    assert any(data.startswith("rt:") for _, data in other.buttons)  # 💾 beside the offer


async def test_unsure_asks_and_keep_both_shows_the_newer_first_marked(bot: Bot) -> None:
    await remember(bot, "健身卡每月40元", user=LI)
    prompt = await remember(bot, "健身卡每月45元", user=LI)
    assert prompt.text.startswith("🔁 “健身卡每月45元”可能是你之前说过的事情的新值")
    keep, replace, _ = [data for _, data in prompt.buttons]
    assert replace.startswith("nr:")
    since = bot.telegram.mark()
    await bot.press(prompt, keep, user=LI)
    await bot.telegram.wait("editMessageText", since=since)
    [answer] = await bot.say("/recall 健身卡每月多少钱", user=LI)
    first, second = answer.text.split("\n\n")[1:3]
    assert "45元" in first and "（较早）" not in first
    assert "40元" in second and "（较早）" in second
    [english] = await bot.say("/remember My gym membership costs $40 a month", user=ALICE)
    prompt = await remember(bot, "My gym membership costs $45 a month")
    assert "may be a new value" in prompt.text
    since = bot.telegram.mark()
    await bot.press(prompt, prompt.buttons[0][1], user=ALICE)  # ➕ Keep both
    await bot.telegram.wait("editMessageText", since=since)
    [answer] = await bot.say("/recall how much is my gym membership?", user=ALICE)
    first, second = answer.text.split("\n\n")[1:3]
    assert "$45" in first and "$40" in second and "(older)" in second
    assert english.text.startswith("✅ Remembered.")


async def test_a_member_may_not_replace_an_administrator_s_memory(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    group = telegram.group()
    telegram.admins[group["id"]] = {ALICE["id"]}
    namespace = f"chats/{group['id']}"
    await remember(bot, "The wifi password at the office is hunter2", chat=group)
    prompt = await remember(bot, "the office wifi password is now letmein", user=BOB, chat=group)
    assert "may be a new value" in prompt.text  # asked, not replaced: not Bob's memory
    assert contents(bot, namespace) == ["The wifi password at the office is hunter2"]
    _, replace, _ = [data for _, data in prompt.buttons]
    since = telegram.mark()
    await bot.press(prompt, replace, user=BOB)
    [alert] = telegram.find("answerCallbackQuery", since=since)
    assert alert.params["show_alert"] is True
    assert contents(bot, namespace) == ["The wifi password at the office is hunter2"]
    # The administrator's own update of it replaces at once.
    done = await remember(bot, "the office wifi password is now swordfish", chat=group)
    assert done.text.startswith("🔁 Replaced:")
    assert contents(bot, namespace) == ["the office wifi password is now swordfish"]


async def test_with_a_model_add_memory_names_what_it_would_replace(
    start_bot: StartBot,
) -> None:
    async with FakeOpenAI() as llm:
        table = {"base_url": llm.base_url, "api_key": API_KEY, "model": "test-model"}
        config = parse_config({"llm": table}, base_dir=Path.cwd())
        async with start_bot(llm=make_llm(config), sections={"llm": table}) as bot:
            reply = await remember(bot, "The wifi password at the cabin is pinecone42")
            old = memory_id(reply.text)
            new = "The cabin wifi password is pinecone43"
            llm.script(
                ToolCalls(("addMemory", {"content": "The cabin wifi password is now pinecone43"})),
                ToolCalls(("updateMemory", {"id": old, "content": new})),
                Answer("Updated the cabin wifi password."),
            )
            await bot.say("the cabin wifi password is now pinecone43", user=ALICE)
            assert contents(bot, "users/42") == [new]
    [result] = llm.requests[1].tool_results()
    assert result["stored"] is False and result["wouldReplace"]["id"] == old
    assert result["wouldReplace"]["sure"] is True and "updateMemory" in result["message"]


async def test_a_reminder_s_memory_is_never_replaced_by_a_note(bot: Bot) -> None:
    await bot.say("/remind tomorrow 9am dentist", user=ALICE)
    [reminder_memory] = contents(bot, "users/42")
    assert reminder_memory.startswith("⏰") and reminder_memory.endswith("— dentist")
    reply = await remember(bot, "Dentist moved to 10:00 on Monday")
    assert reply.text.startswith("✅ Remembered.")  # ✏️ Change moves a reminder, not a note
    assert contents(bot, "users/42") == [reminder_memory, "Dentist moved to 10:00 on Monday"]
