"""The search index kept beside the snapshot (``memory.index``), through the real store.

It is a cache of analysed memories: a search must answer the same with it, without it, with a
stale one (memories edited by hand since) and with a damaged one.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from memory.files import MemoryStore

NAME = "users/7"
WORDS = "project code garden dinner flight hotel doctor birthday gift backup review".split()
ZH = "项目 代码 花园 晚餐 航班 酒店 医生 生日 礼物 备份".split()
QUERIES = ["where is my project code?", "doctor birthday", "我的航班和酒店", "May 4th dinner"]


def records(count: int) -> list[dict[str, object]]:
    rng = random.Random(3)
    out: list[dict[str, object]] = []
    for i in range(1, count + 1):
        words = rng.sample(ZH, 3) if i % 3 == 0 else rng.sample(WORDS, 4)
        day = f"2024-05-{rng.randint(1, 9):02d}T10:00:00.000Z"
        out.append(
            {
                "id": i,
                "content": ("".join(words) if i % 3 == 0 else " ".join(words)) + f" note {i}",
                "tags": words[:1],
                "category": rng.choice(["work", "life"]),
                "createdAt": day,
                "accessedAt": day,
                "accessCount": 0,
            }
        )
    return out


def answers(data_dir: Path) -> list[list[tuple[int, float]]]:
    """Each query's hits (id, score), from a freshly opened store."""
    with MemoryStore(data_dir) as store:
        ns = store.namespace(NAME)
        return [[(h.memory.id, h.score) for h in ns.search(q, touch=False)] for q in QUERIES]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NAME)
        ns.import_memories(records(300))
        ns.search("warm up")  # builds the index (and touches: the close compacts)
    return tmp_path


def index_file(data_dir: Path) -> Path:
    return data_dir / NAME / "memory.index"


def test_the_index_is_kept_beside_the_snapshot_and_answers_the_same(data_dir: Path) -> None:
    assert index_file(data_dir).is_file()
    with_file = answers(data_dir)
    assert all(with_file)
    index_file(data_dir).unlink()
    assert answers(data_dir) == with_file


def test_memories_changed_since_the_index_was_written_are_analysed_again(
    data_dir: Path,
) -> None:
    snapshot = data_dir / NAME / "memory.json"
    stored = json.loads(snapshot.read_text("utf-8"))
    stored[0]["content"] = "my kayak is on the roof"
    stored[1]["tags"] = ["kayak"]
    stored[2]["createdAt"] = "2024-05-04T10:00:00.000Z"
    snapshot.write_text(json.dumps(stored, ensure_ascii=False), "utf-8")
    edited = [stored[0]["id"], stored[1]["id"]]
    with MemoryStore(data_dir) as store:
        hits = store.namespace(NAME).search("where is the kayak?", touch=False)
        assert sorted(h.memory.id for h in hits) == sorted(edited)
        old_words = str(records(1)[0]["content"])
        assert stored[0]["id"] not in [h.memory.id for h in store.namespace(NAME).search(old_words)]
    with_stale_file = answers(data_dir)
    index_file(data_dir).unlink()
    assert answers(data_dir) == with_stale_file


def test_changes_after_opening_reach_the_file_at_compaction(data_dir: Path) -> None:
    with MemoryStore(data_dir) as store:
        ns = store.namespace(NAME)
        ns.search("project")  # built from the file
        added = ns.add("the spare key is under the blue flowerpot", ["key"])
        ns.delete(1)
        ns.update(2, content="the passport is in the top drawer")
    with MemoryStore(data_dir) as store:
        ns = store.namespace(NAME)
        assert [h.memory.id for h in ns.search("where is the spare key?")][:1] == [added.id]
        assert [h.memory.id for h in ns.search("passport drawer")][:1] == [2]
    with_file = answers(data_dir)
    index_file(data_dir).unlink()
    assert answers(data_dir) == with_file


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: b"",
        lambda data: data[: len(data) // 2],
        lambda data: data[:-1],
        lambda data: data[:200] + bytes([data[200] ^ 0x40]) + data[201:],
        lambda data: data[:-9] + bytes([data[-9] ^ 0x01]) + data[-8:],
        lambda data: b"\x00" * len(data),
        lambda data: random.Random(1).randbytes(len(data)),
    ],
    ids=["empty", "half", "short", "flipped", "flipped-tf", "zeros", "noise"],
)
def test_a_damaged_index_file_is_ignored_and_replaced(data_dir: Path, damage: object) -> None:
    expected = answers(data_dir)
    path = index_file(data_dir)
    path.write_bytes(damage(path.read_bytes()))  # type: ignore[operator]
    assert answers(data_dir) == expected
    with MemoryStore(data_dir) as store:
        store.namespace(NAME).search("project")  # touches, so the close compacts
    index_file(data_dir).rename(path.with_suffix(".kept"))
    assert answers(data_dir) == expected
    path.with_suffix(".kept").rename(path)
    assert answers(data_dir) == expected
