"""The operations on every backend, and the article's walkthrough (validation:
``tests/memory/test_validation.py``; the file format: ``tests/memory/test_format.py``).

Every test uses a real store of each backend (``conftest.py``), and looks at what a caller, a
restarted process or (on files) a person opening ``memory.json`` would see.
"""

from __future__ import annotations

import json
import re
import time

import pytest
from backends import Opener, reopen_store

from memory import MemoryNamespace, Store
from memory.errors import MemoryInvalid, MemoryNotFound, MemoryStoreError
from memory.files import FileNamespace
from memory.model import (
    MAX_LIMIT,
    Memory,
)

ARTICLE_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
ARTICLE_KEYS = ["id", "content", "tags", "category", "createdAt", "accessedAt", "accessCount"]
OLD_TIME = "2024-01-15T10:30:00.000Z"

# The article's walkthrough: memory 1 answers "代码项目", memory 2 does not, memory 3 by a tag only.
WALKTHROUGH = [
    {"id": 1, "content": "代码在 D:\\projects", "tags": ["代码", "路径", "项目"]},
    {"id": 2, "content": "今天天气很好", "tags": ["天气"]},
    {"id": 3, "content": "周五下午三点开会", "tags": ["项目", "会议"]},
]


def reopen(store: Store, name: str = "users/42") -> tuple[Store, MemoryNamespace]:
    """Close ``store`` and open it afresh, as a restarted bot would."""
    fresh = reopen_store(store)
    return fresh, fresh.namespace(name)


def codes(error: pytest.ExceptionInfo[MemoryStoreError]) -> str:
    return error.value.code


def contents(ns: MemoryNamespace) -> list[str]:
    return [m.content for m in ns.memories()]


def snapshot_records(ns: MemoryNamespace) -> list[dict[str, object]]:
    """What is stored: ``memory.json`` on files, a fresh read of the database otherwise."""
    if not isinstance(ns, FileNamespace):
        return ns.export()
    records: list[dict[str, object]] = json.loads((ns.path / "memory.json").read_text("utf-8"))
    return records


# -- the article's walkthrough ---------------------------------------------------------------


def test_walkthrough_with_the_seed_ranker_on_the_articles_ids(ns: MemoryNamespace) -> None:
    assert ns.import_memories(WALKTHROUGH) == 3
    hits = ns.search("代码项目", ranker="seed")
    assert [(hit.memory.id, hit.score) for hit in hits] == [(1, 20.0), (3, 5.0)]


def test_walkthrough_with_the_seed_ranker_after_add(ns: MemoryNamespace) -> None:
    first, second, third = (
        ns.add(record["content"], record["tags"])  # type: ignore[arg-type]
        for record in WALKTHROUGH
    )
    hits = ns.search("代码项目", ranker="seed")
    assert [(hit.memory.id, hit.score) for hit in hits] == [(first.id, 20.0), (third.id, 5.0)]
    assert second.id not in {hit.memory.id for hit in hits}


def test_walkthrough_with_the_default_ranker_puts_memory_1_first(ns: MemoryNamespace) -> None:
    ns.import_memories(WALKTHROUGH)
    hits = ns.search("代码项目")
    assert hits[0].memory.id == 1
    assert 2 not in {hit.memory.id for hit in hits}
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)


# -- add ---------------------------------------------------------------------------------------


def test_add_cleans_tags_and_category_as_the_article_does(ns: MemoryNamespace) -> None:
    memory = ns.add("  standup is at 10:00  ", ["Work", " meeting ", "WORK", "", "Daily"], "Work")
    assert memory.content == "standup is at 10:00"
    assert memory.tags == ("work", "meeting", "daily")
    assert memory.category == "work"
    assert ns.add("x", "A, b ,a").tags == ("a", "b")
    assert ns.add("y").category == "general"
    assert ns.add("z", category="   ").category == "general"


def test_add_sets_the_articles_fields(ns: MemoryNamespace) -> None:
    before_ms = time.time_ns() // 1_000_000
    memory = ns.add("代码在 D:\\projects", ["代码"])
    after_ms = time.time_ns() // 1_000_000
    assert before_ms <= memory.id <= after_ms  # a millisecond timestamp, as in the article
    assert ARTICLE_TIME.fullmatch(memory.created_at)
    assert memory.accessed_at == memory.created_at
    assert memory.access_count == 0
    assert memory.updated_at is None
    assert ns.get(memory.id) == memory


