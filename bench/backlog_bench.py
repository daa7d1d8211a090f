"""Backlog benchmark: how long another chat waits while one chat has thousands queued.

    python -m bench.backlog_bench [--flood 10000] [--rate 200] [--after 5] [--seconds 20]
                                  [--interval 0.2] [--runs 3] [--patience 300] [--json FILE]

The real ``python -m bot`` (a child process, file store, ``flood_control`` off) long-polls the
tests' fake Bot API (``bench/fakes/telegram_server.py``, on 127.0.0.1, in this process). Once it
answers, one user starts sending ``/remember``, ``--rate`` a second (a script), faster than
the bot stores them, so a backlog of that chat builds up in the bot; ``--after`` seconds later
another user starts sending ``/help``, every ``--interval`` seconds for ``--seconds``. The
flood stops there, or at ``--flood`` messages (the defaults send 5,000). ``--rate 0`` sends
all ``--flood`` at once (issue 23's 10,000 pasted): then the other chat's first ``/help``
comes after them in Telegram's order, and what is measured is mostly how fast the bot reads
(parses and keeps in its inbox) that many updates.

The figure is that other user's latency: from the moment their ``/help`` is queued at the fake
to the moment the fake receives the bot's answer (the n-th answer in that chat is to the n-th
``/help``: a chat's answers keep its order), p50, p90 and the worst, over every ``/help`` of the
run; one not answered within ``--patience`` seconds of the window's end counts as that long.
``backlog left`` is how many of the flood sent so far were still unanswered when the window
closed: above 0, every ``/help`` was sent during the backlog. The bot's peak memory
(``VmHWM``) is reported too. Each figure is the median over ``--runs`` runs, each on a fresh
data directory; the bot is killed at the end of a run (its backlog is not the point).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
FLOODER, OTHER = 700, 701


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def peak_memory_mb(pid: int) -> float:
    """The process's peak resident memory (``VmHWM``), in MB; 0 where /proc has none."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def one_run(
    flood: int, rate: float, after: float, seconds: float, interval: float, patience: float
) -> dict[str, Any]:
    from bench.fakes.telegram_server import TOKEN, FakeBotAPI

    flooder = FakeBotAPI.user(FLOODER, "Flood")
    other = FakeBotAPI.user(OTHER, "Other")
    async with FakeBotAPI() as telegram:
        loop = asyncio.get_running_loop()
        answered: list[float] = []  # when each answer to the other user arrived
        flood_answers = flood_sent = 0

        async def send_flood() -> None:
            """The flood, ``rate`` a second (0: all at once)."""
            nonlocal flood_sent
            start = loop.time()
            for number in range(flood):
                if rate and number > rate * (loop.time() - start):
                    await asyncio.sleep(number / rate - (loop.time() - start))
                telegram.send(f"/remember pasted line {number}: call the plumber", user=flooder)
                flood_sent += 1

        def arriving(params: dict[str, Any]) -> bool:
            nonlocal flood_answers
            if params.get("chat_id") == OTHER:
                answered.append(loop.time())
            elif params.get("chat_id") == FLOODER:
                flood_answers += 1
            return False  # only watched, never held

        telegram.hold("sendMessage", when=arriving)
        with tempfile.TemporaryDirectory() as folder:
            data_dir = Path(folder) / "data"
            config = Path(folder) / "config.toml"
            config.write_text(
                f'data_dir = "{data_dir}"\nlog_level = "warning"\n[telegram]\n'
                f'base_url = "{telegram.base_url}"\nflood_control = false\n'
            )
            bot = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", "--config", str(config),
                cwd=ROOT, env={**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN},
                stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )  # fmt: skip
            try:
                telegram.send("/help", user=other)  # up and answering
                await telegram.wait("sendMessage", chat_id=OTHER, timeout=120)
                answered.clear()
                flooding = asyncio.create_task(send_flood())
                await asyncio.sleep(after)  # a backlog builds up
                asked: list[float] = []
                end = loop.time() + seconds
                while loop.time() < end:
                    telegram.send("/help", user=other)
                    asked.append(loop.time())
                    await asyncio.sleep(interval)
                flooding.cancel()
                backlog_left = flood_sent - flood_answers
                deadline = loop.time() + patience
                while len(answered) < len(asked) and loop.time() < deadline:
                    await asyncio.sleep(0.1)
                memory = peak_memory_mb(bot.pid)
            finally:
                bot.kill()
                await bot.wait()
    latencies = [
        (answered[i] if i < len(answered) else deadline) - sent for i, sent in enumerate(asked)
    ]
    return {
        "p50_s": percentile(latencies, 0.5),
        "p90_s": percentile(latencies, 0.9),
        "max_s": max(latencies),
        "unanswered": len(asked) - len(answered),
        "backlog_left": backlog_left,
        "peak_mb": memory,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print each run and the medians (and JSON with ``--json``)."""
    parser = argparse.ArgumentParser(prog="python -m bench.backlog_bench", description=__doc__)
    parser.add_argument("--flood", type=int, default=10_000, help="/remember from one chat")
    parser.add_argument("--rate", type=float, default=200.0, help="a second (0: all at once)")
    parser.add_argument("--after", type=float, default=5.0, help="seconds before the /help")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long /help is sent")
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between /help")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--patience", type=float, default=300.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    # The fake server's requests cut off by the kill are expected, not worth a traceback each.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    runs = []
    for number in range(1, args.runs + 1):
        t = time.perf_counter()
        one = asyncio.run(
            one_run(args.flood, args.rate, args.after, args.seconds, args.interval, args.patience)
        )
        runs.append(one)
        print(
            f"run {number} ({time.perf_counter() - t:.0f} s): "
            + ", ".join(
                f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in one.items()
            ),
            flush=True,
        )
    result: dict[str, Any] = {
        "flood": args.flood,
        "rate": args.rate,
        "after": args.after,
        "seconds": args.seconds,
        "interval": args.interval,
        "runs": args.runs,
        **{key: statistics.median(r[key] for r in runs) for key in runs[0]},
    }
    print(
        f"{args.flood} /remember from one chat ({args.rate:.0f} a second), another chat's /help"
        f" every {args.interval} s for {args.seconds:.0f} s from {args.after:.0f} s on;"
        f" median of {args.runs} runs:\n"
        f"  other chat's reply: p50 {result['p50_s']:.2f} s, p90 {result['p90_s']:.2f} s,"
        f" max {result['max_s']:.2f} s ({result['unanswered']} unanswered)\n"
        f"  backlog left at the window's end: {result['backlog_left']:.0f};"
        f" bot's peak memory {result['peak_mb']:.0f} MB"
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
