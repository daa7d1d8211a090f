"""No network: ``python -m bot`` waits for the Bot API, at start-up and while running.

The bot is started against a port where nothing listens (Telegram unreachable), then the fake
Bot API starts on that port; later the fake is shut down mid-run and started again. Every
failed attempt must be one clear log line, never a traceback; the bot must answer once the
Bot API is back, each time, and stop cleanly (Ctrl-C) while it is away.
"""

from __future__ import annotations

import asyncio
import re
import socket
from pathlib import Path

from rel_harness import BotProcess, contents, user

from bench.fakes.telegram_server import FakeBotAPI

ALICE = user(42)
CANNOT_REACH = re.compile(
    r"WARNING bot\.chat\.app: cannot reach the Bot API at (\S+) to connect \(attempt (\d+), "
)
POLLING_FAILED = "WARNING bot.chat.running: network trouble talking to Telegram (polling again)"


def closed_port() -> int:
    """A loopback port nobody listens on (free a moment ago)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def config(tmp_path: Path, telegram: FakeBotAPI) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(
        f'data_dir = "{tmp_path / "data"}"\n'
        f'[telegram]\nbase_url = "{telegram.base_url}"\nflood_control = false\n'
    )
    return path


async def until_logged(bot: BotProcess, pattern: str | re.Pattern[str], count: int = 1) -> None:
    """Wait until the bot's log has ``count`` lines matching ``pattern``."""
    async with asyncio.timeout(120):
        while len(re.findall(pattern, bot.text())) < count:
            assert bot.process is not None and bot.process.returncode is None, bot.text()
            await asyncio.sleep(0.2)


def assert_one_clear_line_per_failure(log: str) -> None:
    assert "Traceback" not in log and "Exception happened while polling" not in log, log
    attempts = [int(match[2]) for match in CANNOT_REACH.finditer(log)]
    assert attempts == list(range(1, len(attempts) + 1))  # one line each, none skipped
    for line in log.splitlines():  # what a person reads: warnings, and what says where
        assert line[:4].isdigit(), f"not a log line: {line!r}"


async def test_the_bot_waits_for_the_bot_api_and_answers_when_it_comes(tmp_path: Path) -> None:
    telegram = FakeBotAPI()
    telegram.port = closed_port()
    bot = BotProcess(config(tmp_path, telegram), tmp_path / "bot.log")
    await bot.start()
    try:
        await until_logged(bot, CANNOT_REACH, count=3)
        await telegram.start()  # the network is back
        try:
            telegram.send("/remember the network came back", user=ALICE)
            [reply] = await telegram.wait("sendMessage", chat_id=42, timeout=120)
            assert "Remembered" in reply.text

            await telegram.close()  # lost again, while polling
            await until_logged(bot, re.escape(POLLING_FAILED), count=2)
            await telegram.start()
            since = telegram.mark()
            telegram.send("/remember and once more after an outage", user=ALICE)
            [reply] = await telegram.wait("sendMessage", chat_id=42, since=since, timeout=120)
            assert "Remembered" in reply.text

            failures = bot.text().count(POLLING_FAILED)
            await telegram.close()  # and stopped while it is lost
            await until_logged(bot, re.escape(POLLING_FAILED), count=failures + 1)
        finally:
            assert await bot.stop() == 0
            await telegram.close()
    finally:
        if bot.process is not None and bot.process.returncode is None:
            await bot.kill()
    log = bot.text()
    [where] = set(match[1] for match in CANNOT_REACH.finditer(log))
    assert where == telegram.base_url  # the address, without the token
    assert_one_clear_line_per_failure(log)
    assert contents(tmp_path / "data", "users/42") == [
        "the network came back",
        "and once more after an outage",
    ]


async def test_ctrl_c_while_waiting_for_the_network_stops_cleanly(tmp_path: Path) -> None:
    telegram = FakeBotAPI()
    telegram.port = closed_port()
    bot = BotProcess(config(tmp_path, telegram), tmp_path / "bot.log")
    await bot.start()
    await until_logged(bot, CANNOT_REACH)
    assert await bot.stop() == 0
    assert_one_clear_line_per_failure(bot.text())
