"""Property tests: random sequences of operations against a plain dict as the model.

The model is what the article's store would hold: a dict of id -> memory in creation order. After
every step the store, reopened from disk now and then, must hold the same memories; the seed
ranker's scores and the access counts are predicted exactly.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from memory.errors import MemoryInvalid, MemoryNotFound
from memory.files import MemoryStore
from memory.model import MAX_LIMIT
from memory.text import content_key

# No word is a substring of another, of a category or of "general": seed scores are predictable.
WORDS = ("apple", "brick", "cloud", "delta", "ember", "frost")
CATEGORIES = ("work", "home", None)

contents = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
raw_tags = st.lists(
    st.sampled_from(WORDS).flatmap(lambda w: st.sampled_from([w, w.upper(), f" {w} "])),
    max_size=4,
)


@dataclass
class Expected:
    content: str
    tags: tuple[str, ...]
    category: str
    access_count: int = 0


def cleaned(tags: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(tag.strip().lower() for tag in tags if tag.strip()))


def seed_score(memory: Expected, word: str) -> float:
    score = 10 if word in memory.content.lower() else 0
    score += 5 * sum(word in tag for tag in memory.tags)
    score += 3 if word in memory.category else 0
    return float(score)


class StoreAgainstModel(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="memory-properties-"))
        self.store = MemoryStore(self.folder)
        self.ns = self.store.namespace("users/42")
        self.model: dict[int, Expected] = {}
        self.issued: set[int] = set()  # ids given out since the store was opened

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    @rule(content=contents, tags=raw_tags, category=st.sampled_from(CATEGORIES))
    def add(self, content: str, tags: list[str], category: str | None) -> None:
        memory = self.ns.add(content, tags, category)
        key = content_key(content)
        same = {i for i, e in self.model.items() if key and content_key(e.content) == key}
        if same:  # the same content after folding: the stored memory, nothing added
            assert memory.id in same
            return
        assert memory.id not in self.model
        assert memory.id > max(self.issued | set(self.model), default=0)
        self.issued.add(memory.id)
        expected = Expected(content, cleaned(tags), category or "general")
        assert (memory.content, memory.tags, memory.category) == (
            expected.content,
            expected.tags,
            expected.category,
        )
        self.model[memory.id] = expected

    @precondition(lambda self: self.model)
    @rule(
        data=st.data(),
        content=st.none() | contents,
        tags=st.none() | raw_tags,
        category=st.sampled_from(CATEGORIES),
    )
    def update(
        self, data: st.DataObject, content: str | None, tags: list[str] | None, category: str | None
    ) -> None:
        memory_id = data.draw(st.sampled_from(sorted(self.model)))
        if content is None and tags is None and category is None:
            with pytest.raises(MemoryInvalid):
                self.ns.update(memory_id)
            return
        updated = self.ns.update(memory_id, content=content, tags=tags, category=category)
        expected = self.model[memory_id]
        if content is not None:
            expected.content = content
        if tags is not None:
            expected.tags = cleaned(tags)
        if category is not None:
            expected.category = category
        assert (updated.content, updated.tags, updated.category, updated.access_count) == (
            expected.content,
            expected.tags,
            expected.category,
            expected.access_count,
        )

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        memory_id = data.draw(st.sampled_from(sorted(self.model)))
        deleted = self.ns.delete(memory_id)
        assert deleted.content == self.model.pop(memory_id).content
        with pytest.raises(MemoryNotFound):
            self.ns.get(memory_id)

    @precondition(lambda self: self.model)
    @rule(data=st.data())
    def get(self, data: st.DataObject) -> None:
        memory_id = data.draw(st.sampled_from(sorted(self.model)))
        memory = self.ns.get(str(memory_id))
        expected = self.model[memory_id]
        assert (memory.content, memory.tags, memory.access_count) == (
            expected.content,
            expected.tags,
            expected.access_count,
        )

    @rule()
    def get_unknown(self) -> None:
        with pytest.raises(MemoryNotFound):
            self.ns.get(max(self.issued | set(self.model), default=0) + 10**6)

    @rule(word=st.sampled_from(WORDS), limit=st.integers(1, 5) | st.just(MAX_LIMIT))
    def search_seed(self, word: str, limit: int) -> None:
        scored = [(i, seed_score(m, word)) for i, m in self.model.items()]
        # Best first; equal scores keep the stored (creation) order, as the article's sort does.
        expected = sorted((pair for pair in scored if pair[1] > 0), key=lambda p: -p[1])[:limit]
        hits = self.ns.search(word, limit=limit, ranker="seed")
        assert [(hit.memory.id, hit.score) for hit in hits] == expected
        for memory_id, _ in expected:
            self.model[memory_id].access_count += 1

    @rule(word=st.sampled_from(WORDS))
    def search_default_untouched(self, word: str) -> None:
        hits = self.ns.search(word, limit=MAX_LIMIT, touch=False)
        assert {hit.memory.id for hit in hits} <= set(self.model)
        assert all(hit.score > 0 for hit in hits)
        assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)

    @rule()
    def reopen(self) -> None:
        self.store.close()
        self.store = MemoryStore(self.folder)
        self.ns = self.store.namespace("users/42")
        self.issued = set(self.model)

    @invariant()
    def same_memories_as_the_model(self) -> None:
        memories = self.ns.memories()
        ids = [m.id for m in memories]
        assert ids == list(self.model)
        assert ids == sorted(set(ids))
        assert [(m.content, m.tags, m.category, m.access_count) for m in memories] == [
            (e.content, e.tags, e.category, e.access_count) for e in self.model.values()
        ]


StoreAgainstModel.TestCase.settings = settings(
    max_examples=50, stateful_step_count=30, deadline=None, database=None
)
TestStoreAgainstModel = StoreAgainstModel.TestCase
