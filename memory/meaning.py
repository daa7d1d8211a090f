"""Keeping a namespace's embeddings up to date, in the background.

Adding a memory must not get slower: ``Namespace.add`` returns once the memory is durable, and
only notes that its text needs a vector (``Meaning.note``, a dict insert), waking the store's
``EmbeddingWorker``. That one thread embeds, in batches of ``BATCH`` texts and without holding
the namespace, whatever any namespace is missing: new and edited memories, and after an
upgrade or a change of model (the vector file is of another model, or absent) every memory,
with progress in the log. Search uses what is embedded so far. The vectors are written to the
namespace's ``VectorStore`` when a backlog is done, every ``SAVE_EVERY`` vectors of a long one,
and when the namespace is released.

When the embedder fails, the batch stays to do: the worker waits (``memory.embedding
.EmbedderHealth`` backs off) and tries again; nothing is lost, searches use keywords meanwhile.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Protocol

import numpy as np
import numpy.typing as npt

from memory.embedding import Embedder, EmbedderHealth
from memory.errors import EmbeddingFailed, MemoryStoreError
from memory.interface import SearchStatus
from memory.vectors import VectorIndex, VectorStore

log = logging.getLogger(__name__)

BATCH = 32
SAVE_EVERY = 1000
PROGRESS_FROM = 100  # a backlog this long is reported in the log
RETRY_SECONDS = 5.0


def guarded(embedder: Embedder | None) -> Embedder | None:
    """``embedder`` behind one health guard (``EmbedderHealth``) for every namespace of a
    store: an endpoint that is down is skipped by all of them, not tried by each."""
    if embedder is None or isinstance(embedder, EmbedderHealth):
        return embedder
    return EmbedderHealth(embedder)


class Meaning:
    """One namespace's vectors: the index in RAM, where they are kept, and the embedder.

    Every method but ``embed_step``'s embedding runs under the namespace's mutex, which the
    caller holds (``lock``).
    """

    def __init__(
        self,
        name: str,
        store: VectorStore,
        embedder: Embedder,
        lock: threading.RLock,
        wake: Callable[[], None],
    ) -> None:
        self.name = name
        self.embedder = embedder
        self._store = store
        self._lock = lock
        self._wake = wake
        self._index = VectorIndex(embedder.model, embedder.dimensions)
        self._since_save = 0
        self._backlog = 0  # the size of the backlog being reported, 0 if none
        self._inflight: set[bytes] = set()  # keys being embedded by some thread now

    def note(self, memory_id: int, text: str) -> None:
        if self._index.note(memory_id, text):
            self._wake()

    def forget(self, memory_id: int) -> None:
        self._index.forget(memory_id)

    def forget_all(self) -> None:
        self._index.forget_all()

    def query_vector(self, query: str) -> npt.NDArray[np.float32] | None:
        """The query's vector, or None (the embedder failing: keywords alone, at once)."""
        try:
            vectors: npt.NDArray[np.float32] = self.embedder.embed([query], query=True)
            row: npt.NDArray[np.float32] = vectors[0]
            return row
        except EmbeddingFailed:
            return None  # logged by EmbedderHealth, once per change of state

    def cosines(
        self, query: npt.NDArray[np.float32]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        self._load()
        return self._index.cosines(query)

    def status(self) -> SearchStatus:
        failing = isinstance(self.embedder, EmbedderHealth) and self.embedder.failing
        return SearchStatus(
            "hybrid", self.embedder.model, self._index.embedded, self._index.total, failing
        )

    def embed_step(self) -> int:
        """Embed up to ``BATCH`` missing texts; how many (0: nothing left to do)."""
        with self._lock:
            self._load()
            todo = self._index.missing(BATCH, self._inflight)
            if not todo and self._inflight:
                return 0  # another thread is embedding the rest
            if not todo:
                if self._backlog:
                    log.info("embedded the %d memories of %s", self._backlog, self.name)
                    self._backlog = 0
                self._save_if(self._index.dirty)
                return 0
            if not self._backlog and self._index.pending >= PROGRESS_FROM:
                self._backlog = self._index.pending
                log.info(
                    "embedding %d memories of %s with %s in the background",
                    self._backlog,
                    self.name,
                    self.embedder.model,
                )
            self._inflight.update(key for key, _ in todo)
        try:
            vectors = self.embedder.embed([text for _, text in todo], query=False)
        finally:
            with self._lock:
                self._inflight.difference_update(key for key, _ in todo)
        with self._lock:
            before = self._index.pending
            self._index.fill([key for key, _ in todo], vectors)
            self._since_save += len(todo)
            if self._backlog and before // 500 != self._index.pending // 500:
                log.info(
                    "embedding %s: %d of %d done",
                    self.name,
                    self._backlog - self._index.pending,
                    self._backlog,
                )
            self._save_if(self._since_save >= SAVE_EVERY)
        return len(todo)

    def release(self) -> None:
        """Write what the file lacks, then let the vectors go (the next use loads them)."""
        self._save_if(self._index.dirty)
        self._index = VectorIndex(self.embedder.model, self.embedder.dimensions)

    def _load(self) -> None:
        if not self._index.loaded:
            stored = self._store.load(self.embedder.model, self.embedder.dimensions)
            if stored is not None:
                self._index.take(stored)
            self._index.loaded = True
            if self._index.pending:
                self._wake()

    def _save_if(self, due: bool) -> None:
        if not due or not self._index.loaded:
            return
        self._since_save = 0
        try:
            self._store.save(self._index.snapshot())
        except MemoryStoreError as e:
            # Only derived data: kept in RAM, written again at the next save.
            log.warning("vectors of %s not saved: %s", self.name, e.message)
            self._index.dirty = True


class Embeddable(Protocol):
    """What the worker needs of a namespace."""

    name: str

    def embed_step(self) -> int: ...


class EmbeddingWorker:
    """The store's one thread that embeds what namespaces are missing (see the docstring)."""

    def __init__(self) -> None:
        self._queue: deque[Embeddable] = deque()
        self._queued: set[str] = set()
        self._idle = threading.Condition()
        self._busy = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def wake(self, namespace: Embeddable) -> None:
        """Have ``namespace``'s missing vectors embedded (soon, in the background)."""
        with self._idle:
            if namespace.name not in self._queued:
                self._queued.add(namespace.name)
                self._queue.append(namespace)
                self._idle.notify_all()
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(
                    target=self._run, name="memory-embedding", daemon=True
                )
                self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until nothing is left to embed; whether that happened within ``timeout``."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._queue and not self._busy, timeout)

    def close(self) -> None:
        """Stop the thread (what is left is embedded by the next process)."""
        with self._idle:
            thread, self._thread = self._thread, None
            self._stop.set()
            self._idle.notify_all()
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        while True:
            with self._idle:
                self._idle.wait_for(lambda: self._queue or self._stop.is_set())
                if self._stop.is_set():
                    return
                namespace = self._queue.popleft()
                self._queued.discard(namespace.name)
                self._busy += 1
            again = False
            try:
                again = namespace.embed_step() > 0
            except EmbeddingFailed:
                again = True  # logged by EmbedderHealth; wait, then the same batch again
                self._stop.wait(RETRY_SECONDS)
            except MemoryStoreError as e:
                log.warning("embedding %s failed: %s", namespace.name, e.message)
            finally:
                with self._idle:
                    self._busy -= 1
                    if again and namespace.name not in self._queued:
                        self._queued.add(namespace.name)
                        self._queue.append(namespace)
                    self._idle.notify_all()
