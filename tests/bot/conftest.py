"""Fixtures for the bot's end-to-end tests: a fake Bot API and the real Application against it.

``start_bot(**telegram_keys)`` runs the bot as ``run_polling`` does (initialize, post_init,
polling, start ... stop, shutdown, post_shutdown), in the test's event loop, with a data
directory in ``tmp_path``; ``bot`` is one started with the defaults. See ``bot_harness``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from bot_harness import Bot, StartBot

from bench.fakes.telegram_server import TOKEN, FakeBotAPI
from bot.chat.app import build_application
from bot.chat.running import serving
from bot.config import parse_config
from memory.files import MemoryStore


@pytest.fixture(autouse=True)
def _timedelta_time_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``python -m bot`` does: opt in to PTB 23's timedelta time periods (PTB_TIMEDELTA).

    Without it python-telegram-bot 22 warns (PTBDeprecationWarning) inside its own RetryAfter
    on every 429, which ``filterwarnings = error`` turns into a failure.
    """
    monkeypatch.setenv("PTB_TIMEDELTA", "1")


@pytest.fixture
async def telegram() -> AsyncIterator[FakeBotAPI]:
    async with FakeBotAPI() as server:
        yield server


@pytest.fixture
def start_bot(telegram: FakeBotAPI, tmp_path: Path) -> StartBot:
    @asynccontextmanager
    async def start(
        data_dir: Path | None = None,
        llm: Any = None,
        sections: dict[str, dict[str, Any]] | None = None,
        embedder: Any = None,
        **telegram_keys: Any,
    ) -> AsyncIterator[Bot]:
        """The bot, running; ``telegram_keys`` go to [telegram], ``sections`` are other tables
        of the config (``{"llm": {...}}``), ``llm`` is passed to ``build_application``, and
        ``embedder`` to the store (search by meaning; none: keywords only)."""
        data: dict[str, Any] = {
            **(sections or {}),
            "data_dir": str(data_dir or tmp_path / "data"),
            "telegram": {
                "token": TOKEN,
                "base_url": telegram.base_url,
                "flood_control": False,
                **telegram_keys,
            },
        }
        config = parse_config(data, base_dir=tmp_path)
        store = MemoryStore(config.data_dir, embedder=embedder, **config.memory.store_options())
        application = build_application(config, store, llm)
        async with serving(application, poll_timeout=5):
            yield Bot(telegram, config, store)

    return start


@pytest.fixture
async def bot(start_bot: StartBot) -> AsyncIterator[Bot]:
    async with start_bot() as running:
        yield running
