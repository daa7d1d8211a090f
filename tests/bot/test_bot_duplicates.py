"""Issue 15 through the fake Bot API: no duplicates, content kept whole, what phones type."""

from __future__ import annotations

import re

from bot_harness import ALICE, BOB, LI, Bot

from bench.fakes.telegram_server import FakeBotAPI


def memory_id(text: str) -> int:
    return int(re.findall(r"🆔 (\d+)", text)[-1])


async def remember(bot: Bot, text: str, user: dict = ALICE, **kwargs: object) -> str:
    [reply] = await bot.say(f"/remember {text}", user=user, **kwargs)  # type: ignore[arg-type]
    return reply.text


# -- no duplicates -----------------------------------------------------------------------------


async def test_the_same_content_is_remembered_once_and_the_reply_says_so(bot: Bot) -> None:
    first = memory_id(await remember(bot, "Standup is at 10:00"))
    [again] = await bot.say("/remember  standup   IS at 10:00!", user=ALICE)
    assert "Already remembered" in again.text and memory_id(again.text) == first
    [zh] = await bot.say("/remember ＳＴＡＮＤＵＰ is at １０:００", user=LI)  # another namespace
    assert "记住了" in zh.text
    [zh_again] = await bot.say("/remember standup is at 10:00", user=LI)
    assert "已经记住了" in zh_again.text
    assert [m["content"] for m in bot.memories("users/42")] == ["Standup is at 10:00"]


async def test_a_near_duplicate_waits_for_the_choice_replace(bot: Bot) -> None:
    old = memory_id(await remember(bot, "my code is in D:\\projects"))
    # Another value, but not said to be new: asked (a cue, "now", would replace at once).
    [prompt] = await bot.say("/remember my code is in E:\\work", user=ALICE)
    assert "new value" in prompt.text and "D:\\projects" in prompt.text
    datas = [data for _, data in prompt.buttons]
    assert [d[:3] for d in datas] == ["nk:", "nr:", "nc:"]
    assert all(len(d.encode()) <= 64 for d in datas)
    assert len(bot.memories("users/42")) == 1  # nothing stored before the choice
    since = bot.telegram.mark()
    await bot.press(prompt, datas[1], user=ALICE)
    [done] = await bot.telegram.wait("editMessageText", since=since)
    assert "Replaced: my code is in D:\\projects → my code is in E:\\work" in done.text
    assert [data[:3] for _, data in done.buttons] == ["cu:"]  # ↩ Undo
    [record] = bot.memories("users/42")
    assert record["id"] == old and record["content"] == "my code is in E:\\work"
    # Pressed again: the choice was made once.
    since = bot.telegram.mark()
    await bot.press(prompt, datas[0], user=ALICE)
    [answer] = bot.telegram.find("answerCallbackQuery", since=since)
    assert answer.params["show_alert"] is True
    assert len(bot.memories("users/42")) == 1


async def test_a_near_duplicate_keep_both_or_cancel(bot: Bot) -> None:
    await remember(bot, "小王的生日是5月3日", user=LI)
    [prompt] = await bot.say("/remember 小王的生日是6月1日", user=LI)
    assert "都保留" in " ".join(label for label, _ in prompt.buttons)
    keep, _, cancel = [data for _, data in prompt.buttons]
    since = bot.telegram.mark()
    await bot.press(prompt, cancel, user=LI)
    [done] = await bot.telegram.wait("editMessageText", since=since)
    assert "已取消" in done.text and len(bot.memories("users/44")) == 1
    [prompt] = await bot.say("/remember 小王的生日是6月1日", user=LI)
    keep = prompt.buttons[0][1]
    since = bot.telegram.mark()
    await bot.press(prompt, keep, user=LI)
    [done] = await bot.telegram.wait("editMessageText", since=since)
    assert "记住了" in done.text
    contents = sorted(m["content"] for m in bot.memories("users/44"))
    assert contents == ["小王的生日是5月3日", "小王的生日是6月1日"]


async def test_unrelated_short_memories_sharing_common_words_are_not_asked_about(
    bot: Bot,
) -> None:
    for text in ["I like tea", "Tom is my brother", "去超市买牛奶", "我的猫很可爱", "call mom"]:
        await remember(bot, text)
    for text in ["I like coffee", "Tom is a doctor", "去超市买面包", "我的狗很可爱", "call dad"]:
        reply = await remember(bot, text)
        assert "Remembered" in reply, text
    assert len(bot.memories("users/42")) == 10


