"""Who may touch what: forged button data, and the group deletion policy.

A button press is resolved in the namespace of the person who pressed, so forged callback data
naming another namespace's memory finds nothing. In a group's shared namespace a memory may be
deleted or edited only by the member who stored it or by a group administrator; everyone may
read it (``bot.core.policy.Caller.may_change``, documented in /help and the README).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from rel_harness import config_for, contents, running, user

from bench.fakes.telegram_server import Call, FakeBotAPI
from memory.files import MemoryStore

ALICE = user(42)
BOB = user(43)
CAROL = user(45)  # an administrator of the group
LI = user(44, "zh-hans")
GROUP = -1002
NOT_YOURS = "Only the member who stored this memory or a group administrator"


def memory_id(call: Call) -> int:
    return int(re.findall(r"🆔 (\d+)", call.text)[-1])


async def say(
    telegram: FakeBotAPI, text: str, who: dict[str, Any], chat: dict[str, Any] | None = None
) -> Call:
    since = telegram.mark()
    message = telegram.send(text, user=who, chat=chat)
    [reply] = await telegram.wait("sendMessage", since=since, chat_id=message["chat"]["id"])
    return reply


async def press(telegram: FakeBotAPI, call: Call, data: str, who: dict[str, Any]) -> Call:
    """Press (or forge) the button ``data`` under the bot's message; the press's answer."""
    since = telegram.mark()
    query_id = telegram.press(call.result, data, user=who)
    [answer] = await telegram.wait("answerCallbackQuery", since=since, callback_query_id=query_id)
    return answer


def files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("memory.*"))
        if p.is_file()
    }


async def test_forged_callback_data_is_refused_and_changes_nothing(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    group = telegram.group(GROUP, "Team")
    async with running(config_for(telegram, data_dir)):
        diary = memory_id(await say(telegram, "/remember alice's diary entry", ALICE))
        team = memory_id(await say(telegram, "/remember the team's memory", ALICE, group))
        mine = await say(telegram, "/remember bob's own note", BOB)
        in_group = await say(telegram, "/recall team", BOB, group)
        offered = await say(telegram, "I need to call the bank tomorrow at 10am", ALICE)
        rows = offered.params["reply_markup"]["inline_keyboard"]
        [offer] = {b["callback_data"].split(":")[1] for row in rows for b in row}
        before = files(data_dir)
        forged = [
            *(f"{kind}:{target}" for kind in "fdk" for target in (diary, team)),
            *(f"ro:{offer}:{what}" for what in "yonhde"),  # Alice's reminder offer
            "ro:m1:y", "ro:1-1:h", "ro:../x:y", "ro:" + "9" * 20 + ":y", "ro:1:z",
            "d:1e309", "d:-1", "d:../../x", "d:0", "d:" + "9" * 19, "f:" + "9" * 20,
            "p:999999", "p:0:deadbeef", "p:-1", "p:1:../../x", "x" * 64, "d:", ":", "",
            "d:１２３", "d:1\n2", "d:1 OR 1=1", "<b>d:1</b>",
        ]  # fmt: skip
        for data in forged:
            answer = await press(telegram, mine, data, BOB)  # under Bob's own message
            assert "went wrong" not in answer.params.get("text", "")
        for data in (f"d:{diary}", f"f:{diary}"):  # in the group: the group's namespace
            answer = await press(telegram, in_group, data, BOB)
            assert answer.params["show_alert"] is True and "not here" in answer.params["text"]
        assert not [c for c in telegram.find("editMessageText") if "Forgotten" in c.text]
        assert not telegram.find("sendMessage", where=lambda c: "Forget this" in c.text)
        assert files(data_dir) == before
    with MemoryStore(data_dir) as store:
        assert store.bot_documents().list("reminders/") == []  # no offer was taken
    assert contents(data_dir, "users/42") == ["alice's diary entry"]
    assert contents(data_dir, f"chats/{GROUP}") == ["the team's memory"]


async def test_in_a_group_only_the_author_or_an_admin_deletes_or_edits_a_memory(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    group = telegram.group(GROUP, "Team")
    telegram.admins[GROUP] = {CAROL["id"]}
    with MemoryStore(data_dir) as store:  # stored before authors were recorded: the admins'
        legacy = store.namespace(f"chats/{GROUP}").add("the legacy wiki is read-only")
    async with running(config_for(telegram, data_dir)):
        alices = memory_id(await say(telegram, "/remember #alice: standup at 10", ALICE, group))
        bobs = memory_id(await say(telegram, "/remember #bob: retro on friday", BOB, group))

        # Bob, a member, cannot delete or change Alice's memory, by any door.
        assert NOT_YOURS in (await say(telegram, f"/forget {alices}", BOB, group)).text
        assert NOT_YOURS in (await say(telegram, f"/edit {alices} hacked", BOB, group)).text
        found = await say(telegram, "/recall standup", BOB, group)  # he may read it
        assert "standup at 10" in found.text
        answer = await press(telegram, found, f"f:{alices}", BOB)  # 🗑 under the result
        assert answer.params["show_alert"] is True and NOT_YOURS in answer.params["text"]
        prompt = await say(telegram, f"/forget {alices}", ALICE, group)  # Alice asks...
        answer = await press(telegram, prompt, f"d:{alices}", BOB)  # ...Bob presses Delete
        assert answer.params["show_alert"] is True and NOT_YOURS in answer.params["text"]
        li = await say(telegram, f"/forget {legacy.id}", LI, group)  # in his language
        assert "只有存入这条记忆的成员或群组管理员" in li.text
        assert contents(data_dir, f"chats/{GROUP}") == [
            "the legacy wiki is read-only",
            "standup at 10",
            "retro on friday",
        ]

        # The author may; an administrator may, also memories with no recorded author.
        await press(telegram, prompt, f"d:{alices}", ALICE)
        edited = await say(telegram, f"/edit {bobs} retro moved to monday", BOB, group)
        assert edited.text.startswith("✏️ Updated.")
        for target in (bobs, legacy.id):
            prompt = await say(telegram, f"/forget {target}", CAROL, group)
            assert "Forget this memory?" in prompt.text
            answer = await press(telegram, prompt, f"d:{target}", CAROL)
            assert "show_alert" not in answer.params
    assert contents(data_dir, f"chats/{GROUP}") == []
    forgotten = [c.text for c in telegram.find("editMessageText")]
    assert [text.split(": ", 1)[1] for text in forgotten] == [
        "standup at 10",
        "retro moved to monday",
        "the legacy wiki is read-only",
    ]


async def test_in_private_chats_and_per_member_scope_everything_is_your_own(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    group = telegram.group(GROUP, "Team")
    async with running(config_for(telegram, tmp_path / "data", group_scope="user")):
        mine = memory_id(await say(telegram, "/remember my locker is 12", BOB, group))
        prompt = await say(telegram, f"/forget {mine}", BOB, group)
        answer = await press(telegram, prompt, f"d:{mine}", BOB)
        assert "show_alert" not in answer.params
        private = memory_id(await say(telegram, "/remember a private note", BOB))
        prompt = await say(telegram, f"/forget {private}", BOB)
        assert "Forget this memory?" in prompt.text
    assert contents(tmp_path / "data", "users/43") == ["a private note"]
