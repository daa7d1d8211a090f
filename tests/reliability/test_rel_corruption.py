"""Corruption: a truncated or garbage ``memory.json`` is moved aside (never overwritten), its
user is told once, in their language, and every other namespace keeps working."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rel_harness import config_for, contents, running, user

from bench.fakes.telegram_server import Call, FakeBotAPI
from memory.files import MemoryStore

ALICE = user(42)
BOB = user(43)
LI = user(44, "zh-hans")
NOTICE = {"en": "memory file here was damaged", "zh": "记忆文件已损坏"}


async def exchange(
    telegram: FakeBotAPI,
    text: str,
    who: dict[str, Any],
    chat: dict[str, Any] | None = None,
) -> list[Call]:
    """Every message the bot sends to the chat for ``text``, up to the answer to a /help sent
    after it (updates of a chat are handled in order)."""
    chat = chat if chat is not None else telegram.private_chat(who)
    since = telegram.mark()
    telegram.send(text, user=who, chat=chat)
    telegram.send("/help", user=who, chat=chat)
    await telegram.wait(
        "sendMessage", since=since, chat_id=chat["id"], where=lambda c: "/export" in c.text
    )
    calls = telegram.find("sendMessage", since=since, chat_id=chat["id"])
    return calls[:-1]


def corrupt_files(data_dir: Path, group_id: int) -> dict[str, bytes]:
    """Alice's file cut short, the group's garbage, Bob's and Li's fine; the bad bytes."""
    with MemoryStore(data_dir) as store:
        for name, text in (
            ("users/42", "alice's locker is 12"),
            ("users/43", "bob's locker is 99"),
            (f"chats/{group_id}", "the team meets at 10"),
            ("users/44", "李雷的柜子是 7 号"),
        ):
            store.namespace(name).add(text)
    alice = data_dir / "users/42/memory.json"
    bad = {
        "users/42": alice.read_bytes()[:40],  # truncated mid-record
        f"chats/{group_id}": b"\x00\xff\xfe garbage \x89PNG\r\n",
    }
    for name, data in bad.items():
        (data_dir / name / "memory.json").write_bytes(data)
        (data_dir / name / "memory.journal").unlink()  # compacted: nothing to replay
    return bad


async def test_a_damaged_file_is_set_aside_and_its_user_told_once(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    group = telegram.group(-1001, "Team")
    data_dir = tmp_path / "data"
    bad = corrupt_files(data_dir, -1001)
    async with running(config_for(telegram, data_dir)):
        first = await exchange(telegram, "/recall locker", ALICE)
        assert len(first) == 2 and NOTICE["en"] in first[0].text  # the notice, then the answer
        assert "memory.json.corrupt-" in first[0].text and "/list" in first[0].text
        assert "I found nothing about “locker”" in first[1].text
        again = await exchange(telegram, "/recall locker", ALICE)
        assert len(again) == 1 and NOTICE["en"] not in again[0].text  # told once

        # Everyone else is untouched: no notice, their memories answer.
        [bob] = await exchange(telegram, "/recall locker", BOB)
        assert "bob's locker is 99" in bob.text
        [li] = await exchange(telegram, "/recall 柜子", LI)
        assert "李雷的柜子是 7 号" in li.text

        # The group's garbage: the first member to speak to the bot there is told, in their
        # language, and the group can store again.
        told = await exchange(telegram, "/remember the retro is on friday", LI, chat=group)
        assert NOTICE["zh"] in told[0].text and "记住了" in told[1].text
        [stored] = await exchange(telegram, "/remember lunch at noon", BOB, chat=group)
        assert "Remembered" in stored.text and NOTICE["en"] not in stored.text
        [alice] = await exchange(telegram, "/remember my locker is 12 again", ALICE)
        assert "Remembered" in alice.text

    for name, data in bad.items():  # the damaged bytes are kept, not overwritten
        [kept] = (data_dir / name).glob("memory.json.corrupt-*")
        assert kept.read_bytes() == data
        json.loads((data_dir / name / "memory.json").read_text("utf-8"))
    assert contents(data_dir, "users/42") == ["my locker is 12 again"]
    assert contents(data_dir, "chats/-1001") == ["the retro is on friday", "lunch at noon"]
    assert contents(data_dir, "users/43") == ["bob's locker is 99"]


async def test_a_file_damaged_while_the_bot_runs_is_noticed_on_the_next_message(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    async with running(config_for(telegram, data_dir)):
        [stored] = await exchange(telegram, "/remember the car is on level 3", ALICE)
        assert "Remembered" in stored.text
        # Someone (an editor, a bad sync) writes half a file over it while the bot runs.
        (data_dir / "users/42/memory.json").write_text('[{"id": 1, "content": "half')
        [list_press] = await exchange(telegram, "/list", BOB)  # another user: nothing to say
        assert NOTICE["en"] not in list_press.text
        told = await exchange(telegram, "/recall car", ALICE)
        assert NOTICE["en"] in told[0].text
        # The journal still held the memory: it is read back on top of the empty snapshot.
        assert "the car is on level 3" in told[1].text


async def test_a_button_press_as_the_next_interaction_gets_the_notice_too(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    async with running(config_for(telegram, data_dir)):
        [listed] = await exchange(telegram, "/remember the bike lock is 4711", LI)
        (data_dir / "users/44/memory.json").write_bytes(b"\xff" * 10)
        since = telegram.mark()
        telegram.press(listed.result, "p:0", user=LI)  # a page button: the next interaction
        [told] = await telegram.wait("sendMessage", since=since, chat_id=LI["id"])
        assert NOTICE["zh"] in told.text
        await telegram.wait("answerCallbackQuery", since=since)
