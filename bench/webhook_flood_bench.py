"""A webhook flooded by half-sent requests: ``python -m bench.webhook_flood_bench``.

``python -m bot`` in webhook mode (files in a temporary folder, no language model) runs with
``--open-files`` as its RLIMIT_NOFILE (1,024, the usual default); once it has answered one
``/remember``, ``--connections`` connections (1,124, the attack of issue 23) are opened at once,
each sending a quarter of one of: nothing, half a request's headers, headers without the secret
and half a body, ``GET /healthz`` with half a body; they stay open. Then ``/healthz`` is asked
and a ``/remember`` is delivered by the fake Bot API as Telegram would (with the secret).

Printed: how long ``/healthz`` and the ``/remember``'s answer took (or that they timed out after
``--wait`` seconds), the most file descriptors the bot held (sampled from ``/proc``, so Linux
only), and the size of its log with the number of tracebacks in it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import socket
import sys
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path

import aiohttp

from bench.fakes.telegram_server import TOKEN, FakeBotAPI

ROOT = Path(__file__).resolve().parents[1]
SECRET = "flood-bench_secret"
ALICE = {"id": 42, "is_bot": False, "first_name": "Alice"}
HALF_REQUESTS = (
    b"",
    b"POST /hook HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\n",
    b'POST /hook HTTP/1.1\r\nHost: bot\r\nContent-Length: 100000\r\n\r\n{"update_id": 1',
    b"GET /healthz HTTP/1.1\r\nHost: bot\r\nContent-Length: 100000\r\n\r\nxx",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def start_bot(
    folder: Path, telegram: FakeBotAPI, port: int, open_files: int
) -> asyncio.subprocess.Process:
    config = folder / "config.toml"
    config.write_text(
        f'data_dir = "{folder / "data"}"\n[embedding]\nprovider = "off"\n'
        f'[telegram]\nbase_url = "{telegram.base_url}"\nflood_control = false\n'
        f'webhook_url = "http://127.0.0.1:{port}/hook"\nlisten = "127.0.0.1"\nport = {port}\n'
    )
    env = {**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": SECRET}

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with (folder / "bot.log").open("ab") as out:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "--config",
            str(config),
            cwd=ROOT,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            preexec_fn=limit,
        )


async def half_request(port: int, n: int) -> asyncio.StreamWriter | None:
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
    except (OSError, TimeoutError):
        return None
    writer.write(HALF_REQUESTS[n % len(HALF_REQUESTS)])
    return writer


async def timed(seconds: float, what: Awaitable[object]) -> str:
    """How long ``what`` took, or that it did not finish in ``seconds``."""
    started = time.perf_counter()
    try:
        async with asyncio.timeout(seconds):
            await what
    except (TimeoutError, AssertionError):  # AssertionError: the fake's own wait gave up
        return f"timed out after {seconds:.0f} s"
    return f"{time.perf_counter() - started:.2f} s"


async def healthz(port: int) -> int:
    async with (
        aiohttp.ClientSession() as http,
        http.get(f"http://127.0.0.1:{port}/healthz") as response,
    ):
        return response.status


async def run(connections: int, open_files: int, wait: float, folder: Path) -> None:
    port = free_port()
    async with FakeBotAPI() as telegram:
        bot = await start_bot(folder, telegram, port, open_files)
        peak = 0

        async def sample() -> None:
            nonlocal peak
            while True:
                peak = max(peak, len(os.listdir(f"/proc/{bot.pid}/fd")))  # alive until the end
                await asyncio.sleep(0.05)

        sampler = asyncio.create_task(sample())
        writers: list[asyncio.StreamWriter | None] = []
        try:
            telegram.send("/remember before the flood", user=ALICE)
            await telegram.wait("sendMessage", chat_id=ALICE["id"], timeout=60)
            writers = list(
                await asyncio.gather(*(half_request(port, n) for n in range(connections)))
            )
            health = await timed(wait, healthz(port))
            since = telegram.mark()
            telegram.send("/remember during the flood", user=ALICE)
            answer = telegram.wait("sendMessage", since=since, chat_id=ALICE["id"], timeout=wait)
            answered = await timed(wait + 1, answer)
        finally:
            sampler.cancel()
            for writer in writers:
                if writer is not None:
                    writer.close()
            bot.terminate()
            await bot.wait()
    log = (folder / "bot.log").read_text("utf-8", "replace")
    opened = sum(writer is not None for writer in writers)
    print(
        f"{opened} of {connections} half requests open against RLIMIT_NOFILE {open_files}: "
        f"/healthz {health}, /remember answered {answered}; the bot held at most {peak} "
        f"descriptors; log {len(log.encode()):,} bytes, {log.count('Traceback')} tracebacks"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--connections", type=int, default=1124)
    parser.add_argument("--open-files", type=int, default=1024)
    parser.add_argument("--wait", type=float, default=20.0, help="seconds before giving up")
    args = parser.parse_args()
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(run(args.connections, args.open_files, args.wait, Path(folder)))


if __name__ == "__main__":
    main()
