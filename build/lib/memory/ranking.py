"""Rankers: how a namespace orders its memories for a query.

A ranker keeps whatever index it needs, fed by the store as memories are added, changed and
removed (``index``/``unindex``), and answers ``rank`` with ``(id, score)`` pairs, best first,
scores above zero only. The store owns the memories; a ranker reads current values (such as
``accessCount``) from the mapping it is given, so access bookkeeping never re-indexes.

``SeedRanker`` is the article's scorer, word by word: for each query word, the content
containing it scores +10, each tag containing it +5, the category containing it +3. On the
article's walkthrough (query ``代码项目``) memory 1 scores 20 and memory 3 scores 5.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from memory.model import Memory
from memory.text import query_words


class Ranker(Protocol):
    """What the store needs of a ranking."""

    name: str

    def index(self, memory: Memory) -> None:
        """Add ``memory`` to the index, or replace the indexed version with the same id."""

    def unindex(self, memory_id: int) -> None:
        """Forget the memory with this id (no error if it is not indexed)."""

    def rank(
        self, query: str, memories: Mapping[int, Memory], limit: int
    ) -> list[tuple[int, float]]:
        """The best ``limit`` ids for ``query`` with their scores, best first, scores > 0."""
        ...


class SeedRanker:
    """The article's substring scorer, applied to each word of the query."""

    name = "seed"

    def index(self, memory: Memory) -> None:
        """Nothing to index: the seed scorer reads every memory at query time."""

    def unindex(self, memory_id: int) -> None:
        """Nothing to forget."""

    def rank(
        self, query: str, memories: Mapping[int, Memory], limit: int
    ) -> list[tuple[int, float]]:
        """Score every memory; ties keep the stored order, as the article's stable sort does."""
        words = query_words(query)
        if not words:
            return []
        scored: list[tuple[int, float]] = []
        for memory in memories.values():
            content = memory.content.lower()
            score = 0
            for word in words:
                if word in content:
                    score += 10
                score += 5 * sum(word in tag for tag in memory.tags)
                if word in memory.category:
                    score += 3
            if score > 0:
                scored.append((memory.id, float(score)))
        scored.sort(key=lambda pair: -pair[1])
        return scored[:limit]
