"""Replicas on PostgreSQL as processes: one SIGKILLed and restarted, and two claiming one
identity.

``python -m bot`` in webhook mode on the session's PostgreSQL, Telegram's webhook deliveries by
the fake Bot API (a refused delivery is tried again within a second). A replica is its identity
(``[replicas] identity``, else its host and port: ``bot.chat.lanes``); restarted as itself, it
takes its dead process's chats back at once rather than after their lease (30 s), and a second
live process of the same identity is refused.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import psycopg
from rel_harness import BotProcess, write_config

from bench.fakes.telegram_server import FakeBotAPI
from memory import open_store

SECRET = "replica-secret"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def replica_config(
    folder: Path, telegram: FakeBotAPI, pg_url: str, port: int, identity: str = ""
) -> Path:
    """A replica's config: webhook mode on ``port``, the default lease (30 s)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = write_config(
        folder / "config.toml", telegram, folder / "data", f'storage = "{pg_url}"\n'
    )
    with path.open("a", encoding="utf-8") as file:
        file.write(
            f'webhook_url = "http://127.0.0.1:{port}/telegram"\nlisten = "127.0.0.1"\n'
            f'port = {port}\nsecret_token = "{SECRET}"\n'
            + (f'[replicas]\nidentity = "{identity}"\n' if identity else "")
        )
    return path


async def until(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Until ``condition`` holds (the timeout only stops a broken test)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        await asyncio.sleep(0.05)


async def ready(port: int, process: BotProcess) -> None:
    """Until the replica's /healthz/ready answers 200."""
    async with aiohttp.ClientSession() as http:
        for _ in range(1200):
            assert process.process is not None and process.process.returncode is None, (
                process.text()
            )
            try:
                async with http.get(f"http://127.0.0.1:{port}/healthz/ready") as answer:
                    if answer.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError(f"never ready: {process.text()[-2000:]}")


def contents(pg_url: str, namespace: str) -> list[str]:
    with open_store(pg_url) as store:
        return [memory.content for memory in store.namespace(namespace).memories()]


def lease_of(pg_url: str, chat: int) -> tuple[str, datetime] | None:
    """Who holds the chat's lane, and until when (the database's clock)."""
    with psycopg.connect(pg_url) as connection:
        row = connection.execute(
            "SELECT owner, until FROM bot_lanes WHERE lane = %s", (str(chat),)
        ).fetchone()
    return None if row is None else (row[0], row[1])


def lease_ran_out(pg_url: str, until: datetime) -> bool:
    with psycopg.connect(pg_url) as connection:
        row = connection.execute("SELECT now() >= %s", (until,)).fetchone()
    assert row is not None
    return bool(row[0])


async def test_a_killed_replica_restarted_takes_its_chats_back_before_their_lease_runs_out(
    telegram: FakeBotAPI, pg_url: str, tmp_path: Path
) -> None:
    """Killed while a chat's reply hangs, the replica leaves that chat leased for 30 s. Started
    again as the same replica (same host and port), it handles the chat's interrupted update
    again and the next one while that lease would still hold (before: after it ran out)."""
    user = FakeBotAPI.user(91, "Restarted")

    def step_0(params: dict[str, Any]) -> bool:
        return params["chat_id"] == user["id"] and "step 0" in params["text"]

    release = telegram.hold("sendMessage", when=step_0)
    port = free_port()
    config = replica_config(tmp_path / "replica", telegram, pg_url, port)
    bot = BotProcess(config, tmp_path / "replica.log")
    await bot.start()
    try:
        await ready(port, bot)
        telegram.send("/remember step 0", user=user)
        await until(lambda: contents(pg_url, "users/91") == ["step 0"], "step 0 stored")
        held = lease_of(pg_url, user["id"])  # its reply hangs: the lane is leased
        assert held is not None
        owner, until_then = held
        await bot.kill()
        release.set()
        telegram.send("/remember step 1", user=user)
        started = time.monotonic()
        await bot.start()  # the same config: the same identity
        await telegram.wait("sendMessage", timeout=60, where=lambda c: "step 1" in c.text)
        taken_back_after = time.monotonic() - started
        assert not lease_ran_out(pg_url, until_then), f"{taken_back_after:.1f} s after the start"
    finally:
        release.set()
        status = await bot.stop()
    log = bot.text()
    assert status == 0, log
    assert contents(pg_url, "users/91") == ["step 0", "step 1"]  # step 0 handled twice, once
    assert "given up at once" in log and owner.split("#")[0] in log


async def test_two_live_processes_of_one_identity_never_both_serve(
    telegram: FakeBotAPI, pg_url: str, tmp_path: Path
) -> None:
    """The second process configured as the same replica is refused at start and exits 1,
    naming the identity; the first goes on handling every update."""
    user = FakeBotAPI.user(92, "Twin")
    ports = [free_port(), free_port()]
    configs = [
        replica_config(tmp_path / name, telegram, pg_url, port, identity="bot1")
        for name, port in zip(("first", "second"), ports, strict=True)
    ]
    first = BotProcess(configs[0], tmp_path / "first.log")
    second = BotProcess(configs[1], tmp_path / "second.log")
    await first.start()
    try:
        await ready(ports[0], first)
        await second.start()
        assert second.process is not None
        code = await asyncio.wait_for(second.process.wait(), 60)
        assert code == 1, second.text()
        assert "Cannot serve the bot: another live replica is 'bot1'" in second.text()
        telegram.send("/remember served once", user=user)
        [reply] = await telegram.wait("sendMessage", chat_id=user["id"], timeout=60)
        assert "served once" in reply.text
    finally:
        assert await first.stop() == 0, first.text()
    assert "Traceback" not in second.text()
