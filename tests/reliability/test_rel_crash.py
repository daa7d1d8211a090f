"""Crash: ``python -m bot`` killed with SIGKILL in the middle of 100 ``/remember``, restarted.

Nothing confirmed may be missing, nothing may be stored twice, and nothing the bot received
may be lost, even when Telegram delivers everything again because it never got the bot's
confirmation (``bot.inbox``, and the memory's ``source``).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest
from fakes.telegram_server import FakeBotAPI
from rel_harness import BotProcess, contents, redeliver, replies, snapshot, user, write_config

USERS = [user(100 + number) for number in range(5)]
NOTES = 20  # per user: 100 /remember in all
HELD = 10  # every chat's reply to this note hangs when the bot is killed


def note(number: int, who: dict[str, object]) -> str:
    return f"note {number:02d} of user {who['id']}"


def remembered(text: str) -> str | None:
    """The content a "✅ Remembered." reply confirms."""
    lines = text.split("\n")
    return lines[1] if lines[0] == "✅ Remembered." else None


async def wait_until_stored(data_dir: Path, count: int) -> None:
    """Until every user's namespace holds ``count`` memories (read as another process would)."""
    for _ in range(1200):
        if all(len(contents(data_dir, f"users/{u['id']}")) >= count for u in USERS):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the bot did not store {count} memories per user")


async def answer_sentinels(telegram: FakeBotAPI, since: int) -> None:
    """A /help from every user, answered: their chat's earlier updates are all handled."""
    for who in USERS:
        telegram.send("/help", user=who)
    for who in USERS:
        await telegram.wait(
            "sendMessage",
            since=since,
            chat_id=who["id"],
            where=lambda c: "/export" in c.text,
            timeout=60,
        )


@pytest.mark.slow
async def test_sigkill_mid_way_loses_nothing_and_stores_nothing_twice(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    config = write_config(tmp_path / "config.toml", telegram, data_dir)
    bot = BotProcess(config, tmp_path / "bot.log")
    for number in range(1, NOTES + 1):
        for who in USERS:  # interleaved, as many people typing at once
            telegram.send(f"/remember {note(number, who)}", user=who)
    sent = list(telegram.updates)
    assert len(sent) == 100
    # A slow network for one reply per chat: each chat stops after storing note 10, before
    # its confirmation; notes 11-20 wait in the bot's queue. Then the power goes.
    release = telegram.hold("sendMessage", when=lambda p: f"note {HELD:02d} of" in p["text"])

    await bot.start()
    await wait_until_stored(data_dir, HELD)
    confirmed_before = [
        remembered(c.text) for c in telegram.find("sendMessage") if remembered(c.text)
    ]
    await bot.kill()
    dead = telegram.mark()
    release.set()  # Telegram still delivers the replies the dead process had sent
    late = await telegram.wait(
        "sendMessage", count=len(USERS), since=dead, where=lambda c: f"{HELD:02d} of" in c.text
    )

    # Durable before confirmed: a fresh store (no clean shutdown happened) has each of them.
    assert len(confirmed_before) == len(USERS) * (HELD - 1)
    for who in USERS:
        survived = contents(data_dir, f"users/{who['id']}")
        assert survived == [note(n, who) for n in range(1, HELD + 1)]
        snapshot(data_dir, f"users/{who['id']}")  # memory.json, if written yet, parses

    # Restart, with Telegram delivering all 100 again (it never got the confirmation).
    redeliver(telegram, sent)
    restart = telegram.mark()
    await bot.start()
    await answer_sentinels(telegram, restart)
    assert await bot.stop() == 0, bot.text()

    after = telegram.calls[restart:]
    for who in USERS:
        expected = [note(n, who) for n in range(1, NOTES + 1)]
        assert contents(data_dir, f"users/{who['id']}") == expected  # all, once, in order
        records = snapshot(data_dir, f"users/{who['id']}")  # after a clean stop: complete
        assert records is not None and [r["content"] for r in records] == expected
        said = [remembered(t) for t in replies(after, who["id"]) if remembered(t)]
        assert said == [note(n, who) for n in range(HELD, NOTES + 1)]  # the rest, in order
    everything = [*confirmed_before, *(remembered(c.text) for c in [*late, *after])]
    counts = Counter(text for text in everything if text)
    # Each note confirmed once; the one in flight at the kill twice (its reply had left, the
    # bot never heard back, so it handled the message again: a reply may repeat, a memory not).
    assert all(
        counts[note(n, who)] == (2 if n == HELD else 1)
        for n in range(1, NOTES + 1)
        for who in USERS
    )
    assert "handling 55 updates again" in bot.text()  # notes 10-20 of each user

    # Without the inbox (lost with a disk), all 100 delivered once more: the memory's source
    # makes /remember of the same message a no-op that answers as before.
    (data_dir / ".bot" / "inbox.jsonl").unlink()
    redeliver(telegram, sent)
    again = telegram.mark()
    await bot.start()
    await answer_sentinels(telegram, again)
    assert await bot.stop() == 0, bot.text()
    for who in USERS:
        expected = [note(n, who) for n in range(1, NOTES + 1)]
        assert contents(data_dir, f"users/{who['id']}") == expected
        said = [remembered(t) for t in replies(telegram.calls[again:], who["id"])]
        assert [s for s in said if s] == expected