def test_ids_are_strictly_increasing_even_within_one_millisecond(ns: MemoryNamespace) -> None:
    ids = [ns.add(f"memory {i}").id for i in range(200)]
    assert ids == sorted(set(ids))
    assert [m.id for m in ns.memories()] == ids


def test_an_id_is_never_reused_after_its_memory_is_deleted(store: Store) -> None:
    ns = store.namespace("users/42")
    # Adds faster than one a millisecond push the ids ahead of the clock; get half a second.
    ids: list[int] = []
    while ids[-1:] < [time.time_ns() // 1_000_000 + 500]:
        if len(ids) == 5000:
            pytest.skip("adds are too slow here for ids to run ahead of the clock")
        ids.append(ns.add(f"memory {len(ids)}").id)
    ns.delete(ids[-1])
    store, ns = reopen(store)
    try:
        assert ns.add("after the restart").id > ids[-1]
    finally:
        store.close()


def test_an_add_with_a_known_source_returns_the_existing_memory(store: Store) -> None:
    ns = store.namespace("users/42")
    first = ns.add("standup at 10:00", ["work"], source="telegram:42:1001")
    again = ns.add("standup at 10:00 (delivered twice)", source="telegram:42:1001")
    other = ns.add("standup at 10:30", ["work"], source="telegram:42:1002")
    assert again == first
    assert other.id != first.id
    assert [m.id for m in ns.memories()] == [first.id, other.id]
    store, ns = reopen(store)
    try:
        assert ns.add("once more after a restart", source="telegram:42:1001") == first
        assert len(ns.memories()) == 2
        ns.delete(first.id)
        assert ns.add("a new memory", source="telegram:42:1001").id > other.id
    finally:
        store.close()


@pytest.mark.parametrize("source", ["", "x" * 201, 42])
def test_a_bad_source_is_invalid(ns: MemoryNamespace, source: object) -> None:
    with pytest.raises(MemoryInvalid) as caught:
        ns.add("x", source=source)  # type: ignore[arg-type]
    assert codes(caught) == "MEMORY_INVALID"
    assert ns.memories() == []


def test_add_is_persisted(store: Store) -> None:
    ns = store.namespace("users/42")
    memory = ns.add("my code is in D:\\projects", ["code"], "work")
    store, ns = reopen(store)
    try:
        assert ns.memories() == [memory]
    finally:
        store.close()


def test_count_is_how_many_memories_there_are(store: Store) -> None:
    ns = store.namespace("users/42")
    assert ns.count() == 0
    first = ns.add("standup at 10:00")
    ns.add("lunch at noon")
    ns.add("standup at 10:00")  # a duplicate: not stored again
    assert ns.count() == 2 == len(ns.memories())
    ns.delete(first.id)
    assert ns.count() == 1
    store, ns = reopen(store)
    try:
        assert ns.count() == 1
        assert store.namespace("users/7").count() == 0
    finally:
        store.close()


def test_namespaces_are_separate(store: Store) -> None:
    mine = store.namespace("users/1").add("mine")
    store.namespace("chats/-1001234567890").add("the group's")
    assert store.namespace("users/1").memories() == [mine]
    assert contents(store.namespace("chats/-1001234567890")) == ["the group's"]
    assert store.namespace("users/2").memories() == []
    assert store.namespace_names() == ["chats/-1001234567890", "users/1"]


# -- search ------------------------------------------------------------------------------------


def test_search_hits_are_touched_and_persisted(store: Store) -> None:
    ns = store.namespace("users/42")
    ns.import_memories(
        {**record, "createdAt": OLD_TIME, "accessedAt": OLD_TIME} for record in WALKTHROUGH
    )
    hits = ns.search("代码项目", ranker="seed")
    touched = {hit.memory.id: hit.memory for hit in hits}
    assert set(touched) == {1, 3}
    for memory in touched.values():
        assert memory.access_count == 1
        assert ARTICLE_TIME.fullmatch(memory.accessed_at)
        assert memory.accessed_at > OLD_TIME
        assert memory.created_at == OLD_TIME
        assert ns.get(memory.id) == memory
    untouched = ns.get(2)
    assert (untouched.access_count, untouched.accessed_at) == (0, OLD_TIME)

    ns.search("代码")
    assert ns.get(1).access_count == 2
    store, ns = reopen(store)
    try:
        assert {m.id: m.access_count for m in ns.memories()} == {1: 2, 2: 0, 3: 1}
        assert ns.get(3) == touched[3]
        assert snapshot_records(ns)[0]["accessCount"] == 2
    finally:
        store.close()


def test_a_search_alone_is_persisted(store: Store) -> None:
    ns = store.namespace("users/42")
    memory = ns.add("the wifi password is hunter2")
    store, ns = reopen(store)
    try:
        assert [hit.memory.id for hit in ns.search("wifi", ranker="seed")] == [memory.id]
        store, ns = reopen(store)
        assert ns.get(memory.id).access_count == 1
    finally:
        store.close()


def test_search_without_touch_leaves_access_bookkeeping_alone(store: Store) -> None:
    ns = store.namespace("users/42")
    ns.import_memories(WALKTHROUGH)
    before = ns.memories()
    assert ns.search("代码项目", touch=False)
    assert ns.search("代码项目", ranker="seed", touch=False)
    assert ns.memories() == before
    store, ns = reopen(store)
    try:
        assert ns.memories() == before
    finally:
        store.close()


def test_search_limit_caps_the_hits_and_only_they_are_touched(ns: MemoryNamespace) -> None:
    ids = [ns.add(f"note {i} about the project", ["project"] * (i % 2)).id for i in range(5)]
    hits = ns.search("project", limit=2, ranker="seed")
    assert [hit.memory.id for hit in hits] == [ids[1], ids[3]]  # 15 points each, stored order
    assert [m.access_count for m in ns.memories()] == [0, 1, 0, 1, 0]
    assert len(ns.search("project", limit=MAX_LIMIT)) == 5


def test_search_finds_what_an_update_wrote_and_not_what_it_replaced(ns: MemoryNamespace) -> None:
    memory = ns.add("the meeting is on monday")
    ns.update(memory.id, content="the meeting moved to friday")
    for ranker in ("default", "seed"):
        assert [hit.memory.id for hit in ns.search("friday", ranker=ranker)] == [memory.id]
        assert ns.search("monday", ranker=ranker) == []
    ns.delete(memory.id)
    for ranker in ("default", "seed"):
        assert ns.search("friday", ranker=ranker) == []


@pytest.mark.parametrize("query", ["", "   ", "\n"])
def test_search_rejects_an_empty_query(ns: MemoryNamespace, query: str) -> None:
    with pytest.raises(MemoryInvalid) as caught:
        ns.search(query)
    assert codes(caught) == "MEMORY_INVALID"


@pytest.mark.parametrize("limit", [0, -1, MAX_LIMIT + 1, 10**9, 1.5, True, None, "abc", "²"])
def test_search_and_related_reject_a_bad_limit(ns: MemoryNamespace, limit: object) -> None:
    memory = ns.add("something", ["tag"])
    with pytest.raises(MemoryInvalid) as caught:
        ns.search("something", limit=limit)  # type: ignore[arg-type]
    assert codes(caught) == "MEMORY_INVALID"
    with pytest.raises(MemoryInvalid) as caught:
        ns.related(memory.id, limit=limit)  # type: ignore[arg-type]
    assert codes(caught) == "MEMORY_INVALID"
    assert ns.get(memory.id).access_count == 0


def test_search_rejects_an_unknown_ranker(ns: MemoryNamespace) -> None:
    ns.add("something")
    with pytest.raises(MemoryInvalid) as caught:
        ns.search("something", ranker="magic")
    assert codes(caught) == "MEMORY_INVALID"


# -- memories, get, update, delete ------------------------------------------------------------


def test_memories_lists_all_or_one_category(ns: MemoryNamespace) -> None:
    a = ns.add("a", category="work")
    b = ns.add("b")
    c = ns.add("c", category="Work")
    assert ns.memories() == [a, b, c]
    assert ns.memories("WORK") == [a, c]
    assert ns.memories("general") == [b]
    assert ns.memories("nothing") == []


def test_get_accepts_an_id_as_text(ns: MemoryNamespace) -> None:
    memory = ns.add("x")
    assert ns.get(str(memory.id)) == memory


def test_update_changes_only_what_it_is_given(store: Store) -> None:
    ns = store.namespace("users/42")
    ns.import_memories([{**WALKTHROUGH[0], "createdAt": OLD_TIME, "accessCount": 3}])
    updated = ns.update(1, content="代码搬到 E:\\work")
    assert updated.content == "代码搬到 E:\\work"
    assert updated.tags == ("代码", "路径", "项目")
    assert (updated.id, updated.created_at, updated.access_count) == (1, OLD_TIME, 3)
    assert updated.updated_at is not None and ARTICLE_TIME.fullmatch(updated.updated_at)

    retagged = ns.update("1", tags=["Code", "code", " Path "], category="Work")
    assert (retagged.content, retagged.tags, retagged.category) == (
        "代码搬到 E:\\work",
        ("code", "path"),
        "work",
    )
    assert ns.update(1, tags=[]).tags == ()
    store, ns = reopen(store)
    try:
        assert ns.get(1).tags == ()
        assert ns.get(1).category == "work"
        record = snapshot_records(ns)[0]
        assert list(record) == [*ARTICLE_KEYS, "updatedAt"]
    finally:
        store.close()


def test_update_of_nothing_is_invalid(ns: MemoryNamespace) -> None:
    memory = ns.add("x")
    with pytest.raises(MemoryInvalid) as caught:
        ns.update(memory.id)
    assert codes(caught) == "MEMORY_INVALID"
    assert ns.get(memory.id) == memory


def test_update_cannot_touch_other_fields(ns: MemoryNamespace) -> None:
    memory = ns.add("x")
    for field, value in [("access_count", 99), ("id", 5), ("created_at", OLD_TIME)]:
        with pytest.raises(TypeError):
            ns.update(memory.id, **{field: value})  # type: ignore[arg-type]
    assert ns.memories() == [memory]


def test_an_invalid_update_changes_nothing(ns: MemoryNamespace) -> None:
    memory = ns.add("x", ["a"])
    with pytest.raises(MemoryInvalid):
        ns.update(memory.id, content="   ")
    with pytest.raises(MemoryInvalid):
        ns.update(memory.id, content="ok", tags=["bad\x07tag"])
    assert ns.memories() == [memory]


def test_delete_removes_and_returns_the_memory(store: Store) -> None:
    ns = store.namespace("users/42")
    keep = ns.add("keep")
    gone = ns.add("gone")
    assert ns.delete(gone.id) == gone
    with pytest.raises(MemoryNotFound) as caught:
        ns.get(gone.id)
    assert (codes(caught), caught.value.memory_id) == ("MEMORY_NOT_FOUND", gone.id)
    with pytest.raises(MemoryNotFound):
        ns.delete(gone.id)
    store, ns = reopen(store)
    try:
        assert ns.memories() == [keep]
    finally:
        store.close()


@pytest.mark.parametrize("operation", ["get", "update", "delete", "related"])
def test_an_unknown_id_is_not_found(ns: MemoryNamespace, operation: str) -> None:
    ns.add("x")
    call = {
        "get": lambda: ns.get(12345),
        "update": lambda: ns.update(12345, content="y"),
        "delete": lambda: ns.delete("12345"),
        "related": lambda: ns.related(12345),
    }[operation]
    with pytest.raises(MemoryNotFound) as caught:
        call()
    assert codes(caught) == "MEMORY_NOT_FOUND"
    assert caught.value.memory_id == 12345


@pytest.mark.parametrize("bad_id", ["abc", "1e309", "-1", "", 1.5, True, None, 0, 2**63])
@pytest.mark.parametrize("operation", ["get", "update", "delete", "related"])
def test_an_id_that_is_not_a_whole_number_is_invalid(
    ns: MemoryNamespace, operation: str, bad_id: object
) -> None:
    memory = ns.add("x")
    call = {
        "get": lambda: ns.get(bad_id),  # type: ignore[arg-type]
        "update": lambda: ns.update(bad_id, content="y"),  # type: ignore[arg-type]
        "delete": lambda: ns.delete(bad_id),  # type: ignore[arg-type]
        "related": lambda: ns.related(bad_id),  # type: ignore[arg-type]
    }[operation]
    with pytest.raises(MemoryInvalid) as caught:
        call()
    assert codes(caught) == "MEMORY_INVALID"
    assert ns.memories() == [memory]


# -- stats and related ---------------------------------------------------------------------


def test_stats_counts_and_ranks_without_reordering_the_store(store: Store) -> None:
    ns = store.namespace("users/42")
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf"]
    created = [
        ns.add(f"{word} note", ["shared", word], "work" if i % 3 else "home")
        for i, word in enumerate(words)
    ]
    for i, word in enumerate(words):
        for _ in range(i):
            ns.search(word, ranker="seed")
    stats = ns.stats()
    assert stats.total == 7
    assert stats.by_category == {"work": 4, "home": 3}
    assert stats.top_tags[0] == ("shared", 7)
    assert {tag for tag, count in stats.top_tags[1:]} <= set(words)
    assert [m.content for m in stats.most_accessed] == [
        "golf note",
        "foxtrot note",
        "echo note",
        "delta note",
        "charlie note",
    ]
    assert [m.access_count for m in stats.most_accessed] == [6, 5, 4, 3, 2]
    assert stats.to_dict()["topTags"]["shared"] == 7

    # The article sorts its stored array by accessCount here; we keep creation order.
    assert [m.id for m in ns.memories()] == [m.id for m in created]
    store, ns = reopen(store)
    try:
        assert [record["id"] for record in snapshot_records(ns)] == [m.id for m in created]
    finally:
        store.close()


def test_related_scores_shared_tags_and_category_as_the_article(ns: MemoryNamespace) -> None:
    target = ns.add("target", ["python", "code"], "work")
    both = ns.add("both tags, same category", ["code", "python", "x"], "work")
    one_tag = ns.add("one tag, other category", ["python"], "home")
    category = ns.add("no tag, same category", ["other"], "work")
    ns.add("nothing in common", ["other"], "home")
    hits = ns.related(target.id)
    assert [(hit.memory.id, hit.score) for hit in hits] == [
        (both.id, 4.0),
        (category.id, 2.0),
        (one_tag.id, 1.0),
    ]
    assert [hit.memory.id for hit in ns.related(target.id, limit=2)] == [both.id, category.id]


def test_related_can_weigh_shared_tags_over_the_category(ns: MemoryNamespace) -> None:
    target = ns.add("target", ["python", "code"], "work")
    both = ns.add("both tags, same category", ["code", "python", "x"], "work")
    one_tag = ns.add("one tag, other category", ["python"], "home")
    category = ns.add("same category only", ["other"], "work")
    ns.add("nothing in common", ["other"], "home")
    hits = ns.related(target.id, tag=2, category=1, default_category=False)
    assert [(hit.memory.id, hit.score) for hit in hits] == [
        (both.id, 5.0),
        (one_tag.id, 2.0),
        (category.id, 1.0),
    ]
    assert [hit.memory.id for hit in ns.related(target.id, 2, tag=2, category=1)] == [
        both.id,
        one_tag.id,
    ]
    assert all(m.access_count == 0 for m in ns.memories())


def test_the_default_category_alone_does_not_make_memories_related(ns: MemoryNamespace) -> None:
    target = ns.add("小王的生日是3月5日", ["生日", "小王"])
    ns.add("买牛奶", ["购物"])  # general too, nothing else shared
    ns.add("周五开会", [], "general")
    tagged = ns.add("小王喜欢蓝色", ["小王"])
    hits = ns.related(target.id, tag=2, category=1, default_category=False)
    assert [(hit.memory.id, hit.score) for hit in hits] == [(tagged.id, 2.0)]


def test_related_of_a_lone_memory_is_empty(ns: MemoryNamespace) -> None:
    memory = ns.add("alone", ["x"], "work")
    ns.add("other", ["y"], "home")
    assert ns.related(memory.id) == []


# -- import and export ---------------------------------------------------------------------


def test_import_keeps_ids_and_skips_present_ones(ns: MemoryNamespace) -> None:
    assert ns.import_memories(WALKTHROUGH[:2]) == 2
    assert ns.import_memories(WALKTHROUGH) == 1
    assert ns.import_memories(WALKTHROUGH) == 0
    assert [m.id for m in ns.memories()] == [1, 2, 3]
    assert ns.get(1).content == "代码在 D:\\projects"
    assert ns.add("new").id > 3


def test_an_add_after_importing_a_later_id_gets_a_larger_id(ns: MemoryNamespace) -> None:
    later = time.time_ns() // 1_000_000 + 3_600_000  # an hour ahead: another machine's clock
    assert ns.import_memories([{"id": later, "content": "from a clock ahead"}]) == 1
    assert ns.get(later).content == "from a clock ahead"
    assert ns.add("now").id > later


FAR = 2**63 - 1  # the largest id a store keeps: every later add would be past it


def test_ids_more_than_a_day_ahead_are_renumbered_on_import_and_adds_go_on(
    store: Store,
) -> None:
    ns = store.namespace("users/42")
    soon = time.time_ns() // 1_000_000 + 23 * 3_600_000  # within the day: kept
    renumbered: dict[int, int] = {}
    records = [
        {"id": FAR, "content": "from the far future"},
        {"id": "9999999999999", "content": "in the year 2286"},  # digits as text: an id too
        {"id": soon, "content": "tomorrow morning"},
    ]
    assert ns.import_memories(records, renumbered=renumbered) == 3
    assert list(renumbered) == [FAR, 9_999_999_999_999]
    first, second = renumbered.values()
    assert soon < first < second < soon + 1000  # fresh ids after the kept one, in file order
    assert [(m.id, m.content) for m in ns.memories()] == [
        (first, "from the far future"),
        (second, "in the year 2286"),
        (soon, "tomorrow morning"),
    ]
    assert [r.memory_id for r in ns.history().records] == [first, second, soon]
    assert ns.import_memories(records) == 0  # the same file again: nothing new
    added = ns.add("one more")
    assert added.id > second
    ns.delete(first)  # /forget
    store, ns = reopen(store)
    try:
        assert ns.add("after the restart").id > added.id
    finally:
        store.close()


def test_a_namespace_holding_an_id_from_the_far_future_still_adds(store: Store) -> None:
    """An id kept as it is (a migration keeps every id; a namespace imported into before ids
    were renumbered holds one) does not hold the id clock: new ids go on from now."""
    ns = store.namespace("users/42")
    assert ns.import_memories([{"id": FAR, "content": "far"}], history=[]) == 1
    assert ns.get(FAR).content == "far"
    before = time.time_ns() // 1_000_000
    ids = [ns.add(f"memory {n}").id for n in range(3)]
    assert ids == sorted(ids) and before <= ids[0] < before + 60_000
    ns.delete(FAR)
    store, ns = reopen(store)
    try:
        assert ns.add("after the restart").id > ids[-1]
        assert ns.restore(Memory(FAR, "far")).id == FAR  # its id, as a restore keeps it
        assert ns.add("and again").id < FAR
    finally:
        store.close()


@pytest.mark.parametrize(
    "bad",
    [
        {"content": "no id"},
        {"id": 9},
        {"id": "abc", "content": "x"},
        {"id": 9, "content": "   "},
        {"id": 9, "content": "x", "tags": [1, 2]},
        {"id": 9, "content": "x", "tags": 5},
        {"id": 9, "content": "x", "tags": ["bad\x07"]},
        {"id": 9, "content": "x", "category": "a\nb"},
        {"id": 9, "content": "x", "accessCount": -1},
        {"id": 9, "content": "x", "accessCount": "3"},
        {"id": 9, "content": "x", "createdAt": "yesterday"},
        {"id": 9, "content": "x", "createdAt": 5},
        {"id": 9, "content": "x", "createdAt": "0001-01-01T00:00:00+01:00"},
        "just a string",
        5,
    ],
    ids=repr,
)
def test_an_invalid_record_rejects_the_whole_import(ns: MemoryNamespace, bad: object) -> None:
    ns.import_memories(WALKTHROUGH[:1])
    with pytest.raises(MemoryInvalid) as caught:
        ns.import_memories([WALKTHROUGH[1], bad, WALKTHROUGH[2]])  # type: ignore[list-item]
    assert codes(caught) == "MEMORY_INVALID"
    assert [m.id for m in ns.memories()] == [1]


def test_export_round_trips_through_import(store: Store) -> None:
    source = store.namespace("users/1")
    source.import_memories(WALKTHROUGH)
    source.add("standup at 10:00", ["work"], "Work")
    source.update(2, content="今天下雨")
    source.search("代码")
    exported = source.export()
    assert json.loads(json.dumps(exported, ensure_ascii=False)) == exported
    assert [Memory.from_dict(record) for record in exported] == source.memories()
    target = store.namespace("users/2")
    assert target.import_memories(exported) == len(exported)
    assert target.export() == exported


# -- release ----------------------------------------------------------------------------------


# -- what came with the second backend: new fields, add_unique, touch, related's weights ----

PHOTO = {"kind": "photo", "file_id": "AgAC-1", "file_unique_id": "u1"}


def test_date_attachment_and_origin_are_kept_across_a_reopen(opener: Opener) -> None:
    store = opener()
    ns = store.namespace("users/1")
    memory = ns.add(
        "📷 photo", date="2024-05-01 09:30", attachment=PHOTO, origin={"from": "Ann", "chat": -5}
    )
    store.close()
    again = opener().namespace("users/1").get(memory.id)
    assert again == memory
    assert (again.date, dict(again.attachment or {}), dict(again.origin or {})) == (
        "2024-05-01 09:30",
        PHOTO,
        {"from": "Ann", "chat": -5},
    )


def test_add_unique_similar_and_import_skip_duplicates(opener: Opener) -> None:
    ns = opener().namespace("users/1")
    first = ns.add_unique("Code is in D:\\projects")
    same = ns.add_unique("  code IS in d:\\projects!! ")
    assert not first.duplicate and same.duplicate and same.memory.id == first.memory.id
    photo = ns.add_unique("📷 photo", attachment=PHOTO)
    other = ns.add_unique("📷 photo", attachment={**PHOTO, "file_unique_id": "u2"})
    resent = ns.add_unique("📷 photo", attachment={**PHOTO, "file_id": "AgAC-1-resent"})
    assert not other.duplicate and resent.duplicate and resent.memory.id == photo.memory.id
    near = ns.similar("code is in D:\\projects")
    assert [(n.memory.id, n.reason) for n in near][:1] == [(first.memory.id, "same")]
    records = [{"id": 5, "content": "CODE is in d:\\projects"}, {"id": 6, "content": "new"}]
    assert ns.import_memories(records) == 1
    assert ns.import_memories([{"id": 7, "content": "new"}], skip_duplicates=False) == 1
    ns.delete(first.memory.id)  # its content is free again
    assert not ns.add_unique("code is in D:\\projects").duplicate


def test_touch_counts_each_once_and_skips_unknown_ids(opener: Opener) -> None:
    store = opener()
    ns = store.namespace("users/1")
    a, b = ns.add("alpha"), ns.add("beta")
    touched = ns.touch([a.id, str(a.id), 99, b.id])
    assert [(m.id, m.access_count) for m in touched] == [(a.id, 1), (b.id, 1)]
    assert ns.search("alpha", touch=False)[0].memory.access_count == 1
    store.close()
    assert opener().namespace("users/1").get(a.id).access_count == 1


def test_related_weights_and_the_default_category(opener: Opener) -> None:
    ns = opener().namespace("users/1")
    target = ns.add("target", ["x", "y"])
    one_tag = ns.add("one tag", ["x"])
    same_group = ns.add("same default category")
    two_tags = ns.add("two tags", ["x", "y"], "work")
    scores = {h.memory.id: h.score for h in ns.related(target.id)}
    assert scores == {one_tag.id: 3.0, same_group.id: 2.0, two_tags.id: 2.0}
    weighed = ns.related(target.id, tag=5, category=1, default_category=False)
    assert [(h.memory.id, h.score) for h in weighed] == [(two_tags.id, 10.0), (one_tag.id, 5.0)]


# -- the store ------------------------------------------------------------------------------


def test_a_store_in_use_answers(store: Store) -> None:
    store.namespace("users/42").add("here")
    store.ping()
    store.ping()
