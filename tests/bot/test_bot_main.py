"""``python -m bot`` as a user runs it: no token, a bad config, the console, a real polling run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from bot_harness import ALICE

from bench.fakes.telegram_server import TOKEN, FakeBotAPI
from memory.files import MemoryStore


def run_bot(*args: str, cwd: Path, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        input=stdin,
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_without_a_token_it_explains_how_to_get_one(tmp_path: Path) -> None:
    run = run_bot(cwd=tmp_path)
    assert run.returncode == 2
    assert "@BotFather" in run.stderr and "/newbot" in run.stderr
    assert "TELEGRAM_BOT_TOKEN" in run.stderr
    assert "python -m bot console" in run.stderr


def test_a_config_error_names_the_key(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[telegram]\ntokn = "123:abc"\n')
    run = run_bot(cwd=tmp_path)
    assert run.returncode == 2
    assert "unknown key telegram.tokn" in run.stderr
    (tmp_path / "config.toml").write_text('[telegram]\ngroup_scope = "everyone"\n')
    run = run_bot(cwd=tmp_path)
    assert 'telegram.group_scope must be "chat" or "user" or "topic"' in run.stderr


def test_the_console_talks_like_telegram_on_the_same_data_dir(tmp_path: Path) -> None:
    session = "\n".join(
        [
            "/remember work: standup at 10:00 #meeting",
            "/remember a <b> & c",
            "/recall standup",
            "/press 1",  # ⋯ under the answer: its menu
            "/press 1",  # 🗑 Forget in the menu
            "1",  # Delete
            "/list",
            "/press 9",
            "",
        ]
    )
    run = run_bot("console", cwd=tmp_path, stdin=session, LANG="en_US.UTF-8")
    assert run.returncode == 0, run.stderr
    out = run.stdout
    assert "✅ Remembered.\nstandup at 10:00 #meeting\n🏷 #meeting · 📁 work" in out
    assert "a <b> & c" in out and "&amp;" not in out  # plain text, entities decoded
    assert "  [1] ⋯" in out and "  [1] 🗑 Forget\n  [2] 🔗 Related\n  [3] 🕘 History" in out
    assert "Forget this memory?" in out and "  [1] 🗑 Delete\n  [2] Keep" in out
    assert "(edited) 🗑 Forgotten: standup at 10:00 #meeting" in out
    assert "page 1 of 1 (total: 1)" in out
    assert "(there is no such button)" in out
    assert "you are user 1" in run.stderr
    [record] = json.loads((tmp_path / "data" / "users" / "1" / "memory.json").read_text("utf-8"))
    assert record["content"] == "a <b> & c"


def test_the_console_speaks_chinese_and_takes_a_user_id(tmp_path: Path) -> None:
    run = run_bot("console", "--user-id", "7", "--lang", "zh", cwd=tmp_path, stdin="/recall\n")
    assert run.returncode == 0, run.stderr
    assert "还没有记忆" in run.stdout


def stored(data_dir: Path, namespace: str) -> list[str]:
    with MemoryStore(data_dir) as store:
        return [m.content for m in store.namespace(namespace).memories()]


def test_every_console_session_stores_every_message(tmp_path: Path) -> None:
    # What Telegram delivered in the same private chat before: its first message, id 1.
    with MemoryStore(tmp_path / "data") as store:
        store.namespace("users/1").add("from telegram", source="telegram:1:1:1")
    for session in range(3):
        lines = [f"/remember session {session} note {n}" for n in range(3)]
        run = run_bot("console", cwd=tmp_path, stdin="\n".join(lines) + "\n", LANG="en")
        assert run.returncode == 0, run.stderr
        for n in range(3):
            assert f"✅ Remembered.\nsession {session} note {n}" in run.stdout
    expected = [f"session {s} note {n}" for s in range(3) for n in range(3)]
    assert stored(tmp_path / "data", "users/1") == ["from telegram", *expected]


async def test_two_consoles_at_once_on_one_data_dir_store_everything(tmp_path: Path) -> None:
    async def console() -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "console",
            cwd=tmp_path,
            env={**os.environ, "LANG": "en"},
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )

    first, second = await console(), await console()
    for n in range(5):  # taking turns, each waiting for its reply
        for name, process in (("first", first), ("second", second)):
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(f"/remember {name} console note {n}\n".encode())
            await process.stdin.drain()
            reply = await asyncio.wait_for(process.stdout.readuntil(b"\n\n"), 60)
            assert f"{name} console note {n}" in reply.decode()
    for process in (first, second):
        assert process.stdin is not None
        process.stdin.close()
        _, err = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode == 0, err.decode()
    notes = stored(tmp_path / "data", "users/1")
    assert sorted(notes) == sorted(
        f"{c} console note {n}" for c in ("first", "second") for n in range(5)
    )


async def test_python_m_bot_polls_and_never_logs_the_token(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    (tmp_path / "config.toml").write_text(
        f'log_level = "debug"\n[telegram]\nbase_url = "{telegram.base_url}"\n'
        "allowed_user_ids = [42]\n"
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        cwd=tmp_path,
        env={**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        telegram.send("/remember started from the command line", user=ALICE)
        [reply] = await telegram.wait("sendMessage", chat_id=42, timeout=60)
        assert "Remembered" in reply.text
    finally:
        process.send_signal(signal.SIGINT)
        out, err = await process.communicate()
    logs = (out + err).decode()
    assert process.returncode == 0, logs
    assert "Calling Bot API endpoint `sendMessage`" in logs  # debug logging was on
    assert TOKEN not in logs and TOKEN.split(":")[1] not in logs
    memories = json.loads((tmp_path / "data" / "users" / "42" / "memory.json").read_text("utf-8"))
    assert [m["content"] for m in memories] == ["started from the command line"]


async def test_a_token_telegram_refuses_is_explained(telegram: FakeBotAPI, tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(f'[telegram]\nbase_url = "{telegram.base_url}"\n')
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        cwd=tmp_path,
        env={**os.environ, "TELEGRAM_BOT_TOKEN": "42:not-the-token"},
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 2
    assert "Telegram refused the bot token" in err.decode()
    assert "not-the-token" not in err.decode()


async def test_a_second_bot_on_the_same_data_dir_is_refused_and_the_first_carries_on(
    telegram: FakeBotAPI, tmp_path: Path
) -> None:
    # A careless second start (another terminal, a second service): its inbox replay would
    # handle the first bot's updates again. It is refused, saying which process holds the data.
    (tmp_path / "config.toml").write_text(
        f'[telegram]\nbase_url = "{telegram.base_url}"\nallowed_user_ids = [42]\n'
    )

    async def bot(stdout: int | None = None) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            cwd=tmp_path,
            env={**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN},
            stdout=stdout,
            stderr=asyncio.subprocess.PIPE,
        )

    first = await bot(asyncio.subprocess.PIPE)
    try:
        telegram.send("/remember the first bot runs", user=ALICE)
        [reply] = await telegram.wait("sendMessage", chat_id=42, timeout=60)
        assert "Remembered" in reply.text
        second = await bot()
        _, err = await asyncio.wait_for(second.communicate(), 60)
        assert second.returncode == 1
        assert f"another bot process (pid {first.pid}" in err.decode(), err.decode()
        telegram.send("/remember still the first", user=ALICE)
        replies = await telegram.wait("sendMessage", chat_id=42, count=2, timeout=60)
        assert "Remembered" in replies[-1].text
    finally:
        first.send_signal(signal.SIGINT)
        out, err = await first.communicate()
    assert first.returncode == 0, (out + err).decode()
    memories = json.loads((tmp_path / "data" / "users" / "42" / "memory.json").read_text("utf-8"))
    assert [m["content"] for m in memories] == ["the first bot runs", "still the first"]
