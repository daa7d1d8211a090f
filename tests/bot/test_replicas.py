"""Two bot replicas on one PostgreSQL store, sharing its update queue (``bot.chat.lanes``).

Each replica is a real Application with a store of its own on the session's PostgreSQL
server; updates reach them as the webhook hands them over (``SharedUpdates.accept``), each to
either replica, some twice to both, as a load balancer and Telegram's retries would.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import socket
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import psycopg
import pytest

from bench.fakes.telegram_server import TOKEN, FakeBotAPI
from bench.pg_server import Server
from bot.chat import lanes
from bot.chat.app import build_application
from bot.chat.inbox import MAX_TRIES
from bot.chat.lanes import SharedUpdates
from bot.chat.running import serving
from bot.chat.webhook import bot_health, inbox_server
from bot.config import parse_config
from memory import open_store
from memory.errors import MemoryStoreError, StoreInUse
from memory.pg import PgStore

USERS, MESSAGES = 8, 6


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@asynccontextmanager
async def replica(
    telegram: FakeBotAPI,
    pg_url: str,
    tmp_path: Path,
    name: str,
    admins: list[int] | None = None,
    timeout: float = 10.0,
    poll: bool = False,
    deadline: float = 300.0,
    identity: str | None = None,
    port: int = 8443,
) -> AsyncIterator[SharedUpdates]:
    config = parse_config(
        {
            "data_dir": str(tmp_path / name),
            "storage": pg_url,
            "telegram": {
                "token": TOKEN,
                "base_url": telegram.base_url,
                "flood_control": False,
                "admin_user_ids": admins or [],
                "handler_deadline_seconds": deadline,
                "listen": "127.0.0.1",
                "port": port,
            },
            "replicas": {"lease_seconds": 5, "poll_seconds": 0.05, "identity": identity or name},
        },
        base_dir=tmp_path,
    )
    store = open_store(pg_url, timeout=timeout)
    assert isinstance(store, PgStore)
    application = build_application(config, store, None, jobs=False)
    shared = application.update_queue
    assert isinstance(shared, SharedUpdates)  # the store has a shared queue: replicas use it
    async with serving(application, poll_timeout=1 if poll else None):
        yield shared


async def drained(shared: SharedUpdates) -> None:
    """Wait until no update waits (the last reply goes out just before its ``done``)."""
    for _ in range(600):
        if shared.queue.waiting_count() == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{shared.queue.waiting_count()} updates still wait")


def taken(telegram: FakeBotAPI) -> list[dict[str, Any]]:
    """The updates the fake queued for getUpdates, taken out to be handed over by webhook."""
    updates = list(telegram.updates)
    telegram.updates.clear()
    return updates


async def test_two_replicas_handle_each_update_once_in_order_per_chat(
    telegram: FakeBotAPI, pg_url: str, tmp_path: Path
) -> None:
    async with AsyncExitStack() as stack:
        one = await stack.enter_async_context(replica(telegram, pg_url, tmp_path, "one"))
        two = await stack.enter_async_context(replica(telegram, pg_url, tmp_path, "two"))
        users = [FakeBotAPI.user(1000 + u, f"U{u}") for u in range(USERS)]
        for i in range(MESSAGES):
            for user in users:
                telegram.send(f"/remember note {user['id']} {i}", user=user)
        replicas = itertools.cycle((one, two))
        for update in taken(telegram):
            await next(replicas).accept(update)
            if update["update_id"] % 3 == 0:  # delivered again, to the other replica
                await next(replicas).accept(update)
        replies = await telegram.wait(
            "sendMessage", count=USERS * MESSAGES, timeout=60, where=lambda c: "note" in c.text
        )
        await asyncio.sleep(0.3)  # a duplicate handled late would show up now
        replies = telegram.find("sendMessage", where=lambda c: "note" in c.text)
        assert len(replies) == USERS * MESSAGES
        for user in users:
            said = [
                int(m[1])
                for c in replies
                if c.params["chat_id"] == user["id"]
                for m in [re.search(rf"note {user['id']} (\d+)", c.text)]
                if m
            ]
            assert said == list(range(MESSAGES)), f"user {user['id']} answered {said}"
        await drained(one)
    with open_store(pg_url) as store:
        for user in users:
            contents = [m.content for m in store.namespace(f"users/{user['id']}").memories()]
            assert contents == [f"note {user['id']} {i}" for i in range(MESSAGES)]


async def test_a_stopped_replica_gives_its_lanes_to_the_other(
    telegram: FakeBotAPI, pg_url: str, tmp_path: Path
) -> None:
    """A replica stopping mid-lane (its handler cut short) leaves the rest to the other."""
    user = FakeBotAPI.user(77, "Slow")
    async with replica(telegram, pg_url, tmp_path, "two") as two:
        two_application = two.application
        assert two_application is not None
        await two.stop()  # the second replica only accepts for now
        async with replica(telegram, pg_url, tmp_path, "one") as one:
            answering = asyncio.Event()

            def first_reply(params: dict[str, Any]) -> bool:
                answering.set()  # step 0 is stored, and its reply is on its way
                return not release.is_set()

            release = telegram.hold("sendMessage", when=first_reply)
            for i in range(3):
                telegram.send(f"/remember step {i}", user=user)
            for update in taken(telegram):
                await one.accept(update)
            await asyncio.wait_for(answering.wait(), 30)
        release.set()
        await two.start(two_application)
        await telegram.wait("sendMessage", timeout=60, where=lambda c: "step 2" in c.text)
        await drained(two)
        answered = [c.text for c in telegram.find("sendMessage", where=lambda c: "step" in c.text)]
        assert sum("step 1" in text for text in answered) == 1  # only step 0 was cut short
    with open_store(pg_url) as store:
        contents = [m.content for m in store.namespace("users/77").memories()]
    assert contents == ["step 0", "step 1", "step 2"]  # step 0 handled twice, stored once


async def test_an_update_that_crashed_replicas_is_set_aside_and_the_admins_told(
    telegram: FakeBotAPI, pg_url: str, tmp_path: Path
) -> None:
    admin = FakeBotAPI.user(5, "Admin")
    telegram.private_chat(admin)  # the admin has started the bot
    user = FakeBotAPI.user(78, "Unlucky")
    telegram.send("/remember the crashing one", user=user)
    telegram.send("/remember the next one", user=user)
    first, second = taken(telegram)
    with open_store(pg_url) as store:
        queue = store.updates()
        assert queue is not None
        for update in (first, second):
            queue.receive(update, str(user["id"]))
        for _ in range(MAX_TRIES):  # three replicas died handling it
            claimed = None
            while claimed is None:  # the last dead replica's lease runs out
                await asyncio.sleep(0.05)
                claimed = queue.claim("dead", 0.5)
            assert claimed.delivery is not None  # started: its try counted
            assert claimed.delivery.update_id == first["update_id"]
    async with replica(telegram, pg_url, tmp_path, "one", admins=[admin["id"]]) as one:
        notice = await telegram.wait("sendMessage", chat_id=admin["id"], timeout=30)
        assert str(first["update_id"]) in notice[0].text
        await telegram.wait("sendMessage", chat_id=user["id"], timeout=30)
        await drained(one)
    with open_store(pg_url) as store:
        contents = [m.content for m in store.namespace("users/78").memories()]
    assert contents == ["the next one"]


async def test_a_hung_handler_is_set_aside_at_the_deadline_and_its_chat_goes_on(
    telegram: FakeBotAPI, pg_url: str, tmp_path: Path
) -> None:
    """Its reply never gets Telegram's answer: past the deadline the update is cancelled, set
    aside in the queue with the reason, the admin told, and the chat's next update handled by
    the same lane (before, the heartbeat renewed the lane's lease for as long as it hung)."""
    admin = FakeBotAPI.user(6, "Admin")
    telegram.private_chat(admin)
    user = FakeBotAPI.user(82, "Stuck")

    def hangs(params: dict[str, Any]) -> bool:  # the reply only, not the admin's notice
        return params["chat_id"] == user["id"] and "hangs" in params["text"]

    release = telegram.hold("sendMessage", when=hangs)
    telegram.send("/remember this one hangs", user=user)
    telegram.send("/remember the next one", user=user)
    hung, following = taken(telegram)
    try:
        async with replica(
            telegram, pg_url, tmp_path, "one", admins=[admin["id"]], deadline=1
        ) as one:
            for update in (hung, following):
                await one.accept(update)
            await telegram.wait("sendMessage", timeout=60, where=lambda c: "next one" in c.text)
            [notice] = await telegram.wait("sendMessage", chat_id=admin["id"], timeout=30)
            assert f"Update {hung['update_id']} (chat {user['id']})" in notice.text
            assert "handler deadline" in notice.text
            await drained(one)
    finally:
        release.set()
    with psycopg.connect(pg_url) as connection:
        rows = connection.execute(
            "SELECT update_id, state, reason FROM bot_updates ORDER BY update_id"
        ).fetchall()
    assert [(u, state) for u, state, _ in rows] == [
        (hung["update_id"], "aside"),
        (following["update_id"], "done"),
    ]
    assert "handler deadline" in rows[0][2]


async def offered(shared: SharedUpdates, update: dict[str, Any]) -> bool:
    """The webhook's request: True if ``update`` was kept (a 200), False if the store refused
    it (a 503: Telegram posts it again later)."""
    try:
        await shared.accept(update)
    except MemoryStoreError:
        return False
    return True


async def delivered(shared: SharedUpdates, update: dict[str, Any]) -> None:
    """``update`` posted again and again, as Telegram does, until it is kept."""
    for _ in range(600):
        if await offered(shared, update):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"update {update['update_id']} was never kept")


