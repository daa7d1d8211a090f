"""Retrieval benchmark: does search find the memory that answers a real question?

Reads the common format of ``../shared/bench/README.md`` from any folder: for each set ``NAME``,
``NAME.users.jsonl`` (one memory namespace per user) and ``NAME.questions.jsonl`` (questions with
the ids of the memories that answer them), each plain or gzipped. For each user it imports the
memories into a fresh namespace through the store's public API (``import_memories``, keeping
``created_at`` as ``createdAt``), then searches with every question of that user, once per
ranker, with ``touch=False`` so that one question's search cannot reorder the next one's ties.

Metrics, averaged over questions, per set and per ``category_name``:

- ``hit@k``: at least one evidence memory in the top k;
- ``rec@k``: the share of the question's evidence memories in the top k (LoCoMo's recall).

Rankers (``--rankers``, default ``seed,default``): ``seed`` (the article's rule), ``default``
(alias ``keyword``: BM25, ``memory.bm25``) and ``hybrid`` (keywords fused with meaning,
``memory.hybrid``), side by side on the same namespaces. ``hybrid`` embeds every memory with the
offline model (``memory.embedding``) before the questions are asked; the vectors are cached
between runs in ``bench/results/.cache`` (git-ignored), keyed by model, side (query or passage)
and text, so a rerun takes minutes instead of an hour. The query's embedding is timed as part
of the search only when it is not cached (``--no-cache``).

``--remember`` stores each memory the way ``/remember`` does (``bot.core.entry.parse_entry``:
a leading ``word:`` becomes the category, up to five keywords become derived tags), instead of
importing the bare content.

It also reports the median latency of one ``search`` call (query analysis and ranking; warm:
each namespace's first search, which builds the default ranker's index, is left out).

Benchmark ids are strings (``D1:3``); the store's ids are whole numbers, so a user's memories
get ids 1..n in file order and are mapped back for scoring.

Usage::

    python -m bench.retrieval --data ../shared/bench/data [--sets locomo_obs,madial_zh]
                              [--rankers seed,keyword,hybrid] [--remember] [--no-cache]
                              [--json results.json]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from memory import open_store
from memory.embedding import Embedder, OfflineEmbedder

RANKERS = ("seed", "default")
ALL_RANKERS = ("seed", "default", "hybrid")
ALIASES = {"keyword": "default", "keywords": "default", "bm25": "default"}
CACHE_DIR = Path(__file__).resolve().parent / "results" / ".cache"
KS = (5, 10)
USERS_SUFFIX = ".users.jsonl"
QUESTIONS_SUFFIX = ".questions.jsonl"


@dataclass(frozen=True)
class Question:
    """One benchmark question and the ids of the memories that answer it."""

    user: str
    text: str
    evidence: frozenset[str]
    category: str


@dataclass(frozen=True)
class BenchSet:
    """A set's users (their memories as records) and its questions."""

    name: str
    users: dict[str, list[dict[str, Any]]]
    questions: list[Question]


@dataclass
class Tally:
    """Running sums of the per-question metrics."""

    n: int = 0
    sums: dict[str, float] = field(default_factory=lambda: dict.fromkeys(_metric_names(), 0.0))

    def add(self, scores: dict[str, float]) -> None:
        self.n += 1
        for name, value in scores.items():
            self.sums[name] += value

    def summary(self) -> dict[str, float]:
        means = {name: (total / self.n if self.n else 0.0) for name, total in self.sums.items()}
        return {**{name: round(value, 4) for name, value in means.items()}, "n": self.n}


def _metric_names() -> list[str]:
    return [f"{metric}@{k}" for k in KS for metric in ("hit", "rec")]


def question_scores(ranked: Sequence[str], evidence: frozenset[str]) -> dict[str, float]:
    """hit@k and rec@k of one ranked list of memory ids against the evidence ids."""
    scores: dict[str, float] = {}
    for k in KS:
        found = len(evidence.intersection(ranked[:k]))
        scores[f"hit@{k}"] = 1.0 if found else 0.0
        scores[f"rec@{k}"] = found / len(evidence) if evidence else 0.0
    return scores


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    gz = path.with_name(path.name + ".gz")
    if path.exists():
        with path.open(encoding="utf-8") as handle:
            yield from _records(handle)
    elif gz.exists():
        with gzip.open(gz, "rt", encoding="utf-8") as handle:
            yield from _records(handle)
    else:
        raise FileNotFoundError(f"neither {path} nor {gz} exists")


