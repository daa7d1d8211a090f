"""What background compaction writes, and how: the same bytes as ever, laid out in slices that
let other threads run, and checked against a person's save without reading it again under the
lock when it has not changed."""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.errors import MemorySaveFailed
from memory.files import MemoryStore
from memory.files.handedit import MAX_VERSIONS, History
from memory.files.io import write_temporary
from memory.files.swap import SETTLED, digest, replace_checked, settled_status
from memory.jsontext import SLICE, dump_json, dump_records
from memory.model import Memory

ARTICLE_KEYS = ["id", "content", "tags", "category", "createdAt", "accessedAt", "accessCount"]


def stdlib(value: Any) -> bytes:
    """The layout ``memory.json`` has always had."""
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


# -- the layout -----------------------------------------------------------------------------

text = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
scalars = st.none() | st.booleans() | st.integers() | st.floats() | text
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=12,
)
records = st.fixed_dictionaries(
    {
        "id": st.integers(min_value=1),
        "content": text,
        "tags": st.lists(text, max_size=3),
        "category": text,
        "createdAt": text,
        "accessedAt": text,
        "accessCount": st.integers(min_value=0),
    },
    optional={"updatedAt": text, "source": text},
)


@settings(max_examples=300, deadline=None)
@given(st.lists(records | values, max_size=2 * SLICE + 3) | values)
def test_dump_json_lays_out_every_value_as_the_standard_library(value: Any) -> None:
    assert dump_json(value) == stdlib(value)


