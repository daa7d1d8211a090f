"""Load: 50 users send 20 messages each, all at once, through the fake Bot API.

Nothing may be lost or stored twice, and each chat keeps its order: memories in the order they
were sent, replies in the order of the messages. A backlog in one chat holds up no other.
Throughput and latency are benchmarks' business (``python -m bench.load_bench``,
``python -m bench.backlog_bench``); these tests assert only correctness.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rel_harness import config_for, contents, replies, running, user

from bench.fakes.telegram_server import FakeBotAPI
from bot.chat.updates import MAX_CONCURRENT_UPDATES

USERS = 50
MESSAGES = 20


def text(who: int, number: int) -> str:
    # Every third message is a question about the one before it, which must already be there.
    if number % 3 == 2:
        return f"/recall item {who}-{number - 1}"
    return f"/remember item {who}-{number} belongs to user {who} #load"


@pytest.mark.slow
async def test_50_users_at_once_lose_nothing_and_keep_their_order(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    people = [user(1000 + n) for n in range(USERS)]
    data_dir = tmp_path / "data"
    async with running(config_for(telegram, data_dir)):
        for number in range(MESSAGES):  # round robin: every chat's messages interleaved
            for who in people:
                telegram.send(text(who["id"], number), user=who)
        await telegram.wait("sendMessage", count=USERS * MESSAGES, timeout=120)
    assert not telegram.find("sendMessage", ok=False)
    for who in people:
        uid = who["id"]
        sent = [text(uid, n) for n in range(MESSAGES)]
        stored = [s.removeprefix("/remember ") for s in sent if "/remember" in s]
        assert contents(data_dir, f"users/{uid}") == stored  # none lost, none twice, in order
        said = replies(telegram.calls, uid)
        assert len(said) == MESSAGES
        for message, reply in zip(sent, said, strict=True):
            if message.startswith("/remember"):
                assert reply.startswith("✅ Remembered.") and message[10:].split(" #")[0] in reply
            else:  # answered after the /remember before it, so it finds it
                asked = message.removeprefix("/recall ")
                assert f"🔎 “{asked}”" in reply and f"{asked} belongs to user {uid}" in reply


async def test_a_backlog_in_one_chat_holds_up_no_other_chat(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    """Issue 23: the updates waiting for their chat's turn each held one of the
    ``MAX_CONCURRENT_UPDATES`` slots, so a chat with that many waiting stalled every other
    chat until its backlog was down. Here the flooding chat's first reply hangs (a slow
    Telegram): its other updates wait, and another chat is answered all the same."""
    flooder, other = user(1), user(2)
    backlog = MAX_CONCURRENT_UPDATES + 10
    release = telegram.hold("sendMessage", when=lambda p: p["chat_id"] == flooder["id"])
    async with running(config_for(telegram, tmp_path / "data")):
        for _ in range(backlog):
            telegram.send("/help", user=flooder)
        telegram.send("/help", user=other)
        try:
            await telegram.wait("sendMessage", chat_id=other["id"], timeout=30)
        finally:
            release.set()
        await telegram.wait("sendMessage", chat_id=flooder["id"], count=backlog, timeout=60)
