"""Main's store interface on both backends: the same calls give the same answers.

Each test runs on files and on PostgreSQL (``BACKENDS``), through ``open_store`` only: the new
memory fields, add_unique and similar, touch, related's weights, the change history with undo
and its retention, and search by meaning (with ``test_hybrid.Concepts``, a small embedder).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from backends import BACKENDS
from test_hybrid import Concepts

from memory import Store, open_store
from memory.history import Author, acting, undo
from memory.pg.schema import MIGRATIONS

PHOTO = {"kind": "photo", "file_id": "AgAC-1", "file_unique_id": "u1"}
Opener = Callable[..., Store]


@pytest.fixture(params=BACKENDS)
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens the test's store (files in ``tmp_path``, or a fresh database) with options;
    every store it opened is closed at the end."""
    if request.param == "files":
        location = str(tmp_path / "data")
    else:
        location = request.getfixturevalue("pg_url")
    opened: list[Store] = []

    def open_it(**options: Any) -> Store:
        store = open_store(location, **options)
        opened.append(store)
        return store

    yield open_it
    for store in opened:
        store.close()


def test_date_attachment_and_origin_are_kept_across_a_reopen(opener: Opener) -> None:
    store = opener()
    ns = store.namespace("users/1")
    memory = ns.add(
        "📷 photo", date="2024-05-01 09:30", attachment=PHOTO, origin={"from": "Ann", "chat": -5}
    )
    store.close()
    again = opener().namespace("users/1").get(memory.id)
    assert again == memory
    assert (again.date, dict(again.attachment or {}), dict(again.origin or {})) == (
        "2024-05-01 09:30",
        PHOTO,
        {"from": "Ann", "chat": -5},
    )


def test_add_unique_similar_and_import_skip_duplicates(opener: Opener) -> None:
    ns = opener().namespace("users/1")
    first = ns.add_unique("Code is in D:\\projects")
    same = ns.add_unique("  code IS in d:\\projects!! ")
    assert not first.duplicate and same.duplicate and same.memory.id == first.memory.id
    photo = ns.add_unique("📷 photo", attachment=PHOTO)
    other = ns.add_unique("📷 photo", attachment={**PHOTO, "file_unique_id": "u2"})
    resent = ns.add_unique("📷 photo", attachment={**PHOTO, "file_id": "AgAC-1-resent"})
    assert not other.duplicate and resent.duplicate and resent.memory.id == photo.memory.id
    near = ns.similar("code is in D:\\projects")
    assert [(n.memory.id, n.reason) for n in near][:1] == [(first.memory.id, "same")]
    records = [{"id": 5, "content": "CODE is in d:\\projects"}, {"id": 6, "content": "new"}]
    assert ns.import_memories(records) == 1
    assert ns.import_memories([{"id": 7, "content": "new"}], skip_duplicates=False) == 1
    ns.delete(first.memory.id)  # its content is free again
    assert not ns.add_unique("code is in D:\\projects").duplicate


def test_touch_counts_each_once_and_skips_unknown_ids(opener: Opener) -> None:
    store = opener()
    ns = store.namespace("users/1")
    a, b = ns.add("alpha"), ns.add("beta")
    touched = ns.touch([a.id, str(a.id), 99, b.id])
    assert [(m.id, m.access_count) for m in touched] == [(a.id, 1), (b.id, 1)]
    assert ns.search("alpha", touch=False)[0].memory.access_count == 1
    store.close()
    assert opener().namespace("users/1").get(a.id).access_count == 1


def test_related_weights_and_the_default_category(opener: Opener) -> None:
    ns = opener().namespace("users/1")
    target = ns.add("target", ["x", "y"])
    one_tag = ns.add("one tag", ["x"])
    same_group = ns.add("same default category")
    two_tags = ns.add("two tags", ["x", "y"], "work")
    scores = {h.memory.id: h.score for h in ns.related(target.id)}
    assert scores == {one_tag.id: 3.0, same_group.id: 2.0, two_tags.id: 2.0}
    weighed = ns.related(target.id, tag=5, category=1, default_category=False)
    assert [(h.memory.id, h.score) for h in weighed] == [(two_tags.id, 10.0), (one_tag.id, 5.0)]


def test_history_and_undo_go_back_one_change_at_a_time(opener: Opener) -> None:
    store = opener()
    ns = store.namespace("users/42")
    with acting(Author("user:42", "/remember", "Alice", chat=42, change="add00000")):
        memory = ns.add("code in D:\\projects", ["code"], "work")
    ns.touch([memory.id])
    counted = ns.get(memory.id)
    with acting(Author("user:42", "/edit", change="edit0000")):
        ns.update(memory.id, content="code in E:\\work")
    with acting(Author("user:42", "/forget", change="forget00")):
        ns.delete(memory.id)
    for expected in ("forget00", "edit0000"):
        history = ns.history()
        change = history.last_change()
        assert change == expected
        with acting(Author("user:42", "/undo")):
            undo(ns, history, change)
    back = ns.get(memory.id)
    assert (back.content, back.created_at, back.access_count) == (
        "code in D:\\projects",
        counted.created_at,
        counted.access_count,
    )
    ns.update(memory.id, content="changed since")
    history = ns.history()
    with acting(Author("user:42", "/undo")):
        done = undo(ns, history, "add00000")
    assert [left.record.memory_id for left in done.left] == [memory.id]  # the later change stands
    later = ns.add("later")
    assert later.id > memory.id
    store.close()
    records = opener().namespace("users/42").history().records
    assert [r.op for r in records] == [
        "add", "update", "delete", "restore", "restore", "update", "keep", "add",
    ]  # fmt: skip
    assert records[0].author.name == "Alice" and records[0].author.chat == 42
    assert records[3].author.undoes == "forget00"
    assert set(records[1].to_dict()) >= {"ref", "at", "op", "id", "before", "after", "change"}
    assert [r.op for r in opener().namespace("users/42").history(later.id).records] == ["add"]


