"""Crash benchmark: ``python -m bot`` killed with SIGKILL at random points, again and again.

    python -m bench.crash_bench [--rounds 20] [--users 5] [--messages 20] [--seed 1]

Each round queues ``--users`` x ``--messages`` ``/remember`` (interleaved across chats) at the
tests' fake Bot API (``bench/fakes/telegram_server.py``, on 127.0.0.1, in this process), starts
the real bot process on a fresh data directory, kills it with SIGKILL once a random number of
confirmations (1 to all but one) has arrived, then makes Telegram deliver every update again, as
if the bot's confirmation of the offset had never arrived, and restarts the bot until it has
answered a ``/help`` sent by every user after the restart.

Counted per round, and summed: ``lost`` (a message with no memory), ``unconfirmed_lost`` (a
message confirmed before the kill whose memory is gone: the store's durability promise),
``duplicated`` (a memory stored twice) and ``out_of_order`` (a namespace whose memories are not
in the order sent). All must be 0. ``tests/reliability/test_rel_crash.py`` asserts the same for
one kill at a chosen point.
"""

from __future__ import annotations

import argparse
import asyncio
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


def content(user_id: int, index: int) -> str:
    return f"crash note {index:02d} of user {user_id}"


async def one_round(rng: random.Random, users: int, messages: int) -> dict[str, int]:
    from bench.fakes.telegram_server import TOKEN, FakeBotAPI

    people = [FakeBotAPI.user(500 + n, f"U{n}") for n in range(users)]
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
            sent = list(telegram.updates)

            async def start() -> asyncio.subprocess.Process:
                return await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "bot", "--config", str(config),
                    cwd=ROOT, env={**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN},
                    stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )  # fmt: skip

            kill_after = rng.randint(1, users * messages - 1)
            bot = await start()
            await telegram.wait("sendMessage", count=kill_after, timeout=120)
            bot.send_signal(signal.SIGKILL)
            await bot.wait()
            confirmed = [c.text.split("\n")[1] for c in telegram.find("sendMessage")]

            known = {u["update_id"] for u in telegram.updates}
            telegram.updates = sorted(
                [*telegram.updates, *(u for u in sent if u["update_id"] not in known)],
                key=lambda u: u["update_id"],
            )
            since = telegram.mark()
            bot = await start()
            for who in people:
                telegram.send("/help", user=who)
            for who in people:
                await telegram.wait(
                    "sendMessage", since=since, chat_id=who["id"], timeout=120,
                    where=lambda c: "/export" in c.text,
                )  # fmt: skip
            bot.send_signal(signal.SIGINT)
            await bot.wait()

            totals = {"lost": 0, "unconfirmed_lost": 0, "duplicated": 0, "out_of_order": 0}
            with MemoryStore(data_dir) as store:
                for who in people:
                    expected = [content(who["id"], i) for i in range(messages)]
                    stored = [m.content for m in store.namespace(f"users/{who['id']}").memories()]
                    counts = Counter(stored)
                    totals["lost"] += sum(1 for text in expected if text not in counts)
                    totals["unconfirmed_lost"] += sum(
                        1 for text in confirmed if text in expected and text not in counts
                    )
                    totals["duplicated"] += sum(n - 1 for n in counts.values())
                    totals["out_of_order"] += stored != [t for t in expected if t in counts]
            totals["killed_after"] = kill_after
            return totals


def main(argv: list[str] | None = None) -> int:
    """Run the rounds; print each and the totals. Exit status 1 if anything was lost."""
    parser = argparse.ArgumentParser(prog="python -m bench.crash_bench", description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--users", type=int, default=5)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    # The fake server's requests cut off by the kill are expected, not worth a traceback each.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    rng = random.Random(args.seed)
    totals: Counter[str] = Counter()
    for number in range(1, args.rounds + 1):
        result = asyncio.run(one_round(rng, args.users, args.messages))
        print(f"round {number}: " + ", ".join(f"{k} {v}" for k, v in result.items()), flush=True)
        result.pop("killed_after")
        totals.update(result)
    total = args.rounds * args.users * args.messages
    print(
        f"{args.rounds} SIGKILLs at random points, {total} /remember, every update delivered "
        f"again after each kill: lost {totals['lost']}, confirmed then lost "
        f"{totals['unconfirmed_lost']}, duplicated {totals['duplicated']}, namespaces out of "
        f"order {totals['out_of_order']}"
    )
    return 1 if sum(totals.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
