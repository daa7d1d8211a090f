"""Store benchmark: add, search and open latency, and RAM, against the article's plain port.

    python -m bench.store_bench [--sizes 1000,10000,100000] [--runs 5] [--json FILE]

For each size, a namespace is filled with synthetic memories (English and Chinese sentences from
a fixed vocabulary, seeded), then measured:

- ``add``: median time of a durable ``add`` (fsync included), over ``--ops`` adds;
- ``search``: median time of a warm ``search`` with access bookkeeping, over varied queries;
- ``open``: time from a cold ``MemoryStore`` to the first answered ``get`` (snapshot read and
  parsed, journal replayed; the ranking index is built lazily on the first search);
- ``rss``: resident memory added by loading the namespace, in MiB.

The baseline, ``bench.seed_port``, is measured in the same run at the sizes where it finishes in
reasonable time. Each figure is the median over ``--runs`` runs, each run a fresh process.
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

from bench.seed_port import SeedPortStore
from memory.model import format_time_ms
from memory.store import MemoryStore

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


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure_ours(folder: Path, size: int, ops: int) -> dict[str, float]:
    """One run of our store at ``size`` memories (in this process)."""
    records = synthetic_records(size)
    with MemoryStore(folder) as store:
        store.namespace("bench").import_memories(records)
    rss_before = _rss_mib()
    t = time.perf_counter()
    store = MemoryStore(folder)
    ns = store.namespace("bench")
    ns.get(records[0]["id"])
    open_ms = (time.perf_counter() - t) * 1000
    rss = _rss_mib() - rss_before
    qs = queries()
    ns.search(qs[0])  # warm: builds the ranking index
    search = []
    for q in qs[: max(ops, 50)]:
        t = time.perf_counter()
        ns.search(q)
        search.append(time.perf_counter() - t)
    add = []
    for i in range(ops):
        t = time.perf_counter()
        ns.add(f"benchmark note number {i} about the {EN_WORDS[i % len(EN_WORDS)]}", ["bench"])
        add.append(time.perf_counter() - t)
    store.close()
    return {
        "add_ms": statistics.median(add) * 1000,
        "search_ms": statistics.median(search) * 1000,
        "open_ms": open_ms,
        "rss_mib": rss,
    }


def measure_seed(folder: Path, size: int, ops: int) -> dict[str, float]:
    """One run of the article's port at ``size`` memories."""
    path = folder / "memory.json"
    path.write_text(json.dumps(synthetic_records(size), ensure_ascii=False, indent=2), "utf-8")
    store = SeedPortStore(path)
    qs = queries()
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


def _one_run(which: str, size: int, ops: int) -> dict[str, float]:
    """Run one measurement in a fresh process, so runs do not share caches or heap."""
    code = (
        "import json, sys, tempfile, pathlib\n"
        "from bench.store_bench import measure_ours, measure_seed\n"
        f"f = measure_{which}\n"
        "with tempfile.TemporaryDirectory() as d:\n"
        f"    print(json.dumps(f(pathlib.Path(d), {size}, {ops})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table (and JSON with ``--json``)."""
    parser = argparse.ArgumentParser(prog="python -m bench.store_bench", description=__doc__)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--ops", type=int, default=200)
    parser.add_argument("--seed-max", type=int, default=10000, help="largest size for the port")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results: dict[str, Any] = {}
    for size in [int(s) for s in args.sizes.split(",")]:
        row: dict[str, Any] = {}
        runs = [_one_run("ours", size, args.ops) for _ in range(args.runs)]
        row["ours"] = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        if size <= args.seed_max:
            seed_ops = max(5, min(args.ops, 2_000_000 // size))
            seed_runs = [_one_run("seed", size, seed_ops) for _ in range(max(1, args.runs // 2))]
            row["seed"] = {k: statistics.median(r[k] for r in seed_runs) for k in seed_runs[0]}
        results[str(size)] = row
        ours, seed = row["ours"], row.get("seed")
        line = (
            f"{size:>7} memories: add {ours['add_ms']:.3f} ms, search {ours['search_ms']:.3f} ms,"
            f" open {ours['open_ms']:.1f} ms, RSS {ours['rss_mib']:.1f} MiB"
        )
        if seed:
            line += (
                f" | article port: add {seed['add_ms']:.1f} ms, search {seed['search_ms']:.1f} ms"
                f" (x{seed['add_ms'] / ours['add_ms']:.0f} / x{seed['search_ms'] / ours['search_ms']:.0f})"
            )
        print(line, flush=True)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    results["machine"] = {"cpus": os.cpu_count(), "children_cpu_s": usage.ru_utime}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
