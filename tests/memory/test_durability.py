"""Durability: what is acknowledged survives kill -9; unreadable files are kept, never overwritten.

Crashes are real: a child process runs the store and is killed with SIGKILL, or leaves with
``os._exit`` before any clean-up. Corruption is written into the files by hand, as a bad disk, a
crash or a person with an editor would leave it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from memory.files import FileNamespace, MemoryStore

REPO_ROOT = Path(__file__).resolve().parents[2]
NS = "users/42"


def python(code: str, *args: object) -> subprocess.Popen[str]:
    """Start ``code`` in a child Python process that can import ``memory``."""
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_python(code: str, *args: object) -> str:
    """Run ``code`` in a child process to the end; its stdout."""
    child = python(code, *args)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    return out


def journal_of(data_dir: Path) -> Path:
    return data_dir / NS / "memory.journal"


def snapshot_of(data_dir: Path) -> Path:
    return data_dir / NS / "memory.json"


def contents(ns: FileNamespace) -> list[str]:
    return [m.content for m in ns.memories()]


def assert_every_journal_line_parses(data_dir: Path) -> None:
    journal = journal_of(data_dir)
    if journal.exists():
        data = journal.read_bytes()
        assert not data or data.endswith(b"\n")
        for line in data.splitlines():
            assert isinstance(json.loads(line), dict)


# -- kill -9 -------------------------------------------------------------------------------

ADD_IN_A_LOOP = """
    import sys
    from memory.files import MemoryStore

    # A short compaction delay, so that kills also land during background compactions.
    store = MemoryStore(sys.argv[1], compact_seconds=0.05)
    ns = store.namespace("users/42")
    i = 0
    while True:
        memory = ns.add(f"memory {i}", ["loop"])
        print(i, memory.id, flush=True)
        i += 1
"""

CHANGE_IN_A_LOOP = """
    import sys
    from memory.files import MemoryStore

    store = MemoryStore(sys.argv[1], compact_seconds=0.05)
    ns = store.namespace("users/42")
    i = 0
    while True:
        memory = ns.add(f"memory {i}")
        print("add", memory.id, flush=True)
        ns.update(memory.id, content=f"memory {i} updated", tags=["changed"])
        print("update", memory.id, flush=True)
        if i % 3 == 0:
            ns.delete(memory.id)
            print("delete", memory.id, flush=True)
        i += 1
