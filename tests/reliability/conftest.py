"""Fixtures of the reliability suite: a fake Bot API on loopback and the bot's settings.

The suite treats the bot as bad luck and an attacker would: killed mid-work, a disk that
refuses, files that rot, many users at once, hostile input, injected instructions and log
files that must not leak. See ``rel_harness`` for how the bot is run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bench.fakes.telegram_server import FakeBotAPI


@pytest.fixture(autouse=True)
def _timedelta_time_periods(monkeypatch: pytest.MonkeyPatch) -> None:
    """As ``python -m bot`` does: PTB 22 warns in its own RetryAfter without PTB_TIMEDELTA."""
    monkeypatch.setenv("PTB_TIMEDELTA", "1")


@pytest.fixture
async def telegram() -> AsyncIterator[FakeBotAPI]:
    async with FakeBotAPI() as server:
        yield server
