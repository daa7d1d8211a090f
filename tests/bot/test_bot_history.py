"""History and undo end to end: /undo, /history and their buttons through the fake Bot API."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from bot_harness import ALICE, BOB, LI, Bot, StartBot

from bench.fakes.openai_server import API_KEY, Answer, FakeOpenAI, ToolCalls
from bench.fakes.telegram_protocol import Call
from bench.fakes.telegram_server import FakeBotAPI
from bot.__main__ import make_llm
from bot.config import parse_config
from memory.files import MemoryStore
from memory.files.changelog import HISTORY
from memory.history import Author, acting


def _id(reply: Call) -> int:
    return int(re.findall(r"🆔 (\d+)", reply.text)[-1])


async def _forget(bot: Bot, memory_id: int, user: dict[str, Any], **where: Any) -> None:
    [prompt] = await bot.say(f"/forget {memory_id}", user=user, **where)
    [(_, delete), _] = prompt.buttons
    await bot.press(prompt, delete, user=user)


async def _press_and_read(bot: Bot, call: Call, data: str, *, user: dict[str, Any]) -> Call:
    """Press ``data`` under ``call`` and return the message the press replies with."""
    since = bot.telegram.mark()
    await bot.press(call, data, user=user)
    chat_id = call.result["chat"]["id"]
    [reply] = await bot.telegram.wait("sendMessage", since=since, chat_id=chat_id)
    return reply


async def test_undo_goes_back_one_change_at_a_time(bot: Bot) -> None:
    [stored] = await bot.say("/remember standup at 10 #work", user=ALICE)
    memory_id = _id(stored)
    [created] = bot.memories("users/42")
    await bot.say(f"/edit {memory_id} standup at 11", user=ALICE)
    await bot.say("/recall standup", user=ALICE)  # an access, which the restore must keep
    await _forget(bot, memory_id, ALICE)
    assert bot.memories("users/42") == []

    [undone] = await bot.say("/undo", user=ALICE)  # the deletion: back with its id and times
    assert "Undone" in undone.text and f"{memory_id} restored" in undone.text
    [back] = bot.memories("users/42")
    assert (back["id"], back["createdAt"]) == (memory_id, created["createdAt"])
    assert back["content"] == "standup at 11" and back["accessCount"] == 1

    [undone] = await bot.say("/undo", user=ALICE)  # the edit
    assert "back to: standup at 11" not in undone.text and "back to: standup at 10" in undone.text
    assert [m["content"] for m in bot.memories("users/42")] == ["standup at 10 #work"]
    assert bot.memories("users/42")[0]["tags"] == ["work"]

    [undone] = await bot.say("/undo", user=ALICE)  # the add
    assert "removed again" in undone.text and bot.memories("users/42") == []
    [nothing] = await bot.say("/undo", user=ALICE)
    assert "Nothing to undo" in nothing.text
    [zh] = await bot.say("/undo", user=LI)
    assert "没有可以撤销的改动" in zh.text


async def test_an_undo_leaves_a_memory_changed_elsewhere_and_says_who(
    start_bot: StartBot, telegram: FakeBotAPI
) -> None:
    group = telegram.group()
    async with start_bot(group_scope="user") as bot:  # one namespace, two chats
        [stored] = await bot.say("/remember my locker is 12", user=ALICE, chat=group)
        memory_id = _id(stored)
        await bot.say(f"/edit {memory_id} my locker is 14", user=ALICE)  # in private
        [undone] = await bot.say("/undo", user=ALICE, chat=group)
        assert "Nothing was put back" in undone.text and "left as it is" in undone.text
        assert "Alice via /edit" in undone.text and f"/history {memory_id}" in undone.text
        assert [m["content"] for m in bot.memories("users/42")] == ["my locker is 14"]
        [again] = await bot.say("/undo", user=ALICE, chat=group)  # further back: nothing left
        assert "Nothing of yours" not in again.text and "Nothing to undo" in again.text
        [private] = await bot.say("/undo", user=ALICE)  # the private chat's own change
        assert "back to: my locker is 12" in private.text


async def test_in_a_group_a_member_undoes_their_own_changes_and_an_admin_anyones(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    group = telegram.group()
    namespace = f"chats/{group['id']}"
    await bot.say("/remember alice's note", user=ALICE, chat=group)
    await bot.say("/remember bob's note", user=BOB, chat=group)
    [undone] = await bot.say("/undo", user=ALICE, chat=group)  # hers, not Bob's newer one
    assert "alice's note" in undone.text
    assert [m["content"] for m in bot.memories(namespace)] == ["bob's note"]
    [nothing] = await bot.say("/undo", user=ALICE, chat=group)
    assert "Nothing of yours to undo" in nothing.text
    assert [m["content"] for m in bot.memories(namespace)] == ["bob's note"]

    telegram.admins[group["id"]] = {ALICE["id"]}
    [undone] = await bot.say("/undo", user=ALICE, chat=group)  # an administrator: anyone's
    assert "bob's note" in undone.text and bot.memories(namespace) == []
    [nothing] = await bot.say("/undo", user=BOB, chat=group)  # undone already, by her
    assert "Nothing of yours to undo" in nothing.text


async def test_history_lists_versions_and_restores_one_and_a_deleted_memory(bot: Bot) -> None:
    [stored] = await bot.say("/remember wifi password hunter2", user=ALICE)
    memory_id = _id(stored)
    [created] = bot.memories("users/42")
    await bot.say(f"/edit {memory_id} wifi password hunter3", user=ALICE)
    [versions] = await bot.say(f"/history {memory_id}", user=ALICE)
    assert "v1" in versions.text and "v2" in versions.text
    assert "hunter2" in versions.text and "hunter3" in versions.text
    assert "Alice via /remember" in versions.text and "Alice via /edit" in versions.text
    [(label, data)] = versions.buttons  # v2 is the current one: no button for it
    assert label == "↩ Back to v1" and data.startswith("hv:")
    restored = await _press_and_read(bot, versions, data, user=ALICE)
    assert "Restored" in restored.text and "hunter2" in restored.text
    assert [m["content"] for m in bot.memories("users/42")] == ["wifi password hunter2"]

    await _forget(bot, memory_id, ALICE)
    [recent] = await bot.say("/history", user=ALICE)
    assert recent.text.index("🗑") < recent.text.index("♻️")  # newest first
    assert "Alice via a button" in recent.text
    [(label, data)] = recent.buttons
    assert label == f"♻ Restore {memory_id}"
    await bot.press(recent, data, user=BOB)  # another chat: finds nothing
    assert bot.memories("users/42") == []
    await _press_and_read(bot, recent, data, user=ALICE)
    [back] = bot.memories("users/42")
    assert (back["id"], back["createdAt"]) == (memory_id, created["createdAt"])
    assert back["content"] == "wifi password hunter2"
    [deleted_view] = await bot.say(f"/history {memory_id}", user=ALICE)
    assert "deleted" in deleted_view.text  # the deletion stays in its history


async def test_in_a_group_what_an_admin_deleted_only_an_admin_restores(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    group = telegram.group()
    namespace = f"chats/{group['id']}"
    telegram.admins[group["id"]] = {ALICE["id"]}
    removed = _id((await bot.say("/remember bob's spam link", user=BOB, chat=group))[0])
    regretted = _id((await bot.say("/remember bob's typo", user=BOB, chat=group))[0])
    await _forget(bot, removed, ALICE, chat=group)  # moderation: an administrator removes it
    await _forget(bot, regretted, BOB, chat=group)  # the author deletes his own
    [recent] = await bot.say("/history", user=BOB, chat=group)
    buttons = {label: data for label, data in recent.buttons}
    query = await bot.press(recent, buttons[f"♻ Restore {removed}"], user=BOB)
    [answer] = telegram.find("answerCallbackQuery", callback_query_id=query)
    assert answer.params["show_alert"] and "only a group administrator" in answer.params["text"]
    assert bot.memories(namespace) == []
    await _press_and_read(bot, recent, buttons[f"♻ Restore {regretted}"], user=BOB)
    assert [m["id"] for m in bot.memories(namespace)] == [regretted]
    await _press_and_read(bot, recent, buttons[f"♻ Restore {removed}"], user=ALICE)
    assert sorted(m["id"] for m in bot.memories(namespace)) == sorted([removed, regretted])


async def test_history_of_a_deleted_memory_offers_to_restore_it(bot: Bot) -> None:
    [stored] = await bot.say("/remember parking spot B12", user=ALICE)
    memory_id = _id(stored)
    await _forget(bot, memory_id, ALICE)
    [view] = await bot.say(f"/history {memory_id}", user=ALICE)
    assert "It is deleted now" in view.text
    [(label, data)] = view.buttons
    assert label == "♻ Restore v1"
    await _press_and_read(bot, view, data, user=ALICE)
    assert [m["id"] for m in bot.memories("users/42")] == [memory_id]


async def test_history_is_bounded_by_the_configured_retention(start_bot: StartBot) -> None:
    async with start_bot(sections={"memory": {"history_max": 3}}) as bot:
        for number in range(30):
            await bot.say(f"/remember note {number}", user=ALICE)
        [recent] = await bot.say("/history", user=ALICE)
        assert "The last 3 changes" in recent.text and "note 29" in recent.text
        undone = 0
        while "Nothing to undo" not in (await bot.say("/undo", user=ALICE))[0].text:
            undone += 1  # the undo's own records take their place in the three kept
            assert undone <= 3
        assert undone >= 1 and len(bot.memories("users/42")) == 30 - undone
        lines = (bot.config.data_dir / "users/42" / HISTORY).read_bytes().splitlines()
        assert len(lines) <= 3 + 10  # the slack before a rewrite


async def test_odd_input_gets_a_clear_answer_and_changes_nothing(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    [nothing] = await bot.say("/undo", user=ALICE)
    assert "Nothing to undo" in nothing.text
    [empty] = await bot.say("/history", user=ALICE)
    assert "No changes recorded yet" in empty.text
    [unknown] = await bot.say("/history 123", user=ALICE)
    assert "No history for" in unknown.text and "123" in unknown.text
    [bad] = await bot.say("/history abc", user=ALICE)
    assert "is not a memory id" in bad.text
    [stored] = await bot.say("/remember keep me", user=ALICE)
    for data in ("hv:AAAAAAAA", "cu:AAAAAAAA"):  # crafted: a ref and a change nobody made
        query = await bot.press(stored, data, user=ALICE)
        [answer] = telegram.find("answerCallbackQuery", callback_query_id=query)
        assert answer.params.get("show_alert")
    assert [m["content"] for m in bot.memories("users/42")] == ["keep me"]


async def test_a_damaged_history_file_is_told_and_loses_nothing(bot: Bot) -> None:
    [stored] = await bot.say("/remember first", user=ALICE)
    path = bot.config.data_dir / "users/42" / HISTORY
    with path.open("ab") as handle:
        handle.write(b"\x00\x00garbage\n{not json}\n")
    await bot.say("/remember second", user=ALICE)
    [recent] = await bot.say("/history", user=ALICE)
    assert "2 records of the history could not be read" in recent.text
    assert "first" in recent.text and "second" in recent.text
    kept = list(path.parent.glob(f"{HISTORY}.corrupt-*"))
    assert len(kept) == 1 and b"garbage" in kept[0].read_bytes()
    [undone] = await bot.say("/undo", user=ALICE)
    assert "second" in undone.text
    assert [m["id"] for m in bot.memories("users/42")] == [_id(stored)]


# -- the model's turn --------------------------------------------------------------------------


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI() as server:
        yield server


@pytest.fixture
async def llm_bot(start_bot: StartBot, llm: FakeOpenAI) -> AsyncIterator[Bot]:
    table = {"base_url": llm.base_url, "api_key": API_KEY, "model": "test-model"}
    config = parse_config({"llm": {**table, "timeout": 5.0}}, base_dir=Path.cwd())
    async with start_bot(llm=make_llm(config), sections={"llm": table}) as running:
        yield running


async def test_a_model_turn_is_one_change_for_undo_and_its_button(
    llm_bot: Bot, llm: FakeOpenAI
) -> None:
    [stored] = await llm_bot.say("/remember dentist on monday", user=ALICE)
    memory_id = _id(stored)
    turn = ToolCalls(
        ("addMemory", {"content": "gym on tuesday"}),
        ("addMemory", {"content": "call mum on wednesday"}),
        ("updateMemory", {"id": memory_id, "content": "dentist on friday"}),
    )
    llm.script(turn, Answer("Noted all three."), turn, Answer("Noted all three."))
    [answer] = await llm_bot.say("plan my week", user=ALICE)
    assert "Memory updated" in answer.text
    assert len(llm_bot.memories("users/42")) == 3
    [recent] = await llm_bot.say("/history", user=ALICE)
    assert "Alice via the assistant" in recent.text

    [undone] = await llm_bot.say("/undo", user=ALICE)  # the whole turn, as one change
    assert "gym on tuesday" in undone.text and "call mum" in undone.text
    assert [m["content"] for m in llm_bot.memories("users/42")] == ["dentist on monday"]
    [(_, data)] = answer.buttons
    await llm_bot.press(answer, data, user=ALICE)  # undone already: said so, nothing changes
    assert [m["content"] for m in llm_bot.memories("users/42")] == ["dentist on monday"]

    [again] = await llm_bot.say("plan my week", user=ALICE)
    [(label, data)] = again.buttons
    assert "Undo" in label
    pressed = await _press_and_read(llm_bot, again, data, user=ALICE)  # the same undo as /undo
    assert "gym on tuesday" in pressed.text
    assert [m["content"] for m in llm_bot.memories("users/42")] == ["dentist on monday"]
    [undone] = await llm_bot.say("/undo", user=ALICE)  # further back: the /remember
    assert "removed again" in undone.text and llm_bot.memories("users/42") == []


async def test_a_change_made_over_mcp_is_shown_as_such(start_bot: StartBot, tmp_path: Path) -> None:
    """``python -m memory ... mcp`` records its changes by ``mcp`` (``memory.mcp_server``)."""
    data = tmp_path / "data"
    with MemoryStore(data) as store, acting(Author("mcp", "mcp")):
        store.namespace("users/42").add("the spare key is under the mat")
    async with start_bot(data_dir=data) as bot:
        [recent] = await bot.say("/history", user=ALICE)
        assert "the spare key is under the mat" in recent.text
        assert "an MCP client" in recent.text
