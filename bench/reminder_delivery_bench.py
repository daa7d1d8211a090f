"""One chat's flood limit must delay that chat only; no second may carry more than 30 messages.

    python -m bench.reminder_delivery_bench [--group 60] [--chats 45] [--runs 3] [--json FILE]

Two measures, each through the real ``Application`` with ``flood_control`` on (as in
production) against the fake Bot API on 127.0.0.1 (``bench.fakes.telegram_server``), in one
process:

- ``private_delay_s``: ``--group`` reminders of one group and one reminder of a private chat
  fall due at the same instant; the time from that instant until the private one reaches the
  fake (``group_before``: how many of the group's had reached it by then). Telegram allows 20
  messages a minute to a group: a delivery that sends one message after another makes the
  private chat wait behind the whole group.
- ``busiest_second``: ``--chats`` messages to as many private chats sent at once (the bot
  answering many people); the most of them the fake received within any one second (Telegram's
  limit is about 30).

The reminders' clock is moved (the job's ``clock``), the waits are real. Figures are medians
of ``--runs`` runs, each in a fresh process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bench.fakes.telegram_server import TOKEN, FakeBotAPI
from bot.chat.app import build_application
from bot.chat.running import serving
from bot.config import parse_config
from bot.core import reminders, when
from bot.core.policy import Actor, Caller
from memory.files import MemoryStore

START = datetime(2026, 12, 1, 1, 0, tzinfo=UTC)
GROUP_ID, PRIVATE_ID = -1001234567890, 42
TIMEOUT = 900.0  # seconds: a broken delivery ends the run, it does not hang it


class _Clock:
    def __init__(self, start: datetime) -> None:
        self.offset = start - datetime.now(UTC)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, delta: timedelta) -> None:
        self.offset += delta


def _set(store: MemoryStore, chat_id: int, text: str) -> None:
    parsed = when.parse_reminder(f"in 1 minute {text}", START, ZoneInfo("UTC"))
    assert parsed is not None
    namespace = f"chats/{chat_id}" if chat_id < 0 else f"users/{chat_id}"
    reminders.create(
        store,
        Caller(Actor("user", PRIVATE_ID, "Alice"), namespace),
        chat_id=chat_id,
        text=parsed.text,
        due=parsed.due,
        language="en",
        now=START,
    )


def _application(telegram: FakeBotAPI, folder: Path, clock: _Clock, *, jobs: bool) -> Any:
    data = {
        "data_dir": str(folder / "data"),
        "telegram": {"token": TOKEN, "base_url": telegram.base_url, "flood_control": True},
        "reminders": {"timezone": "UTC"},
    }
    config = parse_config(data, base_dir=folder)
    return build_application(config, MemoryStore(config.data_dir), None, clock=clock, jobs=jobs)


async def private_delay(group: int) -> dict[str, float]:
    """``group`` reminders of a group and one private one due together (module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        async with FakeBotAPI() as telegram:
            telegram.group(GROUP_ID)
            telegram.private_chat(FakeBotAPI.user(PRIVATE_ID, "Alice"))
            with MemoryStore(folder / "data") as store:
                for number in range(group):
                    _set(store, GROUP_ID, f"group task {number}")
                _set(store, PRIVATE_ID, "the private one")
            clock = _Clock(START)
            async with serving(_application(telegram, folder, clock, jobs=True), poll_timeout=1):
                await asyncio.sleep(1.0)  # started: its first tick has read the store
                since = telegram.mark()
                clock.advance(timedelta(minutes=1))
                due = time.monotonic()
                await telegram.wait("sendMessage", since=since, chat_id=PRIVATE_ID, timeout=TIMEOUT)
                delay = time.monotonic() - due
                before = len(telegram.find("sendMessage", since=since, chat_id=GROUP_ID))
    return {"private_delay_s": delay, "group_before": float(before)}


async def busiest_second(chats: int) -> dict[str, float]:
    """``chats`` messages to as many private chats at once (module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        async with FakeBotAPI() as telegram:
            for chat in range(1001, 1001 + chats):
                telegram.private_chat(FakeBotAPI.user(chat, f"user{chat}"))
            application = _application(telegram, Path(tmp), _Clock(START), jobs=False)
            async with serving(application, poll_timeout=1):
                since = telegram.mark()
                ids = range(1001, 1001 + chats)
                bot = application.bot
                await asyncio.gather(*(bot.send_message(chat, f"hello {chat}") for chat in ids))
                received = sorted(c.received for c in telegram.find("sendMessage", since=since))
    most = max(sum(1 for t in received if start <= t < start + 1.0) for start in received)
    return {"busiest_second": float(most), "sent": float(len(received))}


def _one(args: argparse.Namespace) -> dict[str, float]:
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    result = asyncio.run(private_delay(args.group))
    result.update(asyncio.run(busiest_second(args.chats)))
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--group", type=int, default=60, help="reminders of the group")
    parser.add_argument("--chats", type=int, default=45, help="private chats sent to at once")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(_one(args)))
        return
    runs = []
    for _ in range(args.runs):
        command = [sys.executable, "-m", "bench.reminder_delivery_bench", "--one"]
        command += ["--group", str(args.group), "--chats", str(args.chats)]
        environ = {**os.environ, "PTB_TIMEDELTA": "1"}
        out = subprocess.run(command, capture_output=True, text=True, check=True, env=environ)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(json.dumps(runs[-1]), flush=True)
    summary = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    print(f"{args.group} group reminders + 1 private due together, medians of {args.runs}:")
    print(f"  the private one reached Telegram after {summary['private_delay_s']:.2f} s, "
          f"with {summary['group_before']:.0f} of the group's before it")  # fmt: skip
    print(f"  {args.chats} messages sent at once: at most {summary['busiest_second']:.0f} "
          "in any one second")  # fmt: skip
    if args.json is not None:
        args.json.write_text(json.dumps({"runs": runs, "median": summary}, indent=2))


if __name__ == "__main__":
    main()
