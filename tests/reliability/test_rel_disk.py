"""Disk: a data directory that is read-only, or full. Nothing may claim to be saved that is not,
the bot keeps answering, and when the disk is back, writes work again.

The data directory is a small tmpfs mounted by the test (as root, here and in CI); where
mounting is not allowed the tests are skipped with the reason.
"""

from __future__ import annotations

import errno
import logging
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from rel_harness import config_for, contents, running, snapshot, user

from bench.fakes.telegram_server import Call, FakeBotAPI
from memory.errors import MemorySaveFailed
from memory.files import MemoryStore

ALICE = user(42)
BOB = user(43)
LI = user(44, "zh-hans")
NOT_SAVED = {"en": "so nothing was saved", "zh": "所以没有保存"}
SAVED = ("✅ Remembered.", "✅ 记住了。")


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs of its own, unmounted afterwards."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = _run("mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(folder))
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        if _run("umount", str(folder)).returncode != 0:
            _run("umount", "-l", str(folder))


def remount(folder: Path, mode: str) -> None:
    done = _run("mount", "-o", f"remount,{mode}", str(folder))
    assert done.returncode == 0, done.stderr


def fill(folder: Path) -> Path:
    """Use up every free page of the file system; the filler file is returned."""
    filler = folder / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler


async def say(telegram: FakeBotAPI, text: str, who: dict[str, object]) -> Call:
    since = telegram.mark()
    telegram.send(text, user=who)
    [reply] = await telegram.wait("sendMessage", since=since, chat_id=who["id"])
    return reply


def assert_not_saved(reply: Call, language: str = "en") -> None:
    assert NOT_SAVED[language] in reply.text
    assert not reply.text.startswith(SAVED)
    assert "Traceback" not in reply.text and "MemorySaveFailed" not in reply.text


async def test_a_read_only_data_dir_refuses_writes_and_keeps_answering(
    disk: Path, telegram: FakeBotAPI, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = disk / "data"
    with MemoryStore(data_dir) as store:
        key = store.namespace("users/42").add("the spare key is under the mat", ["key"])
    remount(disk, "ro")
    async with running(config_for(telegram, data_dir)):
        found = await say(telegram, "/recall spare key", ALICE)
        assert "the spare key is under the mat" in found.text

        assert_not_saved(await say(telegram, "/remember buy milk", ALICE))
        assert_not_saved(await say(telegram, "/remember 买牛奶", LI), "zh")
        prompt = await say(telegram, f"/forget {key.id}", ALICE)
        since = telegram.mark()
        telegram.press(prompt.result, prompt.buttons[0][1], user=ALICE)  # Delete
        [alert] = await telegram.wait("answerCallbackQuery", since=since)
        assert alert.params["show_alert"] is True and "went wrong" in alert.params["text"]
        assert not telegram.find("editMessageText", since=since)  # no "Forgotten"

        found = await say(telegram, "/recall spare key", ALICE)  # still serving
        assert "the spare key is under the mat" in found.text

        remount(disk, "rw")
        assert (await say(telegram, "/remember buy milk", ALICE)).text.startswith(SAVED)
        assert (await say(telegram, "/remember 买牛奶", LI)).text.startswith(SAVED)
    assert contents(data_dir, "users/42") == ["the spare key is under the mat", "buy milk"]
    assert contents(data_dir, "users/44") == ["买牛奶"]
    assert [r["content"] for r in snapshot(data_dir, "users/42") or []] == [
        "the spare key is under the mat",
        "buy milk",
    ]
    failures = [r for r in caplog.records if r.exc_info and r.exc_info[0] is MemorySaveFailed]
    assert len(failures) == 3  # two adds, one delete: each logged with its traceback


async def test_a_full_disk_refuses_writes_and_recovers_when_space_returns(
    disk: Path, telegram: FakeBotAPI, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    data_dir = disk / "data"
    async with running(config_for(telegram, data_dir)):
        assert (await say(telegram, "/remember before the disk filled up", ALICE)).text.startswith(
            SAVED
        )
        filler = fill(disk)
        # Longer than what is left of the journal's last page: it needs a new one.
        long = "a full disk cannot take this " * 130
        assert_not_saved(await say(telegram, f"/remember {long}", ALICE))
        assert_not_saved(await say(telegram, "/remember a first memory", BOB))  # a new file
        assert_not_saved(await say(telegram, "/remember 磁盘满了", LI), "zh")
        found = await say(telegram, "/recall disk", ALICE)
        assert "before the disk filled up" in found.text  # still serving

        filler.unlink()
        assert (await say(telegram, "/remember after the disk was freed", ALICE)).text.startswith(
            SAVED
        )
        assert (await say(telegram, "/remember a first memory", BOB)).text.startswith(SAVED)
        listed = await say(telegram, "/list", ALICE)
        assert "after the disk was freed" in listed.text and "cannot take" not in listed.text
    assert contents(data_dir, "users/42") == [
        "before the disk filled up",
        "after the disk was freed",
    ]
    assert contents(data_dir, "users/43") == ["a first memory"]
    assert contents(data_dir, "users/44") == []
    records = snapshot(data_dir, "users/42")
    assert records is not None and len(records) == 2
    assert "the inbox" in caplog.text and "can be written again" in caplog.text
