"""Processes sharing one store, on every backend: nothing is lost and no id is given twice,
whichever process writes; one process sees another's changes on its next operation, without
reopening (threads of one process: ``tests/memory/test_concurrency.py``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memory import open_store

NS = "users/42"


REPO_ROOT = Path(__file__).resolve().parents[3]


def start_python(code: str, *args: object) -> subprocess.Popen[str]:
    """Start ``code`` in a child Python process that can import ``memory``."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
        cwd=REPO_ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_together(code: str, *argvs: tuple[object, ...]) -> list[str]:
    """Run one child per argument list, released at the same moment; their stdouts.

    Each child prints ``ready`` once its store is open, then waits for a line on stdin.
    """
    children = [start_python(code, *argv) for argv in argvs]
    try:
        for child in children:
            assert child.stdout is not None
            line = child.stdout.readline()
            assert line == "ready\n", child.stderr.read() if child.stderr else line
        outs = []
        for child in children:
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        for child in children:
            out, err = child.communicate(timeout=60)
            assert child.returncode == 0, err
            outs.append(out)
        return outs
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()


ADDER = """
    import sys
    from memory import open_store as MemoryStore

    data_dir, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with MemoryStore(data_dir) as store:
        ns = store.namespace("users/42")
        ns.memories()
        print("ready", flush=True)
        sys.stdin.readline()
        for i in range(count):
            print(ns.add(f"{name} {i}").id, flush=True)
"""


def test_two_processes_adding_at_once_lose_nothing_and_share_no_id(location: str) -> None:
    count = 200
    outs = run_together(ADDER, (location, "first", count), (location, "second", count))
    ids = [[int(line) for line in out.split()] for out in outs]
    assert [len(i) for i in ids] == [count, count]
    every = ids[0] + ids[1]
    assert len(set(every)) == 2 * count
    assert all(i == sorted(i) for i in ids)
    with open_store(location) as store:
        memories = store.namespace(NS).memories()
    assert [m.id for m in memories] == sorted(every)
    assert {m.content for m in memories} == {
        f"{name} {i}" for name in ("first", "second") for i in range(count)
    }
    if not location.startswith("postgresql:"):  # and memory.json, in the stored order
        records = json.loads((Path(location) / NS / "memory.json").read_bytes())
        assert [r["id"] for r in records] == sorted(every)


ADD_SOURCES = """
    import sys
    from memory import open_store as MemoryStore

    data_dir, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with MemoryStore(data_dir) as store:
        ns = store.namespace("users/42")
        ns.memories()
        print("ready", flush=True)
        sys.stdin.readline()
        for i in range(count):
            print(ns.add(f"message {i} via {name}", source=f"telegram:42:{i}").id, flush=True)
"""


def test_a_message_delivered_to_two_processes_is_remembered_once(location: str) -> None:
    count = 100
    outs = run_together(ADD_SOURCES, (location, "first", count), (location, "second", count))
    first, second = ([int(line) for line in out.split()] for out in outs)
    assert first == second  # both were given the one memory of each message
    with open_store(location) as store:
        memories = store.namespace(NS).memories()
    assert [m.id for m in memories] == first
    assert [m.source for m in memories] == [f"telegram:42:{i}" for i in range(count)]


ADD_ONE = """
    import os, sys
    from memory import open_store as MemoryStore

    store = MemoryStore(sys.argv[1])
    ns = store.namespace("users/42")
    memory = ns.add(sys.argv[2], ["from-the-child"])
    print(memory.id, flush=True)
    if sys.argv[3] == "close":
        store.close()  # memory.json rewritten, a new journal
    else:
        os._exit(0)  # the change only in the journal
"""


@pytest.mark.parametrize("child_ends", ["close", "crash"])
def test_a_process_sees_another_ones_changes_on_its_next_operation(
    location: str, child_ends: str
) -> None:
    with open_store(location) as store:
        ns = store.namespace(NS)
        mine = ns.add("added by the parent", ["x"])
        assert ns.memories() == [mine]

        done = subprocess.run(
            [
                sys.executable,
                "-c",
                textwrap.dedent(ADD_ONE),
                location,
                "the child's",
                child_ends,
            ],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        theirs = int(done.stdout)
        assert theirs > mine.id

        assert ns.count() == 2
        assert ns.get(theirs).content == "the child's"
        assert [m.id for m in ns.memories()] == [mine.id, theirs]
        assert [hit.memory.id for hit in ns.search("child's", ranker="seed")] == [theirs]
        after = ns.add("added by the parent afterwards")
        assert after.id > theirs
        ns.delete(theirs)
    with open_store(location) as store:
        assert [m.id for m in store.namespace(NS).memories()] == [mine.id, after.id]


UPDATER = """
    import sys
    from memory import open_store as MemoryStore

    data_dir, memory_id, field, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    with MemoryStore(data_dir) as store:
        ns = store.namespace("users/42")
        ns.memories()
        print("ready", flush=True)
        sys.stdin.readline()
        for i in range(count):
            if field == "content":
                ns.update(memory_id, content=f"content {i}")
            elif field == "tags":
                ns.update(memory_id, tags=[f"tag{i}"])
            else:
                assert ns.search("content", ranker="seed")
"""


def test_interleaved_updates_from_two_processes_lose_no_update(location: str) -> None:
    count = 100
    with open_store(location) as store:
        memory = store.namespace(NS).add("content at the start", ["start"])
    run_together(
        UPDATER,
        (location, memory.id, "content", count),
        (location, memory.id, "tags", count),
        (location, memory.id, "search", count),
    )
    with open_store(location) as store:
        final = store.namespace(NS).get(memory.id)
    # Each update writes the whole record: one made from a stale copy would undo the other's.
    assert final.content == f"content {count - 1}"
    assert final.tags == (f"tag{count - 1}",)
    # Touches carry absolute counts; one made from a stale copy would lose searches.
    assert final.access_count == count


def test_access_counts_from_two_processes_add_up(location: str) -> None:
    count = 60
    with open_store(location) as store:
        memory = store.namespace(NS).add("content shared by two processes")
    run_together(
        UPDATER,
        (location, memory.id, "search", count),
        (location, memory.id, "search", count),
    )
    with open_store(location) as store:
        assert store.namespace(NS).get(memory.id).access_count == 2 * count


def test_two_stores_in_one_process_behave_like_two_processes(location: str) -> None:
    with open_store(location) as one, open_store(location) as two:
        a, b = one.namespace(NS), two.namespace(NS)
        first = a.add("from one")
        assert b.get(first.id) == first
        second = b.add("from two")
        assert second.id > first.id
        b.update(first.id, tags=["seen-by-two"])
        assert a.get(first.id).tags == ("seen-by-two",)
        a.delete(second.id)
        assert [m.id for m in b.memories()] == [first.id]
