"""A plain port of the article's store, the baseline of the store benchmark.

One JSON file, rewritten whole (indent=2) on every add and every search, the whole query as a
substring of content, tags and category. This is what the article's code does; it exists here
only to be measured against, in the same run, on the same machine.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any


class SeedPortStore:
    """The article's ``MemoryStore``, line for line in spirit."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self.memories: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            self.memories = []  # the article resets here, and overwrites the file on next save

    def _save(self) -> None:
        self.path.write_text(json.dumps(self.memories, ensure_ascii=False, indent=2), "utf-8")

    def add(self, content: str, tags: list[str], category: str = "general") -> dict[str, Any]:
        """``addMemory``: append and rewrite the file."""
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        memory = {
            "id": time.time_ns() // 1_000_000,
            "content": content,
            "tags": [t.lower() for t in tags],
            "category": category.lower(),
            "createdAt": now,
            "accessedAt": now,
            "accessCount": 0,
        }
        self.memories.append(memory)
        self._save()
        return memory

    def search(self, query: str, limit: int = 10) -> list[dict[str, Any]]:
        """``searchMemory``: substring scoring, then touch every hit and rewrite the file."""
        q = query.lower()
        scored = []
        for memory in self.memories:
            score = 10 if q in memory["content"].lower() else 0
            score += 5 * sum(q in tag for tag in memory["tags"])
            score += 3 if q in memory["category"] else 0
            if score:
                scored.append((score, memory))
        scored.sort(key=lambda pair: -pair[0])
        hits = [m for _, m in scored[:limit]]
        now = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        for memory in hits:
            memory["accessCount"] += 1
            memory["accessedAt"] = now
        self._save()
        return hits
