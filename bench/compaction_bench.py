"""Compaction under load: how long a search waits while the snapshot is rewritten.

    python -m bench.compaction_bench [--memories 50000] [--seconds 30] [--rate 20]
                                     [--compact-seconds 5] [--runs 3] [--json FILE]

A namespace of ``--memories`` memories (the benchmark sets' real texts when
``../shared/bench/data`` is there, else synthetic) takes ``--rate`` adds a second from one
thread and ``--rate`` searches a second from another, for ``--seconds``, while the store's
background thread compacts whatever is ``--compact-seconds`` old (shorter than the default
30 s, so that several compactions fall inside the window). Measured per run:

- ``search_max_ms`` / ``search_p99_ms``: the longest and the 99th-percentile search, from the
  call to its answer (a search queued behind a compaction shows here);
- ``add_max_ms``: the same for adds (fsync included);
- ``rewrites``: how many times ``memory.json`` was replaced during the window;
- ``search_only_rewrites``: the same for a second window of searches alone (access
  bookkeeping only), which should rewrite nothing.

Each run is a fresh process; figures are medians over ``--runs`` runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.store_bench import corpus_records, queries, real_corpus, synthetic_records
from memory.files import MemoryStore

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "data"
NAMESPACE = "users/1"


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_ino, st.st_mtime_ns


def _window(
    store: MemoryStore, snapshot: Path, seconds: float, rate: float, add: bool
) -> dict[str, Any]:
    namespace = store.namespace(NAMESPACE)
    asked = queries()
    stop = threading.Event()
    searches: list[float] = []
    adds: list[float] = []
    rewrites = 0

    def every(period: float, action: Any) -> None:
        due = time.perf_counter()
        n = 0
        while not stop.is_set():
            action(n)
            n += 1
            due += period
            stop.wait(max(0.0, due - time.perf_counter()))

    def search(n: int) -> None:
        started = time.perf_counter()
        namespace.search(asked[n % len(asked)], 5)
        searches.append((time.perf_counter() - started) * 1000)

    def remember(n: int) -> None:
        started = time.perf_counter()
        namespace.add(f"compaction bench note {n}: train ticket for trip {n}", ["bench"])
        adds.append((time.perf_counter() - started) * 1000)

    def watch(_: int) -> None:
        nonlocal rewrites, last
        now = _signature(snapshot)
        if now != last:
            rewrites += 1
            last = now

    last = _signature(snapshot)
    threads = [threading.Thread(target=every, args=(1 / rate, search))]
    if add:
        threads.append(threading.Thread(target=every, args=(1 / rate, remember)))
    threads.append(threading.Thread(target=every, args=(0.01, watch)))
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    searches.sort()
    return {
        "search_max_ms": round(searches[-1], 1),
        "search_p99_ms": round(searches[int(len(searches) * 0.99) - 1], 1),
        "add_max_ms": round(max(adds), 1) if adds else None,
        "rewrites": rewrites,
    }


def one_run(memories: int, seconds: float, rate: float, compact_seconds: float) -> dict[str, Any]:
    """Fill a namespace, then the two windows of the module docstring."""
    corpus = real_corpus(CORPUS)
    records = corpus_records(corpus[0], memories) if corpus else synthetic_records(memories, seed=3)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        with MemoryStore(data) as store:
            store.namespace(NAMESPACE).import_memories(records)
        snapshot = data / NAMESPACE / "memory.json"
        with MemoryStore(data, compact_seconds=compact_seconds) as store:
            store.namespace(NAMESPACE).search("warm up the index", 5)
            mixed = _window(store, snapshot, seconds, rate, add=True)
            store.namespace(NAMESPACE).flush()
            alone = _window(store, snapshot, seconds, rate, add=False)
    return {**mixed, "search_only_rewrites": alone["rewrites"]}


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=50_000)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--compact-seconds", type=float, default=5.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(one_run(args.memories, args.seconds, args.rate, args.compact_seconds)))
        return
    runs = []
    for run in range(args.runs):
        command = [sys.executable, "-m", "bench.compaction_bench", "--child"]
        command += ["--memories", str(args.memories), "--seconds", str(args.seconds)]
        command += ["--rate", str(args.rate), "--compact-seconds", str(args.compact_seconds)]
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
        print(f"run {run + 1}: {runs[-1]}", file=sys.stderr)
    keys = ("search_max_ms", "search_p99_ms", "add_max_ms", "rewrites", "search_only_rewrites")
    summary = {k: statistics.median(r[k] for r in runs) for k in keys}
    print(
        f"{args.memories} memories, {args.rate:g} adds/s + {args.rate:g} searches/s for "
        f"{args.seconds:g} s, compaction after {args.compact_seconds:g} s; "
        f"median of {args.runs} runs:"
    )
    for key in keys:
        print(f"  {key:22} {summary[key]}")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