"""


def kill_after(code: str, data_dir: Path, lines: int) -> list[list[str]]:
    """Run ``code``, SIGKILL it once it has printed ``lines`` lines; every complete line."""
    child = python(code, data_dir)
    assert child.stdout is not None
    watchdog = threading.Timer(60, child.kill)  # a hung child fails the test, not the run
    watchdog.start()
    try:
        printed = []
        while len(printed) < lines:
            line = child.stdout.readline()
            if not line:
                pytest.fail(
                    f"the child stopped early: {child.stderr.read() if child.stderr else ''}"
                )
            printed.append(line)
        os.kill(child.pid, signal.SIGKILL)
        # The rest through the same buffer: ``readline`` may have read lines ahead into it,
        # which ``communicate`` (raw reads of the pipe) would never return. A child running
        # ahead of this reader (a loaded machine) then looked like changes nobody reported.
        rest = child.stdout.read()
        child.communicate()
    finally:
        watchdog.cancel()
    assert child.returncode == -signal.SIGKILL
    printed += rest.splitlines(keepends=True)
    return [line.split() for line in printed if line.endswith("\n")]


def test_every_add_reported_before_kill_9_is_there_after_reopening(tmp_path: Path) -> None:
    reported = kill_after(ADD_IN_A_LOOP, tmp_path, lines=400)
    expected = {int(memory_id): f"memory {i}" for i, memory_id in reported}

    snapshot = snapshot_of(tmp_path)
    if snapshot.exists():  # replaced atomically: always a whole JSON array
        assert isinstance(json.loads(snapshot.read_bytes()), list)
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        found = {m.id: m.content for m in ns.memories()}
        assert {i: found.get(i) for i in expected} == expected
        # At most one more: an add made durable whose id the kill kept from being printed.
        assert len(found) - len(expected) in (0, 1)
        assert list(found) == sorted(found)
        assert_every_journal_line_parses(tmp_path)
        ns.add("after the crash")
    assert len(json.loads(snapshot.read_bytes())) == len(found) + 1


def test_every_update_and_delete_reported_before_kill_9_holds(tmp_path: Path) -> None:
    reported = kill_after(CHANGE_IN_A_LOOP, tmp_path, lines=600)
    last: dict[int, str] = {}
    for operation, memory_id in reported:
        last[int(memory_id)] = operation

    # The kill may land between a change made durable and its line being printed: the last
    # reported memory may have had one more, unreported, change (a delete after its update).
    unreported_delete = int(reported[-1][1]) if reported[-1][0] == "update" else None
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        found = {m.id: m for m in ns.memories()}
        for memory_id, operation in last.items():
            if operation == "delete":
                assert memory_id not in found
            elif (
                operation == "update" and memory_id == unreported_delete and memory_id not in found
            ):
                pass  # its delete was made durable, but the kill came before the line
            elif operation == "update":
                assert found[memory_id].content.endswith(" updated")
                assert found[memory_id].tags == ("changed",)
            else:
                assert memory_id in found
        assert set(found) - set(last) <= {max(found, default=0)}
        assert_every_journal_line_parses(tmp_path)


SEARCH_THEN_CRASH = """
    import os, sys
    from memory.files import MemoryStore

    ns = MemoryStore(sys.argv[1]).namespace("users/42")
    print(len(ns.search(sys.argv[2], ranker="seed")), flush=True)
    os._exit(0)
