"""Restart benchmark: ``python -m bot`` stopped and started again and again during a backlog.

    python -m bench.restart_bench [--rounds 3] [--restarts 4] [--users 6] [--messages 100]
                                  [--life 0.5 3] [--signals kill,term] [--seed 1]

Each round queues ``--users`` x ``--messages`` ``/remember`` (interleaved across chats) at the
tests' fake Bot API (``bench/fakes/telegram_server.py``, on 127.0.0.1, in this process) and
starts the real bot process on a fresh data directory. Telegram delivers each update once: a
``getUpdates`` with a higher offset confirms the batch and the fake forgets it, as Telegram
does. ``--restarts`` times, the bot is stopped after a random lifetime (uniform in ``--life``
seconds from its first reply, when it is at work on the backlog) with the round's signal
(SIGKILL: nothing runs; SIGTERM: python-telegram-bot's clean stop) and started again; the last
start runs until every user's ``/help`` sent after it is answered, and stops with Ctrl-C.

Counted per round, and summed per signal: ``lost`` (a message with no memory), ``duplicated``
(a memory stored twice) and ``set_aside`` (updates the inbox gave up on as poison, in
``data/.bot/poison.jsonl``: none of these messages crashes the bot, so any is a false alarm).
All must be 0. ``tests/reliability/test_rel_inbox.py`` asserts the same for 4 SIGKILLs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import random
import signal
import sys
import tempfile
from collections import Counter
from pathlib import Path

from memory.files import MemoryStore

ROOT = Path(__file__).resolve().parents[1]
SIGNALS = {"kill": signal.SIGKILL, "term": signal.SIGTERM}


def content(user_id: int, index: int) -> str:
    return f"restart note {index:03d} of user {user_id}"


async def one_round(
    rng: random.Random,
    stop_with: signal.Signals,
    *,
    restarts: int,
    users: int,
    messages: int,
    life: tuple[float, float],
) -> dict[str, int]:
    from bench.fakes.telegram_server import TOKEN, FakeBotAPI

    people = [FakeBotAPI.user(600 + n, f"U{n}") for n in range(users)]
    async with FakeBotAPI() as telegram:
        with tempfile.TemporaryDirectory() as folder:
            data_dir = Path(folder) / "data"
            config = Path(folder) / "config.toml"
            config.write_text(
                f'data_dir = "{data_dir}"\nlog_level = "warning"\n[telegram]\n'
                f'base_url = "{telegram.base_url}"\nflood_control = false\n'
            )
            for index in range(messages):
                for who in people:
                    telegram.send(f"/remember {content(who['id'], index)}", user=who)

            async def start() -> asyncio.subprocess.Process:
                return await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "bot", "--config", str(config),
                    cwd=ROOT, env={**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN},
                    stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )  # fmt: skip

            for _ in range(restarts):
                up = telegram.mark()
                bot = await start()
                # The lifetime counts from the bot's first reply: Python's imports and the
                # start-up take seconds on a loaded machine, and a bot killed before it has
                # begun on the backlog tells nothing. One with nothing left to do (or that
                # has dropped it) never replies: then it is stopped after a minute.
                with contextlib.suppress(AssertionError):
                    await telegram.wait("sendMessage", since=up, timeout=60)
                await asyncio.sleep(rng.uniform(*life))
                bot.send_signal(stop_with)
                await asyncio.wait_for(bot.wait(), 300)
            since = telegram.mark()
            bot = await start()
            for who in people:
                telegram.send("/help", user=who)
            for who in people:
                await telegram.wait(
                    "sendMessage", since=since, chat_id=who["id"], timeout=300,
                    where=lambda c: "/export" in c.text,
                )  # fmt: skip
            bot.send_signal(signal.SIGINT)
            await asyncio.wait_for(bot.wait(), 300)

            totals = {"lost": 0, "duplicated": 0}
            with MemoryStore(data_dir) as store:
                for who in people:
                    stored = [m.content for m in store.namespace(f"users/{who['id']}").memories()]
                    counts = Counter(stored)
                    totals["lost"] += sum(
                        1 for i in range(messages) if content(who["id"], i) not in counts
                    )
                    totals["duplicated"] += sum(n - 1 for n in counts.values())
            poison = data_dir / ".bot" / "poison.jsonl"
            totals["set_aside"] = len(poison.read_bytes().splitlines()) if poison.exists() else 0
            return totals


def main(argv: list[str] | None = None) -> int:
    """Run the rounds; print each and the totals. Exit status 1 if anything was lost."""
    parser = argparse.ArgumentParser(prog="python -m bench.restart_bench", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3, help="rounds per signal")
    parser.add_argument("--restarts", type=int, default=4)
    parser.add_argument("--users", type=int, default=6)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--life", type=float, nargs=2, default=(0.5, 3.0), metavar=("MIN", "MAX"))
    parser.add_argument("--signals", default="kill,term", help="comma-separated: kill, term")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    # The fake server's requests cut off by the kill are expected, not worth a traceback each.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    rng = random.Random(args.seed)
    failed = 0
    for name in args.signals.split(","):
        totals: Counter[str] = Counter()
        for number in range(1, args.rounds + 1):
            result = asyncio.run(
                one_round(
                    rng,
                    SIGNALS[name],
                    restarts=args.restarts,
                    users=args.users,
                    messages=args.messages,
                    life=(args.life[0], args.life[1]),
                )
            )
            print(
                f"SIG{name.upper()} round {number}: "
                + ", ".join(f"{k} {v}" for k, v in result.items()),
                flush=True,
            )
            totals.update(result)
        total = args.rounds * args.users * args.messages
        print(
            f"SIG{name.upper()}: {args.rounds} rounds x {args.restarts} restarts after "
            f"{args.life[0]}-{args.life[1]} s, {total} /remember delivered once: lost "
            f"{totals['lost']}, duplicated {totals['duplicated']}, set aside as poison "
            f"{totals['set_aside']}",
            flush=True,
        )
        failed += sum(totals.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
