"""Secrets: neither the bot token nor the LLM key reaches a log line or a reply.

``python -m bot`` runs with both set and logging at DEBUG, and is driven through the error
paths where secrets leak in practice: the Bot API answering 500 (with the token echoed in its
description, as a misbehaving proxy might), and the model's endpoint answering 401 (echoing the
key, as OpenAI's own "Incorrect API key provided: sk-..." does). Everything the process wrote
to stderr, and everything it sent to Telegram, is searched for both.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from rel_harness import BotProcess, user, write_config

from bench.fakes.openai_server import Answer, FakeOpenAI, Status
from bench.fakes.telegram_server import TOKEN, FakeBotAPI

KEY = "sk-proj-Zk3cQ9vT2mLx8RwYp4HsNbEj7UaDf6Gq"
ALICE = user(42)


@pytest.fixture
async def llm() -> AsyncIterator[FakeOpenAI]:
    async with FakeOpenAI(api_key=KEY) as server:
        yield server


def forms(secret: str) -> list[str]:
    """The secret and the distinctive parts of it that would betray it on their own."""
    return [secret, secret.split(":")[-1], secret.removeprefix("sk-proj-")]


@pytest.mark.slow
async def test_no_secret_in_any_log_line_or_reply(
    telegram: FakeBotAPI, llm: FakeOpenAI, tmp_path: Path
) -> None:
    config = write_config(
        tmp_path / "config.toml",
        telegram,
        tmp_path / "data",
        extra=f'[llm]\nbase_url = "{llm.base_url}"\nmodel = "test-model"\ntimeout = 5.0\n',
    )
    bot = BotProcess(config, tmp_path / "bot.log", OPENAI_API_KEY=KEY)
    echo = f"Internal Server Error: upstream bot{TOKEN} is down"
    telegram.fail("getUpdates", 500, echo)
    telegram.fail("sendMessage", 500, echo)  # the first reply; PTB does not retry it
    llm.script(
        Status(401, f"Incorrect API key provided: {KEY}. Find yours at ...", "invalid_api_key"),
        Answer("Hello again."),
    )
    await bot.start()
    try:
        since = telegram.mark()
        telegram.send("/remember the spare key is under the mat", user=ALICE)
        await telegram.wait("sendMessage", since=since, ok=False, timeout=60)
        telegram.send("hello", user=ALICE)  # the model refuses the key
        [refused] = await telegram.wait("sendMessage", since=since, timeout=60)
        assert "refused the bot's API key (HTTP 401)" in refused.text
        telegram.send("hello?", user=ALICE)
        await telegram.wait("sendMessage", since=since, count=2, timeout=60)
    finally:
        assert await bot.stop() == 0
    log = bot.text()
    assert "DEBUG" in log and "Calling Bot API endpoint" in log  # everything was logged,
    assert "network trouble talking to Telegram" in log
    assert "WARNING bot.assistant.turn: turn in" in log and "failed: auth" in log
    assert "[REDACTED]" in log  # the error paths too, whose lines held the secrets
    said = "\n".join(str(call.params) for call in telegram.calls)
    for secret in (TOKEN, KEY):
        for form in forms(secret):
            assert form not in log, f"{form!r} is in the log"
            assert form not in said, f"{form!r} was sent to Telegram"
    assert [r.headers["Authorization"] for r in llm.requests] == [f"Bearer {KEY}"] * 2


@pytest.mark.parametrize(
    ("document", "key"),
    [
        (f'[telegram]\ntoken = ["{TOKEN}"]\n', "telegram.token"),
        (f'[telegram]\ntoken = {{ token = "{TOKEN}" }}\n', "telegram.token"),
        (f'[llm]\napi_key = ["{KEY}"]\n', "llm.api_key"),
        (f"[llm]\napi_key = {TOKEN.split(':')[0]}\n", "llm.api_key"),
        (f'telegram = ["{TOKEN}"]\n', "telegram"),
        (f'llm = "{KEY}"\n', "llm"),
    ],
)
def test_a_config_mistake_never_prints_the_secret(tmp_path: Path, document: str, key: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(document)
    run = subprocess.run(
        [sys.executable, "-m", "bot", "--config", str(config)],
        cwd=tmp_path,
        env={**os.environ, "OPENAI_API_KEY": KEY},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2
    assert f"configuration error: {config}: {key} must be " in run.stderr
    for secret in (TOKEN, KEY):
        for form in [*forms(secret), TOKEN.split(":")[0]]:
            assert form not in run.stdout + run.stderr, f"{form!r} was printed"