"""


def test_access_counts_survive_a_crash(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        memory = store.namespace(NS).add("the wifi password is hunter2")
    assert run_python(SEARCH_THEN_CRASH, tmp_path, "wifi").split() == ["1"]
    with MemoryStore(tmp_path) as store:
        assert store.namespace(NS).get(memory.id).access_count == 1


# -- memory.json is brought up to date -----------------------------------------------------


def test_close_brings_memory_json_up_to_date(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path)
    ns = store.namespace(NS)
    kept = ns.add("kept", ["a"])
    changed = ns.add("to change")
    gone = ns.add("to delete")
    ns.update(changed.id, content="changed", category="Work")
    ns.delete(gone.id)
    ns.search("kept", ranker="seed")
    expected = ns.export()
    assert [r["id"] for r in expected] == [kept.id, changed.id]
    store.close()

    assert json.loads(snapshot_of(tmp_path).read_text("utf-8")) == expected
    assert expected[0]["accessCount"] == 1
    # memory.json alone, without the journal, holds every change.
    alone = tmp_path / "alone"
    snapshot_of(alone).parent.mkdir(parents=True)
    shutil.copyfile(snapshot_of(tmp_path), snapshot_of(alone))
    with MemoryStore(alone) as copy:
        assert copy.namespace(NS).export() == expected


def wait_for(condition: object, what: str, seconds: float = 10.0) -> None:
    """Poll ``condition()`` until true; a generous deadline, not a timing assertion."""
    assert callable(condition)
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"{what} did not happen within {seconds} s")
        time.sleep(0.02)


def test_memory_json_catches_up_while_running(tmp_path: Path) -> None:
    snapshot = snapshot_of(tmp_path)

    def snapshot_records() -> list[dict[str, object]]:
        try:
            records: list[dict[str, object]] = json.loads(snapshot.read_bytes())
        except FileNotFoundError:
            return []
        return records

    with MemoryStore(tmp_path, compact_seconds=0.2) as store:
        ns = store.namespace(NS)
        memory = ns.add("written in the background")
        wait_for(lambda: [r["id"] for r in snapshot_records()] == [memory.id], "a compaction")
        ns.update(memory.id, content="changed in the background")
        wait_for(
            lambda: snapshot_records()[0]["content"] == "changed in the background",
            "a compaction of the update",
        )
        ns.delete(memory.id)
        wait_for(lambda: snapshot_records() == [], "a compaction of the delete")


# -- a memory.json that does not parse --------------------------------------------------------

GARBAGE = {
    "truncated": '[{"id": 1705312200000, "content": "代码在 D:\\\\proj'.encode(),
    "binary": b"\x00\xff\xfe\x89PNG not json at all",
    "not an array": b'{"id": 1, "content": "an object, not a list"}',
    "empty": b"",
}


@pytest.mark.parametrize("base", ["kept", "missing"])
@pytest.mark.parametrize("first_operation", ["read", "write"])
@pytest.mark.parametrize("garbage", list(GARBAGE.values()), ids=list(GARBAGE))
def test_a_corrupt_memory_json_is_set_aside_and_never_overwritten(
    tmp_path: Path, garbage: bytes, first_operation: str, base: str
) -> None:
    """With the copy of the last snapshot compaction wrote, the namespace keeps its memories;
    without it (a data directory of an older version), it starts from the journal."""
    with MemoryStore(tmp_path) as store:
        store.namespace("users/2").add("another namespace")
        store.namespace(NS).add("lost to corruption")
    snapshot = snapshot_of(tmp_path)
    snapshot.write_bytes(garbage)
    if base == "missing":
        (snapshot.parent / "memory.journal.base").unlink()
    survivors = ["lost to corruption"] if base == "kept" else []

    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        if first_operation == "read":
            assert contents(ns) == survivors
            fresh = ns.add("a fresh start")
        else:
            fresh = ns.add("a fresh start")
            assert contents(ns) == [*survivors, "a fresh start"]
        moved = ns.pop_quarantine()
        assert moved is not None
        assert moved.parent == ns.path
        assert moved.name.startswith("memory.json.corrupt-")
        assert moved.read_bytes() == garbage
        assert ns.pop_quarantine() is None

        other = store.namespace("users/2")
        assert contents(other) == ["another namespace"]
        assert other.pop_quarantine() is None

    assert [r["content"] for r in json.loads(snapshot.read_bytes())] == [*survivors, fresh.content]
    assert moved.read_bytes() == garbage
    assert sorted(p.name for p in ns.path.glob("memory.json.corrupt-*")) == [moved.name]
    with MemoryStore(tmp_path) as store:
        assert contents(store.namespace(NS)) == [*survivors, "a fresh start"]
        assert store.namespace(NS).pop_quarantine() is None


BAD_RECORDS = {
    "no id": {"content": "no id"},
    "blank content": {"id": 2, "content": "   "},
    "duplicate id": {"id": 1, "content": "the same id again"},
    "bad time": {"id": 3, "content": "x", "createdAt": "yesterday"},
    "tags not a list": {"id": 4, "content": "x", "tags": 5},
    "not an object": "just a string",
}


@pytest.mark.parametrize("bad", list(BAD_RECORDS.values()), ids=list(BAD_RECORDS))
def test_an_unreadable_record_is_skipped_and_the_file_kept(tmp_path: Path, bad: object) -> None:
    snapshot = snapshot_of(tmp_path)
    snapshot.parent.mkdir(parents=True)
    good = {"id": 1, "content": "good", "tags": ["a"]}
    original = json.dumps([good, bad, {"id": 5, "content": "also good"}]).encode()
    snapshot.write_bytes(original)

    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert contents(ns) == ["good", "also good"]
        kept = ns.pop_quarantine()
        assert kept is not None and kept.name.startswith("memory.json.corrupt-")
        assert kept.read_bytes() == original
        ns.add("still works")
    with MemoryStore(tmp_path) as store:
        assert contents(store.namespace(NS)) == ["good", "also good", "still works"]
    assert kept.read_bytes() == original


# -- a damaged journal ----------------------------------------------------------------------

ADD_THEN_CRASH = """
    import os, sys
    from memory.files import MemoryStore

    ns = MemoryStore(sys.argv[1]).namespace("users/42")
    for content in sys.argv[2:]:
        print(ns.add(content).id, flush=True)
    os._exit(0)  # no close: the changes are only in the journal
