"""Load benchmark: many users at once, end to end, with every memory checked afterwards.

    python -m bench.load_bench [--users 50] [--messages 20] [--runs 3] [--json FILE]

Each of ``--users`` users sends ``--messages`` ``/remember`` in their private chat, all queued at
once, interleaved (user 1's first, user 2's first, ..., user 1's second, ...), to the real
``Application`` long-polling the tests' fake Bot API, which runs in another process on
127.0.0.1 (``bench.bot_bench.serve_fake``). The figure is updates / (time until the fake has
received the last reply); ``flood_control`` is off, else Telegram's 30 messages a second would
be what is measured. Everything a message costs is in it: HTTP both ways, the inbox's fsync
(``bot.chat.inbox``), the handler, the store's fsync, the rendering.

After each run the data directory is read with a fresh store and compared with what was sent:
``lost`` (a message with no memory), ``duplicated`` (a memory stored twice) and
``out_of_order`` (a namespace whose memories are not in the order its user sent them) must all
be 0. The tests assert the same on a smaller run (``tests/reliability/test_rel_load.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from bench.bot_bench import FIRST_USER, FakeServer, prepare, running
from memory.files import MemoryStore


def content(number: int, index: int) -> str:
    return f"load test note {index} of user {number}: the locker code is {number * 100 + index}"


def check(data_dir: Path, users: int, messages: int) -> dict[str, int]:
    """Compare every namespace with what its user sent."""
    lost = duplicated = out_of_order = 0
    with MemoryStore(data_dir) as store:
        for number in range(users):
            sent = [content(number, i) for i in range(messages)]
            stored = [m.content for m in store.namespace(f"users/{FIRST_USER + number}").memories()]
            counts = Counter(stored)
            lost += sum(1 for text in sent if text not in counts)
            duplicated += sum(n - 1 for n in counts.values())
            out_of_order += [t for t in stored if t in sent] != [t for t in sent if t in counts]
    return {"lost": lost, "duplicated": duplicated, "out_of_order": out_of_order}


async def run(users: int, messages: int) -> dict[str, Any]:
    """One run: all messages at once; updates/s and the check."""
    async with FakeServer() as fake:
        with tempfile.TemporaryDirectory() as folder:
            config = prepare(Path(folder), 0, fake.base_url, fake.token, users)
            order = [
                (number, f"/remember {content(number, index)}")
                for index in range(messages)
                for number in range(users)
            ]
            async with running(config):
                elapsed = await fake.run(order)
            result: dict[str, Any] = {"updates_per_s": len(order) / elapsed}
            result.update(check(config.data_dir, users, messages))
    return result


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the median throughput and the totals of the checks."""
    parser = argparse.ArgumentParser(prog="python -m bench.load_bench", description=__doc__)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("PTB_TIMEDELTA", "1")  # as python -m bot does
    runs = []
    for number in range(1, args.runs + 1):
        one = asyncio.run(run(args.users, args.messages))
        runs.append(one)
        print(f"run {number}: " + ", ".join(f"{k} {v:.0f}" for k, v in one.items()), flush=True)
    total = args.users * args.messages
    result: dict[str, Any] = {
        "users": args.users,
        "messages_per_user": args.messages,
        "runs": args.runs,
        "updates_per_s": statistics.median(r["updates_per_s"] for r in runs),
        **{key: sum(r[key] for r in runs) for key in ("lost", "duplicated", "out_of_order")},
    }
    print(
        f"{args.users} users x {args.messages} /remember at once, {args.runs} runs:\n"
        f"  throughput (median): {result['updates_per_s']:.0f} updates/s end to end\n"
        f"  of {total * args.runs} memories: lost {result['lost']}, duplicated "
        f"{result['duplicated']}, namespaces out of order {result['out_of_order']}"
    )
    result["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0 if not (result["lost"] or result["duplicated"] or result["out_of_order"]) else 1


if __name__ == "__main__":
    sys.exit(main())
