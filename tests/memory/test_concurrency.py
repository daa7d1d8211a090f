"""Concurrency: threads of one process sharing one namespace (processes sharing a store, on
every backend: ``contract/test_contract_processes.py``).

Nothing is lost and no id is given twice, whichever thread writes.
"""

from __future__ import annotations

import threading
from pathlib import Path

from memory.files import MemoryStore

NS = "users/42"


# -- threads -------------------------------------------------------------------------------


def test_threads_adding_at_once_lose_nothing_and_share_no_id(tmp_path: Path) -> None:
    threads, adds = 8, 50
    start = threading.Barrier(threads)
    added: list[list[int]] = [[] for _ in range(threads)]
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)

        def work(n: int) -> None:
            start.wait()
            for i in range(adds):
                added[n].append(ns.add(f"thread {n} memory {i}", [f"t{n}"]).id)

        workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()

        every = [memory_id for ids in added for memory_id in ids]
        assert len(every) == len(set(every)) == threads * adds
        assert all(ids == sorted(ids) for ids in added)
        assert [m.id for m in ns.memories()] == sorted(every)
    with MemoryStore(tmp_path) as store:
        memories = store.namespace(NS).memories()
        assert [m.id for m in memories] == sorted(every)
        assert {m.content for m in memories} == {
            f"thread {n} memory {i}" for n in range(threads) for i in range(adds)
        }


def test_threads_searching_at_once_lose_no_access_count(tmp_path: Path) -> None:
    threads, searches = 8, 25
    start = threading.Barrier(threads)
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        target = ns.add("the wifi password is hunter2", ["wifi"])
        ns.add("something else entirely")

        def work() -> None:
            start.wait()
            for _ in range(searches):
                hits = ns.search("wifi password", ranker="seed")
                assert [hit.memory.id for hit in hits] == [target.id]

        workers = [threading.Thread(target=work) for _ in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert ns.get(target.id).access_count == threads * searches
    with MemoryStore(tmp_path) as store:
        assert store.namespace(NS).get(target.id).access_count == threads * searches


def test_threads_updating_different_memories_keep_every_update(tmp_path: Path) -> None:
    threads, updates = 6, 30
    start = threading.Barrier(threads)
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        ids = [ns.add(f"memory {n}").id for n in range(threads)]

        def work(n: int) -> None:
            start.wait()
            for i in range(updates):
                ns.update(ids[n], content=f"memory {n} version {i}")
                ns.add(f"note {n}.{i}")

        workers = [threading.Thread(target=work, args=(n,)) for n in range(threads)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    with MemoryStore(tmp_path) as store:
        ns = store.namespace(NS)
        assert [ns.get(i).content for i in ids] == [
            f"memory {n} version {updates - 1}" for n in range(threads)
        ]
        assert len(ns.memories()) == threads * (updates + 1)


# -- processes -----------------------------------------------------------------------------
