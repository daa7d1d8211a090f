"""Inline buttons: forget from a result, confirmations, and presses that must be refused."""

from __future__ import annotations

import re

from bot_harness import ALICE, BOB, Bot, StartBot

from bench.fakes.telegram_server import FakeBotAPI
from bot.chat.app import PRESSES
from bot.view.callbacks import CALLBACKS
from bot.view.i18n import t


def ids(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"🆔 (\d+)", text)]


async def test_a_results_menu_forgets_it_after_asking(bot: Bot, telegram: FakeBotAPI) -> None:
    await bot.say("/remember standup at 10 #work", user=ALICE)
    await bot.say("/remember retro on friday #work", user=ALICE)
    [results] = await bot.say("/recall standup", user=ALICE)
    [(label, data)] = results.buttons  # the answer's menu, no 🗑 of its own
    assert label == "⋯" and data.startswith("m:")
    since = telegram.mark()
    await bot.press(results, data, user=ALICE)
    [menu] = await telegram.wait("sendMessage", since=since, chat_id=42)
    assert "standup at 10" in menu.text
    assert [label for label, _ in menu.buttons] == ["🗑 Forget", "🔗 Related", "🕘 History"]
    since = telegram.mark()
    await bot.press(menu, menu.buttons[0][1], user=ALICE)
    [prompt] = await telegram.wait("sendMessage", since=since, chat_id=42)
    assert "Forget this memory?" in prompt.text and "standup at 10" in prompt.text
    await bot.press(prompt, prompt.buttons[0][1], user=ALICE)
    assert [r["content"] for r in bot.memories("users/42")] == ["retro on friday #work"]

    since = telegram.mark()  # a second tap on the same Delete: already gone
    await bot.press(prompt, prompt.buttons[0][1], user=ALICE)
    [answer] = telegram.find("answerCallbackQuery", since=since)
    assert answer.params["show_alert"] is True and "not here" in answer.params["text"]
    since = telegram.mark()  # and the menu of a memory gone says so
    await bot.press(results, data, user=ALICE)
    [answer] = telegram.find("answerCallbackQuery", since=since)
    assert answer.params["show_alert"] is True
    assert not telegram.find("sendMessage", since=since)


async def test_a_results_menu_shows_its_related_memories_and_history(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    await bot.say("/remember standup at 10 #work", user=ALICE)
    await bot.say("/remember retro on friday #work", user=ALICE)
    [results] = await bot.say("/recall standup", user=ALICE)
    since = telegram.mark()
    await bot.press(results, results.buttons[0][1], user=ALICE)
    [menu] = await telegram.wait("sendMessage", since=since, chat_id=42)
    since = telegram.mark()
    await bot.press(menu, menu.buttons[1][1], user=ALICE)
    [related] = await telegram.wait("sendMessage", since=since, chat_id=42)
    assert "Related to" in related.text and "retro on friday" in related.text
    since = telegram.mark()
    await bot.press(menu, menu.buttons[2][1], user=ALICE)
    [history] = await telegram.wait("sendMessage", since=since, chat_id=42)
    assert "standup at 10" in history.text


async def test_a_forged_callback_for_another_namespaces_memory_is_refused(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    [stored] = await bot.say("/remember alice's diary entry", user=ALICE)
    [victim] = ids(stored.text)
    [own] = await bot.say("/help", user=BOB)  # a bot message in Bob's own chat
    for data in (f"f:{victim}", f"d:{victim}", f"k:{victim}"):
        since = telegram.mark()
        await bot.press(own, data, user=BOB)
        [answer] = telegram.find("answerCallbackQuery", since=since)
        assert answer.params.get("show_alert") is True or data.startswith("k:")
        assert not telegram.find("sendMessage", since=since)  # no prompt, no content shown
        edits = telegram.find("editMessageText", since=since)
        assert all("diary" not in e.text for e in edits)
    assert [r["id"] for r in bot.memories("users/42")] == [victim]


async def test_in_user_scope_a_member_cannot_forget_anothers_memory(
    start_bot: StartBot, telegram: FakeBotAPI
) -> None:
    group = telegram.group()
    async with start_bot(group_scope="user") as bot:
        await bot.say("/remember alice's locker code 1234", user=ALICE, chat=group)
        [results] = await bot.say("/recall locker", user=ALICE, chat=group)
        since = telegram.mark()
        await bot.press(results, results.buttons[0][1], user=BOB)  # Bob presses Alice's 🗑
        [answer] = telegram.find("answerCallbackQuery", since=since)
        assert answer.params["show_alert"] is True
        assert not telegram.find("sendMessage", since=since)
        assert len(bot.memories("users/42")) == 1


async def test_unknown_and_malformed_callback_data_are_answered(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    [own] = await bot.say("/help", user=ALICE)
    for data in ("x:1", "d:notanumber", "d:99999999999999999999", "p:-1", "f:0"):
        since = telegram.mark()
        await bot.press(own, data, user=ALICE)
        [answer] = telegram.find("answerCallbackQuery", since=since)
        assert answer.params["show_alert"] is True


def test_one_table_of_callback_prefixes_and_a_press_handler_for_each() -> None:
    prefixes = [callback.prefix for callback in CALLBACKS]
    assert len(set(prefixes)) == len(prefixes) and not any(":" in p for p in prefixes)
    assert set(PRESSES) == set(CALLBACKS)


async def test_a_press_without_data_is_answered_as_stale(bot: Bot, telegram: FakeBotAPI) -> None:
    # A press without data reaches every button handler (python-telegram-bot's rule): the
    # first one registered must not take it for its own.
    [own] = await bot.say("/help", user=ALICE)
    since = telegram.mark()
    await bot.press(own, "", user=ALICE)
    [answer] = telegram.find("answerCallbackQuery", since=since)
    assert answer.params["show_alert"] is True and answer.params["text"] == t("en", "stale_plain")


async def test_every_button_fits_telegrams_64_bytes(bot: Bot, telegram: FakeBotAPI) -> None:
    long_category = "类" * 60  # 180 bytes of UTF-8
    for n in range(12):
        await bot.say(f"/remember {long_category}: 第 {n} 条 #{'标签' * 10}", user=ALICE)
    await bot.say(f"/list {long_category}", user=ALICE)
    await bot.say("/recall 标签", user=ALICE)
    sent = telegram.find("sendMessage", ok=None)
    assert all(call.ok for call in sent)  # the fake refuses data over 64 bytes
    datas = [data for call in sent for _, data in call.buttons]
    assert datas and all(len(d.encode()) <= 64 for d in datas)
