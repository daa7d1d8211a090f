"""The tolerant reader: every memory that can be read out of a broken ``memory.json``."""

from __future__ import annotations

import codecs
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.files.salvage import salvage
from memory.model import Memory


def record(memory_id: int, content: str | None = None) -> dict[str, Any]:
    return {
        "id": memory_id,
        "content": content or f'memory {memory_id}, with {{braces}}, [brackets] and "quotes"',
        "tags": ["a", f"t{memory_id}"],
        "category": "work",
        "createdAt": "2024-01-15T10:30:00.000Z",
        "accessedAt": "2024-01-15T10:30:00.000Z",
        "accessCount": memory_id % 3,
    }


FIVE = [record(i) for i in range(1, 6)]
FILE = json.dumps(FIVE, ensure_ascii=False, indent=2)


def ids(text: str | bytes) -> list[int]:
    return [m.id for m in salvage(text.encode() if isinstance(text, str) else text).memories]


def nth_record_text(n: int) -> str:
    return json.dumps(FIVE[n - 1], ensure_ascii=False, indent=2).replace("\n", "\n  ")


# Each broken shape: the file, the ids that must come back, how many pieces are unreadable.
SHAPES: dict[str, tuple[str | bytes, list[int], int]] = {
    "valid": (FILE, [1, 2, 3, 4, 5], 0),
    "trailing comma after the last object": (FILE[:-2] + ",\n]", [1, 2, 3, 4, 5], 0),
    "trailing comma inside an object": (
        FILE.replace('"accessCount": 2\n', '"accessCount": 2,\n'),
        [1, 2, 3, 4, 5],
        0,
    ),
    "a doubled comma": (FILE.replace('"work",', '"work",,', 1), [1, 2, 3, 4, 5], 0),
    "a missing comma between two fields": (
        FILE.replace('"category": "work",', '"category": "work"', 1),
        [1, 2, 3, 4, 5],
        0,
    ),
    "truncated tail": (FILE[: FILE.index(nth_record_text(4)) + 40], [1, 2, 3], 1),
    "garbage in the middle": (
        FILE.replace('"t3"', '"t3" !!garbage!! ', 1),
        [1, 2, 4, 5],
        1,
    ),
    "a missing opening bracket": (FILE[1:], [1, 2, 3, 4, 5], 0),
    "a missing closing bracket": (FILE[:-1], [1, 2, 3, 4, 5], 0),
    "a missing closing brace": (
        FILE.replace(nth_record_text(2), nth_record_text(2)[:-1], 1),
        [1, 3, 4, 5],
        1,
    ),
    "UTF-8 BOM": (codecs.BOM_UTF8 + FILE.encode(), [1, 2, 3, 4, 5], 0),
    "UTF-16 with BOM": (FILE.encode("utf-16"), [1, 2, 3, 4, 5], 0),
    "a half-written object": (
        FILE.replace(nth_record_text(3), '{"id": 3, "content": "half wri', 1),
        [1, 2, 4, 5],
        1,
    ),
    "a line break typed into a string": (
        FILE.replace("memory 2,", "memory 2\n,", 1),
        [1, 2, 3, 4, 5],
        0,
    ),
    "minified, garbage in the middle": (
        json.dumps(FIVE).replace('"t4"]', '"t4"]\x00\x00', 1),
        [1, 2, 3, 5],
        1,
    ),
    "bytes that are not UTF-8": (
        FILE.encode().replace(b"memory 5", b"memory \xff5"),
        [1, 2, 3, 4, 5],
        0,
    ),
    "a journal line": (
        json.dumps({"op": "put", "m": record(7)}) + "\n" + json.dumps({"op": "del", "id": 7}),
        [7],
        2,  # the line's wrapper around the memory, and the delete: neither is a memory
    ),
    "nested 100,000 deep": ("[" * 100_000, [], 0),  # only brackets: nothing lost
    "objects nested 100,000 deep, then a memory": (
        '{"a": ' * 100_000 + json.dumps(record(9)),
        [9],
        1,
    ),
    "empty": ("", [], 0),
}


ALTERED = {"a line break typed into a string", "bytes that are not UTF-8"}  # read as they are


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_readable_memory_of_a_broken_file_comes_back(shape: str) -> None:
    data, expected, unreadable = SHAPES[shape]
    found = salvage(data if isinstance(data, bytes) else data.encode())
    assert [m.id for m in found.memories] == expected
    assert found.unreadable == unreadable
    for memory in found.memories:
        if memory.id <= 5 and shape not in ALTERED:
            assert memory == Memory.from_dict(FIVE[memory.id - 1])


def test_unreadable_parts_are_reported_with_their_lines() -> None:
    broken = FILE.replace('"t3"', '"t3" !!garbage!! ', 1)
    (stretch,) = salvage(broken.encode()).stretches
    bad_line = broken.splitlines().index('      "t3" !!garbage!! ') + 1
    assert stretch.first_line <= bad_line <= stretch.last_line
    assert broken.splitlines()[stretch.first_line - 1].strip() == "{"  # where record 3 starts


# -- random damage: every object the damage did not touch comes back ----------------------------

contents = st.text(
    st.characters(blacklist_categories=["Cs", "Cc"]) | st.sampled_from('{}[],:"\\\n\t'),
    min_size=1,
    max_size=40,
).filter(lambda s: s.strip())


@st.composite
def damaged_files(draw: st.DrawFn) -> tuple[bytes, list[dict[str, Any]], list[int]]:
    """A valid file, damaged: its bytes, its records, and the ids of the records left intact."""
    records = [record(i, draw(contents)) for i in range(1, draw(st.integers(1, 8)) + 1)]
    indent = draw(st.sampled_from([None, 2]))
    parts = [json.dumps(r, ensure_ascii=False, indent=indent) for r in records]
    separator = ",\n" if indent else ","
    text = "[" + separator.join(parts) + "]"
    spans, at = [], 1
    for part in parts:
        spans.append((at, at + len(part)))
        at += len(part) + len(separator)
    edits = draw(st.lists(edit(len(text)), min_size=1, max_size=3))
    touched: set[int] = set()
    # Applied from the end, each stopping where the next one starts, so that every position
    # still means the original text.
    limit = len(text)
    for start, length, insert in sorted(edits, reverse=True):
        end = min(start + length, limit)
        limit = start
        for number, (first, last) in enumerate(spans, start=1):
            if (start < last and end > first) or first < start < last:
                touched.add(number)
        text = text[:start] + insert + text[end:]
    intact = [n for n in range(1, len(records) + 1) if n not in touched]
    return text.encode(), records, intact


def edit(size: int) -> st.SearchStrategy[tuple[int, int, str]]:
    """One piece of damage: at a position, delete some characters and insert some."""
    garbage = st.sampled_from(
        [",", ",,", "}", "]", "{", "[", '"', "\x00" * 8, "garbage", '{"id": ', "\ufeff"]
    ) | st.text(max_size=8)
    return st.tuples(st.integers(0, size), st.integers(0, 30), garbage)


@settings(max_examples=300, deadline=None)
@given(damaged_files())
def test_random_damage_loses_only_the_objects_it_touched(
    damaged: tuple[bytes, list[dict[str, Any]], list[int]],
) -> None:
    data, records, intact = damaged
    found = {m.id: m for m in salvage(data).memories}
    for number in intact:
        assert found.get(number) == Memory.from_dict(records[number - 1])


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_at_all_are_read_without_an_error(data: bytes) -> None:
    found = salvage(data)
    assert found.unreadable >= 0
