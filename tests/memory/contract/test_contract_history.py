"""The change history and undo, on every backend (``memory.history``): one change at a time,
two undos of one change at once, another process's change during an undo, the retention.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from backends import Opener

from memory.history import Author, acting, undo


def test_history_and_undo_go_back_one_change_at_a_time(opener: Opener) -> None:
    store = opener()
    ns = store.namespace("users/42")
    with acting(Author("user:42", "/remember", "Alice", chat=42, change="add00000")):
        memory = ns.add("code in D:\\projects", ["code"], "work")
    ns.touch([memory.id])
    counted = ns.get(memory.id)
    with acting(Author("user:42", "/edit", change="edit0000")):
        ns.update(memory.id, content="code in E:\\work")
    with acting(Author("user:42", "/forget", change="forget00")):
        ns.delete(memory.id)
    for expected in ("forget00", "edit0000"):
        history = ns.history()
        change = history.last_change()
        assert change == expected
        with acting(Author("user:42", "/undo")):
            undo(ns, history, change)
    back = ns.get(memory.id)
    assert (back.content, back.created_at, back.access_count) == (
        "code in D:\\projects",
        counted.created_at,
        counted.access_count,
    )
    ns.update(memory.id, content="changed since")
    history = ns.history()
    with acting(Author("user:42", "/undo")):
        done = undo(ns, history, "add00000")
    assert [left.record.memory_id for left in done.left] == [memory.id]  # the later change stands
    later = ns.add("later")
    assert later.id > memory.id
    store.close()
    records = opener().namespace("users/42").history().records
    assert [r.op for r in records] == [
        "add", "update", "delete", "restore", "restore", "update", "keep", "add",
    ]  # fmt: skip
    assert records[0].author.name == "Alice" and records[0].author.chat == 42
    assert records[3].author.undoes == "forget00"
    assert set(records[1].to_dict()) >= {"ref", "at", "op", "id", "before", "after", "change"}
    assert [r.op for r in opener().namespace("users/42").history(later.id).records] == ["add"]


def test_two_processes_undoing_one_change_at_once_undo_it_once(opener: Opener) -> None:
    """Both read the history before either undoes (one ↩ Undo pressed in two processes, or
    /undo twice): the first reverts the change, the second finds it taken and writes nothing."""
    first, second = opener().namespace("users/42"), opener().namespace("users/42")
    with acting(Author("user:42", "/remember", change="add00000")):
        kept, gone = first.add("keep me"), first.add("add and undo me")
    first.update(kept.id, content="kept, edited")
    with acting(Author("user:42", "model", change="turn0000")):
        first.update(kept.id, content="the model's edit")
        first.delete(gone.id)
    seen_by_first, seen_by_second = first.history(), second.history()
    with acting(Author("user:42", "↩", change="undo1111")):
        done = undo(first, seen_by_first, "turn0000")
    with acting(Author("user:42", "↩", change="undo2222")):
        again = undo(second, seen_by_second, "turn0000")
    assert [r.memory_id for r in done.reverted] == [gone.id, kept.id] and not done.left
    assert again.reverted == () and again.left == ()
    assert [m.content for m in second.memories()] == ["kept, edited", "add and undo me"]
    assert [r.author.change for r in second.history().records if r.author.undoes] == [
        "undo1111",
        "undo1111",
    ]


class ChangedBetweenCalls:
    """A namespace another process writes to right after the first call an undo makes on it:
    an undo that checks a memory in one call and reverts it in another reverts that write."""

    def __init__(self, namespace: Any, other_process_writes: Callable[[], None]) -> None:
        self._namespace, self._write = namespace, other_process_writes

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._namespace, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            result = method(*args, **kwargs)
            write, self._write = self._write, lambda: None
            write()
            return result

        return call


def test_a_change_another_process_makes_during_an_undo_is_not_reverted(opener: Opener) -> None:
    ns, other = opener().namespace("users/42"), opener().namespace("users/42")
    with acting(Author("user:42", "/remember", change="add00000")):
        memory = ns.add("standup at 10")
    with acting(Author("user:42", "/edit", change="edit0000")):
        ns.update(memory.id, content="standup at 11")
    history = ns.history()

    def bob_edits() -> None:
        with acting(Author("user:43", "/edit", "Bob", change="bobs0000")):
            other.update(memory.id, content="standup at 12, says Bob")

    with acting(Author("user:42", "/undo", change="undo0000")):
        undo(ChangedBetweenCalls(ns, bob_edits), history, "edit0000")  # type: ignore[arg-type]
    assert ns.get(memory.id).content == "standup at 12, says Bob"  # his change stands
    ops = [(r.op, r.author.change) for r in ns.history(memory.id).records]
    assert ops[-1] == ("update", "bobs0000")


def test_the_history_keeps_the_newest_history_max_records(opener: Opener) -> None:
    ns = opener(history_max=20).namespace("users/1")
    memory = ns.add("v0")
    for n in range(1, 30):
        ns.update(memory.id, content=f"v{n}")
    records = ns.history().records
    assert len(records) == 20
    assert records[-1].after is not None and records[-1].after.content == "v29"
    assert records[0].after is not None and records[0].after.content == "v10"
