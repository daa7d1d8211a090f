"""``python -m memory migrate``: files to PostgreSQL and back, everything kept, nothing twice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memory import open_store

REPO_ROOT = Path(__file__).resolve().parents[2]


def run_migrate(source: object, target: object) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "memory", "migrate", "--from", str(source), "--to", str(target)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def fill(location: Path) -> None:
    with open_store(location) as store:
        ns = store.namespace("users/42")
        first = ns.add("代码在 D:\\projects", ["代码", "项目"], "work", source="telegram:42:1")
        ns.add("standup is at 10:00", ["meeting"])
        gone = ns.add("deleted before the move")
        ns.delete(gone.id)
        ns.update(first.id, tags=["代码", "路径"])
        ns.search("projects")  # an access count and time to keep
        ns.add("📷 photo", date="2024-05-01", attachment={"file_id": "f1"}, origin={"from": "A"})
        # The same content twice (a hand edit can do that): both are copied, not merged.
        twice = [{"id": 5, "content": "twice"}, {"id": 6, "content": "twice"}]
        assert ns.import_memories(twice, skip_duplicates=False) == 2
        store.namespace("chats/-100123").add("the group's memory")
        store.documents("users/42").put("history", [{"role": "user", "content": "你好"}])
        store.documents("users/7").put("digest", {"enabled": True})  # documents, no memories
        store.bot_documents().put("console", {"next_message_id": 12})
        inbox = store.bot_log("inbox")
        inbox.append({"update_id": 1})
        inbox.append({"update_id": 2}, durable=True)


def everything(location: object) -> dict[str, object]:
    with open_store(str(location)) as store:
        names = store.namespace_names()
        return {
            "memories": {name: store.namespace(name).export() for name in names},
            "docs": {
                scope: [(d.key, d.value) for d in store.documents(scope).list()]
                for scope in ("users/42", "users/7", "chats/-100123")
            },
            "bot": [(d.key, d.value) for d in store.bot_documents().list()],
            "inbox": store.bot_log("inbox").read(),
        }


def test_files_to_postgresql_and_back_keeps_everything_and_copies_nothing_twice(
    tmp_path: Path, pg_url: str
) -> None:
    data = tmp_path / "data"
    fill(data)
    before = everything(data)
    assert before["memories"]["users/42"][0]["accessCount"] == 1  # type: ignore[index]

    first = run_migrate(data, pg_url)
    assert "namespaces 2, memories 6," in first and "documents 3," in first and "logs 1," in first
    assert everything(pg_url) == before
    again = run_migrate(data, pg_url)
    assert "memories 0, memories present 6, documents 0, documents present 3" in again
    assert "logs 0, logs present 1" in again
    assert everything(pg_url) == before

    back = tmp_path / "back"
    run_migrate(pg_url, back)
    assert everything(back) == before
    with open_store(back) as store:  # the ids go on from there: a deleted one is never reused
        ns = store.namespace("users/42")
        assert ns.add("after the move").id > max(m.id for m in ns.memories()[:-1])
        assert ns.add("again", source="telegram:42:1").content == "代码在 D:\\projects"


def test_a_bad_location_is_a_message(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "memory", "migrate", "--from", "ftp://x", "--to", str(tmp_path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "error [MEMORY_INVALID]" in done.stderr and "Traceback" not in done.stderr
