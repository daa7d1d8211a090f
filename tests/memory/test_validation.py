"""What the store refuses to keep, each refusal with its stable ``code``."""

from __future__ import annotations

import contextlib

import pytest

from memory.errors import MemoryInvalid, MemoryStoreError, NamespaceInvalid
from memory.files import FileNamespace, MemoryStore
from memory.model import MAX_CATEGORY_CHARS, MAX_CONTENT_CHARS, MAX_TAG_CHARS, MAX_TAGS


def codes(error: pytest.ExceptionInfo[MemoryStoreError]) -> str:
    return error.value.code


def contents(ns: FileNamespace) -> list[str]:
    return [m.content for m in ns.memories()]


# -- validation of what is stored -------------------------------------------------------------


@pytest.mark.parametrize(
    "content", ["", "   ", "\n\t ", "x" * (MAX_CONTENT_CHARS + 1), "a\x00b", 42, None]
)
def test_add_rejects_bad_content(ns: FileNamespace, content: object) -> None:
    with pytest.raises(MemoryInvalid) as caught:
        ns.add(content)  # type: ignore[arg-type]
    assert codes(caught) == "MEMORY_INVALID"
    assert ns.memories() == []


def test_content_of_the_maximum_length_is_accepted(ns: FileNamespace) -> None:
    assert len(ns.add("字" * MAX_CONTENT_CHARS).content) == MAX_CONTENT_CHARS


def test_too_many_tags_are_rejected(ns: FileNamespace) -> None:
    limit = [f"tag{i}" for i in range(MAX_TAGS)]
    assert len(ns.add("ok", limit).tags) == MAX_TAGS
    assert len(ns.add("duplicates do not count", [*limit, "TAG0"]).tags) == MAX_TAGS
    with pytest.raises(MemoryInvalid) as caught:
        ns.add("too many", [*limit, "one more"])
    assert codes(caught) == "MEMORY_INVALID"
    assert len(ns.memories()) == 2


def test_an_overlong_tag_or_category_is_rejected(ns: FileNamespace) -> None:
    assert ns.add("ok", ["t" * MAX_TAG_CHARS], "c" * MAX_CATEGORY_CHARS).tags == (
        "t" * MAX_TAG_CHARS,
    )
    with pytest.raises(MemoryInvalid) as caught:
        ns.add("x", ["t" * (MAX_TAG_CHARS + 1)])
    assert codes(caught) == "MEMORY_INVALID"
    with pytest.raises(MemoryInvalid) as caught:
        ns.add("x", category="c" * (MAX_CATEGORY_CHARS + 1))
    assert codes(caught) == "MEMORY_INVALID"
    assert len(ns.memories()) == 1


@pytest.mark.parametrize(
    "label", ["a\x00b", "bell\x07", "line\nbreak", "\x1b[31mred", "zero\u200bwidth", "x\u2028y"]
)
def test_control_characters_in_a_tag_or_category_are_rejected(
    ns: FileNamespace, label: str
) -> None:
    with pytest.raises(MemoryInvalid) as caught:
        ns.add("content", [label])
    assert codes(caught) == "MEMORY_INVALID"
    with pytest.raises(MemoryInvalid) as caught:
        ns.add("content", category=label)
    assert codes(caught) == "MEMORY_INVALID"
    assert ns.memories() == []


@pytest.mark.parametrize(
    "name",
    ["..", "../x", "/abs", "/etc/passwd", "a/../b", "users/..", "./x", "a\x00b", "", "a//b", "a/"],
)
def test_a_namespace_that_could_leave_the_data_directory_is_rejected(
    store: MemoryStore, name: str
) -> None:
    with pytest.raises(NamespaceInvalid) as caught:
        store.namespace(name)
    assert codes(caught) == "NAMESPACE_INVALID"
    assert isinstance(caught.value, MemoryInvalid)
    assert not store.data_dir.exists()


@pytest.mark.parametrize("name", ["users/42", "chats/-1001234567890", "team_a/bob-smith"])
def test_namespace_folders_stay_inside_the_data_directory(store: MemoryStore, name: str) -> None:
    ns = store.namespace(name)
    ns.add("x")
    assert ns.path == store.data_dir / name
    assert ns.path.resolve().is_relative_to(store.data_dir.resolve())


@pytest.mark.parametrize("intruder", ["users/42/memory.json", "users/42/memory.journal"])
def test_a_namespace_cannot_take_the_place_of_another_ones_files(
    store: MemoryStore, intruder: str
) -> None:
    with contextlib.suppress(MemoryStoreError):  # refusing the name is one good answer
        store.namespace(intruder).add("in the way")
    ns = store.namespace("users/42")
    assert ns.add("mine").content == "mine"
    assert contents(ns) == ["mine"]
