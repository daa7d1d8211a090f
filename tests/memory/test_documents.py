"""The store's documents: compare-and-set, listing by prefix, bad keys and bad files.

Run through ``open_store``, as the bot uses them, on every backend the project has.
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from memory import DocumentConflict, MemoryInvalid, Store, open_store, update_document
from memory.documents import MAX_DOCUMENT_BYTES
from memory.interface import ABSENT


@pytest.fixture
def store(any_store: Store) -> Store:
    """The store, on each backend (``any_store``: files and PostgreSQL)."""
    return any_store


def test_put_then_get_returns_the_value_and_a_version(store: Store) -> None:
    docs = store.documents("users/42")
    assert docs.get("history") is None
    written = docs.put("history", [{"role": "user", "content": "你好"}])
    read = docs.get("history")
    assert read is not None
    assert read.value == [{"role": "user", "content": "你好"}]
    assert read.version == written.version != ABSENT


def test_compare_and_set_refuses_a_stale_version(store: Store) -> None:
    docs = store.documents("users/42")
    first = docs.put("usage", {"turns": 1}, version=ABSENT)
    with pytest.raises(DocumentConflict):
        docs.put("usage", {"turns": 9}, version=ABSENT)  # it exists now
    second = docs.put("usage", {"turns": 2}, version=first.version)
    with pytest.raises(DocumentConflict) as raised:
        docs.put("usage", {"turns": 3}, version=first.version)
    assert raised.value.code == "DOCUMENT_CONFLICT"
    current = docs.get("usage")
    assert current is not None and current.value == {"turns": 2}
    assert current.version == second.version


def test_delete_with_a_version_and_without(store: Store) -> None:
    docs = store.documents("users/42")
    written = docs.put("digest", {"enabled": True})
    docs.put("digest", {"enabled": False})
    with pytest.raises(DocumentConflict):
        docs.delete("digest", version=written.version)
    assert docs.get("digest") is not None
    assert docs.delete("digest") is True
    assert docs.delete("digest") is False
    assert docs.get("digest") is None


def test_list_by_prefix_sorted_by_key(store: Store) -> None:
    docs = store.documents("chats/-100")
    for key in ("reminders/3", "reminders/1", "history", "reminders/2"):
        docs.put(key, {"key": key})
    assert [d.key for d in docs.list("reminders/")] == ["reminders/1", "reminders/2", "reminders/3"]
    assert [d.key for d in docs.list()] == ["history", *(f"reminders/{n}" for n in (1, 2, 3))]
    assert store.documents("chats/-101").list() == []


def test_namespaces_do_not_share_documents(store: Store) -> None:
    store.documents("users/1").put("history", ["one"])
    assert store.documents("users/2").get("history") is None


@pytest.mark.parametrize(
    "key", ["", "../x", "a/../b", "/abs", "a.b", "a b", "x" * 65, "memory", 7, None, "a//b"]
)
def test_bad_or_reserved_keys_are_refused(store: Store, key: object) -> None:
    docs = store.documents("users/42")
    with pytest.raises(MemoryInvalid):
        docs.put(key, {"x": 1})  # type: ignore[arg-type]
    with pytest.raises(MemoryInvalid):
        docs.get(key)  # type: ignore[arg-type]


def test_values_that_are_not_json_or_too_large_are_refused(store: Store) -> None:
    docs = store.documents("users/42")
    with pytest.raises(MemoryInvalid):
        docs.put("bad", {"x": object()})
    with pytest.raises(MemoryInvalid):
        docs.put("big", "x" * MAX_DOCUMENT_BYTES)
    assert docs.list() == []


def test_documents_never_touch_the_memories(store: Store) -> None:
    ns = store.namespace("users/42")
    memory = ns.add("代码在 D:\\projects")
    store.documents("users/42").put("history", [1, 2, 3])
    assert [m.id for m in ns.memories()] == [memory.id]
    assert store.namespace_names() == ["users/42"]


def test_a_document_that_does_not_parse_is_kept_aside(tmp_path: Path) -> None:
    with open_store(tmp_path / "data") as store:
        docs = store.documents("users/42")
        docs.put("usage", {"turns": 1})
        path = tmp_path / "data" / "users" / "42" / "usage.json"
        path.write_text('{"turns": 1,', encoding="utf-8")  # a hand edit gone wrong
        assert docs.get("usage") is None
        kept = list(path.parent.glob("usage.json.corrupt-*"))
        assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == '{"turns": 1,'
        docs.put("usage", {"turns": 2}, version=ABSENT)
        assert json.loads(path.read_text(encoding="utf-8")) == {"turns": 2}


def test_deeply_nested_document_is_kept_aside_not_a_crash(tmp_path: Path) -> None:
    with open_store(tmp_path / "data") as store:
        folder = tmp_path / "data" / "users" / "42"
        folder.mkdir(parents=True)
        (folder / "history.json").write_text("[" * 100_000, encoding="utf-8")
        assert store.documents("users/42").get("history") is None
        assert list(folder.glob("history.json.corrupt-*"))


def test_an_existing_file_of_the_old_layout_is_read_as_a_document(tmp_path: Path) -> None:
    folder = tmp_path / "data" / "users" / "42"
    folder.mkdir(parents=True)
    (folder / "digest.json").write_text('{"enabled": true}', encoding="utf-8")
    with open_store(tmp_path / "data") as store:
        found = store.documents("users/42").get("digest")
    assert found is not None and found.value == {"enabled": True}


def _add_many(data_dir: str, rounds: int) -> None:
    with open_store(data_dir) as store:
        docs = store.documents("chats/-1")
        for _ in range(rounds):
            update_document(docs, "counter", lambda old: {"n": (old or {"n": 0})["n"] + 1})


def test_two_processes_updating_one_document_lose_nothing(tmp_path: Path) -> None:
    data_dir = str(tmp_path / "data")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_add_many, args=(data_dir, 60)) for _ in range(2)]
    for worker in workers:
        worker.start()
    _add_many(data_dir, 60)
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    with open_store(data_dir) as store:
        found = store.documents("chats/-1").get("counter")
    assert found is not None and found.value == {"n": 180}


def test_update_document_deletes_when_the_change_returns_none(store: Store) -> None:
    docs = store.documents("users/42")
    docs.put("draft", {"text": "x"})
    assert update_document(docs, "draft", lambda old: None) is None
    assert docs.get("draft") is None


def test_open_store_refuses_unknown_locations(tmp_path: Path) -> None:
    with pytest.raises(MemoryInvalid):
        open_store("ftp://example/x")
    with pytest.raises(MemoryInvalid):
        open_store("")
    with open_store(f"file://{tmp_path / 'd'}") as store:
        store.namespace("users/1").add("hello")
    assert (tmp_path / "d" / "users" / "1" / "memory.journal").exists()
