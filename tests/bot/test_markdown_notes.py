"""``/export md``'s file read back by the Markdown reader: exact for any text, and notes.

Hypothesis writes memories whose text is full of what Markdown reads as structure (list
markers, headings, quotes, fences, backslashes, ``#words`` that are and are not tags); the
file ``markdown_of`` writes must read back (``read_note``) as the same text, tags, category,
dates and id. Then the readings of notes as people write them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import assume, given
from hypothesis import strategies as st

from bot.core.markdown_export import markdown_of
from bot.core.markdown_import import read_note, text_tags
from memory.errors import MemoryInvalid
from memory.model import Memory, clean_content

NOW = datetime(2026, 12, 1, 8, 30, tzinfo=UTC)
PIECES = st.sampled_from(
    ["- ", "* ", "+ ", "> ", "# ", "## ", "#", "\\", "\\#", "`", "```", "~~~", "1. ", "2) ",
     "===", "---", "|", "#tag", "#other", "tags: ", "- id: 5", "\n", "\n\n", "  ", "\t", "a",
     "word ", "代码", "＃标签", "C:\\path", "*x*", "[l](u)", "<b>", " "]
)  # fmt: skip
TAGS = st.lists(st.sampled_from(["tag", "work", "代码", "new york", "c++", "daily"]), unique=True)


def memory(content: str, tags: list[str], number: int = 1) -> Memory:
    return Memory(
        id=1_700_000_000_000 + number,
        content=content,
        tags=tuple(tags),
        category=["general", "work", "菜谱", "c# notes"][number % 4],
        created_at="2023-11-14T22:13:20.001Z",
        date="2026-12-08 15:00" if number % 2 else None,
    )


@given(st.lists(st.tuples(st.lists(PIECES, min_size=1, max_size=12), TAGS), min_size=1))
def test_any_text_reads_back_exactly(drawn: list[tuple[list[str], list[str]]]) -> None:
    memories = []
    for number, (pieces, tags) in enumerate(drawn):
        try:
            content = clean_content("".join(pieces))
        except MemoryInvalid:
            continue
        memories.append(memory(content, tags, number))
    assume(memories)  # an export of nothing is not sent
    for language in ("en", "zh"):
        text = markdown_of(memories, namespace="users/42", language=language, now=NOW)
        read = {record["id"]: record for record in read_note(text, title="memories")}
        assert len(read) == len(memories)
        for original in memories:
            record = read[original.id]
            assert record["content"] == original.content
            assert sorted(record["tags"]) == sorted(original.tags)
            assert record["category"] == original.category
            assert record["createdAt"] == original.created_at
            assert record.get("date") == original.date


def test_a_note_with_front_matter_is_one_memory_titled_by_its_file() -> None:
    note = (
        "---\ntitle: ignored\ntags: [Health, 'dentist']\ncategory: 健康\n"
        'created: "2025-03-01T10:00:00Z"\ndate: 2026-12-08\nweird: {a: *b}\n---\n'
        "Dr. Wu on Tuesdays. Bring the #insurance card; not \\#this, nor `#code`.\n"
    )
    [record] = read_note(note, title="Dentist")
    assert record == {
        "content": "Dentist\n\nDr. Wu on Tuesdays. Bring the #insurance card; not #this, nor "
        "`#code`.",
        "tags": ["health", "dentist", "insurance"],
        "category": "health",
        "createdAt": "2025-03-01T10:00:00.000Z",
        "date": "2026-12-08",
    }


def test_a_list_note_is_a_memory_per_item_under_its_headings() -> None:
    note = (
        "# Shopping\n\n- milk #dairy\n- eggs\n\t- free range\n  - tags: home, weekly\n\n"
        "## work\n\n* call Bob\n  about the contract\n"
    )
    records = read_note(note, title="Shopping")
    assert [(r["content"], r["tags"], r["category"]) for r in records] == [
        ("milk #dairy", ["dairy"], "general"),
        ("eggs\n- free range", ["home", "weekly"], "general"),
        ("call Bob\nabout the contract", [], "work"),
    ]


def test_front_matter_that_does_not_end_is_text_and_tags_are_bounded() -> None:
    [record] = read_note("---\ntags: [a]\nno end\n", title="")
    assert record["content"] == "---\ntags: [a]\nno end" and record["tags"] == []
    many = " ".join(f"#t{n}" for n in range(30)) + " #" + "x" * 70
    [record] = read_note(many, title="")
    assert record["tags"] == [f"t{n}" for n in range(20)]
    assert text_tags("`#a` \\#b #c ＃d") == ["c"]
    assert read_note("", title="") == [] and read_note("\n\n", title="") == []
