"""The rules the operations apply to memories (``memory.namespace``), beside the ranking.

The article's ``getMemoryStats`` (``stats_of``) and ``getRelatedMemories`` (``related_to``,
with its weights by default), what an ``update`` may change (``update_changes``), what a
``restore`` writes (``restored``) and what an import reads and adds (``read_records``,
``importable``): plain functions of ``memory.model`` values, the same whatever the backend.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Iterable, Mapping
from dataclasses import replace
from typing import Any

from memory.errors import MemoryInvalid
from memory.model import (
    DEFAULT_CATEGORY,
    Hit,
    Memory,
    Stats,
    clean_category,
    clean_content,
    clean_tags,
    most_used,
)
from memory.text import content_key
from memory.timestamps import now_iso

TOP_TAGS = 10
MOST_ACCESSED = 5


def update_changes(
    content: str | None, tags: Iterable[str] | str | None, category: str | None
) -> dict[str, Any]:
    """The fields an ``update`` changes, cleaned; ``MemoryInvalid`` if it changes none."""
    if content is None and tags is None and category is None:
        raise MemoryInvalid("nothing to update: give content, tags or category")
    changes: dict[str, Any] = {}
    if content is not None:
        changes["content"] = clean_content(content)
    if tags is not None:
        changes["tags"] = clean_tags(tags)
    if category is not None:
        changes["category"] = clean_category(category)
    return changes


def stats_of(memories: list[Memory]) -> Stats:
    """The article's ``getMemoryStats`` of ``memories``: totals by category, the most used tags,
    and the top 5 by ``accessCount`` (ties ordered as ``most_used`` orders them)."""
    by_category = Counter(m.category for m in memories)
    tags = Counter(tag for m in memories for tag in m.tags)
    most = most_used(memories, MOST_ACCESSED, used_only=False)
    return Stats(len(memories), dict(by_category.most_common()), tags.most_common(TOP_TAGS), most)


def related_to(
    target: Memory,
    memories: Iterable[Memory],
    limit: int,
    *,
    tag: float = 1.0,
    category: float = 2.0,
    default_category: bool = True,
) -> list[Hit]:
    """The memories of ``memories`` (other than ``target``) sharing its tags (``tag`` each) or
    its category (``category``; the default one only with ``default_category``), best first,
    score 0 dropped: the article's ``getRelatedMemories`` with its weights by default."""
    tags = set(target.tags)
    scored = []
    for memory in memories:
        if memory.id == target.id:
            continue
        score = tag * len(tags.intersection(memory.tags))
        if memory.category == target.category and (
            default_category or memory.category != DEFAULT_CATEGORY
        ):
            score += category
        if score:
            scored.append(Hit(memory, float(score)))
    scored.sort(key=lambda hit: -hit.score)
    return scored[:limit]


def restored(memory: Memory, current: Memory | None, source_taken: bool) -> Memory:
    """What a restore of ``memory`` writes: ``memory`` itself, re-inserted, if it is gone
    (without its ``source`` if another memory has it now: ``source_taken``); else ``current``
    with ``memory``'s content, tags and category, updated now."""
    if current is None:
        return replace(memory, source=None) if source_taken else memory
    return replace(
        current,
        content=memory.content,
        tags=memory.tags,
        category=memory.category,
        updated_at=now_iso(),
    )


def read_records(records: Iterable[Mapping[str, Any]]) -> list[Memory]:
    """Article-format records as memories, the first of each id; one invalid record is a
    ``MemoryInvalid`` that names it (an import is all or nothing)."""
    incoming: dict[int, Memory] = {}
    for number, record in enumerate(records, start=1):
        try:
            memory = Memory.from_dict(record)
        except MemoryInvalid as e:
            raise MemoryInvalid(f"record {number}: {e.message}", field=e.field) from e
        incoming.setdefault(memory.id, memory)
    return list(incoming.values())


def importable(
    incoming: Iterable[Memory], held: Container[int], keys: set[str], *, skip_duplicates: bool
) -> list[Memory]:
    """What an import adds of ``incoming``: no memory whose id is ``held`` already and, with
    ``skip_duplicates``, none whose content (``memory.text.content_key``) is in ``keys``, the
    content keys held, which grows with each memory taken."""
    new = []
    for memory in incoming:
        key = content_key(memory.content)
        if memory.id in held or (skip_duplicates and key and key in keys):
            continue  # already here: by id, or the same content under another id
        if key:
            keys.add(key)
        new.append(memory)
    return new