async def test_with_the_database_down_no_update_overtakes_its_chats_queued_ones(
    telegram: FakeBotAPI,
    pg_server: Server,
    pg_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 23: an update the queue refused was handled at once by the replica that got it,
    before that chat's updates waiting in the queue (and so was the next, for a few seconds
    after the database was back): memories stored out of order. Now it is refused, Telegram
    posts it again, and it takes its turn behind them."""
    monkeypatch.setattr(lanes, "REFUSE_SECONDS", 0.2)
    user = FakeBotAPI.user(79, "Patient")
    answering = asyncio.Event()

    def first_reply(params: dict[str, Any]) -> bool:
        if "step 0" not in params["text"]:
            return False
        answering.set()  # step 0 is stored, and its reply is on its way
        return True

    release = telegram.hold("sendMessage", when=first_reply)
    for i in range(4):
        telegram.send(f"/remember step {i}", user=user)
    step0, step1, step2, step3 = taken(telegram)
    async with AsyncExitStack() as stack:
        one = await stack.enter_async_context(replica(telegram, pg_url, tmp_path, "one", timeout=2))
        two = await stack.enter_async_context(replica(telegram, pg_url, tmp_path, "two", timeout=2))
        await one.accept(step0)
        await asyncio.wait_for(answering.wait(), 30)
        await one.accept(step1)  # waits in the queue behind step 0
        pg_server.stop()
        try:
            kept = await offered(two, step2)
        finally:
            pg_server.start()
        if not kept:
            await delivered(two, step2)
        await delivered(two, step3)
        # Whatever replica two made of steps 2 and 3 (queued them, or handled them at once as
        # it did before), that is done before step 0's reply is let through.
        for _ in range(600):
            if two.queue.waiting_count() == 4 or telegram.find(
                "sendMessage", where=lambda c: "step 3" in c.text
            ):
                break
            await asyncio.sleep(0.05)
        release.set()
        await telegram.wait("sendMessage", timeout=60, where=lambda c: "step 3" in c.text)
        await drained(one)
    with open_store(pg_url) as store:
        contents = [m.content for m in store.namespace("users/79").memories()]
    assert contents == [f"step {i}" for i in range(4)]
    assert not kept  # the webhook answered 503


async def test_polling_waits_while_the_database_is_down_and_then_keeps_the_order(
    telegram: FakeBotAPI,
    pg_server: Server,
    pg_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """By polling, an update the queue refuses is not confirmed to Telegram: the next
    ``getUpdates`` waits until the database keeps it, behind its chat's queued updates."""
    monkeypatch.setattr(lanes, "REFUSE_SECONDS", 0.2)
    user = FakeBotAPI.user(81, "Polling")
    answering = asyncio.Event()

    def first_reply(params: dict[str, Any]) -> bool:
        if "step 0" not in params["text"]:
            return False
        answering.set()
        return True

    release = telegram.hold("sendMessage", when=first_reply)
    async with replica(telegram, pg_url, tmp_path, "one", timeout=2, poll=True) as one:
        telegram.send("/remember step 0", user=user)
        telegram.send("/remember step 1", user=user)
        await asyncio.wait_for(answering.wait(), 30)
        pg_server.stop()
        try:
            telegram.send("/remember step 2", user=user)
            step2 = telegram.updates[-1]["update_id"]
            for _ in range(600):  # refused at least once (or, before the fix, answered)
                if f"update {step2} not kept" in caplog.text or telegram.find(
                    "sendMessage", where=lambda c: "step 2" in c.text
                ):
                    break
                await asyncio.sleep(0.05)
            assert any(u["update_id"] == step2 for u in telegram.updates)  # not confirmed
        finally:
            pg_server.start()
        release.set()
        await telegram.wait("sendMessage", timeout=60, where=lambda c: "step 2" in c.text)
        await drained(one)
    with open_store(pg_url) as store:
        contents = [m.content for m in store.namespace("users/81").memories()]
    assert contents == ["step 0", "step 1", "step 2"]


