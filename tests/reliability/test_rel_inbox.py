"""The inbox on its own: what a restart finds in it after the ways a process can end."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from bot.inbox import MAX_TRIES, Inbox


def update(update_id: int) -> dict[str, Any]:
    return {"update_id": update_id, "message": {"message_id": update_id, "text": f"m{update_id}"}}


def restart(folder: Path) -> tuple[Inbox, list[int]]:
    """A new process opening the inbox: it and the ids it hands back for handling."""
    inbox = Inbox(folder)
    return inbox, [u["update_id"] for u in inbox.open()]


def test_what_was_received_and_not_handled_comes_back_once_in_order(tmp_path: Path) -> None:
    inbox, replay = restart(tmp_path)
    assert replay == []
    for number in (3, 1, 2, 4):
        inbox.receive(update(number))
    inbox.done(1)
    inbox.done(3)
    # killed here: no close
    inbox, replay = restart(tmp_path)
    assert replay == [2, 4]
    assert inbox.knows(1) and inbox.knows(2) and not inbox.knows(5)
    inbox.done(2)
    inbox.done(4)
    inbox.close()
    inbox, replay = restart(tmp_path)
    assert replay == [] and all(inbox.knows(n) for n in (1, 2, 3, 4))


def test_an_update_that_kills_the_process_every_time_is_given_up(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    inbox, _ = restart(tmp_path)
    inbox.receive(update(7))
    for _ in range(MAX_TRIES):
        inbox, replay = restart(tmp_path)
        assert replay == [7]  # handled again... and the process dies again
    inbox, replay = restart(tmp_path)
    assert replay == [] and inbox.knows(7)
    assert "update 7 was being handled during 3 crashes in a row; dropped" in caplog.text


def test_a_line_cut_short_by_a_crash_costs_nothing_else(tmp_path: Path) -> None:
    inbox, _ = restart(tmp_path)
    inbox.receive(update(1))
    inbox.receive(update(2))
    inbox.close()
    with (tmp_path / "inbox.jsonl").open("ab") as f:
        f.write(b'{"update": {"update_id": 3, "mess')  # the append in progress at the kill
    inbox, replay = restart(tmp_path)
    assert replay == [1, 2]
    inbox.receive(update(4))
    inbox, replay = restart(tmp_path)
    assert replay == [1, 2, 4]


def test_a_disk_that_refuses_is_logged_once_and_the_bot_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.inbox")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the inbox's folder should be")
    inbox, replay = restart(blocker)
    assert replay == []
    for number in range(1, 4):
        inbox.receive(update(number))  # not durable, but not an error either
        inbox.done(number)
    assert caplog.text.count("handled without the inbox") == 1
    assert inbox.knows(3)  # in memory, a second delivery is still recognised
