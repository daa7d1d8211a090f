"""What only the PostgreSQL store has: its schema's migrations, its history table's retention,
and a largest id left in its rows (the rest of its behaviour: ``contract/``).
"""

from __future__ import annotations

import psycopg

from memory import open_store
from memory.pg.schema import MIGRATIONS


def test_a_database_of_the_first_schema_is_migrated_and_keeps_its_memories(pg_url: str) -> None:
    with psycopg.connect(pg_url) as connection:
        connection.execute(
            "CREATE TABLE memory_migrations ("
            " version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        connection.execute(MIGRATIONS[0])
        connection.execute("INSERT INTO memory_migrations (version) VALUES (1)")
        connection.execute(
            "INSERT INTO memory_namespaces (name, version, high_id) VALUES ('users/1', 1, 7)"
        )
        connection.execute(
            "INSERT INTO memories (namespace, id, seq, changed, content, tags, category,"
            " created_at, accessed_at, access_count) VALUES ('users/1', 7, nextval('memory_seq'),"
            " 1, 'old memory', '{a}', 'general', '2024-01-01T00:00:00.000Z',"
            " '2024-01-01T00:00:00.000Z', 2)"
        )
    with open_store(pg_url) as store:
        ns = store.namespace("users/1")
        old = ns.get(7)
        assert (old.content, old.tags, old.access_count, old.date) == (
            "old memory",
            ("a",),
            2,
            None,
        )
        new = ns.add("new", date="2024-02-02")
        assert ns.get(new.id).date == "2024-02-02"
        assert [r.op for r in ns.history().records] == ["add"]
    with psycopg.connect(pg_url) as connection:
        versions = [row[0] for row in connection.execute("SELECT version FROM memory_migrations")]
    assert sorted(versions) == list(range(1, len(MIGRATIONS) + 1))


def test_records_older_than_history_days_are_not_shown_and_trimmed(pg_url: str) -> None:
    with open_store(pg_url, history_days=1) as store:
        ns = store.namespace("users/1")
        memory = ns.add("old")
        with psycopg.connect(pg_url) as connection:
            connection.execute("UPDATE memory_history SET at = '2000-01-01T00:00:00.000Z'")
        assert ns.history().records == ()
        ns.update(memory.id, content="new")
        with psycopg.connect(pg_url) as connection:
            [(count,)] = connection.execute("SELECT count(*) FROM memory_history").fetchall()
        assert count == 1  # the old record went with the next write
        assert [r.op for r in ns.history().records] == ["update"]


def test_a_largest_id_left_in_the_database_does_not_stop_adds(pg_url: str) -> None:
    """What an import of id 2**63 - 1 left before imports renumbered such ids: its row, and
    the namespace's highest id naming it, also once the memory is deleted."""
    far = 2**63 - 1
    with open_store(pg_url) as store:
        store.namespace("users/1").add("before")
    with psycopg.connect(pg_url) as connection:
        connection.execute(
            "INSERT INTO memories (namespace, id, seq, changed, content, tags, category,"
            " created_at, accessed_at, access_count) VALUES ('users/1', %s,"
            " nextval('memory_seq'), 1, 'far', '{}', 'general', '2024-01-01T00:00:00.000Z',"
            " '2024-01-01T00:00:00.000Z', 0)",
            (far,),
        )
        connection.execute("UPDATE memory_namespaces SET high_id = %s", (far,))
    with open_store(pg_url) as store:
        ns = store.namespace("users/1")
        assert ns.get(far).content == "far"
        first = ns.add("one more")
        assert first.id < far
        ns.delete(far)
    with psycopg.connect(pg_url) as connection:
        connection.execute("UPDATE memory_namespaces SET high_id = %s", (far,))
    with open_store(pg_url) as store:
        ns = store.namespace("users/1")
        assert first.id < ns.add("after the restart").id < far
    with psycopg.connect(pg_url) as connection:
        [(high,)] = connection.execute("SELECT high_id FROM memory_namespaces").fetchall()
    assert high < far  # the recorded clock is back within reach
