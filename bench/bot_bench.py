"""Bot benchmark: updates per second end to end, and the bot's own latency per command.

    python -m bench.bot_bench [--memories 10000] [--updates 1000] [--runs 5] [--json FILE]

The namespace of the user (``users/42``) is filled with ``--memories`` synthetic memories
(``bench.store_bench.synthetic_records``: English and Chinese, seeded); the commands alternate
``/remember <a new sentence>`` and ``/recall <a question>`` (``bench.store_bench.queries``).

- ``updates/s``: the real ``Application`` long-polls the fake Bot API of the tests
  (``bench/fakes/telegram_server.py``), which runs in another process on 127.0.0.1 so that the
  two do not share a CPU core's interpreter. All ``--updates`` updates are queued at once; the
  figure is updates / (time until the fake has received the last reply). Everything a user's
  message costs is in it: HTTP both ways, JSON, the handler, the store (an fsync per
  /remember), the rendering, and the fake's own HTML parsing of each reply. ``flood_control``
  is off: Telegram's own limit (30 messages a second) would otherwise be what is measured.
- ``handler ms``: the median time of one update through ``Application.process_update`` with
  the Bot API answered in-process (``bot.chat.local_api.LocalBotAPI``): dispatch, handler, store,
  rendering and request building, without the network.

Before timing, one /recall builds the ranking index (reported as ``first recall``, the cost a
user pays once per namespace after a restart). Each figure is the median over ``--runs`` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import multiprocessing
import multiprocessing.connection
import os
import platform
import statistics
import sys
import tempfile
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from telegram import Update

from bench.store_bench import queries, synthetic_records
from bot.chat.app import BotApplication, build_application
from bot.chat.local_api import LocalBotAPI
from bot.chat.running import serving
from bot.config import Config, parse_config
from memory.files import MemoryStore

FIRST_USER = 42
CHAT = {"id": FIRST_USER, "type": "private", "first_name": "Bench"}


def user(number: int) -> dict[str, Any]:
    """The ``number``-th benchmark user (0: user 42, whose namespace is users/42)."""
    return {"id": FIRST_USER + number, "is_bot": False, "first_name": "B", "language_code": "en"}


def commands(count: int) -> list[str]:
    """``count`` commands, alternating a new memory and a question."""
    asked = itertools.cycle(queries())
    out = []
    for i in range(count):
        if i % 2:
            out.append(f"/recall {next(asked)}")
        else:
            out.append(f"/remember benchmark note {i}: the train ticket for trip {i} #travel")
    return out


def message(text: str, message_id: int) -> dict[str, Any]:
    """A private message update's ``message`` as Telegram sends it."""
    command = text.split(maxsplit=1)[0]
    return {
        "message_id": message_id,
        "date": int(time.time()),
        "chat": CHAT,
        "from": user(0),
        "text": text,
        "entities": [{"type": "bot_command", "offset": 0, "length": len(command)}],
    }


def prepare(folder: Path, memories: int, base_url: str, token: str, users: int = 1) -> Config:
    """A data directory where each user's namespace holds ``memories`` memories; its config."""
    records = synthetic_records(memories)
    with MemoryStore(folder / "data") as store:
        for number in range(users):
            store.namespace(f"users/{FIRST_USER + number}").import_memories(records)
    document = {
        "data_dir": str(folder / "data"),
        "telegram": {"token": token, "base_url": base_url, "flood_control": False},
    }
    return parse_config(document, base_dir=folder, environ={})


# -- the fake Bot API, in its own process --------------------------------------------------------


def serve_fake(connection: multiprocessing.connection.Connection) -> None:
    """Child process: run the fake Bot API; on ("run", [(user number, text), ...]) queue the
    messages and answer ("done",) when as many replies have arrived."""
    from bench.fakes.telegram_server import FakeBotAPI

    async def main() -> None:
        loop = asyncio.get_running_loop()
        async with FakeBotAPI() as telegram:
            connection.send((telegram.base_url, telegram.token))
            while True:
                order = await loop.run_in_executor(None, connection.recv)
                if order[0] == "stop":
                    return
                since = telegram.mark()
                for number, text in order[1]:
                    telegram.send(text, user=user(number))
                await telegram.wait("sendMessage", since=since, count=len(order[1]), timeout=600)
                connection.send(("done",))

    asyncio.run(main())


def running(
    config: Config, request: LocalBotAPI | None = None
) -> AbstractAsyncContextManager[BotApplication]:
    """The bot on its own store, running in this event loop; long-polling the Bot API unless
    ``request`` answers it in-process (``async with running(config) as application``)."""
    application = build_application(config, MemoryStore(config.data_dir), None, request=request)
    return serving(application, poll_timeout=None if request is not None else 10)


