"""What goes wrong: Telegram's 429, 400 and 403, a failing disk, a hung handler, and secrets
in logs."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from bot_harness import ALICE, BOB, Bot, StartBot

from bench.fakes.telegram_server import TOKEN, FakeBotAPI
from bot.chat.inbox import Inbox
from bot.logs import REDACTED, SecretFilter
from memory import open_store

PARSE_ERROR = 'Bad Request: can\'t parse entities: Unsupported start tag "b" at byte offset 0'


async def test_a_429_is_retried_after_the_time_telegram_asks(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    telegram.fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
    [reply] = await bot.say("/start", user=ALICE)
    assert "Hi Alice" in reply.text
    limited, delivered = telegram.find("sendMessage", ok=None, chat_id=42)
    assert limited.status == 429 and delivered.ok
    assert limited.params["text"] == delivered.params["text"]


async def test_a_400_cant_parse_entities_falls_back_to_plain_text(
    bot: Bot, telegram: FakeBotAPI
) -> None:
    telegram.fail("sendMessage", 400, PARSE_ERROR, when=lambda p: p.get("parse_mode") == "HTML")
    [reply] = await bot.say("/remember <b>not bold</b> & co", user=ALICE)
    refused, plain = telegram.find("sendMessage", ok=None, chat_id=42)
    assert refused.status == 400 and "parse_mode" not in plain.params
    assert "<b>not bold</b> & co" in plain.params["text"]  # plain text, shown literally
    assert reply is plain
    assert len(bot.memories("users/42")) == 1


async def test_a_400_on_an_edit_falls_back_too(bot: Bot, telegram: FakeBotAPI) -> None:
    [stored] = await bot.say("/remember a & b", user=ALICE)
    [prompt] = await bot.say(f"/forget {stored.text.split('🆔 ')[-1]}", user=ALICE)
    telegram.fail("editMessageText", 400, PARSE_ERROR, when=lambda p: "parse_mode" in p)
    since = telegram.mark()
    await bot.press(prompt, prompt.buttons[0][1], user=ALICE)
    [edit] = await telegram.wait("editMessageText", since=since)
    assert "parse_mode" not in edit.params and "Forgotten: a & b" in edit.params["text"]


async def test_a_403_from_a_user_who_blocked_the_bot_is_logged_and_skipped(
    bot: Bot, telegram: FakeBotAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot")
    telegram.fail("sendMessage", 403, "Forbidden: bot was blocked by the user")
    [refused] = await bot.exchange("/start", user=ALICE)  # the sentinel /help gets through
    assert refused.status == 403  # and no apology was attempted after it
    assert "Telegram refused to deliver" in caplog.text


async def test_a_storage_failure_gets_an_apology_and_a_logged_traceback(
    start_bot: StartBot, telegram: FakeBotAPI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    not_a_folder = tmp_path / "data"
    not_a_folder.write_text("a file where the data directory should be")
    telegram.private_chat(BOB)  # the admin has started the bot
    async with start_bot(data_dir=not_a_folder, admin_user_ids=[43]) as bot:
        [reply] = await bot.say("/remember something", user=ALICE)
        assert "couldn't reach my storage, so nothing was saved" in reply.text
        assert "Traceback" not in reply.text
        [notice] = await telegram.wait("sendMessage", chat_id=43)
        assert "MemorySaveFailed" in notice.text
    failed = [r for r in caplog.records if r.getMessage().startswith("update ")]
    assert failed and failed[0].exc_info is not None


async def test_a_hung_handler_is_set_aside_at_the_deadline_and_the_chat_goes_on(
    start_bot: StartBot, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    """Its reply never gets an answer from Telegram: past ``handler_deadline_seconds`` the
    update is cancelled, set aside in the poison log, the admin told, and the chat's next
    message answered; a restart does not handle it again."""
    telegram.private_chat(BOB)  # the admin has started the bot

    def hangs(params: dict[str, Any]) -> bool:  # the reply only, not the admin's notice
        return params["chat_id"] == ALICE["id"] and "this one hangs" in params["text"]

    release = telegram.hold("sendMessage", when=hangs)
    try:
        async with start_bot(admin_user_ids=[BOB["id"]], handler_deadline_seconds=1) as bot:
            telegram.send("/remember this one hangs", user=ALICE)
            hung = telegram.updates[-1]["update_id"]
            [reply] = await bot.say("/remember the next one", user=ALICE)  # after the deadline
            assert "the next one" in reply.text
            [notice] = await telegram.wait("sendMessage", chat_id=BOB["id"], timeout=30)
            assert f"Update {hung} (chat {ALICE['id']})" in notice.text
            assert "handler deadline" in notice.text and "this one hangs" in notice.text
    finally:
        release.set()
    poison = tmp_path / "data" / ".bot" / "poison.jsonl"
    [kept] = [json.loads(line) for line in poison.read_text("utf-8").splitlines()]
    assert kept["update"]["update_id"] == hung and "handler deadline" in kept["reason"]
    with open_store(tmp_path / "data") as store:
        assert Inbox.of(store).open().again == []  # nothing left for the next start


def test_the_secret_filter_redacts_messages_arguments_and_tracebacks() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(SecretFilter([TOKEN, "sk-secret"]))
    logger = logging.getLogger("test.redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("HTTP Request: POST https://api.telegram.org/bot%s/getMe", TOKEN)
        logger.warning("encoded: %s", TOKEN.replace(":", "%3A"))
        try:
            raise RuntimeError(f"failed https://api.telegram.org/bot{TOKEN}/x key=sk-secret")
        except RuntimeError:
            logger.exception("boom")
    finally:
        logger.removeHandler(handler)
    output = stream.getvalue()
    assert TOKEN not in output and "sk-secret" not in output
    assert TOKEN.replace(":", "%3A") not in output
    assert output.count(REDACTED) >= 4
    assert "RuntimeError" in output
