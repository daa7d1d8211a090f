"""The values of the memory model: times, ids, limits and the article's record format."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime, timedelta, timezone

import pytest

from memory.errors import MemoryInvalid
from memory.model import MAX_LIMIT, Hit, Memory, Stats, parse_id, parse_limit
from memory.timestamps import format_time, now_iso, parse_time

ARTICLE_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")

ARTICLE_RECORD = {
    "id": 1705312200000,
    "content": "代码在 D:\\projects",
    "tags": ["代码", "路径", "项目"],
    "category": "general",
    "createdAt": "2024-01-15T10:30:00.000Z",
    "accessedAt": "2024-01-15T10:30:00.000Z",
    "accessCount": 0,
}


def test_now_iso_is_the_articles_format_in_utc() -> None:
    before = datetime.now(UTC) - timedelta(seconds=1)
    text = now_iso()
    assert ARTICLE_TIME.fullmatch(text)
    assert before <= parse_time(text) <= datetime.now(UTC)


def test_format_time_converts_to_utc_and_keeps_milliseconds() -> None:
    moment = datetime(2024, 1, 15, 18, 30, 0, 123_999, tzinfo=timezone(timedelta(hours=8)))
    assert format_time(moment) == "2024-01-15T10:30:00.123Z"
    assert format_time(datetime(2024, 1, 15, 10, 30)) == "2024-01-15T10:30:00.000Z"


def test_parse_time_reads_z_offsets_and_naive_times() -> None:
    expected = datetime(2024, 1, 15, 10, 30, tzinfo=UTC)
    assert parse_time("2024-01-15T10:30:00.000Z") == expected
    assert parse_time("2024-01-15T18:30:00+08:00") == expected
    assert parse_time("2024-01-15T10:30:00") == expected


@pytest.mark.parametrize("text", ["", "yesterday", "2024-13-01T00:00:00Z"])
def test_parse_time_rejects_what_is_not_a_time(text: str) -> None:
    with pytest.raises(MemoryInvalid) as caught:
        parse_time(text)
    assert caught.value.code == "MEMORY_INVALID"


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1, 1), (1705312200000, 1705312200000), ("42", 42), (" 42 ", 42), (2**63 - 1, 2**63 - 1)],
)
def test_parse_id_accepts_whole_numbers_and_their_digits(value: object, expected: int) -> None:
    assert parse_id(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("１７９６１２３", 1796123), ("０１", 1), (" 17\u200b96 ", 1796), ("１2３", 123)],
)
def test_parse_id_reads_full_width_digits_and_ignores_zero_width(value: str, expected: int) -> None:
    assert parse_id(value) == expected


@pytest.mark.parametrize(
    "value",
    ["abc", "1e309", "-1", "1.5", "", "０", "²", "١٢", 1.5, 1.0, True, False, None, 0, -1, 2**63],
)
def test_parse_id_rejects_everything_else(value: object) -> None:
    with pytest.raises(MemoryInvalid) as caught:
        parse_id(value)
    assert caught.value.code == "MEMORY_INVALID"
    assert caught.value.field == "id"


@pytest.mark.parametrize(
    ("value", "expected"), [(1, 1), (10, 10), ("5", 5), (MAX_LIMIT, MAX_LIMIT)]
)
def test_parse_limit_accepts_positive_whole_numbers(value: object, expected: int) -> None:
    assert parse_limit(value) == expected


@pytest.mark.parametrize(
    "value", [0, -1, MAX_LIMIT + 1, 10**9, 1.5, 5.0, True, None, "abc", "", "-3", "²"]
)
def test_parse_limit_rejects_what_is_not_a_sane_limit(value: object) -> None:
    with pytest.raises(MemoryInvalid) as caught:
        parse_limit(value)
    assert caught.value.code == "MEMORY_INVALID"
    assert caught.value.field == "limit"


def test_the_articles_record_round_trips_unchanged() -> None:
    memory = Memory.from_dict(ARTICLE_RECORD)
    assert memory == Memory(
        id=1705312200000,
        content="代码在 D:\\projects",
        tags=("代码", "路径", "项目"),
        category="general",
        created_at="2024-01-15T10:30:00.000Z",
        accessed_at="2024-01-15T10:30:00.000Z",
        access_count=0,
    )
    assert memory.to_dict() == ARTICLE_RECORD
    assert list(memory.to_dict()) == list(ARTICLE_RECORD)


def test_updated_at_is_written_only_once_set() -> None:
    memory = Memory.from_dict({**ARTICLE_RECORD, "updatedAt": "2024-02-01T08:00:00.000Z"})
    assert memory.updated_at == "2024-02-01T08:00:00.000Z"
    assert memory.to_dict()["updatedAt"] == "2024-02-01T08:00:00.000Z"


def test_a_sparse_record_takes_the_articles_defaults() -> None:
    memory = Memory.from_dict({"id": 7, "content": "standup at 10:00", "createdAt": "2024-01-15"})
    assert memory.tags == ()
    assert memory.category == "general"
    assert memory.created_at == "2024-01-15T00:00:00.000Z"
    assert memory.accessed_at == memory.created_at
    assert memory.access_count == 0


def test_hit_and_stats_serialize_with_the_articles_keys() -> None:
    memory = Memory.from_dict(ARTICLE_RECORD)
    assert Hit(memory, 20.0).to_dict() == {**ARTICLE_RECORD, "score": 20.0}
    stats = Stats(1, {"general": 1}, [("代码", 1), ("路径", 1)], [memory])
    assert stats.to_dict() == {
        "total": 1,
        "byCategory": {"general": 1},
        "topTags": {"代码": 1, "路径": 1},
        "mostAccessed": [ARTICLE_RECORD],
    }


def test_a_used_memory_is_the_memory_counted_once_more_every_other_field_kept() -> None:
    memory = Memory(
        7,
        "the spare key is under the mat",
        ("key",),
        "home",
        "2024-01-15T10:30:00.000Z",
        "2024-01-16T10:30:00.000Z",
        4,
        updated_at="2024-01-17T10:30:00.000Z",
        source="telegram:1:2",
        date="2024-01-20",
        attachment={"kind": "photo"},
        origin={"chat": "family"},
    )
    # Every field set, so that a field added to Memory and forgotten by ``used`` shows here.
    assert all(getattr(memory, f.name) != f.default for f in dataclasses.fields(Memory))
    at = "2024-02-01T08:00:00.000Z"
    expected = dataclasses.replace(memory, access_count=5, accessed_at=at)
    assert memory.used(at) == expected
    assert memory.used(at).to_dict() == expected.to_dict()
