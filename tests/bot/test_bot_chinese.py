"""The Chinese interface has no English words left in it.

A user whose Telegram is in Chinese drives the bot through every command and the buttons they
lead to (the real Application against the fake Bot API). Everything the bot shows them is
scanned: messages, edits, button labels, pop-up answers, document captions, the command menu.
A word in Latin letters is allowed only when it is not the bot's: the user's own words (all
they typed or sent, kept as typed), a command and its literal options (``/digest on``), what
is in ``<code>`` (a config key, an example to copy), an id or code with digits in it, a
letter alone (a variable: ``/press N``), an address, a file name, a time zone's IANA name,
and a few names that are names in Chinese too (Telegram, JSON, UTC, WiFi, MB). The scanner
knows no string of the bot: a reply path that mixes English in fails however it is worded.
A second test runs the same scanner over every Chinese template of ``bot.view.i18n.STRINGS``,
for the paths the session cannot reach (the model's errors, a crash reported to an
administrator); the console's own lines and its jobs are scanned in test_bot_console.py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from bot_harness import LI, Bot, StartBot, is_help

from bench.fakes.telegram_server import BOT_USERNAME, Call, FakeBotAPI
from bot.view.i18n import STRINGS

# Names that are written in Latin letters in Chinese text too.
NAMES = frozenset("Telegram JSON UTC GMT IANA MB KB GB WiFi HTTP API ID iCalendar Markdown".split())
_CODE = re.compile(r"<code>.*?</code>|<pre>.*?</pre>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
_ADDRESS = re.compile(r"https?://\S+|\S+@\S+\.\w+|[\w.-]+\.(?:json|ics|md|txt|jsonl)\b")
_ZONE = re.compile(r"\b[A-Z][A-Za-z]+/[A-Za-z_]+(?:/[A-Za-z_]+)?\b|\b(?:UTC|GMT)[+-]\d+")
# A command, with its literal options after it: "/digest on", "/digest [on|off|now]".
_COMMAND = re.compile(
    r"/[a-z_]+(?:@\w+)?(?:\s*\[(?:(?:on|off|now|ics|md)\|?)+\]|(?:\s+(?:on|off|now|ics|md)\b))?"
)
_ID = re.compile(r"[A-Za-z0-9]*\d[A-Za-z0-9]*")  # an id or a code: 1712…, #8617frsp, B2
_LATIN = re.compile(r"[A-Za-z][A-Za-z'’]*")


def latin_words(text: str) -> list[str]:
    return _LATIN.findall(text)


def shown_texts(call: Call) -> list[str]:
    """Every piece of text ``call`` shows a person, as HTML or plain text."""
    params = call.params
    texts = [str(params[key]) for key in ("text", "caption") if key in params]
    texts += [label for label, _ in call.buttons]
    markup = params.get("reply_markup")
    if isinstance(markup, str):
        markup = json.loads(markup)
    if isinstance(markup, dict):  # a reply keyboard ("send my location")
        texts += [str(b.get("text", "")) for row in markup.get("keyboard", []) for b in row]
    if call.method == "setMyCommands":
        commands = params.get("commands")
        if isinstance(commands, str):
            commands = json.loads(commands)
        texts += [str(c.get("description", "")) for c in commands or []]
    return texts


def english_left(text: str, allowed: set[str]) -> list[str]:
    """The Latin words of ``text`` that are the bot's own (see the module docstring)."""
    text = _CODE.sub(" ", text)
    text = _TAG.sub("", text).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    text = _ADDRESS.sub(" ", text)
    text = _ZONE.sub(" ", text)
    text = _COMMAND.sub(" ", text)
    text = _ID.sub(" ", text)
    return [
        w
        for w in latin_words(text)
        if len(w) > 1  # a letter alone is a variable or a unit: "/press N", "第 N 个", "B"
        and w not in NAMES
        and w.lower() not in allowed
        and w.rstrip("'’s").lower() not in allowed
    ]