def test_two_processes_undoing_one_change_at_once_undo_it_once(opener: Opener) -> None:
    """Both read the history before either undoes (one ↩ Undo pressed in two processes, or
    /undo twice): the first reverts the change, the second finds it taken and writes nothing."""
    first, second = opener().namespace("users/42"), opener().namespace("users/42")
    with acting(Author("user:42", "/remember", change="add00000")):
        kept, gone = first.add("keep me"), first.add("add and undo me")
    first.update(kept.id, content="kept, edited")
    with acting(Author("user:42", "model", change="turn0000")):
        first.update(kept.id, content="the model's edit")
        first.delete(gone.id)
    seen_by_first, seen_by_second = first.history(), second.history()
    with acting(Author("user:42", "↩", change="undo1111")):
        done = undo(first, seen_by_first, "turn0000")
    with acting(Author("user:42", "↩", change="undo2222")):
        again = undo(second, seen_by_second, "turn0000")
    assert [r.memory_id for r in done.reverted] == [gone.id, kept.id] and not done.left
    assert again.reverted == () and again.left == ()
    assert [m.content for m in second.memories()] == ["kept, edited", "add and undo me"]
    assert [r.author.change for r in second.history().records if r.author.undoes] == [
        "undo1111",
        "undo1111",
    ]


class ChangedBetweenCalls:
    """A namespace another process writes to right after the first call an undo makes on it:
    an undo that checks a memory in one call and reverts it in another reverts that write."""

    def __init__(self, namespace: Any, other_process_writes: Callable[[], None]) -> None:
        self._namespace, self._write = namespace, other_process_writes

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._namespace, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            write, self._write = self._write, lambda: None
            write()
            return result

        return call


def test_a_change_another_process_makes_during_an_undo_is_not_reverted(opener: Opener) -> None:
    ns, other = opener().namespace("users/42"), opener().namespace("users/42")
    with acting(Author("user:42", "/remember", change="add00000")):
        memory = ns.add("standup at 10")
    with acting(Author("user:42", "/edit", change="edit0000")):
        ns.update(memory.id, content="standup at 11")
    history = ns.history()

    def bob_edits() -> None:
        with acting(Author("user:43", "/edit", "Bob", change="bobs0000")):
            other.update(memory.id, content="standup at 12, says Bob")

    with acting(Author("user:42", "/undo", change="undo0000")):
        undo(ChangedBetweenCalls(ns, bob_edits), history, "edit0000")  # type: ignore[arg-type]
    assert ns.get(memory.id).content == "standup at 12, says Bob"  # his change stands
    ops = [(r.op, r.author.change) for r in ns.history(memory.id).records]
    assert ops[-1] == ("update", "bobs0000")


def test_the_history_keeps_the_newest_history_max_records(opener: Opener) -> None:
    ns = opener(history_max=20).namespace("users/1")
    memory = ns.add("v0")
    for n in range(1, 30):
        ns.update(memory.id, content=f"v{n}")
    records = ns.history().records
    assert len(records) == 20
    assert records[-1].after is not None and records[-1].after.content == "v29"
    assert records[0].after is not None and records[0].after.content == "v10"


def test_search_by_meaning_and_its_vectors_are_kept(opener: Opener) -> None:
    first = Concepts()
    store = opener(embedder=first)
    ns = store.namespace("users/1")
    ns.add("Shopping list: milk, eggs")
    ns.add("The cat sleeps on the sofa")
    ns.add("Dentist appointment on Friday")
    assert store.namespace("users/1").wait_for_embeddings(10)
    assert ns.search("what do I need to buy?", touch=False) == []  # no shared word
    hits = ns.search("what do I need to buy?", ranker="hybrid", touch=False)
    assert hits[0].memory.content == "Shopping list: milk, eggs"
    status = ns.search_status()
    assert (status.mode, status.embedded, status.total) == ("hybrid", 3, 3)
    store.close()
    again = Concepts()
    ns = opener(embedder=again).namespace("users/1")
    hits = ns.search("what to buy", ranker="hybrid", touch=False)
    assert hits[0].memory.content == "Shopping list: milk, eggs"
    assert ns.wait_for_embeddings(10)
    assert again.passages == 0  # the vectors were kept: nothing embedded twice


def test_without_an_embedder_hybrid_is_the_keyword_ranking(opener: Opener) -> None:
    ns = opener().namespace("users/1")
    for i in range(20):
        ns.add(f"note {i} about project {i % 7} and the cat {i % 3}")
    hybrid = ns.search("project 3 cat", ranker="hybrid", touch=False)
    default = ns.search("project 3 cat", touch=False)
    assert [(h.memory.id, h.score) for h in hybrid] == [(h.memory.id, h.score) for h in default]
    assert ns.search_status().mode == "keywords"


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
