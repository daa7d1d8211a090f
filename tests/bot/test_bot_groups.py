"""Groups, namespaces and the allow list, end to end."""

from __future__ import annotations

import re

from bot_harness import ALICE, BOB, Bot, StartBot

from bench.fakes.telegram_server import BOT_USERNAME, FakeBotAPI


async def test_group_commands_with_and_without_the_bot_name(bot: Bot, telegram: FakeBotAPI) -> None:
    group = telegram.group()
    [stored] = await bot.say(
        f"/remember@{BOT_USERNAME} team lunch on friday #lunch", user=ALICE, chat=group
    )
    assert "Remembered" in stored.text
    assert stored.params["reply_parameters"]["message_id"]  # in a group, the reply quotes
    [found] = await bot.say("/recall lunch", user=BOB, chat=group)
    assert "team lunch on friday" in found.text  # the group's memories are shared
    [found] = await bot.say(f"/recall@{BOT_USERNAME.lower()} lunch", user=BOB, chat=group)
    assert "team lunch on friday" in found.text
    assert [r["content"] for r in bot.memories(f"chats/{group['id']}")] == [
        "team lunch on friday #lunch"
    ]
    assert bot.memories("users/42") == []

    assert await bot.exchange("/recall@SomeOtherBot lunch", user=ALICE, chat=group) == []
    # "/frobnicate" may be another bot's command; "/frobnicate@us" is ours, and unknown
    assert await bot.exchange("/frobnicate", user=ALICE, chat=group) == []
    [unknown] = await bot.exchange(f"/frobnicate@{BOT_USERNAME}", user=ALICE, chat=group)
    assert "/help" in unknown.text


async def test_in_groups_the_bot_answers_mentions_and_replies_only(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    group = telegram.group()
    [stored] = await bot.say("/remember the wifi password is hunter2", user=ALICE, chat=group)
    assert await bot.exchange("where is the wifi password?", user=BOB, chat=group) == []

    [mentioned] = await bot.say(f"@{BOT_USERNAME} wifi password?", user=BOB, chat=group)
    assert "hunter2" in mentioned.text
    [replied] = await bot.say("and the wifi?", user=BOB, chat=group, reply_to=stored.result)
    assert "hunter2" in replied.text
    other = telegram.send("hello", user=ALICE, chat=group)
    assert await bot.exchange("wifi?", user=BOB, chat=group, reply_to=other) == []


async def test_group_scope_user_keeps_each_members_memories_apart(
    start_bot: StartBot, telegram: FakeBotAPI
) -> None:
    group = telegram.group()
    async with start_bot(group_scope="user") as bot:
        await bot.say("/remember my locker is 12", user=ALICE, chat=group)
        await bot.say("/remember my locker is 99", user=BOB, chat=group)
        [alice] = await bot.say("/recall locker", user=ALICE, chat=group)
        [bob] = await bot.say("/recall locker", user=BOB, chat=group)
        [private] = await bot.say("/recall locker", user=ALICE)
        # Whole phrases: a bare "12" could also stand in a memory's id.
        assert "locker is 12" in alice.text and "locker is 99" not in alice.text
        assert "locker is 99" in bob.text and "locker is 12" not in bob.text
        assert "my locker is 12" in private.text  # the same namespace as her private chat
        assert sorted(bot.namespaces()) == ["users/42", "users/43"]


async def test_the_allow_list_refuses_politely_and_stores_nothing(
    start_bot: StartBot, telegram: FakeBotAPI
) -> None:
    group = telegram.group()
    async with start_bot(allowed_user_ids=[42]) as bot:
        [refusal] = await bot.say("/remember my secret", user=BOB)
        assert "this bot is private" in refusal.text
        assert "<code>43</code>" in refusal.params["text"]  # their id, for the owner
        [refusal] = await bot.say("what do you know?", user=BOB)
        assert "43" in refusal.text
        [refusal] = await bot.say(f"/remember@{BOT_USERNAME} x", user=BOB, chat=group)
        assert "43" in refusal.text

        # Not addressed to the bot: no refusal either.
        assert await bot.exchange("just chatting", user=BOB, chat=group, sentinel_user=ALICE) == []

        [welcome] = await bot.say("/remember standup at 10", user=ALICE)
        assert "Remembered" in welcome.text
        since = telegram.mark()
        [memory_id] = re.findall(r"🆔 (\d+)", welcome.text)
        telegram.press(welcome.result, f"d:{memory_id}", user=BOB)
        [alert] = await telegram.wait("answerCallbackQuery", since=since)
        assert alert.params["show_alert"] is True and "43" in alert.params["text"]
        assert bot.namespaces() == ["users/42"]
        assert len(bot.memories("users/42")) == 1


async def test_admins_are_always_allowed(start_bot: StartBot) -> None:
    async with start_bot(allowed_user_ids=[42], admin_user_ids=[43]) as bot:
        [reply] = await bot.say("/remember admin note", user=BOB)
        assert "Remembered" in reply.text


async def test_a_slow_chat_does_not_hold_up_others_and_each_chat_keeps_its_order(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    release = telegram.hold("sendMessage", when=lambda p: p.get("chat_id") == ALICE["id"])
    telegram.send("/remember first", user=ALICE)
    telegram.send("/remember second", user=ALICE)
    [reply] = await bot.say("/help", user=BOB)  # answered while Alice's chat is stuck
    assert "Commands" in reply.text
    assert not telegram.find("sendMessage", chat_id=ALICE["id"])
    release.set()
    first, second = await telegram.wait("sendMessage", count=2, chat_id=ALICE["id"])
    assert "first" in first.text and "second" in second.text
    assert [r["content"] for r in bot.memories("users/42")] == ["first", "second"]