async def health(http: aiohttp.ClientSession, port: int, path: str) -> tuple[int, dict[str, Any]]:
    async with http.get(f"http://127.0.0.1:{port}{path}") as response:
        return response.status, await response.json()


async def test_while_the_database_is_down_a_replica_is_live_but_not_ready(
    telegram: FakeBotAPI, pg_server: Server, pg_url: str, tmp_path: Path
) -> None:
    """A load balancer routing by /healthz/live keeps sending updates to a replica during an
    outage (it answers them 503 until it can keep them, and /healthz/live stays 200); a
    monitor on /healthz/ready (or /healthz, the same) sees the outage, and its end."""
    port = free_port()
    async with (
        replica(telegram, pg_url, tmp_path, "one", timeout=2, port=port) as one,
        aiohttp.ClientSession() as http,
    ):
        assert one.application is not None
        async with inbox_server(one.application):
            for path in ("/healthz/live", "/healthz/ready", "/healthz"):
                assert await health(http, port, path) == (200, {"ok": True}), path
            pg_server.stop()
            try:
                assert await health(http, port, "/healthz/live") == (200, {"ok": True})
                for path in ("/healthz/ready", "/healthz"):
                    status, answer = await health(http, port, path)
                    assert status == 503 and "store cannot be reached" in answer["reason"]
            finally:
                pg_server.start()
            for _ in range(600):  # the pool reconnects by itself
                if (await health(http, port, "/healthz/ready"))[0] == 200:
                    break
                await asyncio.sleep(0.1)
            assert await health(http, port, "/healthz/ready") == (200, {"ok": True})
            assert await health(http, port, "/healthz/live") == (200, {"ok": True})


