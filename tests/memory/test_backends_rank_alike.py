"""Both backends rank alike: the same hits, in the same order, with the same scores."""

from __future__ import annotations

import random
from pathlib import Path

from memory import open_store

WORDS = (
    "project code meeting friday cat miso lisbon sister marathon berlin wifi password deploy"
    " 代码 项目 会议 周五 天气 咖啡 路径"
).split()


def test_searches_give_identical_hits_on_files_and_postgresql(tmp_path: Path, pg_url: str) -> None:
    chance = random.Random(17)
    records = [
        {
            "id": 1000 + n,
            "content": " ".join(chance.choices(WORDS, k=chance.randint(2, 9))),
            "tags": chance.sample(WORDS, k=chance.randint(0, 3)),
            "category": chance.choice(["general", "work", "home"]),
            "createdAt": f"2024-0{chance.randint(1, 9)}-1{chance.randint(0, 9)}T10:00:00.000Z",
            "accessCount": chance.randint(0, 3),  # ties go to the more used memory
        }
        for n in range(300)
    ]
    queries = [" ".join(chance.choices(WORDS, k=chance.randint(1, 4))) for _ in range(60)]
    with open_store(tmp_path / "data") as files, open_store(pg_url) as database:
        a, b = files.namespace("users/1"), database.namespace("users/1")
        # Random content repeats now and then: taken as given, as the benchmark does.
        added = [ns.import_memories(records, skip_duplicates=False) for ns in (a, b)]
        assert added == [300, 300]
        for number, query in enumerate(queries):
            for ranker in ("default", "seed"):
                touch = number % 3 == 0  # touches change counts, and so later ties
                left = a.search(query, limit=10, ranker=ranker, touch=touch)
                right = b.search(query, limit=10, ranker=ranker, touch=touch)
                assert [(h.memory.id, h.score, h.memory.access_count) for h in left] == [
                    (h.memory.id, h.score, h.memory.access_count) for h in right
                ], (query, ranker)
        left_stats, right_stats = a.stats(), b.stats()  # accessedAt: each backend's own "now"
        assert left_stats.by_category == right_stats.by_category
        assert left_stats.top_tags == right_stats.top_tags
        assert [(m.id, m.access_count) for m in left_stats.most_accessed] == [
            (m.id, m.access_count) for m in right_stats.most_accessed
        ]
        assert [(h.memory.id, h.score) for h in a.related(1000)] == [
            (h.memory.id, h.score) for h in b.related(1000)
        ]