def _records(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.strip():
            yield json.loads(line)


def available_sets(data_dir: Path) -> list[str]:
    """Names of the sets in ``data_dir`` (those with a users file, plain or gzipped)."""
    names = set()
    for path in data_dir.iterdir():
        name = path.name.removesuffix(".gz")
        if name.endswith(USERS_SUFFIX):
            names.add(name.removesuffix(USERS_SUFFIX))
    return sorted(names)


def load_set(data_dir: Path, name: str) -> BenchSet:
    """Read one set; a question of an unknown user or without evidence is an error."""
    users: dict[str, list[dict[str, Any]]] = {}
    for record in _read_jsonl(data_dir / f"{name}{USERS_SUFFIX}"):
        users[str(record["user"])] = list(record["memories"])
    questions = []
    for record in _read_jsonl(data_dir / f"{name}{QUESTIONS_SUFFIX}"):
        user = str(record["user"])
        if user not in users:
            raise ValueError(f"{name}: question {record.get('qid')} of unknown user {user}")
        evidence = frozenset(str(e) for e in record["evidence_ids"])
        if not evidence:
            raise ValueError(f"{name}: question {record.get('qid')} has no evidence ids")
        category = record.get("category_name", record.get("category", "all"))
        questions.append(Question(user, str(record["question"]), evidence, str(category)))
    return BenchSet(name, users, questions)


class CachedEmbedder:
    """An embedder whose vectors are kept in a file between runs, keyed by model, side, text."""

    def __init__(self, inner: Embedder, folder: Path) -> None:
        self.inner = inner
        self.model = inner.model
        self.dimensions = inner.dimensions
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in inner.model)
        self.path = folder / f"{safe}-{inner.dimensions}.npz"
        self._lock = threading.Lock()
        self._vectors: dict[bytes, npt.NDArray[np.float32]] = {}
        self._new = 0
        if self.path.exists():
            with np.load(self.path) as stored:
                for key, vector in zip(stored["keys"], stored["vectors"], strict=True):
                    self._vectors[key.tobytes()] = vector

    def _key(self, text: str, query: bool) -> bytes:
        side = b"q" if query else b"p"
        return hashlib.blake2b(
            side + text.encode("utf-8", "surrogatepass"), digest_size=16
        ).digest()

    def embed(self, texts: Sequence[str], *, query: bool) -> npt.NDArray[np.float32]:
        keys = [self._key(text, query) for text in texts]
        with self._lock:
            todo = [i for i, key in enumerate(keys) if key not in self._vectors]
        if todo:
            fresh = self.inner.embed([texts[i] for i in todo], query=query)
            with self._lock:
                for i, vector in zip(todo, fresh, strict=True):
                    self._vectors[keys[i]] = vector
                self._new += len(todo)
        with self._lock:
            rows = [self._vectors[key] for key in keys]
        return np.array(rows, dtype=np.float32).reshape(len(keys), self.dimensions)

    def save(self) -> None:
        if not self._new:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            keys = np.array([np.frombuffer(k, dtype=np.uint8) for k in self._vectors])
            vectors = np.array(list(self._vectors.values()), dtype=np.float32)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, vectors=vectors)
        tmp.replace(self.path)
        self._new = 0


def _stored(record: dict[str, Any], number: int, remember: bool) -> dict[str, Any]:
    """A benchmark memory as an article-format record (as ``/remember`` would store it)."""
    stored: dict[str, Any] = {
        "id": number,
        "content": record["content"],
        "createdAt": record.get("created_at"),
    }
    if remember:
        from bot.core.entry import parse_entry  # the bot's own parser, only for this mode

        entry = parse_entry(record["content"])
        stored.update(content=entry.content, tags=list(entry.tags))
        if entry.category:
            stored["category"] = entry.category
    return stored


