"""Helpers of the reliability suite: the bot in-process or as ``python -m bot``, and its data.

The in-process bot is the real ``Application`` run as ``run_polling`` runs it (see
``tests/bot/conftest.py``); ``BotProcess`` is the real command, a separate process that can be
killed with SIGKILL. Both poll the fake Bot API (``bench.fakes.telegram_server``) on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bench.fakes.telegram_server import TOKEN, Call, FakeBotAPI
from bot.chat.app import BotApplication, build_application
from bot.chat.running import serving
from bot.config import Config, parse_config
from memory.files import MemoryStore

ROOT = Path(__file__).resolve().parents[2]


def user(user_id: int, language_code: str = "en") -> dict[str, Any]:
    """A Telegram user called ``U<id>``."""
    return FakeBotAPI.user(user_id, f"U{user_id}", language_code)


def config_for(
    telegram: FakeBotAPI,
    data_dir: Path,
    sections: dict[str, dict[str, Any]] | None = None,
    **telegram_keys: Any,
) -> Config:
    """A configuration pointing at ``telegram`` with flood control off; ``sections`` are other
    tables (``{"llm": {...}}``), ``telegram_keys`` go to ``[telegram]``."""
    document = {
        **(sections or {}),
        "data_dir": str(data_dir),
        "telegram": {
            "token": TOKEN,
            "base_url": telegram.base_url,
            "flood_control": False,
            **telegram_keys,
        },
    }
    return parse_config(document, base_dir=data_dir.parent, environ={})


@asynccontextmanager
async def running(config: Config, llm: Any = None) -> AsyncIterator[BotApplication]:
    """The bot, polling, in this event loop; stopped as ``run_polling`` stops it."""
    application = build_application(config, MemoryStore(config.data_dir), llm, jobs=False)
    async with serving(application, poll_timeout=5):
        yield application


def write_config(path: Path, telegram: FakeBotAPI, data_dir: Path, extra: str = "") -> Path:
    """A ``config.toml`` for ``python -m bot`` (the token comes from the environment)."""
    path.write_text(
        f'data_dir = "{data_dir}"\nlog_level = "debug"\n{extra}'
        f'[telegram]\nbase_url = "{telegram.base_url}"\nflood_control = false\n'
    )
    return path


class BotProcess:
    """``python -m bot --config PATH`` in a child process; its log goes to ``log``."""

    def __init__(self, config: Path, log: Path, **env: str) -> None:
        self.config = config
        self.log = log
        self.env = {"TELEGRAM_BOT_TOKEN": TOKEN, **env}
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        with self.log.open("ab") as log:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "bot",
                "--config",
                str(self.config),
                cwd=ROOT,
                env={**os.environ, **self.env},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )

    async def kill(self) -> None:
        """SIGKILL: no clean-up of any kind."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        await self.process.wait()

    async def stop(self) -> int:
        """Ctrl-C, as a person stops it; the exit status."""
        assert self.process is not None
        if self.process.returncode is None:
            self.process.send_signal(signal.SIGINT)
        return await asyncio.wait_for(self.process.wait(), 60)

    def text(self) -> str:
        return self.log.read_text("utf-8", errors="replace")


def redeliver(telegram: FakeBotAPI, updates: Iterable[dict[str, Any]]) -> None:
    """Telegram never got the bot's confirmation of these updates: serve them again."""
    known = {u["update_id"] for u in telegram.updates}
    telegram.updates = sorted(
        [*telegram.updates, *(u for u in updates if u["update_id"] not in known)],
        key=lambda u: u["update_id"],
    )


def contents(data_dir: Path, namespace: str) -> list[str]:
    """The memories' content of a namespace, in stored order, as a fresh store reads them
    (the snapshot and the journal: what survived, whether or not the bot stopped cleanly)."""
    with MemoryStore(data_dir) as store:
        return [m.content for m in store.namespace(namespace).memories()]


def snapshot(data_dir: Path, namespace: str) -> list[dict[str, Any]] | None:
    """``memory.json`` parsed (``json.loads`` must succeed), or None if there is none yet."""
    path = data_dir / namespace / "memory.json"
    if not path.exists():
        return None
    return list(json.loads(path.read_text("utf-8")))


def replies(calls: Iterable[Call], chat_id: int) -> list[str]:
    """What the bot said in a chat, in order (sendMessage texts as the user sees them)."""
    return [c.text for c in calls if c.method == "sendMessage" and c.params["chat_id"] == chat_id]
