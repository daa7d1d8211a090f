"""A memory's ``attachment`` and ``origin``: the client's small objects, kept and read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.errors import MemoryInvalid
from memory.files import MemoryStore
from memory.model import Memory

PHOTO = {"kind": "photo", "file_id": "AgAC-1", "file_unique_id": "u1", "size": 1234, "width": 800}
ORIGIN = {"kind": "channel", "name": "News", "chat": "@news", "date": "2024-01-15T10:30:00.000Z"}


def test_attachment_and_origin_survive_the_journal_and_a_reload(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        added = store.namespace("users/1").add(
            "parking level 3", source="telegram:1:2:1", attachment=PHOTO, origin=ORIGIN
        )
    assert added.attachment == PHOTO and added.origin == ORIGIN
    with MemoryStore(tmp_path) as store:
        [memory] = store.namespace("users/1").memories()
    assert memory.attachment == PHOTO and memory.origin == ORIGIN
    [record] = json.loads((tmp_path / "users/1/memory.json").read_text("utf-8"))
    assert record["attachment"] == PHOTO and record["origin"] == ORIGIN
    assert hash(memory) == hash(memory)  # still hashable, dicts and all


@pytest.mark.parametrize(
    "attachment",
    [
        "a string",
        {"Kind": "photo"},
        {"kind": {"nested": 1}},
        {"kind": "x" * 513},
        {f"k{i}": i for i in range(13)},
        {"size": float("nan")},
    ],
)
def test_an_attachment_that_is_not_a_small_flat_object_is_refused(
    tmp_path: Path, attachment: object
) -> None:
    with MemoryStore(tmp_path) as store:
        namespace = store.namespace("users/1")
        with pytest.raises(MemoryInvalid):
            namespace.add("x", attachment=attachment)  # type: ignore[arg-type]
        assert namespace.memories() == []


def test_a_hand_edited_bad_attachment_is_dropped_not_fatal() -> None:
    record = {"id": 1, "content": "x", "attachment": ["not", "an", "object"], "origin": {"a": 1}}
    memory = Memory.from_dict(record)
    assert memory.attachment is None and memory.origin == {"a": 1}


def test_two_files_with_the_same_text_are_two_memories_and_the_same_file_is_one(
    tmp_path: Path,
) -> None:
    other = {**PHOTO, "file_id": "AgAC-2", "file_unique_id": "u2"}
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/1")
        first = ns.add_unique("📷 photo", attachment=PHOTO)
        second = ns.add_unique("📷 photo", attachment=other)
        again = ns.add_unique("📷 photo", attachment={**PHOTO, "file_id": "AgAC-1-resent"})
        plain = ns.add_unique("📷 photo")
    assert not first.duplicate and not second.duplicate
    assert second.memory.id != first.memory.id
    assert again.duplicate and again.memory.id == first.memory.id  # the same file, sent again
    assert not plain.duplicate  # text alone is not the photo
