"""Who the sender is: posting as a channel, as an anonymous administrator, and button presses.

Telegram sets ``from`` of a message sent on behalf of a chat to a placeholder shared by everyone
writing that way (``Channel_Bot``, ``GroupAnonymousBot``, ``Telegram`` for a linked channel's
automatic forward) and the real sender in ``sender_chat``. The sender is ``sender_chat``: two
channels are two identities, never one; the group itself (an anonymous administrator) has its
administrators' rights there and nowhere else; a placeholder alone is nobody
(``bot.chat.access.actor_of``). Every button press is answered, an inline-mode one included.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from rel_harness import config_for, contents, running, user

from bench.fakes.openai_server import API_KEY, Answer, FakeOpenAI, ToolCalls
from bench.fakes.telegram_server import (
    ANONYMOUS_ADMIN,
    BOT_USERNAME,
    CHANNEL_BOT,
    Call,
    FakeBotAPI,
)
from bot.assistant.llm import make_client
from memory.files import MemoryStore

ALICE = user(42)
BOB = user(43)
CAROL = user(45)  # an administrator of the group
GROUP = -1002
OTHER_GROUP = -1003
NEWS = FakeBotAPI.channel(-1005, "News")
ADS = FakeBotAPI.channel(-1006, "Ads")
NOT_YOURS = "Only the member who stored this memory or a group administrator"


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


def memory_id(call: Call) -> int:
    return int(re.findall(r"🆔 (\d+)", call.text)[-1])


async def post(
    telegram: FakeBotAPI,
    text: str,
    chat: dict[str, Any],
    *,
    as_chat: dict[str, Any] | None = None,
    who: dict[str, Any] | None = None,
    replies: int = 1,
    **options: Any,
) -> list[Call]:
    """``text`` in ``chat`` from ``who`` or on behalf of ``as_chat``; the bot's replies."""
    since = telegram.mark()
    telegram.send(text, user=who, chat=chat, sender_chat=as_chat, **options)
    return await telegram.wait("sendMessage", since=since, chat_id=chat["id"], count=replies)


async def say(telegram: FakeBotAPI, text: str, chat: dict[str, Any], **sender: Any) -> Call:
    [reply] = await post(telegram, text, chat, **sender)
    return reply


async def press(telegram: FakeBotAPI, call: Call | None, data: str, who: dict[str, Any]) -> Call:
    """Press (or forge) ``data`` under the bot's message (None: an inline-mode message)."""
    since = telegram.mark()
    query_id = telegram.press(call.result if call is not None else None, data, user=who)
    [answer] = await telegram.wait("answerCallbackQuery", since=since, callback_query_id=query_id)
    return answer


def sources(data_dir: Path, namespace: str) -> list[str | None]:
    with MemoryStore(data_dir) as store:
        return [m.source for m in store.namespace(namespace).memories()]