"""


def crash_after_adding(data_dir: Path, *texts: str) -> list[int]:
    out = run_python(ADD_THEN_CRASH, data_dir, *texts)
    assert not snapshot_of(data_dir).exists()
    return [int(line) for line in out.split()]


def test_a_garbage_line_in_the_journal_is_skipped_and_kept(tmp_path: Path) -> None:
    crash_after_adding(tmp_path, "one", "two", "three")
    journal = journal_of(tmp_path)
    lines = journal.read_bytes().splitlines(keepends=True)
    assert len(lines) == 3
    damaged = lines[0] + b'\x00\xff{"op": garbage\n' + lines[1] + lines[2]
    journal.write_bytes(damaged)

    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert contents(ns) == ["one", "two", "three"]
        kept = ns.pop_quarantine()
        assert kept is not None and kept.name.startswith("memory.journal.corrupt-")
        assert kept.read_bytes() == damaged
        assert ns.pop_quarantine() is None
        ns.add("four")
    with MemoryStore(tmp_path) as store:
        assert contents(store.namespace(NS)) == ["one", "two", "three", "four"]
    assert kept.read_bytes() == damaged


def test_a_torn_last_journal_line_is_cut_off(tmp_path: Path) -> None:
    crash_after_adding(tmp_path, "one", "two", "three")
    journal = journal_of(tmp_path)
    with journal.open("ab") as f:
        f.write(b'{"op":"put","m":{"id":1705312200000,"content":"never ackn')  # a crash mid-append

    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert contents(ns) == ["one", "two", "three"]
        ns.add("four")
        assert_every_journal_line_parses(tmp_path)  # the torn bytes did not glue onto "four"
    with MemoryStore(tmp_path) as store:
        assert contents(store.namespace(NS)) == ["one", "two", "three", "four"]


def test_a_journal_left_by_a_crash_is_replayed(tmp_path: Path) -> None:
    ids = crash_after_adding(tmp_path, "one", "two")
    with MemoryStore(tmp_path) as store:
        assert [m.id for m in store.namespace(NS).memories()] == ids
    assert [r["id"] for r in json.loads(snapshot_of(tmp_path).read_bytes())] == ids


# -- a read-only data directory -----------------------------------------------------------

READ_ONLY_CHILD = """
    import json, sys
    from pathlib import Path
    from memory.errors import MemoryStoreError
    from memory.files import MemoryStore

    data = Path(sys.argv[1])
    result = {}
    try:
        (data / "probe").write_text("x")
        result["writable"] = True
    except OSError:
        result["writable"] = False
    with MemoryStore(data) as store:
        ns = store.namespace("users/42")
        first = ns.memories()[0]
        calls = {
            "add": lambda: ns.add("new"),
            "update": lambda: ns.update(first.id, content="changed"),
            "delete": lambda: ns.delete(first.id),
            "import": lambda: ns.import_memories([{"id": 7, "content": "imported"}]),
            "add to a new namespace": lambda: store.namespace("users/43").add("x"),
        }
        for name, call in calls.items():
            try:
                call()
                result[name] = "ok"
            except MemoryStoreError as e:
                result[name] = e.code
        result["search"] = [hit.memory.content for hit in ns.search("代码", ranker="seed")]
        result["memories"] = [m.content for m in ns.memories()]
    print(json.dumps(result, ensure_ascii=False))