async def test_in_a_group_only_who_asked_or_an_admin_chooses(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    group = telegram.group()
    await remember(bot, "the wifi password is hunter2", chat=group)
    [prompt] = await bot.say("/remember the wifi password is correcthorse", user=ALICE, chat=group)
    keep, replace, _ = [data for _, data in prompt.buttons]
    since = telegram.mark()
    await bot.press(prompt, keep, user=BOB)
    [answer] = telegram.find("answerCallbackQuery", since=since)
    assert answer.params["show_alert"] is True and "Only who asked" in answer.params["text"]
    # Bob's own near-duplicate of Alice's memory: he may keep both, not replace hers.
    [bobs] = await bot.say("/remember the wifi password is letmein", user=BOB, chat=group)
    _, replace, _ = [data for _, data in bobs.buttons][:3]
    since = telegram.mark()
    await bot.press(bobs, replace, user=BOB)
    [answer] = telegram.find("answerCallbackQuery", since=since)
    assert answer.params["show_alert"] is True
    assert [m["content"] for m in bot.memories(f"chats/{group['id']}")] == [
        "the wifi password is hunter2"
    ]


# -- content kept whole ------------------------------------------------------------------------


async def test_a_prefix_before_a_colon_is_content_unless_it_is_a_category_form(bot: Bot) -> None:
    whole = [
        "公司WiFi密码：Tr0ub4dor&3",
        "Password: hunter2",
        "Re: the contract",
        "明天上午要去银行办理业务带上身份证和户口本：很重要",
    ]
    for text in whole:
        reply = await remember(bot, text)
        assert "Remembered" in reply, text
    await remember(bot, "work: standup at 10:00")
    await remember(bot, "#recipes: pancakes need 2 eggs")
    await remember(bot, "工作：周一交报告", user=LI)
    records = {m["content"]: m["category"] for m in bot.memories("users/42")}
    for text in whole:
        assert records[text] == "general"
    assert records["standup at 10:00"] == "work"
    assert records["pancakes need 2 eggs"] == "recipes"
    [zh] = bot.memories("users/44")
    assert (zh["content"], zh["category"]) == (
        "周一交报告",
        "work",
    )  # 工作 is work (bot.categories)
    [help_text] = await bot.say("/help", user=ALICE)
    assert "#recipes:" in help_text.text and "Password: hunter2" in help_text.text


# -- input forms people type on phones ---------------------------------------------------------


async def test_full_width_ids_and_several_ids_in_one_forget(bot: Bot) -> None:
    first = memory_id(await remember(bot, "first note"))
    second = memory_id(await remember(bot, "second note"))
    wide = str(first).translate({ord("0") + n: 0xFF10 + n for n in range(10)})
    [prompt] = await bot.say(f"/forget {wide}", user=ALICE)
    assert "Forget this memory?" in prompt.text and "first note" in prompt.text
    prompts = await bot.say(f"/forget {first}，{second}", user=ALICE, replies=2)
    assert ["first note" in prompts[0].text, "second note" in prompts[1].text] == [True, True]
    for prompt in prompts:
        since = bot.telegram.mark()
        [delete, _] = [data for _, data in prompt.buttons]
        await bot.press(prompt, delete, user=ALICE)
        await bot.telegram.wait("editMessageText", since=since)
    assert bot.memories("users/42") == []


async def test_hashtags_full_width_with_punctuation_and_emoji(bot: Bot) -> None:
    await remember(bot, "周六去市场 ＃买菜，#周末。", user=LI)
    await remember(bot, "pizza night with friends #🍕 #party")
    [zh] = bot.memories("users/44")
    assert zh["content"] == "周六去市场 ＃买菜，#周末。" and zh["tags"] == ["买菜", "周末"]
    [en] = bot.memories("users/42")
    assert en["content"] == "pizza night with friends #🍕 #party" and en["tags"] == ["🍕", "party"]
    [found] = await bot.say("/recall 🍕", user=ALICE)
    assert "pizza night" in found.text
    [found] = await bot.say("/recall 去市\u200b场", user=LI)  # a zero-width space inside
    assert "周六去市场" in found.text
