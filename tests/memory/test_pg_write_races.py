"""Two processes writing one namespace at the same moment, on the session's real PostgreSQL.

A write is sent in one statement, conditional on the version its process holds
(``memory.pg.change``); of two sent at once from one version, one is stored, and the other
finds the version moved: nothing of it is stored, its process catches up and runs its block
again under the lock, on what is stored (``memory.pg.backend``). Each "process" is a store of
its own (its own connections, what it holds), reached through a round-trip counter of its own,
so that the test sees which one lost: the winner spent one round trip, the loser three (its
write, then the lock with the catch-up, then its change with the commit).

The race is made exact rather than hoped for: a third session holds the namespace's row
locked while both writes are sent, and lets go once both wait for it; both were decided from
the same version, and neither has been stored. The invariants hold whichever wins.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from typing import Any

import psycopg
import pytest

from bench.pg_server import Server
from bench.pg_trips import TripCounter, counting
from memory import MemoryNamespace, open_store
from memory.history import Author, acting, undo

NS = "users/9"


class Process:
    """A store of its own on the test's database, its round trips counted apart."""

    def __init__(self, counter: TripCounter, ns: MemoryNamespace) -> None:
        self.counter, self.ns = counter, ns

    def trips(self) -> int:
        return self.counter.counts()["namespace"]


@pytest.fixture
def processes(pg_server: Server, pg_url: str) -> Iterator[tuple[Process, Process]]:
    with ExitStack() as stack:
        made = []
        for _ in range(2):
            counter = stack.enter_context(counting(pg_server.folder))
            store = stack.enter_context(open_store(counter.url(pg_url)))
            made.append(Process(counter, store.namespace(NS)))
        yield made[0], made[1]


LOCK_ROW = "SELECT 1 FROM memory_namespaces WHERE name = %s FOR UPDATE"
# A namespace never written has no row to lock: the blocker inserts it, and rolls back.
MAKE_ROW = "INSERT INTO memory_namespaces (name) VALUES (%s)"


def race(pg_url: str, *writes: Callable[[], Any], hold: str = LOCK_ROW) -> list[Any]:
    """Run ``writes`` at once, each in a thread, sent while another session holds the
    namespace's row (``hold``), let go once every one of them waits for it; what each
    returned."""
    with psycopg.connect(pg_url) as blocker, ThreadPoolExecutor(len(writes)) as pool:
        blocker.execute(hold, (NS,))
        futures = [pool.submit(write) for write in writes]
        deadline = time.monotonic() + 30
        while waiting(pg_url) < len(writes):
            assert time.monotonic() < deadline, "the writes never waited for the row"
            assert not any(f.done() for f in futures), [f.result() for f in futures if f.done()]
            time.sleep(0.01)
        if hold == MAKE_ROW:
            blocker.rollback()
        else:
            blocker.commit()
        return [future.result(timeout=30) for future in futures]


