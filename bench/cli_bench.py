"""The command line, one shot: ``python -m memory ... search`` against the article's port.

    python -m bench.cli_bench [--memories 10000] [--runs 10] [--json FILE]

Like hyperfine: a namespace of ``--memories`` memories (the benchmark sets' real texts when
``../shared/bench/data`` is there, else synthetic) is made once in a temporary folder, with the
same records in one article-format file for ``bench.seed_port``. Then, in turn, ``--runs``
fresh processes of each of

- ``python -m memory --data-dir DIR --ns users/1 search QUERY``, and
- the article's port loading its file and searching it (``--seed-port FILE QUERY``),

each timed from start to exit. Printed: the median of each and their ratio (store / port),
measured in the same run on the same machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.seed_port import SeedPortStore
from bench.store_bench import corpus_records, real_corpus, synthetic_records
from memory.files import MemoryStore

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "data"
NAMESPACE = "users/1"
QUERY = "project meeting"


def _time(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return (time.perf_counter() - started) * 1000


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--seed-port", nargs=2, metavar=("FILE", "QUERY"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.seed_port:
        hits = SeedPortStore(Path(args.seed_port[0])).search(args.seed_port[1], 10)
        print(json.dumps(hits, ensure_ascii=False, indent=2))
        return

    corpus = real_corpus(CORPUS)
    records = (
        corpus_records(corpus[0], args.memories)
        if corpus
        else synthetic_records(args.memories, seed=7)
    )
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        with MemoryStore(data) as store:
            store.namespace(NAMESPACE).import_memories(records)
        port_file = Path(tmp) / "port.json"
        port_file.write_text(json.dumps(records, ensure_ascii=False, indent=2), "utf-8")
        ours = [sys.executable, "-m", "memory", "--data-dir", str(data), "--ns", NAMESPACE]
        ours += ["search", QUERY]
        port = [sys.executable, "-m", "bench.cli_bench", "--seed-port", str(port_file), QUERY]
        store_ms: list[float] = []
        port_ms: list[float] = []
        for _ in range(args.runs):  # interleaved: a slow moment of the machine hits both
            store_ms.append(_time(ours))
            port_ms.append(_time(port))
    summary = {
        "store_ms": round(statistics.median(store_ms), 1),
        "port_ms": round(statistics.median(port_ms), 1),
    }
    summary["ratio"] = round(summary["store_ms"] / summary["port_ms"], 2)
    print(f"one-shot search at {args.memories} memories, median of {args.runs} runs:")
    for key, value in summary.items():
        print(f"  {key:9} {value}")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "runs": [store_ms, port_ms]}) + "\n")


if __name__ == "__main__":
    main()
