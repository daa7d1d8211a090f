"""Two bot processes on one store: what each keeps beside the memories, the other keeps too.

A second process (or replica) is a second store object on the same data directory; here each
is a real process started with ``spawn``, running the bot's own functions (``append_history``,
``add_usage``, ``ChangeFile``, ``MessageIds``, ``Digest``, ``set_waiting``) at the same time as
the others.
"""

from __future__ import annotations

import multiprocessing
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from bot.assistant.changes import ChangeFile, Proposal, ReminderProposal
from bot.assistant.dialogue import add_usage, append_history, load_history, read_usage
from bot.assistant.reminder_desk import set_waiting
from bot.chat.console import MessageIds
from bot.core import reminders
from bot.core.due import Repeat
from bot.core.policy import Actor, Caller
from bot.core.when import resolve
from memory import open_store
from memory.model import Memory

WORKERS = 3  # processes, the test's own included
ROUNDS = 25
NS = "chats/-100"


def _turns(data_dir: str, worker: int) -> list[str]:
    """What one bot process does per turn in ``NS``: history, usage, a change waiting for
    confirmation, and a memory added (its record in the history of memories)."""
    tokens = []
    with open_store(data_dir) as store:
        documents = store.documents(NS)
        book = ChangeFile(documents)
        for turn in range(ROUNDS):
            append_history(documents, [("user", f"w{worker} t{turn}")], keep=10_000)
            add_usage(documents, requests=1, prompt_tokens=10, completion_tokens=worker)
            memory = Memory(id=worker * 1000 + turn + 1, content=f"w{worker} t{turn}")  # ids > 0
            tokens.append(book.keep_pending([Proposal("delete", memory)]))
            store.namespace(NS).add(f"w{worker} t{turn}")
    return tokens


def _ids(data_dir: str, block: int) -> list[int]:
    with open_store(data_dir) as store:
        ids = MessageIds(store.bot_documents(), block=block)
        return [ids.take() for _ in range(ROUNDS * block)]


def _in_processes(target: object, data_dir: Path, args: list[tuple[object, ...]]) -> list[object]:
    context = multiprocessing.get_context("spawn")
    with context.Pool(len(args)) as pool:
        return list(pool.starmap(target, [(str(data_dir), *a) for a in args]))  # type: ignore[arg-type]


def test_turns_in_several_processes_at_once_lose_no_history_usage_or_undo(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    tokens = _in_processes(_turns, data_dir, [(worker,) for worker in range(WORKERS)])

    with open_store(data_dir) as store:
        documents = store.documents(NS)
        said = [entry["content"] for entry in load_history(documents)]
        assert sorted(said) == sorted(f"w{w} t{t}" for w in range(WORKERS) for t in range(ROUNDS))
        for worker in range(WORKERS):  # each process's own messages in its order
            own = [text for text in said if text.startswith(f"w{worker} ")]
            assert own == [f"w{worker} t{t}" for t in range(ROUNDS)]
        usage = read_usage(documents)
        assert (usage.turns, usage.requests) == (WORKERS * ROUNDS, WORKERS * ROUNDS)
        assert usage.completion_tokens == ROUNDS * sum(range(WORKERS))
        book = ChangeFile(documents)
        kept = [token for worker_tokens in tokens for token in worker_tokens]  # type: ignore[attr-defined]
        newest = [book.pending(token) for token in kept]
        assert sum(1 for found in newest if found is not None) == min(len(kept), 20)  # MAX_PENDING
        added = [r.after.content for r in store.namespace(NS).history().records if r.after]
        assert sorted(added) == sorted(f"w{w} t{t}" for w in range(WORKERS) for t in range(ROUNDS))
    assert (data_dir / NS / "history.json").exists() and (data_dir / NS / "usage.json").exists()


def test_consoles_in_several_processes_never_share_a_message_id(tmp_path: Path) -> None:
    drawn = _in_processes(_ids, tmp_path / "data", [(4,)] * WORKERS)
    every = [i for ids in drawn for i in ids]  # type: ignore[attr-defined]
    assert len(every) == len(set(every)) == WORKERS * ROUNDS * 4


REMINDERS = 12  # waiting reminders of one turn, applied in every process at once


def _apply_reminders(data_dir: str, token: str) -> list[str]:
    """What Apply all does with a turn's waiting reminders, read before any process has
    rewritten the record: the ids of the reminders it set."""
    with open_store(data_dir) as store:
        waiting = ChangeFile(store.documents(NS)).pending(token)
        assert waiting is not None
        proposals = [p for p in waiting if isinstance(p, ReminderProposal)]
        done = set_waiting(store, ALICE, proposals, START)
        return [reminder.id for _, reminder in done.made]


ALICE = Caller(Actor("user", 42, "Alice"), NS, shared=True)
START = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_waiting_reminders_applied_in_several_processes_at_once_are_set_once(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    zone = ZoneInfo("Asia/Shanghai")
    proposals = [
        ReminderProposal(
            f"pill {n}",
            resolve(zone, START, local=f"{n:02d}:00", repeat=Repeat("daily")),
            "en",
            -100,
            ALICE.actor,
            f"telegram:-100:7:42:t{n + 4}",
        )
        for n in range(REMINDERS)
    ]
    with open_store(data_dir) as store:
        token = ChangeFile(store.documents(NS)).keep_pending(proposals)
    drawn = _in_processes(_apply_reminders, data_dir, [(token,)] * WORKERS)
    with open_store(data_dir) as store:
        found = reminders.every(store, NS)
    assert sorted(r.text for r in found) == sorted(p.text for p in proposals)
    assert all(sorted(ids) == sorted(r.id for r in found) for ids in drawn)  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", ["files", "postgres"])
def test_two_processes_pressing_one_apply_all_at_once_take_each_change_once(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Two presses of one Apply all, in two processes (two stores on one location): the
    second press decides what to take while the first one's take lands. Each change is taken
    once: by the first press, or, if the first left it waiting (a member may not make it), by
    the second (an administrator)."""
    location = str(tmp_path / "data") if backend == "files" else request.getfixturevalue("pg_url")
    with open_store(location) as first, open_store(location) as second:
        mine, theirs = Memory(1, "the member's memory"), Memory(2, "another member's memory")
        token = ChangeFile(first.documents(NS)).keep_pending(
            [Proposal("delete", mine), Proposal("delete", theirs)]
        )
        taken_first: list[list[int]] = []

        def ids(proposals: list[Proposal] | None) -> list[int]:
            return [p.id for p in proposals or []]

        def admin_sorts(proposals: list[Proposal]) -> list[Proposal]:
            if not taken_first:  # the member's press lands while the admin's is deciding
                member_leaves = [p for p in proposals if p.id != mine.id]
                member = ChangeFile(second.documents(NS))
                taken_first.append(ids(member.take_pending(token, lambda _: member_leaves)))
            return []  # an administrator may make every change there is

        taken_second = ChangeFile(first.documents(NS)).take_pending(token, admin_sorts)
        assert taken_first == [[mine.id, theirs.id]]
        assert ids(taken_second) == [theirs.id]  # only what the member left waiting
        assert ChangeFile(first.documents(NS)).pending(token) is None
        assert ChangeFile(second.documents(NS)).take_pending(token, lambda _: []) is None
