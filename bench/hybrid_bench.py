"""Speed and memory of search by meaning: hybrid search at 10,000 memories, add, RSS.

Three measurements, each in a fresh child process so that RSS figures are the process's own:

- ``search``: a namespace of ``--memories`` memories (sentences drawn from a fixed vocabulary,
  seeded), median time of ``search(query, ranker=...)`` over ``--queries`` distinct questions,
  for the keyword ranking and the hybrid one: wall time, and the CPU time of the process
  (``time.process_time``, every thread: it counts a thread that spins, and other work on a
  shared machine inflates it much less than wall time); the load average is printed before
  and after. The hybrid figure includes embedding the query with the offline model
  (``memory.embedding.OfflineEmbedder``), twice: with one engine thread (the baseline) and
  with the threads chosen per query as the bot does (``auto``). ``--busy N`` runs N other
  processes that keep a CPU busy meanwhile, to see the choice give way. So that the
  benchmark takes seconds, not the ten minutes that embedding 10,000 memories takes on two
  cores, the memories' vectors are random unit vectors written to ``memory.vectors`` through
  ``FileVectors`` under each text's key: a search's cost does not depend on the vectors' values
  (``--embed`` embeds them for real instead).
- ``backlog``: the same hybrid search, one every 0.1 s, while the store's background worker
  embeds a backlog (``--memories`` memories none of which has a vector yet, as after an
  upgrade): the engine is shared, and a search waits for the passage in progress.
- ``rss``: peak RSS (``ru_maxrss``) after those searches, keywords only and with the model.
- ``add``: median time of ``add`` into a namespace of 1,000 memories, without an embedder and
  with the offline one (whose background thread embeds meanwhile).

Usage::

    python -m bench.hybrid_bench [--memories 10000] [--queries 200] [--embed] [--busy N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from memory.embedding import AUTO, OfflineEmbedder
from memory.files import MemoryStore
from memory.files.vectors import FileVectors
from memory.vectors import VectorSet, text_key

WORDS = (
    "meeting project code dentist doctor shopping milk eggs bread cat dog garden paint guitar "
    "sister brother mother trip beach mountain book novel movie concert dinner lunch coffee "
    "train flight hotel passport birthday gift party school exam homework office report budget "
    "laptop phone password server deploy release bug review friday monday weekend morning "
    "evening summer winter recipe cake soup run marathon yoga swim bike car repair insurance"
).split()
QUESTIONS = (
    "what do I need to buy", "when do I see the doctor", "where is my project code",
    "what did my sister say about the trip", "which book was I reading", "when is the party",
    "what was the password hint", "how did the marathon go", "what should I cook tonight",
)  # fmt: skip


def _sentences(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{' '.join(rng.choices(WORDS, k=rng.randint(6, 16)))} {i}".capitalize()
        for i in range(count)
    ]


SEARCHES = (
    ("default", 1, "default"),
    ("hybrid", 1, "hybrid 1 thread"),
    ("hybrid", AUTO, "hybrid auto"),
)  # (ranker, engine threads, label)


def _fill(data: Path, count: int, embed: bool) -> None:
    with MemoryStore(data) as store:
        ns = store.namespace("users/1")
        texts = _sentences(count, 1)
        ns.import_memories({"id": i + 1, "content": text} for i, text in enumerate(texts))
    embedder = OfflineEmbedder()
    if embed:
        with MemoryStore(data, embedder=embedder) as store:
            ns = store.namespace("users/1")
            ns.search("warm up", ranker="hybrid", touch=False)
            while ns.embed_step():
                pass
            store.wait_for_embeddings()
        return
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((count, embedder.dimensions)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = tuple(text_key(text) for text in texts)
    FileVectors(data / "users" / "1").save(
        VectorSet(embedder.model, embedder.dimensions, keys, vectors)
    )


def _search(data: Path, ranker: str, threads: int, queries: int) -> dict[str, Any]:
    embedder = OfflineEmbedder(threads=threads) if ranker == "hybrid" else None
    with MemoryStore(data, embedder=embedder) as store:
        ns = store.namespace("users/1")
        ns.search("warm up", ranker=ranker, touch=False)
        status = ns.search_status()
        times, cpu = [], []
        for i in range(queries):
            query = f"{QUESTIONS[i % len(QUESTIONS)]} {WORDS[i % len(WORDS)]} {i}"
            started, started_cpu = time.perf_counter(), time.process_time()
            ns.search(query, ranker=ranker, touch=False)
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - started_cpu)
    chosen = embedder.query_threads.chosen() if embedder and threads == AUTO else {}
    return {
        "ranker": ranker,
        "threads": {str(count): times for count, times in chosen.items()},
        "median_ms": round(statistics.median(times) * 1000, 2),
        "p90_ms": round(sorted(times)[int(len(times) * 0.9)] * 1000, 2),
        "cpu_ms": round(statistics.median(cpu) * 1000, 2),
        "embedded": status.embedded,
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def _backlog(data: Path, count: int, queries: int) -> dict[str, Any]:
    with MemoryStore(data) as store:
        store.namespace("users/1").import_memories(
            {"id": i + 1, "content": text} for i, text in enumerate(_sentences(count, 4))
        )
    with MemoryStore(data, embedder=OfflineEmbedder()) as store:
        ns = store.namespace("users/1")
        ns.search("warm up", ranker="hybrid", touch=False)  # loads the model, starts the worker
        times, began, embedded = [], time.perf_counter(), ns.search_status().embedded
        for i in range(queries):
            time.sleep(0.1)
            started = time.perf_counter()
            ns.search(f"{QUESTIONS[i % len(QUESTIONS)]} {i}", ranker="hybrid", touch=False)
            times.append(time.perf_counter() - started)
        rate = (ns.search_status().embedded - embedded) / (time.perf_counter() - began)
    return {
        "median_ms": round(statistics.median(times) * 1000, 2),
        "p90_ms": round(sorted(times)[int(len(times) * 0.9)] * 1000, 2),
        "rate": round(rate, 1),
    }


def _add(data: Path, with_embedder: bool, adds: int) -> dict[str, Any]:
    embedder = OfflineEmbedder() if with_embedder else None
    with MemoryStore(data, embedder=embedder) as store:
        ns = store.namespace("users/1")
        ns.import_memories({"id": i + 1, "content": t} for i, t in enumerate(_sentences(1000, 2)))
        ns.search("warm up", ranker="hybrid", touch=False)  # loads the model, if any
        times = []
        for text in _sentences(adds, 3):
            started = time.perf_counter()
            ns.add(text)
            times.append(time.perf_counter() - started)
    return {"embedder": with_embedder, "median_ms": round(statistics.median(times) * 1000, 3)}


def _child(common: list[str], args: list[str]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.hybrid_bench", *common, "--child", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hybrid_bench", description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--adds", type=int, default=100)
    parser.add_argument("--embed", action="store_true", help="embed the memories for real")
    parser.add_argument("--busy", type=int, default=0, help="processes keeping a CPU busy")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, folder, *rest = args.child
        if kind == "search":
            result = _search(Path(folder), rest[0], int(rest[1]), args.queries)
        elif kind == "backlog":
            result = _backlog(Path(folder), args.memories, min(args.queries, 50))
        else:
            result = _add(Path(folder), rest[0] == "1", args.adds)
        print(json.dumps(result))
        return 0
    print("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), flush=True)
    with tempfile.TemporaryDirectory(prefix="hybrid-bench-") as tmp:
        data = Path(tmp) / "data"
        _fill(data, args.memories, args.embed)
        common = [f"--memories={args.memories}", f"--queries={args.queries}", f"--adds={args.adds}"]
        busy = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)
        ]
        try:
            for ranker, threads, label in SEARCHES:
                result = _child(common, ["search", str(data), ranker, str(threads)])
                chosen = ", ".join(f"{n} thread(s) {k}x" for n, k in result["threads"].items())
                print(
                    f"search {label:16} at {args.memories:,} memories:"
                    f" median {result['median_ms']} ms, p90 {result['p90_ms']} ms,"
                    f" CPU {result['cpu_ms']} ms ({result['embedded']:,} embedded),"
                    f" peak RSS {result['max_rss_mb']} MB" + (f"; {chosen}" if chosen else ""),
                    flush=True,
                )
            result = _child(common, ["backlog", str(Path(tmp) / "backlog")])
            print(
                f"search while a backlog is embedded: median {result['median_ms']} ms,"
                f" p90 {result['p90_ms']} ms (the backlog: {result['rate']} memories/s meanwhile)",
                flush=True,
            )
        finally:
            for process in busy:
                process.kill()
                process.wait()
        for flag in ("0", "1"):
            folder = Path(tmp) / f"add{flag}"
            result = _child(common, ["add", str(folder), flag])
            label = "with the offline embedder" if flag == "1" else "without an embedder"
            print(f"add {label}: median {result['median_ms']} ms", flush=True)
    print("load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