def waiting(pg_url: str) -> int:
    """How many sessions of the test's database wait for a lock."""
    with psycopg.connect(pg_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    assert row is not None
    return int(row[0])


def spent(processes: tuple[Process, Process], write: Callable[[], Any]) -> list[int]:
    """Each process's round trips to its namespace during ``write``."""
    before = [p.trips() for p in processes]
    write()
    return [p.trips() - b for p, b in zip(processes, before, strict=True)]


def test_two_adds_at_once_both_stored_the_loser_s_id_decided_again_after_the_winner_s(
    pg_url: str, processes: tuple[Process, Process]
) -> None:
    one, two = processes
    one.ns.add("first")
    two.ns.memories()  # both hold the version "first" made
    added: list[Any] = []
    trips = spent(
        processes,
        lambda: added.extend(
            race(pg_url, lambda: one.ns.add("one's"), lambda: two.ns.add("two's"))
        ),
    )
    assert sorted(trips) == [1, 3]  # one write stored as sent; the other decided again
    winner, loser = (added[0], added[1]) if trips[0] == 1 else (added[1], added[0])
    assert loser.id > winner.id  # its id chosen again, after the winner's
    stored = one.ns.memories()
    assert [m.content for m in stored] == ["first", winner.content, loser.content]
    assert [m.id for m in stored] == sorted(m.id for m in stored)
    assert [m.content for m in two.ns.memories()] == [m.content for m in stored]


def test_the_first_two_writes_of_a_namespace_at_once_make_it_once(
    pg_url: str, processes: tuple[Process, Process]
) -> None:
    """Both hold the namespace as never written (version 0): both would create its row; one
    does, the other finds it made and decides again."""
    one, two = processes
    assert one.ns.memories() == two.ns.memories() == []
    added: list[Any] = []
    trips = spent(
        processes,
        lambda: added.extend(
            race(
                pg_url,
                lambda: one.ns.add_unique("the wifi password is pinecone42"),
                lambda: two.ns.add_unique("The wifi password is pinecone42"),
                hold=MAKE_ROW,
            )
        ),
    )
    assert sorted(trips) == [1, 3]
    assert added[0].memory == added[1].memory
    assert sorted(a.duplicate for a in added) == [False, True]
    assert len(one.ns.memories()) == len(two.ns.memories()) == 1


def test_the_same_message_added_by_two_at_once_is_stored_once(
    pg_url: str, processes: tuple[Process, Process]
) -> None:
    one, two = processes
    one.ns.add("first")
    two.ns.memories()
    added: list[Any] = []
    trips = spent(
        processes,
        lambda: added.extend(
            race(
                pg_url,
                lambda: one.ns.add_unique("The parking spot is B-12"),
                lambda: two.ns.add_unique("the parking spot is b-12."),
            )
        ),
    )
    assert sorted(trips) == [1, 3]
    assert added[0].memory.id == added[1].memory.id
    assert sorted(a.duplicate for a in added) == [False, True]  # the loser found the winner's
    assert [m.content for m in one.ns.memories()][1:] == [added[0].memory.content]
    assert len(two.ns.history().records) == 2  # "first" and one add: the loser wrote nothing


def test_an_import_racing_an_add_stores_each_content_once(
    pg_url: str, processes: tuple[Process, Process]
) -> None:
    one, two = processes
    one.ns.add("first")
    two.ns.memories()
    records = [
        {"id": 1_700_000_000_000, "content": "The boiler code is 4411", "tags": ["home"]},
        {"id": 1_700_000_000_001, "content": "Only the import says this"},
    ]
    imported, added = race(
        pg_url,
        lambda: one.ns.import_memories(records),
        lambda: two.ns.add_unique("the boiler code is 4411"),
    )
    contents = [m.content.lower() for m in one.ns.memories()]
    assert sorted(contents) == sorted(
        ["first", "the boiler code is 4411", "only the import says this"]
    )
    assert imported == (1 if not added.duplicate else 2)  # whoever came second skipped it


def test_an_undo_racing_an_edit_of_its_memory_never_writes_over_the_edit(
    pg_url: str, processes: tuple[Process, Process]
) -> None:
    one, two = processes
    with acting(Author("user:9", "/remember", change="add00000")):
        memory = one.ns.add("the gate code is 1234")
    with acting(Author("user:9", "/edit", change="edit0000")):
        one.ns.update(memory.id, content="the gate code is 5678")
    history = one.ns.history()
    two.ns.memories()

    def undo_edit() -> Any:
        with acting(Author("user:9", "/undo")):
            return undo(one.ns, history, "edit0000")

    def edit_again() -> Any:
        with acting(Author("user:9", "/edit", change="edit0001")):
            return two.ns.update(memory.id, content="the gate code is 9999")

    done, _ = race(pg_url, undo_edit, edit_again)
    final = one.ns.get(memory.id).content
    # Either order, the later edit stands: the undo went first (and the edit came after it,
    # decided again on the undone memory), or the edit did (and the undo left it be).
    assert final == "the gate code is 9999"
    ops = [r.op for r in two.ns.history().records]
    if done.reverted:
        assert ops == ["add", "update", "restore", "update"]
        assert not done.left
    else:
        assert ops == ["add", "update", "update", "keep"]
        assert len(done.left) == 1