def evaluate(
    bench_set: BenchSet,
    rankers: Sequence[str] = RANKERS,
    *,
    embedder: Embedder | None = None,
    remember: bool = False,
    store: str | None = None,
) -> dict[str, Any]:
    """Run every question of a set through each ranker; the JSON shape of the CLI's report.

    ``store`` (a data directory or a ``postgresql://`` URL) runs it on that store, in
    namespaces ``bench/<set>/<n>`` of their own (imported again, ids kept: a second run adds
    nothing); by default a temporary data directory. The figures are the same on every
    backend (the ranking is the same code over the same memories); only latencies differ.
    """
    tallies = {r: Tally() for r in rankers}
    by_category: dict[str, dict[str, Tally]] = {r: {} for r in rankers}
    latencies: dict[str, list[float]] = {r: [] for r in rankers}
    by_user: dict[str, list[Question]] = {}
    for question in bench_set.questions:
        by_user.setdefault(question.user, []).append(question)
    label = re.sub(r"[^A-Za-z0-9_-]", "-", bench_set.name)[:64] or "set"
    with tempfile.TemporaryDirectory(prefix="bench-retrieval-") as tmp:
        opened = open_store(store or tmp, embedder=embedder if "hybrid" in rankers else None)
        try:
            for number, (user, questions) in enumerate(by_user.items(), start=1):
                records = bench_set.users[user]
                names = [str(record["id"]) for record in records]
                namespace = opened.namespace(f"bench/{label}/{number}")
                # Taken as given: a set's repeated lines ("Yes!") are each some question's
                # evidence, so the store's duplicate check must not merge them here.
                namespace.import_memories(
                    (_stored(r, i, remember) for i, r in enumerate(records, start=1)),
                    skip_duplicates=False,
                )
                if "hybrid" in rankers:
                    while namespace.embed_step():
                        pass  # every memory embedded before the questions, in this thread
                    opened.wait_for_embeddings()  # and the batch the worker took meanwhile
                for ranker in rankers:
                    namespace.search("warm up", limit=10, ranker=ranker, touch=False)
                    for question in questions:
                        start = time.perf_counter()
                        hits = namespace.search(question.text, limit=10, ranker=ranker, touch=False)
                        latencies[ranker].append(time.perf_counter() - start)
                        ranked = [names[hit.memory.id - 1] for hit in hits]
                        scores = question_scores(ranked, question.evidence)
                        tallies[ranker].add(scores)
                        by_category[ranker].setdefault(question.category, Tally()).add(scores)
        finally:
            opened.close()
    return {
        ranker: {
            "all": tallies[ranker].summary(),
            "by_category": {
                name: tally.summary() for name, tally in sorted(by_category[ranker].items())
            },
            "median_ms": round(statistics.median(latencies[ranker]) * 1000, 3),
        }
        for ranker in rankers
    }


def format_report(name: str, result: dict[str, Any]) -> str:
    """A plain-text table of one set's results, overall and per category."""
    columns = [*_metric_names(), "n"]
    lines = [f"== {name}", f"{'ranker':8} {'category':14} " + " ".join(f"{c:>6}" for c in columns)]
    for ranker, report in result.items():
        rows = [("all", report["all"]), *report["by_category"].items()]
        for category, summary in rows:
            cells = " ".join(
                f"{summary[c]:>6}" if c == "n" else f"{summary[c]:>6.3f}" for c in columns
            )
            lines.append(f"{ranker:8} {category[:14]:14} {cells}")
        lines.append(f"{ranker:8} median search latency {report['median_ms']:.3f} ms")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval", description=__doc__)
    parser.add_argument("--data", type=Path, required=True, help="folder of the JSONL sets")
    parser.add_argument("--sets", help="comma-separated set names (default: all in --data)")
    parser.add_argument(
        "--rankers",
        default=",".join(RANKERS),
        help=f"comma-separated, of {', '.join(ALL_RANKERS)} (keyword = default)",
    )
    parser.add_argument(
        "--remember", action="store_true", help="store memories as /remember does (derived tags)"
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="embed everything again (no embedding cache)"
    )
    parser.add_argument("--json", type=Path, help="also write the results to this JSON file")
    parser.add_argument(
        "--store", help="run on this store (data directory or postgresql:// URL); default: temp"
    )
    args = parser.parse_args(argv)
    rankers = [ALIASES.get(r.strip(), r.strip()) for r in args.rankers.split(",") if r.strip()]
    wrong = [r for r in rankers if r not in ALL_RANKERS]
    if wrong or not rankers:
        parser.error(f"unknown rankers {', '.join(wrong)}; use {', '.join(ALL_RANKERS)}")
    embedder: Embedder | None = None
    cache: CachedEmbedder | None = None
    if "hybrid" in rankers:
        embedder = OfflineEmbedder()
        if not args.no_cache:
            embedder = cache = CachedEmbedder(embedder, CACHE_DIR)
    if not args.data.is_dir():
        parser.error(f"--data {args.data}: not a folder")
    known = available_sets(args.data)
    names = [s.strip() for s in args.sets.split(",") if s.strip()] if args.sets else known
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown sets {', '.join(unknown)}; {args.data} has {', '.join(known)}")
    results: dict[str, Any] = {}
    started = time.perf_counter()
    for name in names:
        try:
            results[name] = evaluate(
                load_set(args.data, name),
                rankers,
                embedder=embedder,
                remember=args.remember,
                store=args.store,
            )
        finally:
            if cache is not None:
                cache.save()
        print(format_report(name, results[name]), flush=True)
    print(f"{len(names)} sets in {time.perf_counter() - started:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
