"""An editor's in-place save (truncate, write, pause, write the rest) that pauses longer than the
store waits for ``memory.json`` to parse: the store sets the half-written file aside and writes
back what it holds; whatever the editor writes into it afterwards is merged, by this process or
by the next one. The timing is driven explicitly: the editor's second half is written at the
moment the test chooses, never by sleeping and hoping."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest

from memory.files import FileNamespace, MemoryStore

NS = "users/42"


def contents(ns: FileNamespace) -> list[str]:
    return sorted(m.content for m in ns.memories())


def read(ns: FileNamespace) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads((ns.path / "memory.json").read_bytes())
    return records


class _AfterSetAside(logging.Handler):
    """Calls ``then`` when the store logs that it set an unreadable memory.json aside: just
    after its swap, the moment a paused in-place save may finish in."""

    def __init__(self, then: Callable[[], None]) -> None:
        super().__init__()
        self.then = then
        self.fired = 0

    def emit(self, record: logging.LogRecord) -> None:
        if "does not parse" in record.getMessage() and not self.fired:
            self.fired += 1
            self.then()


@contextmanager
def after_set_aside(then: Callable[[], None]) -> Iterator[_AfterSetAside]:
    handler = _AfterSetAside(then)
    logger = logging.getLogger("memory.files.folder")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)


@contextmanager
def paused_in_place_save(path: Path, records: list[dict[str, Any]]) -> Iterator[Callable[[], None]]:
    """An editor's in-place save, paused half-way; calling what it yields writes the rest."""
    data = json.dumps(records, ensure_ascii=False, indent=2).encode()
    half = len(data) // 2
    editor: IO[bytes] = open(path, "r+b")  # noqa: SIM115 (kept open across the pause)
    try:
        editor.truncate(0)
        editor.write(data[:half])
        editor.flush()

        def finish() -> None:
            editor.write(data[half:])
            editor.flush()

        yield finish
    finally:
        editor.close()


def test_a_save_finished_just_after_it_was_set_aside_is_merged(tmp_path: Path) -> None:
    """The lost sequence of the hand-edit bench: the editor's pause outlasts the store's
    re-reads, its last write lands right after compaction swapped the file aside, and its
    next round reads (and saves over) the store's written-back copy, which lacks the edit."""
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        ns.add("one")
        ns.flush()
        opened = read(ns)
        typed = {"id": 1000, "content": "typed by hand", "tags": ["hand"]}
        with paused_in_place_save(ns.path / "memory.json", [*opened, typed]) as finish:
            with after_set_aside(finish) as hook:
                assert contents(ns) == ["one"]  # serves what it held while the file is broken
            assert hook.fired == 1
        again = read(ns)  # the editor's next round: the store's copy, without the first add
        assert [r["content"] for r in again] == ["one"]
        again.append({"id": 1001, "content": "typed next", "tags": ["hand"]})
        tmp = ns.path / "editor.tmp"
        tmp.write_bytes(json.dumps(again, indent=2).encode())
        tmp.replace(ns.path / "memory.json")
        assert contents(ns) == ["one", "typed by hand", "typed next"]
    with MemoryStore(tmp_path) as store:
        assert contents(store.namespace(NS)) == ["one", "typed by hand", "typed next"]


@pytest.mark.parametrize("base", ["kept", "missing"])
def test_a_save_finished_after_the_store_closed_is_merged_by_the_next(
    tmp_path: Path, base: str
) -> None:
    """The editor finishes after the process that set its file aside has gone: the next
    process finds the file, now whole, and merges it. With ``missing`` (a data directory of an
    older version) the file is set aside as the namespace is opened."""
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        ns.add("one")
    folder = tmp_path / NS
    if base == "missing":
        (folder / "memory.journal.base").unlink()
    opened = json.loads((folder / "memory.json").read_bytes())
    typed = {"id": 1000, "content": "typed by hand", "tags": ["hand"]}
    with paused_in_place_save(folder / "memory.json", [*opened, typed]) as finish:
        with MemoryStore(tmp_path) as store:
            ns = store.namespace(NS)
            assert contents(ns) == (["one"] if base == "kept" else [])
            ns.add("added meanwhile")
        [aside] = folder.glob("memory.json.corrupt-*")
        finish()
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert contents(ns) == ["added meanwhile", "one", "typed by hand"]
    assert aside.exists()  # the person's bytes stay where they were told they are
    with MemoryStore(tmp_path) as store:  # merged once: nothing changes on a later open
        ns = store.namespace(NS)
        assert contents(ns) == ["added meanwhile", "one", "typed by hand"]
        assert ns.pop_quarantine() is None


