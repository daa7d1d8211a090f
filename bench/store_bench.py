"""Store benchmark: add, search and open latency, and RAM, against the article's plain port.

    python -m bench.store_bench [--sizes 1000,10000,100000] [--runs 5] [--json FILE]

For each size, a namespace is filled with the real memory texts of the benchmark sets in
``--corpus`` (LoCoMo turns and observations, MemoryBank English and Chinese; repeated to reach the
size) and searched with their real questions; without that folder, or with ``--synthetic``, with
seeded English and Chinese sentences from a small vocabulary (a harsher case: every word is
common). Then measured:

- ``add``: median time of a durable ``add`` (fsync included), over ``--ops`` adds;
- ``search``: median time of a warm ``search`` with access bookkeeping, over varied queries;
- ``open``: time from a cold ``MemoryStore`` to the first answered ``get`` (snapshot read and
  parsed, journal replayed; the ranking index is built lazily on the first search);
- ``first search``: that first search, which analyses every memory, and ``after get``: that
  first search less the median time of a warm ``get``;
- ``long query``: median time of a warm search whose query is a 2,000-character dialogue (a
  whole conversation searched at once, as the bot may do);
- ``bm25s``: median time of a short search (the same questions, the best 10) with the ``bm25s``
  package over the same texts (its own tokenizer, English stop words), in the same process,
  timed in blocks of all the questions alternating with ours (twice each), and ours as a
  multiple of it;
- ``rss``: resident memory added by loading the namespace, in MiB, and once its search index
  is built (``indexed``); ``index``: what building the index added, as a multiple of the size of
  ``memory.json``.

The baseline, ``bench.seed_port``, is measured in the same run at the sizes where it finishes in
reasonable time. Each figure is the median over ``--runs`` runs, each run a fresh process.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.seed_port import SeedPortStore
from memory.files import MemoryStore
from memory.timestamps import format_time_ms

EN_WORDS = (
    "project meeting code deploy server budget report friend dinner travel flight hotel doctor "
    "birthday gift password backup review release design database laptop phone garden book "
    "movie music coffee train ticket invoice contract client team manager school exam course"
).split()
ZH_WORDS = (
    "项目 会议 代码 部署 服务器 预算 报告 朋友 晚餐 旅行 航班 酒店 医生 生日 礼物 密码 备份 "
    "评审 发布 设计 数据库 电脑 手机 花园 书 电影 音乐 咖啡 火车 票 发票 合同 客户 团队 经理"
).split()


def synthetic_records(count: int, seed: int = 7) -> list[dict[str, Any]]:
    """``count`` article-format records: two in three English, one in three Chinese."""
    rng = random.Random(seed)
    start = 1_700_000_000_000
    records = []
    for i in range(count):
        if i % 3 == 2:
            words = rng.sample(ZH_WORDS, 6)
            content = "我的" + "和".join(words[:3]) + "在" + "".join(words[3:]) + "里"
        else:
            words = rng.sample(EN_WORDS, 8)
            content = f"remember that my {' '.join(words)} is due on day {rng.randint(1, 28)}"
        at = format_time_ms(start + i * 1000)
        records.append(
            {
                "id": start + i,
                "content": content,
                "tags": words[:3],
                "category": rng.choice(["work", "life", "general"]),
                "createdAt": at,
                "accessedAt": at,
                "accessCount": 0,
            }
        )
    return records


REAL_SETS = ("locomo_turns", "locomo_obs", "memorybank_en", "memorybank_zh")


def real_corpus(data_dir: Path) -> tuple[list[str], list[str]] | None:
    """Memory texts and questions of the public benchmark sets, if ``data_dir`` has them.

    Real dialogue turns and real questions, English and Chinese, read where they lie (never
    copied into the repository); ``None`` when the folder is missing.
    """
    from bench.retrieval import available_sets, load_set

    if not data_dir.is_dir():
        return None
    names = [n for n in REAL_SETS if n in available_sets(data_dir)]
    if not names:
        return None
    texts: list[str] = []
    questions: list[str] = []
    for name in names:
        bench_set = load_set(data_dir, name)
        texts += [str(m["content"]) for ms in bench_set.users.values() for m in ms]
        questions += [q.text for q in bench_set.questions]
    return texts, questions


def corpus_records(texts: list[str], count: int) -> list[dict[str, Any]]:
    """``count`` article-format records cycling through ``texts`` (repeats when it is short).

    Repeating makes every posting list longer in proportion, a pessimistic stand-in for a
    larger real namespace, whose vocabulary would grow too.
    """
    start = 1_700_000_000_000
    records = []
    for i in range(count):
        at = format_time_ms(start + i * 60_000)
        content = texts[i % len(texts)][:4000].strip() or "empty"
        records.append(
            {
                "id": start + i,
                "content": content,
                "tags": [],
                "category": "general",
                "createdAt": at,
                "accessedAt": at,
                "accessCount": 0,
            }
        )
    return records


def workload(size: int, corpus: Path | None) -> tuple[list[dict[str, Any]], list[str]]:
    """The memories and questions of one run: real text if available, else synthetic."""
    real = real_corpus(corpus) if corpus is not None else None
    if real is None:
        return synthetic_records(size), queries()
    texts, questions = real
    rng = random.Random(5)
    return corpus_records(texts, size), rng.sample(questions, min(200, len(questions)))


LONG_QUERY_CHARS = 2000


def long_queries(texts: list[str], count: int = 20, seed: int = 13) -> list[str]:
    """``count`` dialogues of ``LONG_QUERY_CHARS`` characters: runs of consecutive ``texts``."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        i = rng.randrange(len(texts))
        lines: list[str] = []
        while sum(len(line) + 1 for line in lines) < LONG_QUERY_CHARS:
            lines.append(texts[i % len(texts)].strip())
            i += 1
        out.append("\n".join(lines)[:LONG_QUERY_CHARS])
    return out


