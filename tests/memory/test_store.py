"""The file store as a whole: nothing on disk before the first write, idle namespaces released
(the operations on every backend: ``contract/test_contract_operations.py``)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memory.errors import MemoryNotFound
from memory.files import FileNamespace, MemoryStore


def contents(ns: FileNamespace) -> list[str]:
    return [m.content for m in ns.memories()]


def test_nothing_is_created_on_disk_until_the_first_write(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with MemoryStore(data) as store:
        ns = store.namespace("users/42")
        assert ns.search("anything") == []
        assert ns.memories() == []
        assert ns.stats().total == 0
        with pytest.raises(MemoryNotFound):
            ns.get(1)
        assert not data.exists()
        ns.add("now")
    assert (data / "users" / "42" / "memory.json").is_file()


def open_files_under(folder: Path) -> list[str]:
    """The paths under ``folder`` this process holds open (Linux ``/proc``)."""
    found = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = Path(fd.readlink())
        except OSError:
            continue  # closed since listing
        if target.is_relative_to(folder):
            found.append(str(target))
    return found


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs Linux /proc/self/fd")
def test_an_idle_namespace_is_released_and_still_works(tmp_path: Path) -> None:
    with MemoryStore(tmp_path, idle_seconds=0.1) as store:
        ns = store.namespace("users/42")
        first = ns.add("before the release", ["x"])
        snapshot = ns.path / "memory.json"

        def released() -> bool:
            # Released means flushed (memory.json holds the memory, without a close) and no
            # file of the namespace left open.
            flushed = snapshot.exists() and str(first.id) in snapshot.read_text("utf-8")
            return flushed and not open_files_under(ns.path)

        deadline = time.monotonic() + 10
        while not released() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert released(), "the idle namespace was not released within 10 s"

        assert ns.get(first.id) == first
        second = ns.add("after the release", ["x"])
        assert [hit.memory.id for hit in ns.related(first.id)] == [second.id]
        assert [hit.memory.id for hit in ns.search("release", ranker="seed")] == [
            first.id,
            second.id,
        ]
    with MemoryStore(tmp_path) as store:
        assert contents(store.namespace("users/42")) == ["before the release", "after the release"]
