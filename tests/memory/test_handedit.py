"""``memory.json`` edited by hand while the store holds the namespace: merged, never taken
wholesale, never overwritten unread; a save that breaks the JSON leaves the namespace serving
what it held."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from memory.files import FileNamespace, MemoryStore


def contents(ns: FileNamespace) -> list[str]:
    return [m.content for m in ns.memories()]


def read(ns: FileNamespace) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = json.loads((ns.path / "memory.json").read_bytes())
    return records


def save(ns: FileNamespace, records: list[dict[str, Any]], *, in_place: bool = False) -> None:
    """Save as an editor does: a new file renamed over it, or truncate and write in place."""
    path = ns.path / "memory.json"
    data = json.dumps(records, ensure_ascii=False, indent=2).encode()
    if in_place:
        with open(path, "r+b") as f:
            f.truncate(0)
            f.write(data)
    else:
        tmp = path.with_name("editor.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)


def conflicts(ns: FileNamespace) -> list[dict[str, Any]]:
    return [e for p in ns.path.glob("memory.json.conflict-*") for e in json.loads(p.read_bytes())]


def test_a_stale_save_keeps_the_adds_confirmed_while_the_person_edited(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/42")
        ns.add("first")
        ns.flush()
        opened = read(ns)  # the person's editor reads the file
        confirmed = [ns.add("added while the file was open")]
        ns.flush()  # compaction rewrites memory.json meanwhile
        confirmed.append(ns.add("added after that"))
        opened[0]["content"] = "first, edited by hand"
        opened.append({"id": 7, "content": "a memory typed by hand"})
        save(ns, opened)
        expected = [
            "first, edited by hand",
            "a memory typed by hand",
            "added while the file was open",
            "added after that",
        ]
        assert sorted(contents(ns)) == sorted(expected)
    assert sorted(r["content"] for r in read(ns)) == sorted(expected)
    with MemoryStore(tmp_path) as store:
        assert sorted(contents(store.namespace("users/42"))) == sorted(expected)


def test_a_hand_deletion_of_a_memory_with_a_journal_entry_is_kept(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/42")
        _, b, _ = ns.add("a"), ns.add("b"), ns.add("c")
        ns.flush()
        opened = read(ns)
        ns.update(b.id, content="b, updated by the bot")  # a journal entry, not compacted
        save(ns, [r for r in opened if r["id"] != b.id], in_place=True)
        later = time.time() + 1  # file times are coarser than the clock: say it was later
        os.utime(ns.path / "memory.json", (later, later))
        assert contents(ns) == ["a", "c"]
        [conflict] = conflicts(ns)  # the bot's update lost to the later deletion: kept here
        assert conflict["kept"] == "file" and conflict["file"] is None
        assert conflict["store"]["content"] == "b, updated by the bot"
    with MemoryStore(tmp_path) as store:
        assert contents(store.namespace("users/42")) == ["a", "c"]


def test_a_broken_hand_edit_leaves_the_namespace_serving_what_it_held(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/42")
        for text in ("one", "two", "three"):
            ns.add(text)
        ns.flush()
        ns.add("four, only in the journal")
        broken = (ns.path / "memory.json").read_bytes().replace(b"}\n]", b"},\n]")  # a comma
        (ns.path / "memory.json").write_bytes(broken)
        assert contents(ns) == ["one", "two", "three", "four, only in the journal"]
        kept = ns.pop_quarantine()
        assert kept is not None and kept.name.startswith("memory.json.corrupt-")
        assert kept.read_bytes() == broken
        assert [r["content"] for r in read(ns)] == contents(ns)  # written back from RAM
    with MemoryStore(tmp_path) as store:
        assert len(store.namespace("users/42").memories()) == 4


def test_a_broken_file_after_a_release_is_served_from_the_last_snapshot(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/42")
        ns.add("kept through it all")
        ns.release()  # idle: dropped from RAM
        (ns.path / "memory.json").write_bytes(b'[{"id": 1, "content": "half')
        assert contents(ns) == ["kept through it all"]
        assert ns.pop_quarantine() is not None


def test_a_conflict_is_written_beside_the_file_never_dropped(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/42")
        memory = ns.add("original")
        ns.flush()
        opened = read(ns)
        ns.update(memory.id, content="updated by the bot")  # the store changes it first
        opened[0]["content"] = "edited by hand, later"
        save(ns, opened)
        later = time.time() + 1
        os.utime(ns.path / "memory.json", (later, later))
        assert contents(ns) == ["edited by hand, later"]
        [conflict] = conflicts(ns)
        assert conflict["kept"] == "file" and conflict["store"]["content"] == "updated by the bot"


FAILING_COMPACTION = """
    import logging, resource, signal, sys
    from memory.files import MemoryStore

    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails: EFBIG
    ns = MemoryStore(sys.argv[1]).namespace("users/42")
    for n in range(40):
        ns.add(f"memory number {n}", tags=[f"tag{t}" for t in range(15)])
    limit = (ns.path / "memory.journal").stat().st_size + 100  # the journal fits, the file not
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
    for _ in range(50):
        ns.maintain(0.0, 1e9)  # what the background thread does every few seconds
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    ns.flush()
    print(len(ns.memories()))
"""


def test_a_failing_compaction_is_logged_once_and_backs_off(tmp_path: Path) -> None:
    script = textwrap.dedent(FAILING_COMPACTION)
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["40"]
    failures = [line for line in done.stderr.splitlines() if "could not compact" in line]
    assert len(failures) == 1, done.stderr
    assert "compacted users/42 again after" in done.stderr
    assert "incomplete" not in done.stderr
    with MemoryStore(tmp_path) as store:
        assert len(store.namespace("users/42").memories()) == 40


def test_a_stale_save_after_a_restart_keeps_what_the_store_confirmed(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/42")
        ns.add("a pen is in the drawer")
        other = ns.add("other")
        ns.flush()
        opened = read(ns)  # an editor opens the file while the bot runs
        ns.add("second")
        ns.update(other.id, content="other, updated by the bot")
        ns.search("pen")  # access counts change: the opened file is older than what follows
    opened.append({"id": 7, "content": "typed by hand"})
    with MemoryStore(tmp_path) as store:  # the bot restarted; the person saves the old file
        ns = store.namespace("users/42")
        save(ns, opened)
        assert sorted(contents(ns)) == [
            "a pen is in the drawer",
            "other, updated by the bot",
            "second",
            "typed by hand",
        ]
        assert any(c["file"] and c["file"]["content"] == "other" for c in conflicts(ns))
