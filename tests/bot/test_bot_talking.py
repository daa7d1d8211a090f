"""Talking to the bot without a language model, end to end (the real Application against the
fake Bot API, a real store): notes said in words ("remember that …", "帮我记一下…") stored as
/remember stores them, questions about memory searched, 💾 Remember this under a statement,
and an edited note. Voice notes are in test_bot_media.py."""

from __future__ import annotations

import re
from typing import Any

from bot_harness import ALICE, BOB, LI, Bot

from bench.fakes.telegram_server import BOT_USERNAME, Call, FakeBotAPI


async def tell(
    bot: Bot, text: str, *, user: dict[str, Any], chat: dict[str, Any] | None = None
) -> tuple[dict[str, Any], Call]:
    """Send ``text``; the message sent and the bot's one reply to it."""
    since = bot.telegram.mark()
    message = bot.telegram.send(text, user=user, chat=chat)
    [reply] = await bot.telegram.wait("sendMessage", since=since, chat_id=message["chat"]["id"])
    return message, reply


def offer_of(reply: Call) -> list[tuple[str, str]]:
    """The 💾 buttons under ``reply``."""
    return [(label, data) for label, data in reply.buttons if data.startswith("rt:")]


def without_ids(text: str) -> str:
    return re.sub(r"\d{10,}", "<id>", text)


def contents(bot: Bot, namespace: str) -> list[str]:
    return [m["content"] for m in bot.memories(namespace)]


# -- notes said in words -----------------------------------------------------------------------


async def test_a_note_in_words_is_stored_and_answered_as_remember(bot: Bot) -> None:
    [said] = await bot.say("remember that my locker is 23 #gym", user=ALICE)
    [typed] = await bot.say("/remember my locker is 23 #gym", user=BOB)
    assert without_ids(said.text) == without_ids(typed.text)
    assert said.text.startswith("✅ Remembered.") and "remember that" not in said.text
    [memory] = bot.memories("users/42")
    assert memory["content"] == "my locker is 23 #gym" and memory["tags"] == ["gym"]
    assert memory["source"].startswith("telegram:42:")
    # The same note again, said another way: stored once, as /remember says.
    [again] = await bot.say("Please remember: my locker is 23 #gym", user=ALICE)
    assert "Already remembered" in again.text
    # A category, as /remember reads it after the trigger words.
    await bot.say("note to self: work: standup moved to 10:30", user=ALICE)
    assert bot.memories("users/42")[-1]["category"] == "work"
    [zh] = await bot.say("帮我记一下：周五交房租", user=LI)
    assert zh.text.startswith("✅ 记住了。")
    assert contents(bot, "users/44") == ["周五交房租"]
    [empty] = await bot.say("帮我记一下", user=LI)  # nothing to keep: /remember's usage
    assert "要记住什么" in empty.text and len(bot.memories("users/44")) == 1


async def test_notes_are_recognised_however_they_are_said(bot: Bot) -> None:
    said = {
        "please remember the gate code is 4711": "the gate code is 4711",
        "don't forget that the plumber comes Friday": "the plumber comes Friday",
        "Remember: Anna prefers green tea": "Anna prefers green tea",
        "memo: the router is in the hall cupboard": "the router is in the hall cupboard",
        "记下来：老王的电话是13800138000": "老王的电话是13800138000",
        "请记住护照在书房的抽屉里": "护照在书房的抽屉里",
        "备忘：车停在B2层": "车停在B2层",
        "帮我记住奶奶对青霉素过敏": "奶奶对青霉素过敏",
    }
    for text in said:
        [reply] = await bot.say(text, user=ALICE)
        assert "Remembered" in reply.text, text
    assert contents(bot, "users/42") == list(said.values())


async def test_a_note_naming_a_time_gets_its_date_and_the_reminder_offer(bot: Bot) -> None:
    [reply] = await bot.say("remember that dentist next Tuesday at 3pm", user=ALICE)
    assert "📅" in reply.text
    assert "⏰ Remind you " in reply.text and reply.text.endswith("? — dentist")
    assert [label for label, _ in reply.buttons] == ["✅ Yes", "🕒 Another time", "✖️ No"]
    [memory] = bot.memories("users/42")
    assert memory["content"] == "dentist next Tuesday at 3pm" and memory["date"]


async def test_questions_about_memory_are_searched_and_nothing_is_stored(bot: Bot) -> None:
    await bot.say("/remember the wifi password is hunter2 #wifi", user=ALICE)
    await bot.say("/remember 我们去巴黎住的是卢浮宫旁边的酒店", user=LI)
    for user, question in [
        (ALICE, "do you remember what I said about the wifi?"),
        (ALICE, "remember when we went to Paris?"),
        (ALICE, "note that this is a question?"),
        (ALICE, "what's the wifi password"),
        (ALICE, "where is my passport?"),
        (LI, "我记得你说过wifi密码"),
        (LI, "你还记得我们去巴黎住在哪吗"),
        (LI, "我的护照在哪"),
    ]:
        [reply] = await bot.say(question, user=user)
        assert not offer_of(reply), question
        assert "Remembered" not in reply.text and "记住了。" not in reply.text, question
    [found] = await bot.say("do you remember what I said about the wifi?", user=ALICE)
    assert "hunter2" in found.text
    assert len(bot.memories("users/42")) == 1 and len(bot.memories("users/44")) == 1


