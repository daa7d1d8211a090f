"""What each operation of the PostgreSQL store costs in round trips (issue 28), counted on the
wire (``bench.pg_trips``): a count is behaviour, not a timing.

A read is its catch-up with other processes, one statement; a write is one statement too, its
change sent conditional on the version held (``memory.pg.change``), and when another process
wrote first it is decided again under the lock: two more round trips; a touch and a document's
get or put are one each. Inside one view (``memory.views``: a handled update) only the first
read catches up, and none if the view started at the version held. Connections the pool opens
meanwhile (``connect``) are not the operation's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import psycopg

from bench.pg_server import Server
from bench.pg_trips import TripCounter, counting
from memory import open_store
from memory.views import one_view


def trips(counter: TripCounter, operation: Callable[[], Any]) -> dict[str, int]:
    """The round trips ``operation`` made, by kind (connections and the total left out)."""
    before = counter.counts()
    operation()
    after = counter.counts()
    return {
        kind: n - before[kind]
        for kind, n in after.items()
        if n != before[kind] and kind not in ("connect", "total")
    }


def test_a_read_is_one_round_trip_a_write_one(pg_server: Server, pg_url: str) -> None:
    with counting(pg_server.folder) as counter, open_store(counter.url(pg_url)) as store:
        namespace = store.namespace("users/1")
        namespace.add("the car is on level B2")  # loaded, and connections made
        other = store.namespace("users/2")
        other.add("a memory elsewhere")
        assert trips(counter, namespace.memories) == {"namespace": 1}
        assert trips(counter, lambda: namespace.add("the keys are in the drawer")) == {
            "namespace": 1
        }
        assert trips(counter, lambda: namespace.search("keys", touch=False)) == {"namespace": 1}
        assert trips(counter, lambda: namespace.search("keys")) == {"namespace": 2}  # a touch
        assert (
            trips(counter, lambda: namespace.update(namespace.memories()[0].id, tags="car"))[
                "namespace"
            ]
            == 2
        )  # the read that found the id, then the write
        assert trips(counter, lambda: namespace.delete(namespace.memories()[0].id)) == {
            "namespace": 2
        }
        assert trips(counter, lambda: namespace.add("the keys are in the drawer")) == {
            "namespace": 1  # a duplicate: decided from what is held, and checked stored
        }
        documents = namespace.documents()
        assert trips(counter, lambda: documents.put("settings", {"lang": "en"})) == {"documents": 1}
        assert trips(counter, lambda: documents.get("settings")) == {"documents": 1}


def test_what_another_process_wrote_still_rides_on_the_next_read(
    pg_server: Server, pg_url: str
) -> None:
    """The catch-up is the read's own statement: one round trip, and it brings the change."""
    with (
        counting(pg_server.folder) as counter,
        open_store(counter.url(pg_url)) as one,
        open_store(pg_url) as two,
    ):
        mine = one.namespace("users/3")
        mine.add("first")
        two.namespace("users/3").add("second, from another process")
        found: list[list[str]] = []
        assert trips(counter, lambda: found.append([m.content for m in mine.memories()])) == {
            "namespace": 1
        }
        assert found == [["first", "second, from another process"]]
        assert trips(counter, lambda: mine.add("third")) == {"namespace": 1}
        assert [m.content for m in two.namespace("users/3").memories()][-1] == "third"


def test_a_write_from_a_stale_state_is_not_stored_and_is_decided_again(
    pg_server: Server, pg_url: str
) -> None:
    """A write sent at the version held finds another process's write there first: nothing of
    it is stored, and it is decided again under the lock on what is stored (two more round
    trips): a new id after the other's, a duplicate found."""
    with (
        counting(pg_server.folder) as counter,
        open_store(counter.url(pg_url)) as one,
        open_store(pg_url) as two,
    ):
        mine, theirs = one.namespace("users/6"), two.namespace("users/6")
        mine.add("first")
        theirs.memories()
        far = theirs.add("the spare key is under the mat").id
        added: list[Any] = []
        assert trips(
            counter, lambda: added.append(mine.add_unique("The spare key is under the mat!"))
        ) == {"namespace": 3}
        assert added[0].duplicate and added[0].memory.id == far
        assert trips(counter, lambda: added.append(mine.add("second"))) == {"namespace": 1}
        assert added[1].id > far
        theirs.delete(far)
        assert trips(counter, lambda: added.append(mine.add("third"))) == {"namespace": 3}
        assert added[2].id > added[1].id
        assert [m.content for m in theirs.memories()] == ["first", "second", "third"]


