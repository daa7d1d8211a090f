"""What counts as a use, in the library: ``touch``, ``most_used`` and ``memory.relevance``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory.files import FileNamespace, MemoryStore
from memory.model import Hit, Memory, most_used
from memory.relevance import answers, matches, quotes


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    with MemoryStore(tmp_path / "data") as store:
        yield store


@pytest.fixture
def ns(store: MemoryStore) -> FileNamespace:
    return store.namespace("users/1")


def test_touch_counts_each_memory_once_and_survives_a_reopen(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "data") as store:
        ns = store.namespace("users/1")
        a, b = ns.add("alpha"), ns.add("bravo")
        touched = ns.touch([a.id, str(a.id), 999])  # repeated and unknown ids
        assert [(m.id, m.access_count) for m in touched] == [(a.id, 1)]
        assert touched[0].accessed_at >= a.accessed_at
        assert ns.touch([]) == []
        assert ns.get(b.id).access_count == 0
    with MemoryStore(tmp_path / "data") as store:
        assert store.namespace("users/1").get(a.id).access_count == 1


def test_search_without_touch_then_touch_counts_only_the_answer(ns: FileNamespace) -> None:
    for n in range(3):
        ns.add(f"standup note {n}")
    hits = ns.search("standup", touch=False)
    ns.touch([hits[0].memory.id])
    assert sorted(m.access_count for m in ns.memories()) == [0, 0, 1]


def test_most_accessed_is_the_articles_top_five_with_ties_by_last_use(ns: FileNamespace) -> None:
    def record(n: int, used: int, at: str) -> dict[str, object]:
        return {"id": n, "content": f"m{n}", "createdAt": "2024-01-01T00:00:00.000Z",
                "accessedAt": at, "accessCount": used}  # fmt: skip

    ns.import_memories(
        [
            record(1, 3, "2024-02-01T00:00:00.000Z"),
            record(2, 3, "2024-03-01T00:00:00.000Z"),
            record(3, 0, "2024-05-01T00:00:00.000Z"),
            record(4, 3, "2024-02-01T00:00:00.000Z"),
            record(5, 9, "2024-01-01T00:00:00.000Z"),
        ]
    )
    # The article's top 5 by accessCount, the unused one last; ties by last use, then id.
    assert [m.id for m in ns.stats().most_accessed] == [5, 2, 4, 1, 3]
    assert [m.id for m in most_used(ns.memories(), 2)] == [5, 2]
    assert [m.id for m in most_used(ns.memories(), 9)] == [5, 2, 4, 1]


def hit(content: str, score: float, memory_id: int = 1) -> Hit:
    return Hit(Memory(memory_id, content, created_at="2024-01-01T00:00:00.000Z"), score)


def test_a_match_sharing_only_stop_characters_or_words_is_no_match() -> None:
    birthday = hit("小王的生日是3月5日", 4.0)
    assert matches("你是谁", [birthday]) == []
    assert matches("我的电脑是什么牌子", [hit("我的车停在B2层", 5.0)]) == []
    assert matches("小王生日", [birthday]) == [birthday]
    # English stop words are no terms at all; any other shared word makes a match.
    assert matches("when is the party", [hit("the party is on friday", 1.0)]) != []
    # A hit sharing no term at all (a ranking by meaning) is left to the floor.
    assert matches("automobile", [hit("my car is blue", 1.0)]) != []


def test_answers_are_the_matches_near_the_best() -> None:
    best, near, far = hit("小王生日 3月5日", 10.0, 1), hit("小王 电话", 3.0, 2), hit("小王", 1.0, 3)
    assert answers("小王生日", [best, near, far]) == [best, near]


def test_quotes_are_runs_of_the_content_or_the_id() -> None:
    code = Memory(1712345678901, "我的代码都在 D:\\projects 里")
    note = Memory(2, "the staging database password rotates every monday")
    birthday = Memory(3, "小王的生日是3月5日")
    memories = [code, note, birthday]
    assert list(quotes("在 D:\\Projects 里。", memories)) == [code.id]
    assert list(quotes("It changes on Mondays.", memories)) == []
    assert list(quotes("memory 1712345678901 says so", memories)) == [code.id]
    assert list(quotes("小王的生日是三月五号", memories)) == [birthday.id]
    assert list(quotes("生日", memories)) == []
