"""A snapshot the store wrote loads without re-validation; one edited since is validated."""

from __future__ import annotations

import json
from pathlib import Path

from memory.store import MemoryStore

NS = "users/42"


def _snapshot(data_dir: Path) -> Path:
    return data_dir / NS / "memory.json"


def test_a_hand_edited_snapshot_is_cleaned_as_any_article_file(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        store.namespace(NS).add("standup at 10:00", ["work"])
    records = json.loads(_snapshot(tmp_path).read_text("utf-8"))
    records[0]["tags"] = ["  WORK ", "Meetings"]  # as a person might type them
    records[0]["category"] = "Office"
    _snapshot(tmp_path).write_text(json.dumps(records, ensure_ascii=False), "utf-8")

    with MemoryStore(tmp_path) as store:
        (memory,) = store.namespace(NS).memories()
    assert memory.tags == ("work", "meetings")
    assert memory.category == "office"


def test_the_stores_own_snapshot_reloads_identically(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        ns.add("代码在 D:\\projects", ["代码", "路径"], "Work")
        ns.add("standup at 10:00", source="telegram:42:7")
        before = ns.memories()
    journal = (tmp_path / NS / "memory.journal").read_text("utf-8")
    assert json.loads(journal.splitlines()[0])["op"] == "high"

    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert ns.memories() == before
        assert ns.add("again", source="telegram:42:7") == before[1]