def test_in_one_view_a_namespace_catches_up_once(pg_server: Server, pg_url: str) -> None:
    """A handled update's reads share its first read's catch-up (``memory.views``); its writes
    still lock and catch up, so what another process stored meanwhile is never written over."""
    with (
        counting(pg_server.folder) as counter,
        open_store(counter.url(pg_url)) as one,
        open_store(pg_url) as two,
    ):
        mine, theirs = one.namespace("users/4"), two.namespace("users/4")
        mine.add("the car is on level B2")
        with one_view():
            assert trips(counter, mine.count) == {"namespace": 1}
            theirs.add("the keys are in the drawer")  # another process, during the view
            assert trips(counter, lambda: mine.similar("keys in the drawer")) == {}
            assert trips(counter, lambda: mine.search("keys", touch=False)) == {}
            assert mine.count() == 1  # the view's snapshot
            added = mine.add_unique("The keys are in the drawer.")  # caught up under the lock
            assert added.duplicate
            assert trips(counter, mine.count) == {}
            assert mine.count() == 2
        theirs.add("a third, after the view")
        assert trips(counter, mine.count) == {"namespace": 1}  # no view: every read catches up
        assert mine.count() == 3


async def test_a_task_that_outlives_its_view_catches_up_again(
    pg_server: Server, pg_url: str
) -> None:
    with (
        counting(pg_server.folder) as counter,
        open_store(counter.url(pg_url)) as one,
        open_store(pg_url) as two,
    ):
        mine = one.namespace("users/5")
        mine.add("first")
        started, go_on = asyncio.Event(), asyncio.Event()

        async def later() -> int:
            mine.count()
            started.set()
            await go_on.wait()
            return mine.count()

        with one_view():
            task = asyncio.create_task(later())
            await started.wait()
        two.namespace("users/5").add("second, once the view is over")
        go_on.set()
        assert await task == 2


def stored_version(pg_url: str, name: str) -> int:
    """The namespace's version as the update queue's statement reads it (asked directly)."""
    with psycopg.connect(pg_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT version FROM memory_namespaces WHERE name = %s", (name,)
        ).fetchone()
    return int(row[0]) if row is not None else 0


def test_a_view_that_starts_at_the_version_held_asks_nothing_to_read(
    pg_server: Server, pg_url: str
) -> None:
    """A handled update's view starts at the versions the queue read as it started the update
    (``Delivery.versions``): a namespace held at that version reads with no round trip and
    writes with one; held at another, it catches up at its first read (or its write is
    decided under the lock: it is known stale), as ever."""
    with (
        counting(pg_server.folder) as counter,
        open_store(counter.url(pg_url)) as one,
        open_store(pg_url) as two,
    ):
        mine, theirs = one.namespace("users/7"), two.namespace("users/7")
        mine.add("first")
        with one_view({"users/7": stored_version(pg_url, "users/7")}):
            assert trips(counter, mine.count) == {}
            assert trips(counter, lambda: mine.search("first", touch=False)) == {}
            assert trips(counter, lambda: mine.add("second")) == {"namespace": 1}
            assert trips(counter, mine.count) == {}
            assert mine.count() == 2
        theirs.add("third, from another process")
        with one_view({"users/7": stored_version(pg_url, "users/7")}):
            assert trips(counter, mine.count) == {"namespace": 1}
            assert mine.count() == 3
        theirs.add("fourth, from another process")
        with one_view({"users/7": stored_version(pg_url, "users/7")}):
            assert trips(counter, lambda: mine.add("fifth")) == {"namespace": 2}
            assert trips(counter, mine.count) == {}
            assert mine.count() == 5
        # A namespace never written when the work started (version 0) has nothing to load.
        new = one.namespace("users/8")
        with one_view({"users/8": stored_version(pg_url, "users/8")}):
            assert trips(counter, new.count) == {}
            assert trips(counter, lambda: new.add("a first note")) == {"namespace": 1}
        assert [m.content for m in two.namespace("users/8").memories()] == ["a first note"]