class FakeServer:
    """The tests' fake Bot API in a child process (``serve_fake``), driven through a pipe."""

    async def __aenter__(self) -> FakeServer:
        context = multiprocessing.get_context("spawn")
        self._pipe, theirs = context.Pipe()
        self._child = context.Process(target=serve_fake, args=(theirs,), daemon=True)
        self._child.start()
        self.base_url, self.token = await self._receive()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._pipe.send(("stop",))
        self._child.join(10)

    async def _receive(self) -> Any:
        loop = asyncio.get_running_loop()
        if not await loop.run_in_executor(None, self._pipe.poll, 600):
            raise RuntimeError("the fake Bot API process did not answer")
        return self._pipe.recv()

    async def run(self, order: list[tuple[int, str]]) -> float:
        """Send ``(user number, text)`` messages at once; seconds until every reply came."""
        t = time.perf_counter()
        self._pipe.send(("run", order))
        await self._receive()
        return time.perf_counter() - t


async def throughput(memories: int, texts: list[str], users: int = 1) -> dict[str, float]:
    """One run of updates/s through the fake Bot API (in a child process): ``texts`` dealt
    round-robin to ``users`` users, each in their private chat with their own namespace."""
    async with FakeServer() as fake:
        with tempfile.TemporaryDirectory() as folder:
            config = prepare(Path(folder), memories, fake.base_url, fake.token, users)
            async with running(config):
                warm = [(n, "/recall where is my train ticket?") for n in range(users)]
                first_recall = await fake.run(warm) / users  # builds each namespace's index
                elapsed = await fake.run([(i % users, text) for i, text in enumerate(texts)])
    return {"updates_per_s": len(texts) / elapsed, "first_recall_ms": first_recall * 1000}


async def latency(memories: int, updates: int) -> dict[str, float]:
    """One run of the bot's own time per update, the Bot API answered in-process."""
    with tempfile.TemporaryDirectory() as folder:
        config = prepare(Path(folder), memories, "http://unused/bot", "0:local")
        ids = itertools.count(1)
        times: dict[str, list[float]] = {"remember": [], "recall": []}
        async with running(config, LocalBotAPI(lambda sent: None, CHAT)) as application:
            for text in ["/recall where is my train ticket?", *commands(updates)]:
                n = next(ids)
                update = Update.de_json(
                    {"update_id": n, "message": message(text, n)}, application.bot
                )
                t = time.perf_counter()
                await application.process_update(update)
                elapsed = time.perf_counter() - t
                if n > 1:  # the first builds the index
                    times[text.split()[0].lstrip("/")].append(elapsed)
    return {f"{name}_ms": statistics.median(values) * 1000 for name, values in times.items()}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the medians (and JSON with ``--json``)."""
    parser = argparse.ArgumentParser(prog="python -m bench.bot_bench", description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--updates", type=int, default=1000)
    parser.add_argument("--users", type=int, default=8, help="users of the many-chats figure")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("PTB_TIMEDELTA", "1")  # as python -m bot does
    mixed = commands(args.updates)
    runs = []
    for number in range(1, args.runs + 1):
        one = asyncio.run(throughput(args.memories, mixed))
        many = asyncio.run(throughput(args.memories, mixed, args.users))
        bare = asyncio.run(throughput(args.memories, ["/help"] * args.updates))
        run = {
            "updates_per_s": one["updates_per_s"],
            "updates_per_s_many_chats": many["updates_per_s"],
            "updates_per_s_help_only": bare["updates_per_s"],
            "first_recall_ms": one["first_recall_ms"],
            **asyncio.run(latency(args.memories, args.updates)),
        }
        runs.append(run)
        print(f"run {number}: " + ", ".join(f"{k} {v:.2f}" for k, v in run.items()), flush=True)
    result: dict[str, Any] = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    print(
        f"median of {args.runs} runs, {args.memories} memories per namespace, {args.updates}"
        f" updates (/remember and /recall alternating):\n"
        f"  end to end, one chat:          {result['updates_per_s']:.0f} updates/s\n"
        f"  end to end, {args.users} chats at once:   {result['updates_per_s_many_chats']:.0f}"
        " updates/s\n"
        f"  end to end, /help only:        {result['updates_per_s_help_only']:.0f} updates/s"
        " (no store: the bot and the Bot API alone)\n"
        f"  handler median, no network:    /remember {result['remember_ms']:.2f} ms,"
        f" /recall {result['recall_ms']:.2f} ms\n"
        f"  first /recall of a namespace:  {result['first_recall_ms']:.0f} ms (builds its index)"
    )
    result["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
