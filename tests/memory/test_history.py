"""The history of a namespace's memories and undo, on the real file store (``memory.history``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memory.errors import MemoryStoreError
from memory.files import FileNamespace, MemoryStore
from memory.files.changelog import HISTORY
from memory.history import Author, acting, undo

REPO_ROOT = Path(__file__).resolve().parents[2]
ALICE = Author("user:42", "/remember", "Alice", chat=42, change="aaaaaaaa")


def _undo_last(ns: FileNamespace, **filters: object) -> tuple[str | None, object]:
    history = ns.history()
    change = history.last_change(**filters)  # type: ignore[arg-type]
    return change, undo(ns, history, change) if change else None


def test_every_change_is_recorded_with_who_when_and_the_door(ns: FileNamespace) -> None:
    with acting(ALICE):
        memory = ns.add("standup at 10", ["work"], "meeting")
    with acting(Author("user:43", "/edit", "Bob", chat=-100, change="bbbbbbbb")):
        ns.update(memory.id, content="standup at 11")
    with acting(Author("cli", "cli", change="cccccccc")):
        ns.delete(memory.id)
    ns.import_memories([{"id": 7, "content": "imported"}])
    records = ns.history().records
    assert [(r.op, r.memory_id, r.author.by, r.author.door) for r in records] == [
        ("add", memory.id, "user:42", "/remember"),
        ("update", memory.id, "user:43", "/edit"),
        ("delete", memory.id, "cli", "cli"),
        ("import", 7, "library", "library"),
    ]
    assert records[1].before is not None and records[1].before.content == "standup at 10"
    assert records[1].after is not None and records[1].after.content == "standup at 11"
    assert records[0].author.name == "Alice" and records[0].author.chat == 42
    assert all(r.at.endswith("Z") for r in records)
    assert [r.memory_id for r in ns.history(memory.id).records] == [memory.id] * 3


def test_undo_of_add_edit_and_delete_goes_back_one_change_at_a_time(
    store: MemoryStore, ns: FileNamespace
) -> None:
    with acting(Author("user:42", "/remember", change="add00000")):
        memory = ns.add("code in D:\\projects", ["code"], "work")
    ns.search("code")  # an access: counts and times a delete must bring back
    counted = ns.get(memory.id)
    with acting(Author("user:42", "/edit", change="edit0000")):
        ns.update(memory.id, content="code in E:\\work", tags=["path"], category="dev")
    with acting(Author("user:42", "/forget", change="forget00")):
        ns.delete(memory.id)

    with acting(Author("user:42", "/undo", change="undo0001")):
        change, _ = _undo_last(ns)
    assert change == "forget00"
    back = ns.get(memory.id)  # the same id, times and counts, with the edited text
    assert (back.id, back.created_at, back.access_count) == (
        memory.id,
        counted.created_at,
        counted.access_count,
    )
    assert (back.content, back.tags, back.category) == ("code in E:\\work", ("path",), "dev")

    with acting(Author("user:42", "/undo", change="undo0002")):
        change, _ = _undo_last(ns)
    assert change == "edit0000"
    assert ns.get(memory.id).content == "code in D:\\projects"
    assert ns.get(memory.id).tags == ("code",) and ns.get(memory.id).category == "work"

    with acting(Author("user:42", "/undo", change="undo0003")):
        change, _ = _undo_last(ns)
    assert change == "add00000" and ns.memories() == []
    assert _undo_last(ns) == (None, None)  # nothing left to undo
    # Restoring an old id did not hand it out again: new ids still grow.
    later = ns.add("later")
    assert later.id > memory.id
    store.close()
    reopened = MemoryStore(store.data_dir).namespace("users/42")
    assert [m.id for m in reopened.memories()] == [later.id]
    ops = [r.op for r in reopened.history().records]
    assert ops == ["add", "update", "delete", "restore", "restore", "delete", "add"]


def test_an_undo_leaves_a_memory_changed_since_as_it_is_and_says_who(ns: FileNamespace) -> None:
    with acting(Author("user:42", "/remember", change="first000")):
        kept = ns.add("one")
        mine = ns.add("two")
    with acting(Author("user:43", "/edit", "Bob", change="bobs0000")):
        ns.update(kept.id, content="one, as Bob has it")
    history = ns.history()
    done = undo(ns, history, "first000")
    assert [r.memory_id for r in done.reverted] == [mine.id]
    [left] = done.left
    assert left.record.memory_id == kept.id
    assert left.since is not None and left.since.author.name == "Bob"
    assert ns.get(kept.id).content == "one, as Bob has it"  # the later change stands
    # The change counts as undone: the next undo goes further back, not to it again.
    assert ns.history().last_change(may_undo=lambda by: by == "user:42") is None
    assert undo(ns, ns.history(), "first000").reverted == ()


def test_a_member_undoes_only_their_own_changes_in_their_chat(ns: FileNamespace) -> None:
    with acting(Author("user:42", "/remember", chat=-1, change="alice000")):
        ns.add("alice's")
    with acting(Author("user:43", "/remember", chat=-1, change="bob00000")):
        ns.add("bob's")
    with acting(Author("user:42", "/remember", chat=42, change="private0")):
        ns.add("in private")
    history = ns.history()
    assert history.last_change(chat=-1, may_undo=lambda by: by == "user:42") == "alice000"
    assert history.last_change(chat=-1) == "bob00000"  # an administrator: anyone's
    assert history.last_change(chat=42) == "private0"


def test_history_is_bounded_by_the_retention(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "data", history_max=20) as store:
        ns = store.namespace("users/1")
        for number in range(100):
            ns.add(f"note {number}")
        records = ns.history().records
        assert len(records) == 20
        assert records[-1].after is not None and records[-1].after.content == "note 99"
        lines = (ns.path / HISTORY).read_bytes().splitlines()
        assert len(lines) <= 20 + 10  # the slack before a rewrite
    # Records older than history_days are neither shown nor kept.
    with MemoryStore(tmp_path / "data", history_days=1) as store:
        ns = store.namespace("users/1")
        path = ns.path / HISTORY
        old = [json.loads(line) for line in path.read_bytes().splitlines()]
        for record in old:
            record["at"] = "2020-01-01T00:00:00.000Z"
        path.write_text("".join(json.dumps(r) + "\n" for r in old))
        assert ns.history().records == ()
        ns.add("new")
        assert [r.after.content for r in ns.history().records if r.after] == ["new"]
        assert len(path.read_bytes().splitlines()) == 1


def test_a_damaged_history_file_is_kept_aside_and_loses_no_memory(ns: FileNamespace) -> None:
    first = ns.add("first")
    path = ns.path / HISTORY
    with path.open("ab") as handle:
        handle.write(b'{"op": "add", "id": "nonsense"}\n\xff\xfe garbage\n{"torn": ')
    second = ns.add("second")  # appended after the torn line, on a line of its own
    history = ns.history()
    assert [r.memory_id for r in history.records] == [first.id, second.id]
    assert history.unreadable == 3 and history.kept is not None
    assert b"garbage" in Path(history.kept).read_bytes()  # the bytes, as they were
    assert [m.content for m in ns.memories()] == ["first", "second"]
    assert undo(ns, history, history.records[-1].change).reverted  # undo still works
    assert [m.content for m in ns.memories()] == ["first"]


def test_a_history_that_cannot_be_written_refuses_the_change(ns: FileNamespace) -> None:
    ns.add("first")
    path = ns.path / HISTORY
    path.unlink()
    path.mkdir()  # the history file cannot be opened for writing
    with pytest.raises(MemoryStoreError):
        ns.add("second")
    assert [m.content for m in ns.memories()] == ["first"]


def _cli(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "memory", "--data-dir", str(data_dir), "--ns", "users/9"]
    return subprocess.run(
        [*command, *args], capture_output=True, text=True, cwd=REPO_ROOT, check=False
    )


def test_the_command_line_shows_history_and_undoes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    added = json.loads(_cli(data, "--json", "add", "standup at 10").stdout)
    _cli(data, "update", str(added["id"]), "--content", "standup at 11")
    _cli(data, "delete", str(added["id"]))
    listed = json.loads(_cli(data, "--json", "history", str(added["id"])).stdout)
    assert [(r["op"], r["by"], r["door"]) for r in listed] == [
        ("add", "cli", "cli"),
        ("update", "cli", "cli"),
        ("delete", "cli", "cli"),
    ]
    assert "standup at 11" in _cli(data, "history").stdout  # a readable table
    undone = _cli(data, "--json", "undo")
    assert json.loads(undone.stdout)["reverted"] == [added["id"]]
    assert json.loads(_cli(data, "--json", "get", str(added["id"])).stdout)["content"] == (
        "standup at 11"
    )
    assert _cli(data, "undo").returncode == 0  # the update
    assert _cli(data, "undo").returncode == 0  # the add
    nothing = _cli(data, "undo")
    assert nothing.returncode == 1 and "nothing to undo" in nothing.stderr
    unknown = _cli(data, "history", "123")
    assert unknown.returncode == 1 and "no memory with id 123" in unknown.stderr
    odd = _cli(data, "undo", "--change", "nope")
    assert odd.returncode == 1 and "no change 'nope'" in odd.stderr
    assert "Traceback" not in nothing.stderr + unknown.stderr + odd.stderr