async def test_two_channels_in_a_per_member_group_keep_their_own_memories(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    group = telegram.group(GROUP, "Team")
    async with running(config_for(telegram, data_dir, group_scope="user")):
        news = memory_id(
            await say(telegram, "/remember news - launch on monday", group, as_chat=NEWS)
        )
        await say(telegram, "/remember ads - budget is 500", group, as_chat=ADS)
        await say(telegram, "/remember bob - locker 12", group, who=BOB)
        # The linked channel's automatic forward is the channel too.
        await say(
            telegram, "/remember news - forwarded", group, as_chat=NEWS, automatic_forward=True
        )

        # Ads cannot see, change or delete what News stored.
        for command in (f"/forget {news}", f"/edit {news} hacked", f"/related {news}"):
            reply = await say(telegram, command, group, as_chat=ADS)
            assert f"There is no memory {news} here" in reply.text
        found = await say(telegram, "/recall launch", group, as_chat=ADS)
        assert "launch on monday" not in found.text
        # Nor can Bob, nor a member's press on News's memory.
        assert "There is no memory" in (await say(telegram, f"/forget {news}", group, who=BOB)).text
        # News keeps its memories in any group (like a person's, they are its own).
        other = telegram.group(OTHER_GROUP, "Other")
        found = await say(telegram, "/recall launch", other, as_chat=NEWS)
        assert "launch on monday" in found.text

    assert contents(data_dir, "channels/-1005") == ["news - launch on monday", "news - forwarded"]
    assert contents(data_dir, "channels/-1006") == ["ads - budget is 500"]
    assert contents(data_dir, "users/43") == ["bob - locker 12"]
    names = MemoryStore(data_dir).namespace_names()
    assert not [n for n in names if n.startswith("users/") and n != "users/43"], names
    assert [s.rsplit(":", 1)[1] for s in sources(data_dir, "channels/-1005")] == ["chat-1005"] * 2


async def test_in_a_shared_group_a_channel_changes_only_its_own_and_the_group_itself_all(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    group = telegram.group(GROUP, "Team")
    other = telegram.group(OTHER_GROUP, "Other")
    telegram.admins[GROUP] = {CAROL["id"]}
    async with running(config_for(telegram, data_dir)):
        news = memory_id(
            await say(telegram, "/remember news - launch on monday", group, as_chat=NEWS)
        )
        anon = memory_id(await say(telegram, "/remember admins - wifi is x", group, as_chat=group))
        bobs = memory_id(await say(telegram, "/remember bob - retro on friday", group, who=BOB))

        # Another channel, a channel on an administrator's memory, and another group "itself"
        # (forged: Telegram never sends it) are not the author and not administrators.
        for sender, target in ((ADS, news), (NEWS, anon), (NEWS, bobs)):
            for command in (f"/forget {target}", f"/edit {target} hacked"):
                reply = await say(telegram, command, group, as_chat=sender)
                assert NOT_YOURS in reply.text, (sender["title"], command)
        for command in (f"/forget {anon}", f"/edit {anon} hacked", "/digest off"):
            reply = await say(telegram, command, group, as_chat=other, who=ANONYMOUS_ADMIN)
            assert "Only" in reply.text or "administrators" in reply.text, command
        # In another group News reaches nothing of this one.
        reply = await say(telegram, f"/forget {news}", other, as_chat=NEWS)
        assert f"There is no memory {news} here" in reply.text

        # A button pressed by a member, or by a bare placeholder, is refused.
        prompt = await say(telegram, f"/forget {news}", group, as_chat=NEWS)
        assert "Forget this memory?" in prompt.text
        for presser in (BOB, CHANNEL_BOT, ANONYMOUS_ADMIN):
            answer = await press(telegram, prompt, f"d:{news}", presser)
            assert answer.params["show_alert"] is True, presser
        found = await say(telegram, "/recall launch", group, who=BOB)
        answer = await press(telegram, found, f"f:{news}", BOB)
        assert answer.params["show_alert"] is True and NOT_YOURS in answer.params["text"]
        assert len(contents(data_dir, f"chats/{GROUP}")) == 3

        # The author changes its own; the group itself (an anonymous administrator) anything,
        # and an administrator confirms its prompt by pressing as themself.
        edited = await say(telegram, f"/edit {news} news - launch on tuesday", group, as_chat=NEWS)
        assert edited.text.startswith("✏️ Updated.")
        edited = await say(telegram, f"/edit {bobs} bob - retro moved", group, as_chat=group)
        assert edited.text.startswith("✏️ Updated.")
        prompt = await say(telegram, f"/forget {news}", group, as_chat=group)
        answer = await press(telegram, prompt, f"d:{news}", CAROL)
        assert "show_alert" not in answer.params
    assert contents(data_dir, f"chats/{GROUP}") == ["admins - wifi is x", "bob - retro moved"]
    assert contents(data_dir, f"chats/{OTHER_GROUP}") == []


async def test_the_allow_list_knows_channels_by_their_chat_id(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    group = telegram.group(GROUP, "Team")
    config = config_for(telegram, data_dir, allowed_user_ids=[ALICE["id"], NEWS["id"]])
    async with running(config):
        stored = await say(telegram, "/remember news - allowed", group, as_chat=NEWS)
        assert stored.text.startswith("✅ Remembered.")
        for sender in (ADS, group):  # another channel; the group itself, not in the list
            refused = await say(telegram, "/remember let me in", group, as_chat=sender)
            assert "this bot is private" in refused.text and str(sender["id"]) in refused.text
        # A placeholder without a sender chat is nobody: ignored, not refused, not stored.
        since = telegram.mark()
        telegram.send("/remember from nobody", user=CHANNEL_BOT, chat=group)
        await say(telegram, "/help", group, who=ALICE)
        assert len(telegram.find("sendMessage", since=since)) == 1
    assert contents(data_dir, f"chats/{GROUP}") == ["news - allowed"]


async def test_every_button_press_is_answered(telegram: FakeBotAPI, tmp_path: Path) -> None:
    group = telegram.group(GROUP, "Team")
    async with running(config_for(telegram, tmp_path / "data")):
        listed = await say(telegram, "/remember a note", group, who=ALICE)
        inline = await press(telegram, None, "f:1", ALICE)  # an inline-mode message
        assert inline.params["show_alert"] is True
        for presser in (CHANNEL_BOT, ALICE):
            answer = await press(telegram, listed, "p:0", presser)
            assert "went wrong" not in answer.params.get("text", "")
        # A button on a message in a channel (the bot does not serve channels).
        channel = telegram.channel(-1007, "Posts")
        telegram.chats[channel["id"]] = channel
        since = telegram.mark()
        query_id = telegram.press({**listed.result, "chat": channel}, "p:0", user=ALICE)
        await telegram.wait("answerCallbackQuery", since=since, callback_query_id=query_id)


async def test_in_a_group_the_model_may_change_only_the_channels_own_memories(
    telegram: FakeBotAPI, llm: FakeOpenAI, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    sections = {"llm": {"base_url": llm.base_url, "api_key": API_KEY, "model": "test"}}
    client = make_client(llm.base_url, API_KEY, 10.0)
    group = telegram.group(GROUP, "Team")
    async with running(config_for(telegram, data_dir, sections), client):
        news = memory_id(
            await say(telegram, "/remember news - launch on monday", group, as_chat=NEWS)
        )
        ads = memory_id(await say(telegram, "/remember ads - budget is 500", group, as_chat=ADS))
        llm.script(
            ToolCalls(
                ("updateMemory", {"id": news, "content": "pwned"}),
                ("updateMemory", {"id": ads, "content": "ads - budget is 600"}),
            ),
            Answer("Done."),
        )
        await post(telegram, f"@{BOT_USERNAME} update both", group, as_chat=ADS)
    results = llm.requests[-1].tool_results()
    assert [r["ok"] for r in results] == [False, True], json.dumps(results)
    assert contents(data_dir, f"chats/{GROUP}") == [
        "news - launch on monday",
        "ads - budget is 600",
    ]
    assert "Ads" in llm.requests[0].system or "Ads" in json.dumps(llm.requests[0].body)


async def test_the_digest_setting_follows_the_real_sender(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    group = telegram.group(GROUP, "Team")
    async with running(config_for(telegram, data_dir)):
        since = telegram.mark()
        refused = await say(telegram, "/digest on", group, as_chat=NEWS)
        assert "Only the group's administrators" in refused.text
        # A channel is never an administrator: nothing to ask Telegram about a placeholder.
        assert not telegram.find("getChatMember", since=since)
        switched = await say(telegram, "/digest on", group, as_chat=group)
        assert switched.text.startswith("✅ Digest on.")
    async with running(config_for(telegram, data_dir, group_scope="user")):
        # A channel's own memories have no chat for a scheduled report (not this group's).
        refused = await say(telegram, "/digest on", group, as_chat=NEWS)
        assert "memories kept for a channel" in refused.text
        report = await say(telegram, "/digest now", group, as_chat=NEWS)
        assert report.text.startswith("No memories yet.")  # reading it here is fine
    names = MemoryStore(data_dir).namespace_names()
    assert not [n for n in names if n != f"chats/{GROUP}"], names
