"""Issue 26 parts 1 and 3 in ``python -m bot console``: a new value replaces the old one and
↩ Undo brings it back; the nightly tidy runs in the console as on Telegram, and /undo reverts
it; in Chinese too, without a word of the bot's English."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from test_bot_chinese import english_left, latin_words
from test_bot_console import Clock, Session

from bot.chat.console import Console
from bot.config import parse_config
from memory.files import MemoryStore

# Thursday 10 December 2026, 03:30:20 UTC: the nightly tidy (03:30) fell due 20 seconds ago.
NIGHT = datetime(2026, 12, 10, 3, 30, 20, tzinfo=UTC)


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def open_console(data_dir: Path, tmp_path: Path) -> Any:
    @asynccontextmanager
    async def opened(
        clock: Clock, *, language: str = "en", **sections: Any
    ) -> AsyncIterator[Session]:
        config = parse_config({"data_dir": str(data_dir), **sections}, base_dir=tmp_path)
        out = io.StringIO()
        store = MemoryStore(config.data_dir)
        console = Console(config, store, None, user_id=1, language=language, out=out, clock=clock)
        async with console:
            yield Session(console, out)

    return opened


def stored(data_dir: Path) -> list[str]:
    with MemoryStore(data_dir) as store:
        return [m.content for m in store.namespace("users/1").memories()]


async def test_a_new_value_replaces_and_undo_brings_the_old_one_back(
    open_console: Any, data_dir: Path
) -> None:
    async with open_console(Clock()) as session:
        await session.say("/remember My gym locker number is 117")
        replaced = await session.say("/remember I switched to locker 23 at the gym")
        assert "🔁 Replaced: My gym locker number is 117 → I switched to locker 23" in replaced
        assert "[1] ↩ Undo" in replaced
        look_alike = await session.say("/remember Tom's gym locker is 45")
        assert "✅ Remembered." in look_alike
        undone = await session.say("/press #4 1")
        assert "↩ Undone:" in undone and "My gym locker number is 117" in undone
    assert stored(data_dir) == ["My gym locker number is 117", "Tom's gym locker is 45"]


async def test_the_nightly_tidy_runs_in_the_console_and_undo_reverts_it(
    open_console: Any, data_dir: Path
) -> None:
    with MemoryStore(data_dir) as store:
        for name in ("users/1", "users/2"):  # the other chat is not this console's to tidy
            store.namespace(name).import_memories(
                [
                    {"id": 1, "content": "Buy milk", "createdAt": "2026-11-01T09:00:00Z"},
                    {"id": 2, "content": "buy milk!", "createdAt": "2026-11-02T09:00:00Z"},
                ],
                skip_duplicates=False,
            )
            # Tidied the night before; tonight's, due 20 s ago, is caught up at start-up.
            store.documents(name).put("tidy", {"last_period": "2026-12-09T03:30:00.000Z"})
    async with open_console(Clock(NIGHT)) as session:
        report = await session.shown("🧹 Tidied up your memories:")
        assert "merged 1 duplicate(s): “buy milk!”" in report and "[1] ↩ Undo" in report
        assert stored(data_dir) == ["Buy milk"]
        undone = await session.say("/undo")
        assert "↩ Undone:" in undone and "buy milk!" in undone
        assert "(1 memories)" not in session.screen
    assert sorted(stored(data_dir)) == ["Buy milk", "buy milk!"]
    with MemoryStore(data_dir) as store:
        assert len(store.namespace("users/2").memories()) == 2
        theirs = store.documents("users/2").get("tidy")  # nobody claimed its night
        assert theirs is not None and theirs.value["last_period"] == "2026-12-09T03:30:00.000Z"


async def test_in_chinese_the_tidy_and_a_replacement_have_no_english(
    open_console: Any, data_dir: Path
) -> None:
    with MemoryStore(data_dir) as store:
        store.namespace("users/1").import_memories(
            [
                {"id": 1, "content": "健身卡每月40元", "createdAt": "2026-11-01T09:00:00Z"},
                {"id": 2, "content": "健身卡每月45元", "createdAt": "2026-11-02T09:00:00Z"},
            ]
        )
        store.documents("users/1").put("tidy", {"last_period": "2026-12-09T03:30:00.000Z"})
    typed = ["/remember 门禁密码是4821", "/remember 门禁密码现在是9034", "/tidy", "/tidy off"]
    async with open_console(Clock(NIGHT), language="zh") as session:
        report = await session.shown("❓ 下面这些对同一件事说了不同的值")
        assert "[1] 1：留新的" in report and "[3] 1：都保留" in report
        for line in typed:
            await session.say(line)
        kept = await session.say("/press #1 1")  # the night's question: keep the newer
        assert "👍 保留：健身卡每月45元" in kept
    screen = session.screen.split("\n", 2)[2]  # after the banner (English for the terminal)
    left = english_left(screen, {w.lower() for line in typed for w in latin_words(line)})
    assert left == [], screen
