"""The article's file format: what a person opening ``memory.json`` sees and may edit."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from memory.files import FileNamespace, MemoryStore

ARTICLE_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")
ARTICLE_KEYS = ["id", "content", "tags", "category", "createdAt", "accessedAt", "accessCount"]
NS = "users/42"


def contents(ns: FileNamespace) -> list[str]:
    return [m.content for m in ns.memories()]


# -- the article's file format --------------------------------------------------------------

ARTICLE_JSON = """[
  {
    "id": 1705312200000,
    "content": "代码在 D:\\\\projects",
    "tags": ["代码", "路径", "项目"],
    "category": "general",
    "createdAt": "2024-01-15T10:30:00.000Z",
    "accessedAt": "2024-01-15T10:30:00.000Z",
    "accessCount": 0
  }
]
"""


def write_article_file(data_dir: Path, name: str = "users/42") -> Path:
    path = data_dir / name / "memory.json"
    path.parent.mkdir(parents=True)
    path.write_text(ARTICLE_JSON, encoding="utf-8")
    return path


def test_the_articles_json_example_loads_unchanged(tmp_path: Path) -> None:
    path = write_article_file(tmp_path)
    (record,) = json.loads(ARTICLE_JSON)
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/42")
        assert ns.export() == [record]
        (memory,) = ns.memories()
        assert memory.content == "代码在 D:\\projects"
        assert memory.updated_at is None
        assert ns.get(1705312200000) == memory
        assert ns.stats().total == 1
    assert path.read_text(encoding="utf-8") == ARTICLE_JSON  # reading rewrites nothing


def test_after_a_change_memory_json_is_still_the_articles_format(tmp_path: Path) -> None:
    path = write_article_file(tmp_path)
    (record,) = json.loads(ARTICLE_JSON)
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/42")
        added = ns.add("周五下午三点开会", ["会议"])
    text = path.read_text(encoding="utf-8")
    records = json.loads(text)
    assert isinstance(records, list)
    assert records[0] == record
    assert records[1] == added.to_dict()
    assert all(list(r) == ARTICLE_KEYS for r in records)
    assert "代码在 D:\\\\projects" in text  # Chinese kept as is, the backslash JSON-escaped
    assert "周五下午三点开会" in text
    assert "\\u" not in text


def test_a_hand_edited_file_with_extra_fields_and_no_optional_ones_loads(tmp_path: Path) -> None:
    path = tmp_path / "users" / "42" / "memory.json"
    path.parent.mkdir(parents=True)
    records = [
        {"id": 1, "content": "minimal"},
        {"id": 2, "content": "edited", "updatedAt": "2024-02-01T00:00:00.000Z", "tags": "a,B"},
    ]
    path.write_text(json.dumps(records), encoding="utf-8")
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/42")
        assert contents(ns) == ["minimal", "edited"]
        assert ns.get(2).tags == ("a", "b")
        assert ns.get(2).updated_at == "2024-02-01T00:00:00.000Z"
        assert ns.get(1).category == "general"


def test_a_record_without_times_keeps_one_created_at(tmp_path: Path) -> None:
    path = tmp_path / "users" / "42" / "memory.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps([{"id": 1705312200000, "content": "no times"}]), encoding="utf-8")
    seen = []
    for _ in range(2):
        with MemoryStore(tmp_path) as store:
            seen.append(store.namespace("users/42").get(1705312200000).created_at)
        time.sleep(0.005)  # a later reading must not invent a later creation time
    assert seen[0] == seen[1]
    assert ARTICLE_TIME.fullmatch(seen[0])


def test_a_file_saved_with_a_byte_order_mark_loads(tmp_path: Path) -> None:
    path = write_article_file(tmp_path)
    path.write_bytes(b"\xef\xbb\xbf" + ARTICLE_JSON.replace("\n", "\r\n").encode())  # Notepad
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/42")
        assert ns.export() == json.loads(ARTICLE_JSON)
        assert ns.pop_quarantine() is None


def test_an_edit_by_hand_while_running_is_seen_on_the_next_operation(tmp_path: Path) -> None:
    with MemoryStore(tmp_path) as store:
        ns = store.namespace("users/42")
        memory = ns.add("standup at 10:00", ["work"])
        store.close()  # memory.json up to date; the namespace object stays usable
        assert ns.get(memory.id) == memory

        path = ns.path / "memory.json"
        records = json.loads(path.read_text("utf-8"))
        records[0]["content"] = "standup at 10:30"
        records.append({"id": 1, "content": "typed in by hand", "tags": ["Manual"]})
        path.write_text(json.dumps(records, ensure_ascii=False, indent=2), encoding="utf-8")

        assert contents(ns) == ["standup at 10:30", "typed in by hand"]
        assert ns.get(1).tags == ("manual",)
        assert [hit.memory.id for hit in ns.search("10:30", ranker="seed")] == [memory.id]


# -- a snapshot the store wrote loads unvalidated; one edited since is validated ----------


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
