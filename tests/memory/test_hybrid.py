"""Search by meaning: the hybrid ranking, its vectors beside memory.json, its failures.

Most tests use ``Concepts``, a small deterministic embedder (words -> concept axes) that
implements the ``Embedder`` interface; a few use the real offline model, loaded once.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from memory.embedding import EmbedderHealth, OfflineEmbedder, Vectors, unit_rows
from memory.errors import EmbeddingFailed
from memory.files import MemoryStore
from memory.files.vectors import VECTORS_FILE, FileVectors

AXES = {
    "buy": 0, "shopping": 0, "milk": 0, "eggs": 0, "groceries": 0,
    "doctor": 1, "dentist": 1, "teeth": 1, "appointment": 1,
    "cat": 2, "kitten": 2, "pet": 2,
    "talk": 3, "chat": 3, "weather": 3, "rain": 3,
}  # fmt: skip


class Concepts:
    """Texts -> unit vectors over a few concept axes (a tiny stand-in for a model)."""

    model = "concepts-test"
    dimensions = 5

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], bool]] = []
        self.gate: threading.Event | None = None
        self.fail = False

    def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        if self.gate is not None and not query:
            self.gate.wait(10)
        self.calls.append((list(texts), query))
        if self.fail:
            raise EmbeddingFailed("concepts: scripted failure")
        rows = []
        for text in texts:
            row = np.full(self.dimensions, 0.01, dtype=np.float32)
            for word in text.lower().replace("?", " ").replace(",", " ").split():
                if word.strip(".") in AXES:
                    row[AXES[word.strip(".")]] += 1.0
            rows.append(row)
        return unit_rows(rows, len(texts), self.dimensions)

    @property
    def passages(self) -> int:
        return sum(len(texts) for texts, query in self.calls if not query)


@pytest.fixture
def concepts() -> Concepts:
    return Concepts()


@pytest.fixture
def meaning_store(tmp_path: Path, concepts: Concepts) -> Iterator[MemoryStore]:
    with MemoryStore(tmp_path / "data", embedder=concepts) as store:
        yield store


def ids(hits: Sequence[object]) -> list[int]:
    return [hit.memory.id for hit in hits]  # type: ignore[attr-defined]


def test_meaning_finds_what_shares_no_word(meaning_store: MemoryStore) -> None:
    ns = meaning_store.namespace("users/1")
    ns.add("Shopping list: milk, eggs")
    ns.add("The cat sleeps on the sofa")
    ns.add("Dentist appointment on Friday")
    assert meaning_store.wait_for_embeddings(10)
    assert ns.search("what do I need to buy?", touch=False) == []  # no shared word
    hits = ns.search("what do I need to buy?", ranker="hybrid", touch=False)
    assert hits[0].memory.content == "Shopping list: milk, eggs"
    assert ns.search_status().embedded == 3


def test_without_an_embedder_hybrid_is_exactly_the_keyword_ranking(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "data") as store:
        ns = store.namespace("users/1")
        for i in range(40):
            ns.add(f"note {i} about project {i % 7} and the cat {i % 3}", tags=[f"t{i % 5}"])
        for query in ("project 3 cat", "cat", "note 12", "t2 project", "nothing here"):
            hybrid = ns.search(query, ranker="hybrid", touch=False)
            default = ns.search(query, touch=False)
            assert [(h.memory.id, h.score) for h in hybrid] == [
                (h.memory.id, h.score) for h in default
            ]
        assert ns.search_status().mode == "keywords"


def test_a_failing_embedder_gives_the_keyword_ranking_at_once_logged_once(
    meaning_store: MemoryStore, concepts: Concepts, caplog: pytest.LogCaptureFixture
) -> None:
    ns = meaning_store.namespace("users/1")
    for text in ("shopping for milk", "the cat and the milk", "dentist on friday"):
        ns.add(text)
    assert meaning_store.wait_for_embeddings(10)
    concepts.fail = True
    caplog.set_level(logging.WARNING)
    for _ in range(3):
        hybrid = ns.search("milk", ranker="hybrid", touch=False)
        assert ids(hybrid) == ids(ns.search("milk", touch=False))
    failures = [r for r in caplog.records if "embeddings failed" in r.getMessage()]
    assert len(failures) == 1  # once per change of state, and the next calls skip the embedder
    assert len([c for c in concepts.calls if c[1]]) == 1 + 0  # one failed query, then none
    assert ns.search_status().failing


def test_add_returns_before_the_embedding_and_search_uses_what_is_embedded(
    meaning_store: MemoryStore, concepts: Concepts
) -> None:
    concepts.gate = threading.Event()  # the embedder hangs until the test lets it go
    ns = meaning_store.namespace("users/1")
    memory = ns.add("Shopping list: milk, eggs")  # returns although nothing is embedded
    assert ns.get(memory.id).content == "Shopping list: milk, eggs"
    assert ns.search("milk", ranker="hybrid", touch=False)[0].memory.id == memory.id
    assert ns.search("what to buy", ranker="hybrid", touch=False) == []  # not embedded yet
    concepts.gate.set()
    assert meaning_store.wait_for_embeddings(10)
    assert ids(ns.search("what to buy", ranker="hybrid", touch=False)) == [memory.id]


def test_a_named_day_keeps_that_days_memories_in_their_keyword_places(
    meaning_store: MemoryStore,
) -> None:
    ns = meaning_store.namespace("users/1")
    records = [
        {"id": i, "content": f"we talked about the weather and rain {i}", "createdAt": "2024-05-01"}
        for i in range(1, 30)
    ]  # close in meaning to the question, on another day
    records += [
        {"id": 100 + i, "content": f"item {i} of the list", "createdAt": "2024-05-02T10:00:00"}
        for i in range(3)
    ]  # nothing in common with the question but its day
    ns.import_memories(records)
    assert meaning_store.wait_for_embeddings(10)
    for query in ("what did we talk about on May 2nd?", "5月2日我们聊了什么天气"):
        keyword = ids(ns.search(query, limit=5, touch=False))
        hybrid = ids(ns.search(query, limit=5, ranker="hybrid", touch=False))
        dated = [m for m in keyword if m >= 100]
        assert dated, keyword
        for memory_id in dated:
            assert memory_id in hybrid
            assert hybrid.index(memory_id) <= keyword.index(memory_id)
        assert any(m < 100 for m in hybrid)  # meaning still counts around them


def test_vectors_are_kept_beside_memory_json_and_reused(tmp_path: Path) -> None:
    first = Concepts()
    with MemoryStore(tmp_path / "data", embedder=first) as store:
        ns = store.namespace("users/1")
        ns.add("Shopping list: milk, eggs")
        ns.add("Dentist appointment")
        assert store.wait_for_embeddings(10)
    folder = tmp_path / "data" / "users" / "1"
    records = json.loads((folder / "memory.json").read_text("utf-8"))
    assert {key for record in records for key in record} <= {
        "id", "content", "tags", "category", "createdAt", "accessedAt", "accessCount",
        "updatedAt", "source",
    }  # fmt: skip
    stored = FileVectors(folder).load(Concepts.model, Concepts.dimensions)
    assert stored is not None and len(stored.keys) == 2
    again = Concepts()
    with MemoryStore(tmp_path / "data", embedder=again) as store:
        ns = store.namespace("users/1")
        hits = ns.search("what to buy", ranker="hybrid", touch=False)
        assert hits[0].memory.content == "Shopping list: milk, eggs"
        assert store.wait_for_embeddings(10)
    assert again.passages == 0  # nothing embedded twice


@pytest.mark.parametrize("damage", ["corrupt", "truncated", "other model"])
def test_an_unusable_vector_file_is_rebuilt_and_never_blocks_a_search(
    tmp_path: Path, damage: str
) -> None:
    with MemoryStore(tmp_path / "data", embedder=Concepts()) as store:
        ns = store.namespace("users/1")
        ns.add("Shopping list: milk, eggs")
        ns.add("the cat")
        assert store.wait_for_embeddings(10)
    path = tmp_path / "data" / "users" / "1" / VECTORS_FILE
    data = path.read_bytes()
    if damage == "corrupt":
        path.write_bytes(data[:-8] + b"\xff" * 8)
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        path.write_bytes(data.replace(b"concepts-test", b"other-model00"))
    embedder = Concepts()
    with MemoryStore(tmp_path / "data", embedder=embedder) as store:
        ns = store.namespace("users/1")
        assert ns.search("milk", ranker="hybrid", touch=False)[0].memory.content.startswith("Shop")
        assert store.wait_for_embeddings(10)
        assert embedder.passages == 2  # embedded again
        assert ns.search("buy", ranker="hybrid", touch=False)[0].memory.content.startswith("Shop")
    assert FileVectors(path.parent).load(Concepts.model, Concepts.dimensions) is not None


def test_an_edit_is_embedded_again_and_a_delete_leaves_search(
    meaning_store: MemoryStore, concepts: Concepts
) -> None:
    ns = meaning_store.namespace("users/1")
    memory = ns.add("the cat sleeps")
    other = ns.add("weather report")
    assert meaning_store.wait_for_embeddings(10)
    ns.update(memory.id, content="dentist on friday")
    assert meaning_store.wait_for_embeddings(10)
    assert ids(ns.search("teeth", ranker="hybrid", limit=1, touch=False)) == [memory.id]
    ns.delete(memory.id)
    assert memory.id not in ids(ns.search("teeth", ranker="hybrid", touch=False))
    assert ids(ns.search("rain", ranker="hybrid", limit=1, touch=False)) == [other.id]


def test_health_backs_off_and_recovers(concepts: Concepts) -> None:
    now = [0.0]
    health = EmbedderHealth(concepts, clock=lambda: now[0])
    concepts.fail = True
    with pytest.raises(EmbeddingFailed):
        health.embed(["a"], query=True)
    with pytest.raises(EmbeddingFailed):
        health.embed(["a"], query=True)  # skipped: backing off
    assert len(concepts.calls) == 1
    concepts.fail = False
    now[0] = 1000.0
    assert health.embed(["cat"], query=True).shape == (1, 5)
    assert not health.failing


def test_the_offline_model_finds_by_meaning_in_two_languages(
    tmp_path: Path, offline_embedder: OfflineEmbedder
) -> None:
    with MemoryStore(tmp_path / "data", embedder=offline_embedder) as store:
        ns = store.namespace("users/1")
        for text in (
            "Shopping list: milk, eggs, bread",
            "Dentist appointment on Friday at 3pm",
            "My code is in D:\\projects",
            "周五下午三点开会",
            "The cat's name is Miso",
        ):
            ns.add(text)
        assert store.wait_for_embeddings(60)
        assert ns.search_status().embedded == 5
        first = ns.search("what do I need to buy?", ranker="hybrid", touch=False)[0]
        assert first.memory.content.startswith("Shopping")
        first = ns.search("when do I see the doctor?", ranker="hybrid", touch=False)[0]
        assert first.memory.content.startswith("Dentist")
        first = ns.search("我的猫叫什么名字", ranker="hybrid", touch=False)[0]
        assert "Miso" in first.memory.content


def test_the_cli_searches_by_meaning_and_keeps_the_vectors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], offline_embedder: OfflineEmbedder
) -> None:
    from memory.cli import main

    data = str(tmp_path / "data")
    for text in ("Shopping list: milk, eggs", "Dentist on Friday", "My code is in D:\\src"):
        assert main(["--data-dir", data, "--ns", "users/1", "add", text]) == 0
    capsys.readouterr()
    args = ["--data-dir", data, "--ns", "users/1", "--json", "search", "what do I need to buy?"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out) == []  # keywords: no shared word
    assert main([*args, "--ranker", "hybrid"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert hits[0]["content"].startswith("Shopping")
    assert (tmp_path / "data" / "users" / "1" / VECTORS_FILE).exists()
