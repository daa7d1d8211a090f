"""``python -m memory migrate``: files to PostgreSQL and back, everything kept, nothing twice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from memory import Store, open_store
from memory.migrate import migrate
from memory.vectors import VectorSet

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
        # Embeddings of two texts (a model of 4 dimensions: what matters is that they move).
        ns.vectors().save(vector_set("test-model", [b"k" * 16, b"l" * 16], 4))
        store.documents("users/42").put("history", [{"role": "user", "content": "你好"}])
        store.documents("users/7").put("digest", {"enabled": True})  # documents, no memories
        store.bot_documents().put("console", {"next_message_id": 12})
        inbox = store.bot_log("inbox")
        inbox.append({"update_id": 1})
        inbox.append({"update_id": 2}, durable=True)


def vector_set(model: str, keys: list[bytes], dimensions: int, start: float = 0.0) -> VectorSet:
    rows = np.arange(len(keys) * dimensions, dtype=np.float32).reshape(len(keys), dimensions)
    return VectorSet(model, dimensions, tuple(keys), rows + np.float32(start))


def vectors_of(store: Store, name: str) -> dict[str, object]:
    held = store.namespace(name).vectors()
    found = {}
    for model, dimensions in held.stored():
        loaded = held.load(model, dimensions)
        assert loaded is not None
        found[f"{model}/{dimensions}"] = sorted(
            zip(loaded.keys, loaded.vectors.tolist(), strict=True)
        )
    return found


def everything(location: object) -> dict[str, object]:
    with open_store(str(location)) as store:
        names = store.namespace_names()
        return {
            "memories": {name: store.namespace(name).export() for name in names},
            "history": {
                name: [r.to_dict() for r in store.namespace(name).history().records]
                for name in names
            },
            "vectors": {name: vectors_of(store, name) for name in names},
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

    assert len(before["history"]["users/42"]) == 8  # type: ignore[index]
    assert before["vectors"]["users/42"]  # type: ignore[index]

    first = run_migrate(data, pg_url)
    assert "namespaces 2, memories 6," in first and "documents 3," in first and "logs 1," in first
    assert "changes 9, changes present 0, vectors 2, vectors present 0" in first
    assert everything(pg_url) == before  # the history as it was: no "import" records of its own
    again = run_migrate(data, pg_url)
    assert "memories 0, memories present 6, documents 0, documents present 3" in again
    assert "logs 0, logs present 1" in again
    assert "changes 0, changes present 9, vectors 0, vectors present 2" in again
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


def test_history_and_vectors_are_added_to_memories_copied_before(
    tmp_path: Path, pg_url: str
) -> None:
    """A target that holds the memories already (a copy made without them) gets their history
    and vectors, beside its own, and a rerun copies nothing."""
    data = tmp_path / "data"
    fill(data)
    with open_store(data) as source, open_store(pg_url) as target:
        ns = source.namespace("users/42")
        copy = target.namespace("users/42")
        assert copy.import_memories(ns.export(), skip_duplicates=False) == 5  # no history
        copy.vectors().save(vector_set("test-model", [b"m" * 16], 4, 9))
        copy.vectors().save(vector_set("other", [b"k" * 16], 2))
    first = run_migrate(data, pg_url)
    assert "memories 1, memories present 5," in first  # the group's memory only
    assert "changes 9, changes present 0, vectors 2, vectors present 0" in first
    copied = everything(pg_url)
    source = everything(data)
    first_copy = copied["history"]["users/42"][:5]  # type: ignore[index]
    assert [r["op"] for r in first_copy] == ["import"] * 5  # its own, then the source's
    assert copied["history"]["users/42"][5:] == source["history"]["users/42"]  # type: ignore[index]
    held = copied["vectors"]["users/42"]  # type: ignore[index]
    assert [key for key, _ in held["test-model/4"]] == [b"k" * 16, b"l" * 16, b"m" * 16]
    assert [key for key, _ in held["other/2"]] == [b"k" * 16]  # another model's: left alone
    again = run_migrate(data, pg_url)
    assert "changes 0, changes present 9, vectors 0, vectors present 2" in again
    assert everything(pg_url) == copied
    back = tmp_path / "back"  # a folder keeps one model's vectors: the largest set goes
    run_migrate(pg_url, back)
    assert everything(back)["vectors"]["users/42"] == {"test-model/4": held["test-model/4"]}  # type: ignore[index]
    assert "vectors 0, vectors present 3" in run_migrate(pg_url, back)


def test_an_id_from_the_far_future_is_copied_as_it_is_and_adds_go_on(
    tmp_path: Path, pg_url: str
) -> None:
    """A namespace holding id 2**63 - 1 (imported before such ids were renumbered; here as a
    migration keeps it) moves with that id, its history naming it, and adds go on there."""
    far, data, back = 2**63 - 1, tmp_path / "data", tmp_path / "back"
    with open_store(data) as store:
        ns = store.namespace("users/42")
        ns.import_memories([{"id": far, "content": "far"}], history=[])
        near = ns.add("near")
    for source, target in ((data, pg_url), (pg_url, back)):
        with open_store(source) as origin, open_store(target) as copy:
            assert migrate(origin, copy).memories == len(origin.namespace("users/42").export())
            ns = copy.namespace("users/42")
            assert [m.id for m in ns.memories()][:2] == [far, near.id]
            assert near.id < ns.add(f"after the move to {target}").id < far