# -- 💾 Remember this ---------------------------------------------------------------------------


async def test_a_statement_is_searched_with_a_remember_this_button(bot: Bot) -> None:
    await bot.say("/remember the gym is open until 22:00 #gym", user=ALICE)
    message, reply = await tell(bot, "my gym locker is 23", user=ALICE)
    # Searched, as before: the gym's hours do not answer it, so they are not shown, but the
    # search's own buttons stay (the closest matches, behind a button).
    assert "Nothing stored about “my gym locker is 23” yet." in reply.text
    assert "found nothing" not in reply.text  # told, not asked
    assert "open until 22:00" not in reply.text
    kept = [data for _, data in reply.buttons if not data.startswith("rt:")]
    assert any(data.startswith("r:1:") for data in kept)
    [(label, data)] = offer_of(reply)
    assert label == "💾 Remember this" and data == f"rt:{message['message_id']}"
    assert len(bot.memories("users/42")) == 1  # offered, not stored
    since = bot.telegram.mark()
    await bot.press(reply, data, user=ALICE)
    [done] = await bot.telegram.wait("sendMessage", since=since, chat_id=42)
    assert done.text.startswith("✅ Remembered.") and "my gym locker is 23" in done.text
    [markup] = bot.telegram.find("editMessageReplyMarkup", since=since)
    assert [d for _, d in markup.buttons] == kept  # 💾 gone, the search's own kept
    stored = bot.memories("users/42")[-1]
    assert stored["content"] == "my gym locker is 23"
    assert stored["source"] == f"telegram:42:{message['message_id']}:42"
    # Pressed again (an old copy of the button): stored once.
    since = bot.telegram.mark()
    await bot.press(reply, data, user=ALICE)
    [again] = await bot.telegram.wait("sendMessage", since=since, chat_id=42)
    assert "Already remembered" in again.text
    assert contents(bot, "users/42") == ["the gym is open until 22:00 #gym", "my gym locker is 23"]
    # The statement edited later: its memory follows, as a /remember message's does.
    since = bot.telegram.mark()
    bot.telegram.edit(message, text="my gym locker is 24")
    [edited] = await bot.telegram.wait("sendMessage", since=since, chat_id=42)
    assert "my gym locker is 24" in edited.text
    assert contents(bot, "users/42")[-1] == "my gym locker is 24"


async def test_nothing_found_still_offers_to_remember_in_chinese(bot: Bot) -> None:
    _, reply = await tell(bot, "门禁卡放在玄关的抽屉里", user=LI)
    [(label, data)] = offer_of(reply)
    assert label == "💾 记住这条"
    since = bot.telegram.mark()
    await bot.press(reply, data, user=LI)
    [done] = await bot.telegram.wait("sendMessage", since=since, chat_id=44)
    assert done.text.startswith("✅ 记住了。")
    assert contents(bot, "users/44") == ["门禁卡放在玄关的抽屉里"]
    for fragment in ("wifi密码", "thanks", "护照"):  # a few words: a search, nothing offered
        [reply] = await bot.say(fragment, user=LI)
        assert not offer_of(reply), fragment


async def test_in_a_group_only_who_said_it_may_remember_it(bot: Bot, telegram: FakeBotAPI) -> None:
    group = telegram.group()
    _, reply = await tell(bot, f"@{BOT_USERNAME} the printer code is 4455", user=ALICE, chat=group)
    [(_, data)] = offer_of(reply)
    since = telegram.mark()
    await bot.press(reply, data, user=BOB)
    [answer] = telegram.find("answerCallbackQuery", since=since)
    assert answer.params["show_alert"] is True and "Only who said it" in answer.params["text"]
    assert bot.memories(f"chats/{group['id']}") == []
    since = telegram.mark()
    await bot.press(reply, data, user=ALICE)
    await telegram.wait("sendMessage", since=since, chat_id=group["id"])
    [memory] = bot.memories(f"chats/{group['id']}")
    assert memory["content"] == "the printer code is 4455"  # the @mention is not the note
    assert memory["source"].endswith(":42")  # Alice's: she may change it, Bob may not
    # A note in a group is stored as /remember would store it there.
    [note] = await bot.say(f"@{BOT_USERNAME} remember that lunch is at 12", user=BOB, chat=group)
    assert "Remembered" in note.text
    assert contents(bot, f"chats/{group['id']}")[-1] == "lunch is at 12"


async def test_an_edited_note_keeps_its_note_not_the_trigger_words(bot: Bot) -> None:
    message, _ = await tell(bot, "remember that my locker is 23", user=ALICE)
    since = bot.telegram.mark()
    bot.telegram.edit(message, text="remember that my locker is 24")
    [edited] = await bot.telegram.wait("sendMessage", since=since, chat_id=42)
    assert "my locker is 24" in edited.text
    assert contents(bot, "users/42") == ["my locker is 24"]
