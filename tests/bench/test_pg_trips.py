"""The round-trip counter (``bench.pg_trips``): a relay that counts the client's waits.

Its counts are what the replica benchmark reports and what ``tests/bot/test_replica_trips.py``
asserts, so they are checked here against what psycopg is known to send.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from bench.pg_server import Server
from bench.pg_trips import TripCounter, counting, kind_of


@pytest.fixture
def counter(pg_server: Server) -> Iterator[TripCounter]:
    with counting(pg_server.folder) as counter:
        yield counter


def since(counter: TripCounter, before: dict[str, int]) -> dict[str, int]:
    now = counter.counts()
    return {kind: n - before.get(kind, 0) for kind, n in now.items() if n != before.get(kind, 0)}


def test_each_wait_for_the_server_is_one_trip_named_for_what_it_did(
    pg_url: str, counter: TripCounter
) -> None:
    with psycopg.connect(counter.url(pg_url)) as connection:
        assert counter.counts()["connect"] == 1
        connection.execute("CREATE TABLE bot_updates (id int)")
        connection.commit()
        before = counter.counts()
        connection.execute("INSERT INTO bot_updates VALUES (1)")  # BEGIN, INSERT
        connection.commit()  # COMMIT
        assert since(counter, before) == {"queue": 3, "total": 3}

        connection.autocommit = True
        before = counter.counts()
        assert connection.execute("SELECT id FROM bot_updates").fetchall() == [(1,)]
        assert since(counter, before) == {"queue": 1, "total": 1}

        before = counter.counts()
        with connection.pipeline():  # sent together, answered at the sync: one wait
            connection.execute("BEGIN")
            connection.execute("INSERT INTO bot_updates VALUES (2)")
            rows = connection.execute("SELECT count(*) FROM bot_updates")
            connection.execute("COMMIT")
        assert rows.fetchone() == (2,)
        assert since(counter, before) == {"queue": 1, "total": 1}

        before = counter.counts()
        connection.execute("")  # psycopg_pool's check of a connection
        assert since(counter, before) == {"check": 1, "total": 1}


def test_statements_are_named_by_the_tables_they_touch() -> None:
    assert kind_of("UPDATE bot_lanes SET until = now()") == "queue"
    assert kind_of("SELECT n.version FROM memory_namespaces n") == "namespace"
    assert kind_of("SELECT value, version FROM documents WHERE scope = $1") == "documents"
    assert kind_of("SELECT pg_try_advisory_lock(hashtextextended($1, 0))") == "replica"
    assert kind_of("COMMIT") == kind_of("BEGIN") == kind_of("SET LOCAL x = 1") == ""
    assert kind_of("") == "check"
