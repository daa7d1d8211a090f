"""The store's documents on every backend: compare-and-set, listing by prefix, bad keys
(documents as files, and files a person broke: ``tests/memory/test_documents.py``).
"""

from __future__ import annotations

import pytest

from memory import DocumentConflict, MemoryInvalid, Store, update_document
from memory.documents import ABSENT, MAX_DOCUMENT_BYTES


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


def test_update_document_deletes_when_the_change_returns_none(store: Store) -> None:
    docs = store.documents("users/42")
    docs.put("draft", {"text": "x"})
    assert update_document(docs, "draft", lambda old: None) is None
    assert docs.get("draft") is None
