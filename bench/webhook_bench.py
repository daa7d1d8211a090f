"""How fast the webhook takes updates: ``python -m bench.webhook_bench [--updates N]``.

The real bot (files in a temporary folder, no language model) serves its webhook on 127.0.0.1;
the fake Bot API delivers ``--updates`` ``/help`` messages from ``--chats`` chats as Telegram
does (at most ``max_connections`` in flight, each chat in order). Printed: the time until every
update was accepted (200: fsynced in the inbox) and until every one was answered.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import tempfile
import time
from pathlib import Path

from bench.fakes.telegram_server import TOKEN, FakeBotAPI
from bot.chat.app import build_application
from bot.chat.running import serving
from bot.chat.webhook import inbox_server
from bot.config import parse_config
from memory.files import MemoryStore


async def run(updates: int, chats: int, folder: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with FakeBotAPI() as telegram:
        document = {
            "data_dir": str(folder / "data"),
            "embedding": {"provider": "off"},
            "telegram": {
                "token": TOKEN,
                "base_url": telegram.base_url,
                "flood_control": False,
                "webhook_url": f"http://127.0.0.1:{port}/hook",
                "listen": "127.0.0.1",
                "port": port,
            },
        }
        config = parse_config(document, base_dir=folder, environ={})
        application = build_application(config, MemoryStore(config.data_dir), None, jobs=False)
        async with serving(application, webhook=inbox_server(application)):
            users = [FakeBotAPI.user(1000 + n, f"U{n}") for n in range(chats)]
            started = time.perf_counter()
            for n in range(updates):
                telegram.send("/help", user=users[n % chats])
            while len([d for d in telegram.deliveries if d.ok]) < updates:
                await asyncio.sleep(0.01)
            accepted = time.perf_counter() - started
            await telegram.wait("sendMessage", count=updates, timeout=600)
            answered = time.perf_counter() - started
    print(
        f"{updates} updates from {chats} chats: all accepted in {accepted:.2f} s "
        f"({updates / accepted:.0f}/s, each fsynced before its 200), "
        f"all answered in {answered:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=1000)
    parser.add_argument("--chats", type=int, default=50)
    args = parser.parse_args()
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(args.updates, args.chats, Path(folder)))


if __name__ == "__main__":
    main()
