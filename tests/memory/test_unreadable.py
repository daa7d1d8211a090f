"""Files the store cannot read: too deep to parse, torn journal tails, temporaries left by kills.

The damage is written into the files by hand, as a crash, a bad disk or a hostile person would
leave it; the store is the real one, on files in ``tmp_path``.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.files import FileNamespace, MemoryStore
from memory.files.io import STALE_TEMPORARY_SECONDS

NS = "users/42"
DEEP = b"[" * 100_000


def folder(data_dir: Path) -> Path:
    path = data_dir / NS
    path.mkdir(parents=True, exist_ok=True)
    return path


def contents(ns: FileNamespace) -> list[str]:
    return [m.content for m in ns.memories()]


def journal_line(memory_id: int, content: str) -> bytes:
    record = {"op": "put", "m": {"id": memory_id, "content": content}}
    return json.dumps(record).encode() + b"\n"


# -- nesting deeper than the parser's recursion ------------------------------------------------

DEEP_SNAPSHOTS = {
    "brackets": DEEP,
    "objects": b'{"a":' * 100_000,
    "inside a record": b'[{"id": 1, "content": "x", "tags": ' + DEEP + b"]",
}


@pytest.mark.parametrize("data", list(DEEP_SNAPSHOTS.values()), ids=list(DEEP_SNAPSHOTS))
def test_a_deeply_nested_memory_json_is_moved_aside_like_any_unreadable_file(
    tmp_path: Path, data: bytes
) -> None:
    (folder(tmp_path) / "memory.json").write_bytes(data)
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert ns.memories() == []
        moved = ns.pop_quarantine()
        assert moved is not None and moved.name.startswith("memory.json.corrupt-")
        assert moved.read_bytes() == data
        ns.add("the namespace still works")
    with MemoryStore(tmp_path) as store:
        assert contents(store.namespace(NS)) == ["the namespace still works"]


def test_a_deeply_nested_journal_line_is_skipped_and_kept(tmp_path: Path) -> None:
    journal = folder(tmp_path) / "memory.journal"
    damaged = (
        journal_line(1, "one") + b'{"op": "put", "m": ' + DEEP + b"\n" + journal_line(2, "two")
    )
    journal.write_bytes(damaged)
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert contents(ns) == ["one", "two"]
        kept = ns.pop_quarantine()
        assert kept is not None and kept.read_bytes() == damaged


# -- a torn last journal line ------------------------------------------------------------------

TORN_TAILS = {
    "cut mid-line": b'{"op":"put","m":{"id":1705312200000,"content":"never ackn',
    "garbage": b"\xff\xfe garbage, no newline",
    "zeros of a power cut": b"\x00" * 4096,
}


@pytest.mark.parametrize("tail", list(TORN_TAILS.values()), ids=list(TORN_TAILS))
def test_a_torn_journal_tail_is_kept_beside_it_and_logged(
    tmp_path: Path, tail: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    journal = folder(tmp_path) / "memory.journal"
    journal.write_bytes(journal_line(1, "one") + journal_line(2, "two") + tail)
    with caplog.at_level(logging.WARNING, logger="memory"), MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert contents(ns) == ["one", "two"]
        ns.add("three")
    (kept,) = journal.parent.glob("memory.journal.torn-*")
    assert kept.read_bytes() == tail
    assert any(str(kept) in r.getMessage() for r in caplog.records)
    with MemoryStore(tmp_path) as store:
        assert contents(store.namespace(NS)) == ["one", "two", "three"]
    assert list(journal.parent.glob("memory.journal.torn-*")) == [kept]


# -- temporary files of interrupted writes -----------------------------------------------------


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.fixture
def live_pid() -> Iterator[int]:
    """The pid of another live process."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield child.pid
    child.kill()
    child.wait()


def temporary(where: Path, name: str, pid: int, *, age: float = 0.0) -> Path:
    """A temporary file as ``write_bytes_atomic`` names it, ``age`` seconds old."""
    path = where / f".{name}.{pid}.{os.urandom(4).hex()}.tmp"
    path.write_bytes(b'[{"id": 1, "content": "a whole copy of the snapshot"}]')
    if age:
        then = time.time() - age
        os.utime(path, (then, then))
    return path


def test_opening_a_namespace_removes_temporaries_of_dead_writers(tmp_path: Path) -> None:
    where = folder(tmp_path)
    (where / "memory.json").write_text('[{"id": 1, "content": "kept"}]', encoding="utf-8")
    stale = [
        temporary(where, "memory.json", dead_pid()),
        temporary(where, "memory.journal", dead_pid()),
        temporary(where, "history.json", dead_pid()),
    ]
    with MemoryStore(tmp_path) as store:
        assert contents(store.namespace(NS)) == ["kept"]
    assert not any(p.exists() for p in stale)


def test_temporaries_of_live_writers_are_left_alone(tmp_path: Path, live_pid: int) -> None:
    where = folder(tmp_path)
    others = temporary(where, "history.json", live_pid)
    ours = temporary(where, "usage.json", os.getpid(), age=2 * STALE_TEMPORARY_SECONDS)
    reused = temporary(where, "digest.json", live_pid, age=2 * STALE_TEMPORARY_SECONDS)
    with MemoryStore(tmp_path) as store:
        store.namespace(NS).add("x")
    assert others.exists()  # another process may be writing it right now
    assert ours.exists()  # another thread of ours may be writing it
    assert not reused.exists()  # too old to be in progress: its pid was given to another


def test_snapshot_temporaries_are_stale_under_the_lock_whoever_wrote_them(
    tmp_path: Path, live_pid: int
) -> None:
    # Compaction writes them only while holding the namespace's lock; we hold it when opening,
    # so no writer is at work, even if the pid in the name is alive (reused, or in another
    # container sharing the data directory).
    where = folder(tmp_path)
    stale = temporary(where, "memory.json", live_pid)
    with MemoryStore(tmp_path) as store:
        store.namespace(NS).memories()
    assert not stale.exists()


def test_a_compaction_killed_mid_write_leaves_nothing_behind_after_reopening(
    tmp_path: Path,
) -> None:
    # A real child process compacting a namespace, killed by the kernel while writing the new
    # snapshot: past RLIMIT_FSIZE the kernel sends SIGXFSZ, which kills it (Python ignores that
    # signal unless told otherwise) in the middle of the write, as a kill -9 would.
    script = """
import resource, signal, sys
from memory.files import MemoryStore
store = MemoryStore(sys.argv[1])
ns = store.namespace("users/42")
for i in range(300):
    ns.add(f"memory number {i} " + "x" * 200)
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))
ns.flush()
"""
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True)
    assert done.returncode < 0, done.stderr  # killed by a signal, not a clean exit
    where = tmp_path / NS
    left = list(where.glob(".memory.json.*.tmp"))
    assert left, "the kill left no temporary file: the test did not reproduce the fault"
    with MemoryStore(tmp_path) as store:
        assert len(store.namespace(NS).memories()) == 300
    assert list(where.glob(".*.tmp")) == []