def queries(seed: int = 11) -> list[str]:
    """Varied questions, half English, half Chinese."""
    rng = random.Random(seed)
    out = []
    for i in range(200):
        if i % 2:
            out.append(f"where is my {rng.choice(EN_WORDS)} and {rng.choice(EN_WORDS)}?")
        else:
            out.append(f"我的{rng.choice(ZH_WORDS)}和{rng.choice(ZH_WORDS)}在哪里？")
    return out


def _trim_heap() -> None:
    """Give the heap's free pages back to the system (glibc), so RSS counts what is held."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure_ours(folder: Path, size: int, ops: int, corpus: Path | None) -> dict[str, float]:
    """One run of our store at ``size`` memories (in this process)."""
    records, qs = workload(size, corpus)
    long_qs = long_queries([str(r["content"]) for r in records[:20_000]])
    with MemoryStore(folder) as store:
        # The workload repeats texts; it is taken as it is (an import skips a repeated content).
        store.namespace("bench").import_memories(records, skip_duplicates=False)
    json_mib = (folder / "bench" / "memory.json").stat().st_size / 2**20
    del store
    gc.collect()
    _trim_heap()  # what the import freed is not counted, whichever code runs
    rss_before = _rss_mib()
    t = time.perf_counter()
    store = MemoryStore(folder)
    ns = store.namespace("bench")
    ns.get(records[0]["id"])
    open_ms = (time.perf_counter() - t) * 1000
    rss = _rss_mib() - rss_before
    t = time.perf_counter()
    ns.search(qs[0])  # warm: builds the ranking index
    first_ms = (time.perf_counter() - t) * 1000
    rss_indexed = _rss_mib() - rss_before
    gets = []
    for record in records[:: max(1, size // 200)]:
        t = time.perf_counter()
        ns.get(record["id"])
        gets.append(time.perf_counter() - t)
    get_ms = statistics.median(gets) * 1000
    long_search = []
    for q in long_qs:
        t = time.perf_counter()
        ns.search(q, touch=False)
        long_search.append(time.perf_counter() - t)
    other = _bm25s([str(r["content"]) for r in records])
    search: list[float] = []
    search_bm25s: list[float] = []
    for _ in range(2):  # in blocks, alternating: each warm in the caches, as in a loop
        search += _timed(ns.search, qs[: max(ops, 50)])
        if other is not None:
            search_bm25s += _timed(other, qs[: max(ops, 50)])
    add = []
    for i in range(ops):
        t = time.perf_counter()
        ns.add(f"benchmark note number {i} about the {EN_WORDS[i % len(EN_WORDS)]}", ["bench"])
        add.append(time.perf_counter() - t)
    store.close()
    bm25s_ms = statistics.median(search_bm25s) * 1000 if search_bm25s else float("nan")
    return {
        "add_ms": statistics.median(add) * 1000,
        "search_ms": statistics.median(search) * 1000,
        "bm25s_search_ms": bm25s_ms,
        "x_bm25s": statistics.median(search) * 1000 / bm25s_ms,
        "open_ms": open_ms,
        "first_search_ms": first_ms,
        "first_after_get_ms": first_ms - get_ms,
        "long_search_ms": statistics.median(long_search) * 1000,
        "rss_mib": rss,
        "rss_indexed_mib": rss_indexed,
        "json_mib": json_mib,
        "index_x_json": (rss_indexed - rss) / json_mib,
    }


def _timed(search: Callable[[str], object], questions: list[str]) -> list[float]:
    """The time of each search of ``questions``, in seconds."""
    times = []
    for q in questions:
        t = time.perf_counter()
        search(q)
        times.append(time.perf_counter() - t)
    return times


def _bm25s(texts: list[str]) -> Callable[[str], object] | None:
    """A short search of ``texts`` with the ``bm25s`` package (None if it is not installed).

    Built after our store was measured, so that its arrays are not in our RSS figures.
    """
    try:
        import bm25s
    except ImportError:
        return None
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    def search(query: str) -> object:
        tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
        k = min(10, len(texts))
        return retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)

    return search


def measure_seed(folder: Path, size: int, ops: int, corpus: Path | None) -> dict[str, float]:
    """One run of the article's port at ``size`` memories."""
    records, qs = workload(size, corpus)
    path = folder / "memory.json"
    path.write_text(json.dumps(records, ensure_ascii=False, indent=2), "utf-8")
    store = SeedPortStore(path)
    search, add = [], []
    for q in qs[:ops]:
        t = time.perf_counter()
        store.search(q)
        search.append(time.perf_counter() - t)
    for i in range(ops):
        t = time.perf_counter()
        store.add(f"benchmark note number {i}", ["bench"])
        add.append(time.perf_counter() - t)
    return {"add_ms": statistics.median(add) * 1000, "search_ms": statistics.median(search) * 1000}


