"""The file store's documents: files a person broke or left in an old layout, two processes
updating one file, and ``file://`` locations (on every backend: ``contract/``).

Run through ``open_store``, as the bot uses them.
"""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from memory import MemoryInvalid, open_store, update_document
from memory.documents import ABSENT


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


def test_open_store_refuses_unknown_locations(tmp_path: Path) -> None:
    with pytest.raises(MemoryInvalid):
        open_store("ftp://example/x")
    with pytest.raises(MemoryInvalid):
        open_store("")
    with open_store(f"file://{tmp_path / 'd'}") as store:
        store.namespace("users/1").add("hello")
    assert (tmp_path / "d" / "users" / "1" / "memory.journal").exists()