class Session:
    """The Chinese user's session: what they sent, and a scan of what the bot showed."""

    def __init__(self, bot: Bot, user: dict[str, Any]) -> None:
        self.bot = bot
        self.user = user
        self.typed: set[str] = set()
        self.start = bot.telegram.mark()

    def heard(self, text: str) -> None:
        self.typed |= {w.lower() for w in latin_words(text)}

    async def say(self, text: str, *, replies: int = 1, **keys: Any) -> list[Call]:
        self.heard(text)
        return await self.bot.say(text, user=self.user, replies=replies, **keys)

    async def exchange(self, text: str) -> list[Call]:
        self.heard(text)
        return await self.bot.exchange(text, user=self.user)

    async def press(self, call: Call, data: str) -> list[Call]:
        """Press ``data`` under ``call``; every call the bot made for it."""
        telegram = self.bot.telegram
        since = telegram.mark()
        await self.bot.press(call, data, user=self.user)
        # Updates are handled in order: once a /help sent after the press is answered, the
        # press is done (📖 Help sends the manual itself: then two).
        telegram.send("/help", user=self.user)
        count = 2 if data == "w:help" else 1
        await telegram.wait("sendMessage", since=since, count=count, where=is_help)
        return telegram.calls[since:]

    def leaks(self, calls: Iterable[Call]) -> list[tuple[str, list[str]]]:
        found = []
        for call in calls:
            for text in shown_texts(call):
                left = english_left(text, self.typed)
                if left:
                    found.append((text, left))
        return found


def button(call: Call, prefix: str, index: int = 0) -> str:
    """The callback data of the ``index``-th button of ``call`` whose data starts so."""
    return [data for _, data in call.buttons if data.startswith(prefix)][index]


def memory_id(call: Call) -> str:
    return re.findall(r"🆔 (\d+)", call.text)[-1]


