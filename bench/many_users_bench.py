"""Many users in one process: open files, RAM and first-search latency across namespaces.

    python -m bench.many_users_bench [--users 5000] [--memories 50] [--searches 10000]
                                     [--nofile 1024] [--runs 3] [--json FILE]

A data directory of ``--users`` namespaces with ``--memories`` memories each is made once
(kept in ``bench/results/``, reused while the parameters match), from the benchmark sets' real
texts when ``../shared/bench/data`` is there, else synthetic ones. Each run is a fresh process
with its open-file limit lowered to ``--nofile`` (as on many servers), which opens the store and
searches ``--searches`` times for users drawn at random, as a bot serving them all would.
Measured per run:

- ``failures``: searches that raised (an exhausted file limit shows here);
- ``max_fds``: the most file descriptors open at once (sampled after every search);
- ``rss_mib``: resident memory at the end of the run;
- ``first_p50_ms`` / ``first_p99_ms``: the latency of each user's first search in the run
  (the namespace is loaded and its index built), and ``warm_p50_ms`` for later ones.

Figures are medians over ``--runs`` runs.
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
import time
from pathlib import Path
from typing import Any

from bench.store_bench import corpus_records, real_corpus, synthetic_records
from memory.files import MemoryStore

RESULTS = Path(__file__).resolve().parent / "results"
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "data"


_STATM = os.open("/proc/self/statm", os.O_RDONLY)  # opened early: the run may exhaust the limit


def _rss_mib() -> float:
    resident_pages = int(os.pread(_STATM, 200, 0).split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _open_fds() -> int:
    try:
        return len(os.listdir("/proc/self/fd"))
    except OSError:  # EMFILE: listing the folder needs a descriptor too; the limit is reached
        return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def make_data(users: int, memories: int) -> tuple[Path, list[str]]:
    """The data directory for these parameters (made on first use) and the questions."""
    corpus = real_corpus(CORPUS)
    kind = "real" if corpus else "synthetic"
    folder = RESULTS / f"many-users-{users}x{memories}-{kind}"
    questions = corpus[1] if corpus else ["project meeting", "代码 项目", "doctor birthday"]
    if (folder / ".complete").exists():
        return folder, questions
    texts = corpus[0] if corpus else None
    print(f"making {users} namespaces of {memories} memories in {folder} ...", file=sys.stderr)
    with MemoryStore(folder) as store:
        for user in range(users):
            if texts:
                offset = user * memories % max(1, len(texts) - memories)
                records = corpus_records(texts[offset : offset + memories], memories)
            else:
                records = synthetic_records(memories, seed=user)
            store.namespace(f"users/{user}").import_memories(records)
            if user % 500 == 499:
                store.maintain()
    (folder / ".complete").touch()
    return folder, questions


def one_run(
    folder: Path, questions: list[str], users: int, searches: int, seed: int
) -> dict[str, Any]:
    """One run in this process (``--child``): the figures of the module docstring."""
    rng = random.Random(seed)
    first: list[float] = []
    warm: list[float] = []
    seen: set[int] = set()
    failures = 0
    max_fds = _open_fds()
    first_error = ""
    store = MemoryStore(folder)
    try:
        for _ in range(searches):
            user = rng.randrange(users)
            query = rng.choice(questions)
            started = time.perf_counter()
            try:
                store.namespace(f"users/{user}").search(query, 5)
            except Exception as e:  # noqa: BLE001 -- counted and reported, the run goes on
                failures += 1
                first_error = first_error or f"{type(e).__name__}: {e}"
                continue
            elapsed = (time.perf_counter() - started) * 1000
            (warm if user in seen else first).append(elapsed)
            seen.add(user)
            max_fds = max(max_fds, _open_fds())
        rss = _rss_mib()
    finally:
        store.close()
    first.sort()
    return {
        "failures": failures,
        "first_error": first_error,
        "max_fds": max_fds,
        "rss_mib": round(rss, 1),
        "first_p50_ms": round(statistics.median(first), 2) if first else None,
        "first_p99_ms": round(first[int(len(first) * 0.99) - 1], 2) if first else None,
        "warm_p50_ms": round(statistics.median(warm), 2) if warm else None,
        "users_seen": len(seen),
    }


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=5000)
    parser.add_argument("--memories", type=int, default=50)
    parser.add_argument("--searches", type=int, default=10_000)
    parser.add_argument("--nofile", type=int, default=1024)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    folder, questions = make_data(args.users, args.memories)
    if args.child is not None:
        _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(args.nofile, hard), hard))
        result = one_run(folder, questions, args.users, args.searches, args.child)
        print(json.dumps(result))
        return

    runs = []
    for run in range(args.runs):
        command = [sys.executable, "-m", "bench.many_users_bench", "--child", str(run)]
        command += ["--users", str(args.users), "--memories", str(args.memories)]
        command += ["--searches", str(args.searches), "--nofile", str(args.nofile)]
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        runs.append(json.loads(out.strip().splitlines()[-1]))
        print(f"run {run + 1}: {runs[-1]}", file=sys.stderr)
    keys = ("failures", "max_fds", "rss_mib", "first_p50_ms", "first_p99_ms", "warm_p50_ms")
    summary = {k: statistics.median(r[k] for r in runs if r[k] is not None) for k in keys}
    summary["first_error"] = next((r["first_error"] for r in runs if r["first_error"]), "")
    print(
        f"{args.users} users x {args.memories} memories, {args.searches} searches, "
        f"open-file limit {args.nofile}, median of {args.runs} runs:"
    )
    for key in keys:
        print(f"  {key:14} {summary[key]}")
    if summary["first_error"]:
        print(f"  first error    {summary['first_error']}")
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "runs": runs}, indent=2) + "\n")


if __name__ == "__main__":
    main()
