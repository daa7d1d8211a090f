"""Webhook mode: Telegram posts updates to the bot's own server (``bot.chat.webhook``).

The real Application serves a webhook on a free port of 127.0.0.1; the fake Bot API delivers to
it as Telegram does (``bench.fakes.telegram_webhook``: the secret header, one chat's updates in
order, a failed delivery retried); some requests are made by hand, as an attacker would.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import io
import json
import logging
import os
import resource
import shutil
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from bot_harness import ALICE, BOB, is_help

from bench.fakes.telegram_server import TOKEN, FakeBotAPI
from bot.chat.app import BotApplication, build_application
from bot.chat.connections import ConnectionLimits
from bot.chat.running import serving
from bot.chat.webhook import SECRET_HEADER, WebhookServer, inbox_server
from bot.config import Config, parse_config
from bot.errors import ConfigError
from memory.files import MemoryStore

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = ["message", "edited_message", "callback_query", "inline_query"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def webhook_config(
    telegram: FakeBotAPI, tmp_path: Path, environ: dict[str, str] | None = None, **keys: Any
) -> Config:
    port = free_port()
    document = {
        "data_dir": str(tmp_path / "data"),
        "telegram": {
            "token": TOKEN,
            "base_url": telegram.base_url,
            "flood_control": False,
            "webhook_url": f"http://127.0.0.1:{port}/hook",
            "listen": "127.0.0.1",
            "port": port,
            **keys,
        },
    }
    return parse_config(document, base_dir=tmp_path, environ=environ or {})


@dataclass
class Hook:
    """The bot serving its webhook, and a client to post to it by hand."""

    config: Config
    application: BotApplication
    server: WebhookServer
    http: aiohttp.ClientSession

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}{self.config.telegram.webhook_path}"

    @property
    def health_url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}/healthz/ready"

    async def post(self, body: bytes | dict[str, Any], secret: str | None = "") -> int:
        """POST ``body`` (``secret``: "" the right one, None no header); the status."""
        secret = self.config.telegram.webhook_secret if secret == "" else secret
        headers = {"Content-Type": "application/json"}
        if secret is not None:
            headers[SECRET_HEADER] = secret
        data = json.dumps(body).encode() if isinstance(body, dict) else body
        async with self.http.post(self.url, data=io.BytesIO(data), headers=headers) as response:
            return response.status

    async def health(self, path: str = "/healthz/ready") -> tuple[int, dict[str, Any]]:
        async with self.http.get(f"http://127.0.0.1:{self.server.port}{path}") as response:
            return response.status, await response.json()


@asynccontextmanager
async def serving_webhook(config: Config) -> AsyncIterator[Hook]:
    application = build_application(config, MemoryStore(config.data_dir), None, jobs=False)
    server = inbox_server(application)
    async with aiohttp.ClientSession() as http, serving(application, webhook=server):
        yield Hook(config, application, server, http)


def message_update(update_id: int, text: str, user: dict[str, Any]) -> dict[str, Any]:
    """An update as Telegram would post it: ``text`` from ``user`` in their private chat."""
    message: dict[str, Any] = {
        "message_id": update_id,
        "date": int(time.time()),
        "chat": {"id": user["id"], "type": "private", "first_name": user["first_name"]},
        "from": user,
        "text": text,
    }
    if text.startswith("/"):
        message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
    return {"update_id": update_id, "message": message}


def send(telegram: FakeBotAPI, text: str, user: dict[str, Any]) -> int:
    """``user`` sends ``text``; the update's id."""
    telegram.send(text, user=user)
    return int(telegram.updates[-1]["update_id"])


def remembered(telegram: FakeBotAPI, chat_id: int, since: int = 0) -> list[str]:
    """The memories the bot confirmed in a chat, in order."""
    return [
        call.text.split("\n")[1]
        for call in telegram.find("sendMessage", since=since, chat_id=chat_id)
        if call.text.startswith("✅ Remembered.")
    ]


def stored(data_dir: Path, namespace: str) -> list[str]:
    with MemoryStore(data_dir) as store:
        return [m.content for m in store.namespace(namespace).memories()]


async def sentinel(telegram: FakeBotAPI, user: dict[str, Any]) -> None:
    """/help from ``user``, answered: every earlier update of their chat is handled."""
    since = telegram.mark()
    telegram.send("/help", user=user)
    await telegram.wait("sendMessage", since=since, chat_id=user["id"], where=is_help)