def test_a_save_set_aside_by_one_store_is_merged_by_another_holding_it(tmp_path: Path) -> None:
    """Two stores on one folder (two processes): the one that did not set the file aside
    still merges it once it parses, and only once."""
    with MemoryStore(tmp_path) as first, MemoryStore(tmp_path) as second:
        a, b = first.namespace(NS), second.namespace(NS)
        a.add("one")
        a.flush()
        assert contents(b) == ["one"]
        typed = {"id": 1000, "content": "typed by hand", "tags": ["hand"]}
        with paused_in_place_save(a.path / "memory.json", [*read(a), typed]) as finish:
            assert contents(a) == ["one"]  # set aside by the first
            b.add("two")
            b.flush()  # the second compacts: the file stays watched
            finish()
        assert contents(b) == ["one", "two", "typed by hand"]
        a.add("three")
        assert contents(a) == ["one", "three", "two", "typed by hand"]
        assert contents(b) == ["one", "three", "two", "typed by hand"]
    with MemoryStore(tmp_path) as store:
        assert contents(store.namespace(NS)) == ["one", "three", "two", "typed by hand"]


@pytest.mark.parametrize("writes", ["before the store closes", "after", "nothing"])
def test_a_save_into_the_file_compaction_just_replaced_is_merged(
    tmp_path: Path, writes: str
) -> None:
    """The editor opened memory.json for its in-place save just before compaction swapped a
    new file in: its writes land in the file replaced, which is kept while it is held open,
    merged once written (by this process or the next), and removed once closed unwritten."""
    typed = {"id": 1000, "content": "typed by hand", "tags": ["hand"]}
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        ns.add("one")
        ns.flush()
        opened = read(ns)
        editor: IO[bytes] = open(ns.path / "memory.json", "r+b")  # noqa: SIM115
        ns.add("two")
        ns.flush()  # compaction replaces the file the editor has open
        if writes != "after":
            if writes != "nothing":
                editor.truncate(0)
                editor.write(json.dumps([*opened, typed], indent=2).encode())
            editor.close()
            assert contents(ns) == ["one", "two"] + (
                ["typed by hand"] if writes != "nothing" else []
            )
    if writes == "after":  # the store has gone; its last compaction watched the file
        editor.truncate(0)
        editor.write(json.dumps([*opened, typed], indent=2).encode())
        editor.close()
    expected = ["one", "two"] + (["typed by hand"] if writes != "nothing" else [])
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert contents(ns) == expected
    folder = tmp_path / NS
    assert list(folder.glob("memory.json.saved-*")) == []  # merged or unwritten: removed
    assert list(folder.glob("memory.json.conflict-*")) == []


def test_a_namespace_never_written_is_opened_without_waiting_for_a_save(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memory.files.watch

    pauses: list[float] = []
    monkeypatch.setattr(memory.files.watch.time, "sleep", pauses.append)
    with MemoryStore(tmp_path) as store:
        store.namespace("users/1").add("the first memory of a new user")
        assert pauses == []  # no file to wait for: nobody is saving one
    # memory.json gone from a namespace that has one: a rename-style save may be under way.
    (tmp_path / "users/1/memory.json").unlink()
    with MemoryStore(tmp_path) as store:
        store.namespace("users/1").memories()
    assert pauses and all(p == memory.files.watch.PAUSE for p in pauses)
