"""The inbox: what a restart finds in it after the ways a process can end.

``Inbox`` on its own, through its file: a new ``Inbox`` on the same folder is a new process,
and one dropped without ``close`` is a process that died (nothing of it runs after its last
write). ``test_rel_crash`` runs ``python -m bot`` and kills it the same ways.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from bot.chat.inbox import ALONE_AFTER, COMPACT_LINES, MAX_TRIES, Inbox
from memory import open_store


def update(update_id: int) -> dict[str, Any]:
    return {"update_id": update_id, "message": {"message_id": update_id, "text": f"m{update_id}"}}


def opened(data_dir: Path) -> Inbox:
    """The inbox of the store at ``data_dir`` (its files in ``data_dir/.bot/``)."""
    return Inbox.of(open_store(data_dir))


def restart(folder: Path) -> tuple[Inbox, list[int]]:
    """A new process opening the inbox: it and the ids it hands back for handling."""
    inbox = opened(folder)
    return inbox, [pending.update_id for pending in inbox.open().again]


def tries(folder: Path) -> tuple[Inbox, dict[int, int]]:
    """A new process opening the inbox: it and the tries of the updates it hands back."""
    inbox = opened(folder)
    return inbox, {pending.update_id: pending.tries for pending in inbox.open().again}


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


def test_an_update_that_kills_the_process_every_time_is_set_aside_and_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    inbox, _ = restart(tmp_path)
    inbox.receive(update(7))
    inbox.receive(update(8))
    for _ in range(MAX_TRIES):
        inbox, replay = restart(tmp_path)
        assert replay == [7, 8]
        inbox.start(7)  # handling 7... and the process dies (8 never started)
    inbox = opened(tmp_path)
    recovered = inbox.open()
    assert [p.update_id for p in recovered.set_aside] == [7]
    assert [(p.update_id, p.tries) for p in recovered.again] == [(8, 0)]
    assert inbox.knows(7)  # Telegram delivering it again is recognised, and dropped
    [kept] = [
        json.loads(line) for line in (tmp_path / ".bot" / "poison.jsonl").read_text().splitlines()
    ]
    assert kept["update"] == update(7) and kept["tries"] == MAX_TRIES
    assert f"update 7 was being handled during {MAX_TRIES} crashes; set aside" in caplog.text
    inbox.done(8)
    inbox, replay = restart(tmp_path)  # set aside once: not handled, not set aside again
    assert replay == [] and (tmp_path / ".bot" / "poison.jsonl").read_text().count("\n") == 1


def test_restarts_during_a_backlog_count_tries_only_for_what_was_in_progress(
    tmp_path: Path,
) -> None:
    """The loss of issue 11: every start counted a try against every pending update, and after
    three starts the whole backlog was dropped, although Telegram never sends it again."""
    inbox, _ = restart(tmp_path)
    for number in range(1, 101):
        inbox.receive(update(number))
    handled = 0
    for _ in range(10):  # ten SIGKILLs, each while two updates (two chats) are in progress
        inbox, counted = tries(tmp_path)
        assert sorted(counted) == list(range(handled + 1, 101))  # nothing dropped
        assert all(n == 0 for i, n in counted.items() if i > handled + 2)  # the waiting ones
        inbox.done(handled + 1)
        inbox.done(handled + 2)
        handled += 2
        inbox.start(handled + 1)
        inbox.start(handled + 2)
    inbox, counted = tries(tmp_path)
    assert counted[handled + 1] == counted[handled + 2] == 1
    assert sum(counted.values()) == 2 and len(counted) == 100 - handled


def test_a_clean_stop_counts_no_try(tmp_path: Path) -> None:
    inbox, _ = restart(tmp_path)
    for number in (1, 2, 3):
        inbox.receive(update(number))
    for _ in range(MAX_TRIES + 1):  # SIGTERM, each time while 1 and 2 were being handled
        inbox, counted = tries(tmp_path)
        assert counted == {1: 0, 2: 0, 3: 0}
        inbox.start(1)
        inbox.start(2)
        inbox.close()
    assert not (tmp_path / ".bot" / "poison.jsonl").exists()


def test_a_compaction_while_running_keeps_what_is_in_progress(tmp_path: Path) -> None:
    inbox, _ = restart(tmp_path)
    inbox.receive(update(1))
    inbox.start(1)  # a slow one, in progress while many others come and go
    for number in range(2, COMPACT_LINES // 2 + 3):
        inbox.receive(update(number))
        inbox.done(number)
    assert len((tmp_path / ".bot" / "inbox.jsonl").read_bytes().splitlines()) < COMPACT_LINES // 2
    inbox, counted = tries(tmp_path)  # killed now: 1 was in progress
    assert counted == {1: 1}


def test_an_update_in_progress_during_repeated_crashes_is_marked_to_run_alone(
    tmp_path: Path,
) -> None:
    """Several chats at once: the innocent update in progress beside the culprit gets its tries
    too, until it is handled alone (``InboxQueue.replay``), where a crash is the culprit's."""
    inbox, _ = restart(tmp_path)
    inbox.receive(update(1))  # chat A: kills the process
    inbox.receive(update(2))  # chat B: innocent, in progress at the same time
    for _ in range(ALONE_AFTER):
        inbox, _ = restart(tmp_path)
        inbox.start(1)
        inbox.start(2)
    for _ in range(MAX_TRIES - ALONE_AFTER):  # alone, in update order: 1 runs, 2 waits
        inbox, counted = tries(tmp_path)
        assert all(n >= ALONE_AFTER for n in counted.values())
        inbox.start(1)
    inbox = opened(tmp_path)
    recovered = inbox.open()
    assert [p.update_id for p in recovered.set_aside] == [1]
    assert [(p.update_id, p.tries) for p in recovered.again] == [(2, ALONE_AFTER)]


def test_a_poison_file_that_cannot_be_written_keeps_the_update_in_the_inbox(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    inbox, _ = restart(tmp_path)
    inbox.receive(update(5))
    for _ in range(MAX_TRIES):
        inbox, _ = restart(tmp_path)
        inbox.start(5)
    (tmp_path / ".bot" / "poison.jsonl").mkdir()  # not a file: the append fails
    inbox = opened(tmp_path)
    recovered = inbox.open()
    assert recovered.again == [] and recovered.set_aside == []  # not handled, not forgotten
    assert "could not set update 5 aside" in caplog.text
    (tmp_path / ".bot" / "poison.jsonl").rmdir()
    inbox = opened(tmp_path)
    assert [p.update_id for p in inbox.open().set_aside] == [5]


def test_a_line_cut_short_by_a_crash_costs_nothing_else(tmp_path: Path) -> None:
    inbox, _ = restart(tmp_path)
    inbox.receive(update(1))
    inbox.receive(update(2))
    inbox.close()
    with (tmp_path / ".bot" / "inbox.jsonl").open("ab") as f:
        f.write(b'{"update": {"update_id": 3, "mess')  # the append in progress at the kill
    inbox, replay = restart(tmp_path)
    assert replay == [1, 2]
    inbox.receive(update(4))
    inbox, replay = restart(tmp_path)
    assert replay == [1, 2, 4]


def test_a_disk_that_refuses_is_logged_once_and_the_bot_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bot.chat.inbox")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the inbox's folder should be")
    inbox, replay = restart(blocker)
    assert replay == []
    for number in range(1, 4):
        inbox.receive(update(number))  # not durable, but not an error either
        inbox.done(number)
    assert caplog.text.count("handled without the inbox") == 1
    assert inbox.knows(3)  # in memory, a second delivery is still recognised