# -- the bot by webhook --------------------------------------------------------------------


async def test_updates_arrive_by_webhook_and_each_chat_is_answered_in_order(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    config = webhook_config(telegram, tmp_path)
    # Alice's first reply hangs (a slow network): Bob is answered meanwhile, Alice after, in order.
    release = telegram.hold("sendMessage", when=lambda p: "note 0 of Alice" in p["text"])
    async with serving_webhook(config):
        [registered] = telegram.find("setWebhook")
        assert registered.params["url"] == config.telegram.webhook_endpoint
        assert registered.params["secret_token"] == config.telegram.webhook_secret
        assert registered.params["allowed_updates"] == ALLOWED
        assert registered.params["max_connections"] == 40
        assert registered.params.get("drop_pending_updates") in (None, False)
        for n in range(5):
            for who in (ALICE, BOB):
                telegram.send(f"/remember note {n} of {who['first_name']}", user=who)
        await telegram.wait("sendMessage", count=5, chat_id=BOB["id"])
        assert remembered(telegram, ALICE["id"]) == []  # waiting behind its first reply
        release.set()
        await telegram.wait("sendMessage", count=5, chat_id=ALICE["id"])
        for who in (ALICE, BOB):
            expected = [f"note {n} of {who['first_name']}" for n in range(5)]
            assert remembered(telegram, who["id"]) == expected
    assert telegram.webhook_url == config.telegram.webhook_endpoint  # never deleted on stop
    assert not telegram.find("deleteWebhook")
    assert [d.status for d in telegram.deliveries] == [200] * 10  # each posted once
    assert stored(config.data_dir, "users/42") == [f"note {n} of Alice" for n in range(5)]


async def test_the_secret_from_the_environment_is_the_one_telegram_is_given(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    secret = "Env_secret-0123456789"
    config = webhook_config(telegram, tmp_path, environ={"TELEGRAM_WEBHOOK_SECRET": secret})
    assert config.telegram.webhook_secret == secret and secret in config.secrets()
    async with serving_webhook(config) as hook:
        [registered] = telegram.find("setWebhook")
        assert registered.params["secret_token"] == secret
        telegram.send("/remember the env secret works", user=ALICE)
        await telegram.wait("sendMessage", chat_id=ALICE["id"])
        assert await hook.post(message_update(900, "/remember derived", ALICE), secret=None) == 403
    assert stored(config.data_dir, "users/42") == ["the env secret works"]


async def test_a_request_without_the_right_secret_is_refused_and_nothing_is_handled(
    telegram: FakeBotAPI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    wrong = "not-the-secret-but-close"
    async with serving_webhook(webhook_config(telegram, tmp_path)) as hook:
        telegram.private_chat(ALICE)
        assert await hook.post(message_update(900, "/remember forged", ALICE), secret=None) == 403
        assert await hook.post(message_update(901, "/remember forged", ALICE), secret=wrong) == 403
        assert await hook.post(message_update(902, "/remember forged", ALICE), secret="é") == 403
        await sentinel(telegram, ALICE)
        assert remembered(telegram, ALICE["id"]) == []
    assert stored(tmp_path / "data", "users/42") == []
    refusals = [r for r in caplog.records if "secret token" in r.getMessage()]
    assert len(refusals) == 1  # at most one line a minute
    assert wrong not in caplog.text and hook.config.telegram.webhook_secret not in caplog.text


async def test_malformed_and_oversized_bodies_are_refused_and_the_bot_goes_on(
    telegram: FakeBotAPI, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with serving_webhook(webhook_config(telegram, tmp_path)) as hook:
        for body in (
            b"not json",
            b"\xff\xfe",
            b"[1, 2]",
            b"[" * 100_000 + b"]" * 100_000,  # nested past any parser's stack
            {"update_id": "7"},
            {"update_id": True},
            {"update_id": -1},
            {"update_id": 2**64},
            {"no": "update_id"},
            {"update_id": 7, "message": "not a message"},  # python-telegram-bot cannot read it
            {"update_id": 8, "message": {"chat": 5}},
        ):
            assert await hook.post(body) == 400, body[:20]
        assert await hook.post(b'{"update_id": 9, "pad": "' + b"x" * (2 << 20) + b'"}') == 413
        async with hook.http.get(hook.url) as response:
            assert response.status == 405
        async with hook.http.post(hook.url + "/else", data=b"{}") as response:
            assert response.status == 404
        telegram.send("/remember still serving", user=ALICE)
        await telegram.wait("sendMessage", chat_id=ALICE["id"])
    assert stored(tmp_path / "data", "users/42") == ["still serving"]
    inbox = (tmp_path / "data" / ".bot" / "inbox.jsonl").read_text("utf-8")
    assert '"update_id": 7' not in inbox and '"update_id": 8' not in inbox
    assert "refused a webhook request" in caplog.text


async def test_an_update_delivered_twice_is_handled_once(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    async with serving_webhook(webhook_config(telegram, tmp_path)) as hook:
        telegram.lose_answers(1)  # the bot's 200 never reaches Telegram: it posts it again
        update_id = send(telegram, "/remember only once", ALICE)
        attempts = await telegram.wait_delivered(update_id)
        assert [(a.status, a.lost) for a in attempts] == [(200, True), (200, False)]
        assert await hook.post(message_update(update_id, "/remember only once", ALICE)) == 200
        await sentinel(telegram, ALICE)
    assert remembered(telegram, ALICE["id"]) == ["only once"]
    assert stored(tmp_path / "data", "users/42") == ["only once"]


async def test_a_failing_server_is_retried_until_it_accepts(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    config = webhook_config(telegram, tmp_path)
    update_id = send(telegram, "/remember sent while the bot was down", ALICE)
    await telegram._api_setWebhook(
        {"url": config.telegram.webhook_endpoint, "secret_token": config.telegram.webhook_secret},
        {},
    )
    while not telegram.deliveries:  # nobody listens yet: connection refused
        await asyncio.sleep(0.01)
    info = await telegram._api_getWebhookInfo({}, {})
    assert info["pending_update_count"] == 1 and info["last_error_message"]
    async with serving_webhook(config):
        attempts = await telegram.wait_delivered(update_id)
        await telegram.wait("sendMessage", chat_id=ALICE["id"])
    assert attempts[0].status is None and attempts[-1].status == 200
    assert stored(config.data_dir, "users/42") == ["sent while the bot was down"]


async def test_healthz_live_says_it_serves_and_ready_whether_it_can_store(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    config = webhook_config(telegram, tmp_path)
    # Before the bot is ready: the server up (live), the Application not started (not ready).
    application = build_application(config, MemoryStore(config.data_dir), None, jobs=False)
    async with inbox_server(application) as early, aiohttp.ClientSession() as http:
        for path, status, answer in (
            ("/healthz/live", 200, {"ok": True}),
            ("/healthz/ready", 503, {"ok": False, "reason": "the bot is not running"}),
            ("/healthz", 503, {"ok": False, "reason": "the bot is not running"}),
        ):
            async with http.get(f"http://127.0.0.1:{early.port}{path}") as response:
                assert (response.status, await response.json()) == (status, answer), path
    async with serving_webhook(config) as hook:
        assert await hook.health() == (200, {"ok": True})
        shutil.rmtree(config.data_dir)  # the volume gone
        status, answer = await hook.health()
        assert status == 503 and answer["ok"] is False and "store" in answer["reason"]
        assert str(config.data_dir) not in answer["reason"]  # the log has the detail
        assert await hook.health("/healthz/live") == (200, {"ok": True})  # it still serves
        config.data_dir.mkdir()
        assert await hook.health() == (200, {"ok": True})
        async with hook.http.post(hook.health_url) as response:
            assert response.status == 405


# -- python -m bot in webhook mode -----------------------------------------------------------


def write_webhook_config(path: Path, telegram: FakeBotAPI, port: int) -> Path:
    path.write_text(
        f'data_dir = "{path.parent / "data"}"\nlog_level = "debug"\n'
        '[embedding]\nprovider = "off"\n'
        f'[telegram]\nbase_url = "{telegram.base_url}"\nflood_control = false\n'
        f'webhook_url = "http://127.0.0.1:{port}/hook"\nlisten = "127.0.0.1"\nport = {port}\n'
    )
    return path


async def start_process(
    config: Path, log: Path, secret: str, *, open_files: int | None = None
) -> asyncio.subprocess.Process:
    """``python -m bot``; ``open_files``: its RLIMIT_NOFILE (else this process's)."""
    env = {**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": secret}

    def limit_open_files() -> None:
        if open_files is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (open_files, open_files))

    with log.open("ab") as out:
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
            preexec_fn=limit_open_files,
        )


SECRET = "process-secret_42"


async def test_python_m_bot_serves_a_webhook_and_stops_cleanly_on_sigterm(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    port = free_port()
    config = write_webhook_config(tmp_path / "config.toml", telegram, port)
    log = tmp_path / "bot.log"
    process = await start_process(config, log, SECRET)
    try:
        telegram.send("/remember served by webhook", user=ALICE)
        [reply] = await telegram.wait("sendMessage", chat_id=ALICE["id"], timeout=60)
        assert "Remembered" in reply.text
        async with (
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{port}/healthz") as response,
        ):
            assert response.status == 200
    finally:
        process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.wait(), 60)
    text = log.read_text("utf-8")
    assert code == 0, text
    assert "webhook mode" in text and f"listening on 127.0.0.1:{port}" in text
    assert SECRET not in text and TOKEN.split(":")[1] not in text
    [registered] = telegram.find("setWebhook")
    assert registered.params["secret_token"] == SECRET
    assert not telegram.find("deleteWebhook")
    assert stored(tmp_path / "data", "users/42") == ["served by webhook"]


async def test_a_port_in_use_is_a_message_not_a_traceback(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        config = write_webhook_config(tmp_path / "config.toml", telegram, port)
        log = tmp_path / "bot.log"
        process = await start_process(config, log, SECRET)
        code = await asyncio.wait_for(process.wait(), 60)
    text = log.read_text("utf-8")
    assert code == 1, text
    assert f"Cannot listen on 127.0.0.1:{port} for the webhook" in text
    assert "Traceback" not in text
    assert not telegram.find("setWebhook")


@pytest.mark.slow
async def test_updates_accepted_and_not_handled_before_a_sigkill_are_handled_after_it(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    port = free_port()
    config = write_webhook_config(tmp_path / "config.toml", telegram, port)
    log = tmp_path / "bot.log"
    notes = [f"note {n}" for n in range(1, 5)]
    # The reply to note 1 hangs: notes 2-4 are accepted (200) and wait behind it in the chat.
    release = telegram.hold("sendMessage", when=lambda p: "note 1" in p["text"])
    ids = [send(telegram, f"/remember {note}", ALICE) for note in notes]
    process = await start_process(config, log, SECRET)
    for update_id in ids:
        await telegram.wait_delivered(update_id, timeout=60)
    process.send_signal(signal.SIGKILL)
    await process.wait()
    assert remembered(telegram, ALICE["id"]) == []  # none answered: the first one hangs
    release.set()
    # The dead process's held call is recorded as it is let go (its client is gone): before
    # the mark, so that only the restarted process's replies are counted after it.
    with contextlib.suppress(AssertionError):
        await telegram.wait("sendMessage", ok=None, where=lambda c: "note 1" in c.text, timeout=5)

    restart = telegram.mark()
    process = await start_process(config, log, SECRET)
    try:
        await telegram.wait("sendMessage", count=4, since=restart, chat_id=42, timeout=60)
    finally:
        process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.wait(), 60)
    assert code == 0, log.read_text("utf-8")
    assert remembered(telegram, ALICE["id"], since=restart) == notes  # from the inbox, in order
    for update_id in ids:  # Telegram posted none of them again: the restart found them on disk
        assert [d.status for d in telegram.delivered(update_id)] == [200]
    assert stored(tmp_path / "data", "users/42") == notes  # each once


@pytest.mark.slow
async def test_connections_that_send_half_a_request_leave_room_for_telegram_and_the_store(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    # Issue 23: 1,124 such connections against the usual 1,024 file descriptors starved the bot
    # (updates and /healthz timed out, the store failed, 125 MB of tracebacks in 50 s). Scaled
    # down: a limit of 256, twice as many connections, of four kinds.
    open_files = 256
    port = free_port()
    config = write_webhook_config(tmp_path / "config.toml", telegram, port)
    log = tmp_path / "bot.log"
    process = await start_process(config, log, SECRET, open_files=open_files)
    half_requests = [
        b"",  # connects, sends nothing
        b"POST /hook HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\n",
        b'POST /hook HTTP/1.1\r\nHost: bot\r\nContent-Length: 100000\r\n\r\n{"update_id": 1',
        b"GET /healthz HTTP/1.1\r\nHost: bot\r\nContent-Length: 100000\r\n\r\nxx",
    ]

    async def attack(n: int) -> asyncio.StreamWriter | None:
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
        except (OSError, TimeoutError):  # the bot's backlog full: that is the old failure
            return None
        writer.write(half_requests[n % len(half_requests)])
        return writer

    writers: list[asyncio.StreamWriter | None] = []
    try:
        telegram.send("/remember before the flood", user=ALICE)
        await telegram.wait("sendMessage", chat_id=ALICE["id"], timeout=60)
        writers = list(await asyncio.gather(*(attack(n) for n in range(2 * open_files))))
        async with (
            aiohttp.ClientSession() as http,
            asyncio.timeout(10),
            http.get(f"http://127.0.0.1:{port}/healthz") as response,
        ):
            assert response.status == 200
        since = telegram.mark()
        telegram.send("/remember during the flood", user=ALICE)
        [reply] = await telegram.wait("sendMessage", since=since, chat_id=ALICE["id"], timeout=30)
        assert "Remembered" in reply.text
    finally:
        for writer in writers:
            if writer is not None:
                writer.close()
        process.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(process.wait(), 60)
    text = log.read_text("utf-8")
    assert code == 0, text[-5000:]
    assert "Too many open files" not in text and "Traceback" not in text
    assert "reached its 128 open connections" in text  # half the limit, logged
    assert len(text) < 100_000  # a line a minute, not one per refused accept
    assert stored(tmp_path / "data", "users/42") == ["before the flood", "during the flood"]


# -- the server's connections: deadlines, limits, its name --------------------------------------


@dataclass
class Plain:
    """A webhook server alone (no bot): what it accepted, and its health to answer."""

    server: WebhookServer
    accepted: list[dict[str, Any]]
    reason: list[str | None]  # health() answers reason[0]

    @property
    def secret(self) -> str:
        return self.server.settings.webhook_secret


@asynccontextmanager
async def plain_server(limits: ConnectionLimits | None = None) -> AsyncIterator[Plain]:
    port = free_port()
    settings = config_of(
        token=TOKEN, webhook_url=f"http://127.0.0.1:{port}/hook", listen="127.0.0.1", port=port
    ).telegram
    plain = Plain(None, [], [None])  # type: ignore[arg-type]

    async def accept(update: dict[str, Any]) -> None:
        if update.get("fail"):
            raise RuntimeError("the store refused it")
        plain.accepted.append(update)

    async def health() -> str | None:
        return plain.reason[0]

    given = {} if limits is None else {"limits": limits}
    async with WebhookServer(settings, accept=accept, health=health, **given) as server:
        plain.server = server
        yield plain


async def exchange(port: int, request: bytes) -> bytes:
    """``request`` as raw bytes; everything the server sent until it closed (at most 30 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        async with asyncio.timeout(30):
            return await reader.read()
    finally:
        writer.close()


def post(secret: str | None, body: bytes) -> bytes:
    """A POST of ``body`` to /hook, raw, asking the server to close after its answer."""
    header = "" if secret is None else f"{SECRET_HEADER}: {secret}\r\n"
    return (
        f"POST /hook HTTP/1.1\r\nHost: bot\r\nConnection: close\r\n{header}"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def trickled(port: int, first: bytes, slowly: bytes) -> bytes:
    """``first`` at once, then ``slowly`` a byte every 50 ms; what the server answered before
    it closed the connection (b"" when it closed without an answer; at most 30 s)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def drip() -> None:
        with contextlib.suppress(ConnectionError):
            writer.write(first)
            for n in range(len(slowly)):
                writer.write(slowly[n : n + 1])
                await writer.drain()
                await asyncio.sleep(0.05)

    dripping = asyncio.create_task(drip())
    answer = b""
    try:
        async with asyncio.timeout(30):
            while chunk := await reader.read(65536):
                answer += chunk
    except ConnectionResetError:
        # A server that closes with our bytes unread resets the connection: what it answered
        # before is kept (read()'s buffer would be lost with the error).
        pass
    finally:
        dripping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await dripping
        writer.close()
    return answer


async def test_a_request_trickled_slowly_or_never_sent_is_cut_at_its_deadline() -> None:
    limits = ConnectionLimits(read_timeout=0.5, idle_timeout=1.0)
    async with plain_server(limits) as plain:
        port, request = (
            plain.server.port,
            post(plain.secret, json.dumps(message_update(7, "/remember slowly", ALICE)).encode()),
        )
        head, body = request.split(b"\r\n\r\n", 1)
        answers = await asyncio.gather(
            trickled(port, b"", head),  # the headers, a byte at a time: 7 s at that pace
            trickled(port, head + b"\r\n\r\n", body),  # the body so: 15 s
            trickled(port, b"", b""),  # nothing at all
            trickled(port, request.replace(b"Connection: close", b"X-Keep: alive"), b""),
        )
        assert answers[0] == answers[2] == b""  # closed without an answer
        assert answers[1].startswith(b"HTTP/1.1 408 ")
        assert answers[3].startswith(b"HTTP/1.1 200 ")  # then closed once idle
        assert [u["update_id"] for u in plain.accepted] == [7]  # the one sent whole
        assert (await exchange(port, request)).startswith(b"HTTP/1.1 200 ")


async def test_every_answer_names_the_server_cogito_and_no_versions() -> None:
    async with plain_server() as plain:
        port, secret = plain.server.port, plain.secret
        update = json.dumps(message_update(9, "hi", ALICE)).encode()
        requests = {
            200: post(secret, update),
            403: post(None, update),
            400: post(secret, b"not json"),
            413: post(secret, b"x" * (2 << 20)),
            500: post(secret, json.dumps({"update_id": 10, "fail": True}).encode()),
            405: b"GET /hook HTTP/1.1\r\nHost: bot\r\nConnection: close\r\n\r\n",
            404: b"GET /else HTTP/1.1\r\nHost: bot\r\nConnection: close\r\n\r\n",
        }
        answers = {status: await exchange(port, raw) for status, raw in requests.items()}
        answers[0] = await exchange(port, b"NOT HTTP AT ALL\r\n\r\n")  # aiohttp's own 400
        health = b"GET /healthz HTTP/1.1\r\nHost: bot\r\nConnection: close\r\n\r\n"
        answers[1] = await exchange(port, health)
        plain.reason[0] = "the store cannot be reached"
        answers[2] = await exchange(port, health)
    for key, answer in answers.items():
        status = {0: 400, 1: 200, 2: 503}.get(key, key)
        head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1")
        assert head.split(" ")[1] == str(status), (key, head)
        assert "\r\nServer: cogito\r\n" in head, head
        assert "aiohttp" not in head.lower() and "python" not in head.lower(), head


async def test_accepts_refused_for_want_of_file_descriptors_are_one_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    async with plain_server() as plain:
        port = plain.server.port
        waiting = []  # connected by the kernel, not yet accepted: no loop turn in between
        for _ in range(20):
            client = socket.socket()
            client.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                client.connect(("127.0.0.1", port))
            waiting.append(client)
        taken = {int(fd) for fd in os.listdir("/proc/self/fd")}
        lowest_free = min(n for n in range(len(taken) + 1) if n not in taken)
        resource.setrlimit(resource.RLIMIT_NOFILE, (lowest_free, hard))  # no descriptor left
        try:
            await asyncio.sleep(0.3)  # the server tries to accept them, again and again
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        await asyncio.sleep(1.5)  # asyncio retries after a second: accepted now
        for client in waiting:
            client.close()
        health = b"GET /healthz HTTP/1.1\r\nHost: bot\r\nConnection: close\r\n\r\n"
        assert (await exchange(port, health)).startswith(b"HTTP/1.1 200 ")
    ours = [r for r in caplog.records if "could not accept" in r.getMessage()]
    assert 1 <= len(ours) <= 2  # the first at once, the rest at the end (here: the stop)
    assert "Too many open files" in ours[0].getMessage()
    assert not [r for r in caplog.records if r.name == "asyncio"]  # no traceback per attempt


# -- the fake Bot API's webhook side ------------------------------------------------------------


async def test_the_fake_refuses_get_updates_while_a_webhook_is_set(telegram: FakeBotAPI) -> None:
    api = f"{telegram.base_url}{TOKEN}"
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{api}/setWebhook", json={"url": "https://example.com/x"}) as r:
            assert (await r.json())["result"] is True
        async with http.post(f"{api}/getUpdates", json={}) as r:
            assert r.status == 409 and "Conflict" in (await r.json())["description"]
        async with http.post(f"{api}/getWebhookInfo", json={}) as r:
            assert (await r.json())["result"]["url"] == "https://example.com/x"
        async with http.post(f"{api}/deleteWebhook", json={}) as r:
            assert r.status == 200
        async with http.post(f"{api}/getUpdates", json={}) as r:
            assert r.status == 200


# -- configuration ---------------------------------------------------------------------------


def config_of(environ: dict[str, str] | None = None, **telegram: Any) -> Config:
    return parse_config({"telegram": telegram}, base_dir=Path("."), environ=environ or {})


def test_polling_is_the_default_and_the_webhook_keys_have_theirs() -> None:
    telegram = config_of().telegram
    assert not telegram.webhook and telegram.webhook_url == ""
    assert (telegram.listen, telegram.port, telegram.max_connections) == ("0.0.0.0", 8443, 40)


def test_the_webhook_path_comes_from_the_url() -> None:
    with_path = config_of(webhook_url="https://bot.example.com/tg/hook").telegram
    assert with_path.webhook_path == "/tg/hook"
    assert with_path.webhook_endpoint == "https://bot.example.com/tg/hook"
    for bare in ("https://bot.example.com", "https://bot.example.com/"):
        telegram = config_of(webhook_url=bare).telegram
        assert telegram.webhook_path == "/telegram"
        assert telegram.webhook_endpoint == "https://bot.example.com/telegram"


def test_the_derived_secret_is_the_same_for_the_same_token_and_never_logged() -> None:
    first = config_of(token="1:abc", webhook_url="https://bot.example.com/hook")
    again = config_of(token="1:abc").telegram.webhook_secret
    other = config_of(token="2:xyz").telegram.webhook_secret
    expected = hmac.new(b"1:abc", b"cogito-webhook", hashlib.sha256).hexdigest()[:64]
    assert first.telegram.webhook_secret == again == expected != other
    assert expected in first.secrets()


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("http://bot.example.com/hook", "must be https://"),
        ("ftp://bot.example.com/hook", "must be an https:// URL"),
        ("https:///hook", "must be an https:// URL"),
        ("bot.example.com/hook", "must be an https:// URL"),
        ("https://bot.example.com:9000/hook", "ports Telegram posts to"),
        ("https://bot.example.com:99999/hook", "is not a URL"),
        ("https://bot.example.com/hook#x", "no #fragment"),
        ("https://user:pw@bot.example.com/hook", "no user name or password"),
        ("https://bot.example.com/healthz", "/healthz"),
        ("https://bot.example.com/healthz/ready", "/healthz"),
    ],
)
def test_a_webhook_url_telegram_cannot_post_to_is_refused(url: str, problem: str) -> None:
    with pytest.raises(ConfigError) as caught:
        config_of(webhook_url=url)
    assert caught.value.key == "telegram.webhook_url"
    assert problem in caught.value.message


def test_loopback_http_and_a_self_hosted_servers_ports_are_accepted() -> None:
    for url in ("http://127.0.0.1:8080/hook", "http://localhost:1234/x", "http://[::1]:5/x"):
        assert config_of(webhook_url=url).telegram.webhook
    own = config_of(base_url="http://127.0.0.1:8081/bot", webhook_url="https://h.example:9000/x")
    assert own.telegram.webhook_path == "/x"


@pytest.mark.parametrize("secret", ["has space", "ünï", "x" * 257, "semi;colon"])
def test_a_secret_token_telegram_refuses_is_a_clear_error_without_the_value(secret: str) -> None:
    with pytest.raises(ConfigError) as from_file:
        config_of(secret_token=secret)
    with pytest.raises(ConfigError) as from_environment:
        config_of({"TELEGRAM_WEBHOOK_SECRET": secret})
    for error in (from_file.value, from_environment.value):
        assert error.key == "telegram.secret_token"
        assert "1 to 256 characters" in error.message and secret not in error.message


@pytest.mark.parametrize("key", ["port", "max_connections"])
def test_ports_and_connections_out_of_range_are_refused(key: str) -> None:
    for value in (0, 100_000):
        with pytest.raises(ConfigError) as caught:
            config_of(**{key: value})
        assert caught.value.key == f"telegram.{key}"