async def test_a_chinese_user_sees_no_english_in_any_reply(
    start_bot: StartBot, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    async with start_bot() as bot:
        me = Session(bot, LI)
        # The greeting and its buttons, the manual.
        [start] = await me.say("/start")
        for data in (button(start, "w:", 0), button(start, "w:", 1)):
            await me.press(start, data)
        await me.say("/help")
        await me.say(f"/help@{BOT_USERNAME}")
        # Notes: categories, hashtags, derived tags, a date, an English note, a reply.
        [health] = await me.say("/remember 健康：每天吃维生素 #药")
        [dentist] = await me.say("/remember 明天下午三点看牙医")
        if dentist.buttons:
            await me.press(dentist, dentist.buttons[0][1])  # ⏰ remind me then
        await me.say("/remember 回家路上买牛奶、鸡蛋和面包")
        await me.say("/remember the spare key is under the flower pot")
        await me.say("/remember 家：备用钥匙在花盆下面")  # much like the one before? asks
        [near] = await me.say("/remember 备用钥匙在花盆下面")
        for _, data in near.buttons[:1]:
            await me.press(near, data)
        await me.say("/remember 备用钥匙在花盆下面")  # already remembered
        for n in range(11):
            await me.say(f"/remember 工作：第{n}号笔记")
        # Finding, listing, paging.
        [found] = await me.say("/recall 牙医")
        [listed] = await me.say("/list")
        for _, data in listed.buttons:
            await me.press(listed, data)
        await me.say("/list 健康")
        await me.say("/list work")
        await me.say("/list #药")
        await me.say("/list 没有这个分类")
        await me.say("/list 提醒")
        await me.say("/recall")
        [many] = await me.say("/recall 笔记")
        for _, data in many.buttons:
            if data.startswith("r:"):
                await me.press(many, data)
        await me.say("/stats")
        await me.say(f"/related {memory_id(health)}")
        await me.say(f"/related {memory_id(found)}")
        await me.say(f"/edit {memory_id(health)} 健康：每天早上吃维生素 #药 #早上")
        # A result's own menu (⋯): 🗑, 🔗, 🕘; Keep, then Delete; /forget by id.
        for call in await me.press(found, button(found, "m:")):
            if call.method == "sendMessage" and call.buttons and not is_help(call):
                for _, data in call.buttons:
                    await me.press(call, data)
        [prompt] = await me.say(f"/forget {memory_id(found)}")
        await me.press(prompt, button(prompt, "k:"))
        [prompt] = await me.say(f"/forget {memory_id(found)}")
        await me.press(prompt, button(prompt, "d:"))
        await me.press(prompt, button(prompt, "d:"))  # pressed again: gone
        # History and undo.
        await me.say("/undo")
        [history] = await me.say("/history")
        for _, data in history.buttons[:1]:
            await me.press(history, data)
        [versions] = await me.say(f"/history {memory_id(health)}")
        for _, data in versions.buttons[:1]:
            await me.press(versions, data)
        await me.say("/history 1700000000000")
        # Reminders and zones.
        [weekly] = await me.say("/remind 每周一早上9点 周会")
        await me.say("/remind tomorrow 9am call mom")
        await me.say("/remind 每个工作日 7:30 跑步")
        await me.say("/remind 每月1号 交房租")
        await me.say("/remind 想起来再说")  # no time in it: examples
        await me.say("/remind")
        [listing] = await me.say("/reminders")
        await me.press(weekly, button(weekly, weekly.buttons[-1][1].split(":")[0] + ":"))
        await me.say("/timezone")
        await me.say("/timezone 上海")
        await me.say("/timezone Berlin")
        await me.say("/timezone UTC+8")
        await me.say("/timezone 不存在的地方")
        await me.exchange("提醒我明天早上8点带伞")
        for _, data in listing.buttons[:1]:
            await me.press(listing, data)
        # The digest.
        await me.say("/digest")
        await me.say("/digest on")
        await me.say("/digest now")
        await me.say("/digest off")
        await me.say("/digest 什么")
        # Export, in each format.
        await me.exchange("/export")
        await me.exchange("/export ics")
        await me.exchange("/export md")
        # Free text: a note in words, a question, a statement and its 💾, small talk.
        await me.say("记住我的柜子是117号")
        await me.say("我的柜子是几号？")
        [statement] = await me.say("我的自行车停在图书馆外面")
        for _, data in statement.buttons:
            if data.startswith("rt:"):
                await me.press(statement, data)
        await me.say("谢谢")
        await me.say("护照在哪")
        # Refusals.
        for text in (
            "/remember",
            "/forget",
            "/forget abc",
            "/forget 1700000000000",
            "/edit",
            "/edit 1700000000000 新内容",
            "/related",
            "/related xyz",
            "/remember " + "长" * 4001,
            "/remember 太多标签 " + " ".join(f"#标签{i}" for i in range(25)),
            "/remember 有\x00不可见字符",
            "/nonsense",
        ):
            await me.exchange(text)
        # Files: an import (previewed, applied), a bad one; a photo, a sticker, a location.
        export = json.dumps(
            [
                {
                    "id": 1_700_000_000_001,
                    "content": "导入的记忆",
                    "tags": ["导入"],
                    "category": "健康",
                }
            ],
            ensure_ascii=False,
        ).encode()
        for content in (export, b"{not json", b'{"memories": []}'):
            stored = telegram.upload(content, "memory.json")
            since = telegram.mark()
            telegram.post(user=LI, document={**stored, "file_name": "memory.json"})
            await bot.exchange("/help", user=LI)
            for call in telegram.calls[since:]:
                if call.method == "sendMessage" and call.buttons:
                    await me.press(call, call.buttons[0][1])
        photo = telegram.upload(b"\xff\xd8jpeg", "photo.jpg")
        since = telegram.mark()
        telegram.post(user=LI, photo=[{**photo, "width": 90, "height": 90}], caption="停车位 B2")
        me.heard("停车位 B2")
        telegram.post(user=LI, sticker={"file_id": "s", "file_unique_id": "s", "type": "regular",
                                        "width": 1, "height": 1, "is_animated": False,
                                        "is_video": False})  # fmt: skip
        telegram.post(user=LI, location={"latitude": 31.23, "longitude": 121.47})
        await bot.exchange("/help", user=LI)
        await me.say("/recall 停车位")

    leaks = me.leaks(telegram.calls[me.start :])
    menu = [c for c in telegram.calls if c.method == "setMyCommands"]
    leaks += me.leaks(c for c in menu if c.params.get("language_code") == "zh")
    assert leaks == [], "\n\n".join(f"{words}: {text}" for text, words in leaks)


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("🕘 最近 2 次改动\n    2026-12-02 01:05 UTC · You 通过 button", ["You", "button"]),
        ("📁 general · 🆔 1796173506119", ["general"]),
        ("/digest on 开启；/digest now 发送", []),
        ("<code>[llm] api_key</code> 和 Asia/Shanghai、UTC+8", []),
        ("我的 wifi 密码", []),  # the user typed "wifi"
        ("🔁 every Mon", ["every", "Mon"]),
        ("✏️ ⏰#8617frsp “周会”改到什么时候？", []),
    ],
)
def test_the_scanner_finds_the_bot_s_english_and_only_it(text: str, left: list[str]) -> None:
    assert english_left(text, {"wifi"}) == left


def test_no_chinese_template_has_english_in_it() -> None:
    leaks = {}
    for key, template in STRINGS["zh"].items():
        left = english_left(re.sub(r"\{[a-z_]+\}", " ", template), set())
        if left:
            leaks[key] = left
    assert leaks == {}