def _one_run(which: str, size: int, ops: int, corpus: Path | None) -> dict[str, float]:
    """Run one measurement in a fresh process, so runs do not share caches or heap."""
    corpus_arg = f"pathlib.Path({str(corpus)!r})" if corpus is not None else "None"
    code = (
        "import json, sys, tempfile, pathlib\n"
        "from bench.store_bench import measure_ours, measure_seed\n"
        f"f = measure_{which}\n"
        "with tempfile.TemporaryDirectory() as d:\n"
        f"    print(json.dumps(f(pathlib.Path(d), {size}, {ops}, {corpus_arg})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def real_corpus_or_none(corpus: Path | None) -> bool:
    """Whether the run falls back to synthetic text."""
    return corpus is None or real_corpus(corpus) is None


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table (and JSON with ``--json``)."""
    parser = argparse.ArgumentParser(prog="python -m bench.store_bench", description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--seed-max", type=int, default=10000, help="largest size for the port")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--corpus",
        type=Path,
        default=Path("../shared/bench/data"),
        help="benchmark data whose texts and questions to use (synthetic text if missing)",
    )
    parser.add_argument("--synthetic", action="store_true", help="use synthetic text only")
    args = parser.parse_args(argv)
    corpus = None if args.synthetic else args.corpus
    print("corpus:", "synthetic" if real_corpus_or_none(corpus) else corpus, flush=True)
    results: dict[str, Any] = {}
    for size in [int(s) for s in args.sizes.split(",")]:
        row: dict[str, Any] = {}
        runs = [_one_run("ours", size, args.ops, corpus) for _ in range(args.runs)]
        row["ours"] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        if size <= args.seed_max:
            seed_ops = max(5, min(args.ops, 2_000_000 // size))
            seed_runs = [
                _one_run("seed", size, seed_ops, corpus) for _ in range(max(1, args.runs // 2))
            ]
            row["seed"] = {k: statistics.median(r[k] for r in seed_runs) for k in seed_runs[0]}
        results[str(size)] = row
        ours, seed = row["ours"], row.get("seed")
        line = (
            f"{size:>7} memories: add {ours['add_ms']:.3f} ms, search {ours['search_ms']:.3f} ms,"
            f" open {ours['open_ms']:.1f} ms, first search {ours['first_search_ms']:.0f} ms"
            f" ({ours['first_after_get_ms']:.0f} ms after get),"
            f" long query {ours['long_search_ms']:.1f} ms,"
            f" bm25s {ours['bm25s_search_ms']:.3f} ms (ours x{ours['x_bm25s']:.2f}),"
            f" RSS {ours['rss_mib']:.1f} MiB ({ours['rss_indexed_mib']:.1f} MiB indexed),"
            f" index {ours['index_x_json']:.1f}x memory.json ({ours['json_mib']:.1f} MiB)"
        )
        if seed:
            add_ratio = seed["add_ms"] / ours["add_ms"]
            search_ratio = seed["search_ms"] / ours["search_ms"]
            line += (
                f" | article port: add {seed['add_ms']:.1f} ms, search {seed['search_ms']:.1f} ms"
                f" (x{add_ratio:.0f} / x{search_ratio:.0f})"
            )
        print(line, flush=True)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    results["machine"] = {"cpus": os.cpu_count(), "children_cpu_s": usage.ru_utime}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