def test_the_records_are_laid_out_slice_by_slice_with_a_pause_between() -> None:
    count = 5 * SLICE + 7
    made: list[int] = []
    at_pause: list[int] = []

    def generate() -> Any:
        for n in range(count):
            made.append(n)
            yield {"id": n, "content": f"记忆 {n}", "tags": ["a"], "category": "general"}

    data = dump_records(generate(), pause=lambda: at_pause.append(len(made)))
    assert at_pause == [SLICE * k for k in range(1, count // SLICE + 1)]
    assert data == stdlib(list(generate()))


def test_background_compaction_writes_the_articles_file_as_before(tmp_path: Path) -> None:
    filler = "代码在 D:\\projects, standup at 10:00 "
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/1")
        ns.import_memories(
            {"id": n, "content": f"{n} {filler}", "tags": ["代码", f"t{n % 7}"]}
            for n in range(1, 3 * SLICE)
        )
    with MemoryStore(tmp_path, compact_seconds=3600.0) as store:
        ns = store.namespace("users/1")
        ns.add("a new one", ["x"], source="telegram:1:2")
        ns.update(5, content="changed")
        ns.search("standup")
        ns.maintain(0.0, 3600.0)  # the janitor's compaction: written ahead, swapped in
        folder = tmp_path / "users" / "1"
        snapshot = (folder / "memory.json").read_bytes()
        assert snapshot == stdlib(ns.export())
        assert (folder / "memory.journal.base").read_bytes() == snapshot
        assert [name for name in os.listdir(folder) if name.endswith(".tmp")] == []
    on_disk = json.loads(snapshot)
    assert all(list(record)[:7] == ARTICLE_KEYS for record in on_disk)
    with MemoryStore(tmp_path) as store:
        assert store.namespace("users/1").export() == on_disk


# -- the check against a person's save ------------------------------------------------------


def settled_file(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    time.sleep(SETTLED + 0.05)  # settled_status only vouches for files this old
    return digest(data)


def test_a_settled_unchanged_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    expected = settled_file(path, b"[]\n")
    status = settled_status(path, expected)
    assert status is not None
    aside = tmp_path / "aside"
    assert replace_checked(path, b"[1]\n", expected, aside, settled=status) is None
    assert path.read_bytes() == b"[1]\n"
    assert not aside.exists()


def test_a_save_after_the_file_was_vouched_for_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    expected = settled_file(path, b'["mine"]\n')
    status = settled_status(path, expected)
    assert status is not None
    with open(path, "r+b") as f:  # an in-place save of the same size
        f.write(b'["your"]\n')
    aside = tmp_path / "aside"
    assert replace_checked(path, b"[1]\n", expected, aside, settled=status) == aside
    assert aside.read_bytes() == b'["your"]\n'
    assert path.read_bytes() == b"[1]\n"


@pytest.mark.parametrize("written", [False, True], ids=["writes its own", "written ahead"])
@pytest.mark.parametrize("saved", [b'["a person saved this"]\n', b"[]\n"], ids=["saved", "same"])
def test_a_failure_after_the_swap_puts_the_file_found_back(
    tmp_path: Path, written: bool, saved: bytes
) -> None:
    """The swap is done, then keeping the file found fails (``aside`` is a folder there): the
    file found is at ``memory.json`` again, with its bytes, and only the file written goes."""
    path = tmp_path / "memory.json"
    path.write_bytes(saved)  # a person's save since the store read b"[]\n", or not
    aside = tmp_path / "memory.json.saved-1"
    (aside / "in the way").mkdir(parents=True)
    ahead = write_temporary(path, b"[1]\n", "compacting") if written else None
    with pytest.raises(MemorySaveFailed):
        replace_checked(path, b"[1]\n", digest(b"[]\n"), aside, keep=True, written=ahead)
    assert path.read_bytes() == saved
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.json", "memory.json.saved-1"]


def test_only_a_settled_file_with_the_expected_bytes_is_vouched_for(tmp_path: Path) -> None:
    path = tmp_path / "memory.json"
    path.write_bytes(b"[]\n")
    assert settled_status(path, digest(b"[]\n")) is None  # changed just now
    expected = settled_file(path, b"[]\n")
    assert settled_status(path, digest(b"[2]\n")) is None
    assert settled_status(tmp_path / "missing", expected) is None
    os.utime(path, ns=(0, os.stat(path).st_mtime_ns))  # any change counts, times too
    assert settled_status(path, expected) is None


# -- the history of what compaction wrote ---------------------------------------------------


def _user_key(memory: Memory) -> tuple[Any, ...]:
    return (memory.content, memory.tags, memory.category, memory.created_at, memory.source)


def _full_key(memory: Memory) -> tuple[Any, ...]:
    return (_user_key(memory), memory.accessed_at, memory.access_count, memory.updated_at)


class EagerHistory:
    """``History.record`` as it was, walking every memory of every generation: the reference."""

    def __init__(self) -> None:
        self.generation = 0
        self.versions: dict[int, dict[Any, list[Any]]] = {}
        self.users: dict[int, dict[Any, int]] = {}
        self.held: dict[int, list[list[int]]] = {}

    def record(self, memories: list[Memory]) -> None:
        self.generation += 1
        for memory in memories:
            users = self.users.setdefault(memory.id, {})
            users.setdefault(_user_key(memory), self.generation)
            if len(users) > MAX_VERSIONS:
                del users[next(iter(users))]
            runs = self.held.setdefault(memory.id, [])
            if runs and runs[-1][1] == self.generation - 1:
                runs[-1][1] = self.generation
            else:
                runs.append([self.generation, self.generation])
                if len(runs) > MAX_VERSIONS:
                    del runs[0]
            versions = self.versions.setdefault(memory.id, {})
            key = _full_key(memory)
            if key in versions:
                versions[key][1] = self.generation
            else:
                versions[key] = [self.generation, self.generation, _user_key(memory)]
                if len(versions) > MAX_VERSIONS:
                    del versions[next(iter(versions))]

    def span(self, memory: Memory) -> tuple[int, int] | None:
        found = self.versions.get(memory.id, {}).get(_full_key(memory))
        return (found[0], found[1]) if found else None

    def held_in(self, memory_id: int, first: int, last: int) -> tuple[bool, bool]:
        runs = self.held.get(memory_id, [])
        every = any(a <= first and last <= b for a, b in runs)
        return every, every or any(a <= last and first <= b for a, b in runs)


# One step changes a memory: kept as the same value, copied (an equal new value), touched (a
# version of the store's), edited (the person's fields), removed, or brought back.
steps = st.lists(
    st.tuples(
        st.integers(0, 5),
        st.sampled_from(["keep", "copy", "touch", "edit", "remove", "back"]),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(steps, st.sampled_from(["ahead", "stale", "none"])), max_size=15))
def test_recording_what_changed_answers_as_recording_everything(
    generations: list[tuple[list[tuple[int, str]], str]],
) -> None:
    held = {n: Memory(n, f"memory {n}", ("t",)) for n in range(6)}
    gone: dict[int, Memory] = {}
    seen: list[Memory] = list(held.values())
    history, reference = History(), EagerHistory()
    for changes, how in generations:
        compared = history.compare(list(held.values())) if how != "none" else None
        for n, change in changes:
            memory = held.get(n)
            if change == "back" and memory is None and n in gone:
                held[n] = gone.pop(n)
            elif memory is None:
                continue
            elif change == "copy":
                held[n] = replace(memory)
            elif change == "touch":
                held[n] = replace(memory, access_count=memory.access_count % 3 + 1)
            elif change == "edit":
                held[n] = replace(memory, content=f"{memory.content}!"[-20:])
            elif change == "remove":
                gone[n] = held.pop(n)
            seen.extend(held.values())
        if how == "stale":  # a generation recorded between the comparison and its use
            history.record(list(held.values()), 0.0)
            reference.record(list(held.values()))
        elif how == "ahead":  # compared after the changes, as compaction does
            compared = history.compare(list(held.values()))
        history.record(list(held.values()), 0.0, compared=compared)
        reference.record(list(held.values()))
        assert history.generation == reference.generation
        for memory in seen:
            users = reference.users.get(memory.id, {})
            assert history.held(memory) == reference.span(memory)
            assert history.first_user(memory) == users.get(_user_key(memory))
            assert history.wrote(memory) == (_user_key(memory) in users)
        for n in range(6):
            assert history.seen(n) == (n in reference.versions)
    for n in range(6):
        for first in range(1, history.generation + 1):
            for last in range(first, history.generation + 1):
                assert history.held_in(n, first, last) == reference.held_in(n, first, last)
