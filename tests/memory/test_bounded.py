"""Many namespaces in one process: no file held open while idle, a bounded number held in RAM,
and a search alone never rewrites ``memory.json``."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from memory.files import MemoryStore


def open_files_under(folder: Path) -> list[str]:
    """The paths of this process's open descriptors that lie in ``folder``."""
    found = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # the descriptor of the listing itself, closed meanwhile
        if target.startswith(str(folder.resolve())):
            found.append(target)
    return found


def test_an_idle_namespace_holds_no_file_open(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/1")
        memory = ns.add("the wifi password is hunter2", ["wifi"])
        assert [hit.memory.id for hit in ns.search("wifi")] == [memory.id]
        ns.update(memory.id, content="the wifi password is swordfish")
        assert ns.get(memory.id).content == "the wifi password is swordfish"
        assert open_files_under(tmp_path) == []


def test_the_least_recently_used_namespace_is_released_and_reloads(tmp_path: Path) -> None:
    with MemoryStore(tmp_path, max_open_namespaces=2) as store:
        first = store.namespace("users/1")
        kept = first.add("first user's note")
        store.namespace("users/2").add("second user's note")
        assert first.held == 1
        store.namespace("users/3").add("third user's note")
        assert first.held == 0  # users/1 was asked for least recently
        assert store.namespace("users/2").held == 1
        assert store.namespace("users/3").held == 1
        # Released, not lost: the same object answers again, from disk.
        assert [hit.memory.id for hit in first.search("note", touch=False)] == [kept.id]
        assert store.namespace("users/1").get(kept.id) == kept
        assert store.namespace("users/2").held == 0  # now the least recent of three


def test_a_memory_budget_releases_namespaces_too(tmp_path: Path) -> None:
    with MemoryStore(tmp_path, max_memories=3) as store:
        a = store.namespace("users/a")
        a.import_memories([{"id": n, "content": f"note {n}"} for n in (1, 2)])
        b = store.namespace("users/b")
        b.import_memories([{"id": n, "content": f"note {n}"} for n in (3, 4)])
        store.namespace("users/b")  # over the budget of 3 memories: users/a goes
        assert (a.held, b.held) == (0, 2)
        assert [m.id for m in store.namespace("users/a").memories()] == [1, 2]


def test_searches_alone_leave_memory_json_untouched_until_and_after_close(
    tmp_path: Path,
) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/1")
        memory = ns.add("standup is at 10:00", ["work"])
    snapshot = tmp_path / "users" / "1" / "memory.json"
    before = snapshot.read_bytes(), snapshot.stat().st_ino
    store = MemoryStore(tmp_path, compact_seconds=0.0)
    try:
        ns = store.namespace("users/1")
        for _ in range(3):
            assert [hit.memory.id for hit in ns.search("standup")] == [memory.id]
        store.maintain()  # compaction is due for any change: a touch is not one
        assert (snapshot.read_bytes(), snapshot.stat().st_ino) == before
    finally:
        store.close()
    assert (snapshot.read_bytes(), snapshot.stat().st_ino) == before
    with MemoryStore(tmp_path) as store:  # the counts are kept, in the journal
        assert store.namespace("users/1").get(memory.id).access_count == 3


def writing_ahead(folder: Path) -> set[str]:
    """The snapshots a compaction is writing ahead, outside the lock, in ``folder`` now."""
    return {name for name in os.listdir(folder) if name.startswith(".memory.json.compacting.")}


def test_compaction_lets_operations_through_while_it_writes(tmp_path: Path) -> None:
    # An add that starts and ends while one write-ahead file exists took the lock after that
    # compaction copied the memories and before it swapped them in: the lock was free while
    # it wrote. Repeated until seen (no clock involved); a compaction that holds the lock
    # throughout can never show it.
    filler = "lorem ipsum dolor sit amet " * 8
    records = [{"id": n, "content": f"note {n}: {filler}"} for n in range(1, 20_001)]
    with MemoryStore(tmp_path) as store:
        store.namespace("users/1").import_memories(records)
    folder = tmp_path / "users" / "1"
    added = []
    seen_during = 0
    with MemoryStore(tmp_path, compact_seconds=3600.0) as store:
        ns = store.namespace("users/1")
        for attempt in range(40):
            added.append(ns.add(f"change {attempt}").id)
            compaction = threading.Thread(target=ns.maintain, args=(0.0, 3600.0))
            compaction.start()
            while compaction.is_alive():
                before = writing_ahead(folder)
                added.append(ns.add(f"during {attempt} {len(added)}").id)
                if before & writing_ahead(folder):
                    seen_during += 1
            compaction.join()
            if seen_during:
                break
        assert seen_during
    # What was appended while the snapshot was written stayed in the new journal.
    with MemoryStore(tmp_path) as store:
        held = {m.id for m in store.namespace("users/1").memories()}
        assert set(added) <= held and len(held) == 20_000 + len(added)
    on_disk = {r["id"] for r in json.loads((folder / "memory.json").read_text("utf-8"))}
    assert set(added) <= on_disk
    assert writing_ahead(folder) == set()