"""


def files_under(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def read_only_command(data_dir: Path) -> list[str]:
    """A command that runs the child with ``data_dir`` read-only, or skips the test.

    chmod does not stop root, so as root the folder is bind-mounted read-only onto itself in a
    private mount namespace (``unshare --mount``), which needs CAP_SYS_ADMIN.
    """
    child = [sys.executable, "-c", textwrap.dedent(READ_ONLY_CHILD), str(data_dir)]
    if os.geteuid() != 0:
        return child
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        pytest.skip("running as root, where chmod does not stop writes, and no unshare/mount")
    mount = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1"'
    probe = subprocess.run(
        ["unshare", "--mount", "sh", "-c", mount, "sh", str(data_dir)],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(
            "running as root, where chmod does not stop writes, and a read-only bind mount "
            f"is not allowed here: {probe.stderr.strip()}"
        )
    # sh -c SCRIPT sh DATA_DIR CHILD...: "$1" is the folder, "$@" after a shift the child.
    script = f'{mount} && shift && exec "$@"'
    return ["unshare", "--mount", "sh", "-c", script, "sh", str(data_dir), *child]


def set_read_only(folder: Path, read_only: bool) -> None:
    for path in [folder, *folder.rglob("*")]:
        if path.is_dir():
            path.chmod(0o555 if read_only else 0o755)
        else:
            path.chmod(0o444 if read_only else 0o644)


def test_a_read_only_data_directory_still_answers_and_changes_nothing(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with MemoryStore(data) as store:
        ns = store.namespace(NS)
        ns.add("代码在 D:\\projects", ["代码"])
        ns.add("standup at 10:00")
    before = files_under(data)

    command = read_only_command(data)
    if os.geteuid() != 0:
        set_read_only(data, True)
    try:
        done = subprocess.run(command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    finally:
        if os.geteuid() != 0:
            set_read_only(data, False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)

    assert result.pop("writable") is False, "the data directory was not read-only"
    assert result == {
        "add": "MEMORY_SAVE_FAILED",
        "update": "MEMORY_SAVE_FAILED",
        "delete": "MEMORY_SAVE_FAILED",
        "import": "MEMORY_SAVE_FAILED",
        "add to a new namespace": "MEMORY_SAVE_FAILED",
        "search": ["代码在 D:\\projects"],
        "memories": ["代码在 D:\\projects", "standup at 10:00"],
    }
    assert files_under(data) == before


def test_a_journal_entry_that_cannot_be_replayed_is_kept_aside(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        store.namespace(NS).add("kept")
    journal = journal_of(tmp_path)
    bad = {"op": "put", "m": {"id": 2**64, "content": "an id no store can hold"}}
    with journal.open("a", encoding="utf-8") as f:
        f.write(json.dumps(bad) + "\n")
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert [m.content for m in ns.memories()] == ["kept"]
        kept = ns.pop_quarantine()
    assert kept is not None and "an id no store can hold" in kept.read_text("utf-8")


def test_a_largest_id_left_in_the_files_does_not_stop_adds(tmp_path: Path) -> None:
    """What an import of id 2**63 - 1 left before imports renumbered such ids, also after its
    memory was deleted and compacted: memory.json (or a hand edit) holding it, and the
    journal's first line (the highest id seen) naming it."""
    far = 2**63 - 1
    folder = tmp_path / NS
    folder.mkdir(parents=True)
    (folder / "memory.json").write_text(json.dumps([{"id": far, "content": "far"}]), "utf-8")
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        first = ns.add("one more")
        assert first.id < far and [m.content for m in ns.memories()] == ["far", "one more"]
        ns.delete(far)  # /forget, then compaction at the close
    header, *rest = journal_of(tmp_path).read_text("utf-8").splitlines(keepends=True)
    assert json.loads(header)["op"] == "high"
    header = json.dumps({**json.loads(header), "id": far}) + "\n"  # as it was written before
    journal_of(tmp_path).write_text("".join([header, *rest]), "utf-8")
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert first.id < ns.add("after the restart").id < far