async def test_a_replica_whose_identity_another_process_took_stops_claiming(
    telegram: FakeBotAPI, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two replicas configured with one identity: the second cannot start while the first
    holds it; if the first's session is lost and the second gets in before the first takes it
    again (within a second, ``PRESENCE_EVERY``: held off here so that the second surely gets
    in), the first gives up its lanes and claims none (and says so in its health), so that they
    never both hold lanes; the chats are handled by the second."""
    user = FakeBotAPI.user(83, "Twice")
    async with replica(telegram, pg_url, tmp_path, "first", identity="same") as first:
        with pytest.raises(StoreInUse):
            async with replica(telegram, pg_url, tmp_path, "twin", identity="same"):
                pass
        monkeypatch.setattr(lanes, "PRESENCE_EVERY", 3600.0)  # the first does not look
        with psycopg.connect(pg_url, autocommit=True) as admin:  # its session lost
            admin.execute(
                "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity"
                " WHERE application_name LIKE 'cogito same#%'"
            )
        async with replica(telegram, pg_url, tmp_path, "second", identity="same") as second:
            monkeypatch.setattr(lanes, "PRESENCE_EVERY", 0.05)  # and now it does
            for _ in range(600):
                if not first.present:
                    break
                await asyncio.sleep(0.05)
            assert first.application is not None
            reason = await bot_health(first.application)()
            assert reason is not None and "another process is replica same" in reason
            answering = asyncio.Event()
            owners: list[str] = []

            def held(params: dict[str, Any]) -> bool:
                if "twice" not in params["text"]:
                    return False
                with psycopg.connect(pg_url) as watcher:  # who holds the chat, mid-handling
                    owners.extend(row[0] for row in watcher.execute("SELECT owner FROM bot_lanes"))
                answering.set()
                return False

            telegram.hold("sendMessage", when=held)
            telegram.send("/remember asked twice", user=user)
            for update in taken(telegram):
                await first.accept(update)  # received by the first, handled by the second
            await asyncio.wait_for(answering.wait(), 30)
            await drained(second)
            assert owners == [second.owner]
            assert first.present is False
