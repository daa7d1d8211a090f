"""The memory store: namespaces of memories in files under one data directory.

``MemoryStore(data_dir).namespace("users/42")`` is a ``Namespace`` with the article's eight
operations. Its memories live in ``data_dir/users/42/memory.json`` (the article's format) plus an
append-only journal (see ``memory.files.journal``), so that:

- an acknowledged add, update or delete is on disk (fsynced) before the call returns, and
  survives ``kill -9`` or a power cut;
- no operation rewrites the whole file: a change is one journal line, a search's access
  bookkeeping one unflushed line; the snapshot is rewritten by compaction, amortised (when the
  journal outgrows the namespace), in the background (``compact_seconds`` after a change) and on
  ``close``, so ``memory.json`` is up to date on a clean close and within a bounded time;
- a ``memory.json`` that does not parse is moved aside, never overwritten (the article resets it
  to an empty list and overwrites it on the next save);
- ids are millisecond timestamps, as in the article, but strictly increasing within a namespace,
  also across processes: a new id is ``max(now_ms, highest id seen + 1)``, chosen under the lock;
- threads and asyncio tasks (a mutex) and processes (an ``flock``) can share a namespace: every
  operation takes both, then catches up with what other processes appended before acting.
- every change is recorded in ``data_dir/users/42/memory.history`` (``memory.files.changelog``),
  written ahead of the change, who made it and through which door (``memory.history``), within
  the retention ``history_days`` / ``history_max``; undo and ``/history`` read it.

A namespace unused for ``idle_seconds`` is compacted and released from RAM; its ``Namespace``
object stays valid and reloads on next use. So that one process can serve many thousands of
namespaces, at most ``max_open_namespaces`` are held at once, holding at most ``max_memories``
memories between them: asking for one more releases the least recently asked for first. An idle
namespace holds no file open (its lock file and journal are opened per operation).

With an ``embedder`` (``memory.embedding``), ``search(..., ranker="hybrid")`` also searches by
meaning: one background thread (``memory.meaning.EmbeddingWorker``) embeds what the namespaces
are missing, and each namespace keeps its vectors in ``memory.vectors`` beside ``memory.json``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from memory.embedding import Embedder
from memory.errors import (
    MemoryLoadFailed,
    MemorySaveFailed,
    MemoryStoreError,
    NamespaceInvalid,
    StoreInUse,
)
from memory.files.backend import FileBackend
from memory.files.documents import FileDocuments
from memory.files.folder import SNAPSHOT
from memory.files.io import FileLock
from memory.files.journal import JOURNAL
from memory.files.records import FileRecordLog
from memory.history import DEFAULT_DAYS, DEFAULT_MAX, Retention
from memory.meaning import EmbeddingWorker, guarded
from memory.names import validate_namespace
from memory.namespace import Namespace

__all__ = ["FileNamespace", "MemoryStore"]

log = logging.getLogger(__name__)

BOT_FOLDER = ".bot"  # the client's own files: no namespace name has a dot, so none is here
SERVING_LOCK = "serving.lock"  # held by the one bot process serving the directory


class FileNamespace(Namespace):
    """A namespace of the file store: the operations (``memory.namespace``) over its folder
    (``memory.files.backend``), and the folder's housekeeping."""

    def __init__(
        self,
        folder: Path,
        name: str,
        retention: Retention,
        *,
        embedder: Embedder | None = None,
        wake: Callable[[Namespace], None] | None = None,
        wait: Callable[[float | None], bool] | None = None,
    ) -> None:
        self.path = folder
        self._folder = FileBackend(folder, name, retention)
        super().__init__(name, self._folder, embedder=embedder, wake=wake, wait=wait)

    def flush(self) -> None:
        """Bring ``memory.json`` up to date with every change (compaction)."""
        self._folder.flush()

    def maintain(self, compact_seconds: float, idle_seconds: float) -> None:
        """Compact after ``compact_seconds`` of pending changes; release after idling."""
        self._folder.maintain(compact_seconds, idle_seconds)


class MemoryStore:
    """Every namespace under one data directory.

    Opens nothing until asked; ``close`` (or leaving a ``with`` block) compacts every open
    namespace so ``memory.json`` is complete. A background thread compacts namespaces whose
    changes are older than ``compact_seconds`` and releases those idle for ``idle_seconds``.
    """

    def __init__(
        self,
        data_dir: str | Path,
        *,
        compact_seconds: float = 30.0,
        idle_seconds: float = 900.0,
        max_open_namespaces: int = 512,
        max_memories: int = 2_000_000,
        embedder: Embedder | None = None,
        history_days: int = DEFAULT_DAYS,
        history_max: int = DEFAULT_MAX,
    ) -> None:
        if max_open_namespaces < 1 or max_memories < 1:
            raise ValueError("max_open_namespaces and max_memories must be at least 1")
        self.data_dir = Path(data_dir)
        self.retention = Retention(history_days, history_max)  # memory.history
        self.compact_seconds = compact_seconds
        self.idle_seconds = idle_seconds
        self.max_open_namespaces = max_open_namespaces
        self.max_memories = max_memories
        self._namespaces: dict[str, FileNamespace] = {}
        self._recent: OrderedDict[str, FileNamespace] = OrderedDict()  # least recently asked first
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._janitor: threading.Thread | None = None
        self.embedder = guarded(embedder)  # one health guard for every namespace
        self._worker = EmbeddingWorker()
        self._serving = FileLock(self.data_dir / BOT_FOLDER / SERVING_LOCK)

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def namespace(self, name: str) -> FileNamespace:
        """The namespace called ``name`` (``users/42``); created on disk by its first write."""
        validate_namespace(name)
        with self._lock:
            namespace = self._namespaces.get(name)
            if namespace is None:
                namespace = FileNamespace(
                    self.data_dir / name,
                    name,
                    self.retention,
                    embedder=self.embedder,
                    wake=self._worker.wake,
                    wait=self._worker.wait,
                )
                self._namespaces[name] = namespace
            if self._janitor is None:
                self._stop.clear()
                self._janitor = threading.Thread(
                    target=self._run_janitor, name="memory-janitor", daemon=True
                )
                self._janitor.start()
            self._recent[name] = namespace
            self._recent.move_to_end(name)
            victims = self._over_budget()
        for victim in victims:  # outside the store's lock: a release may wait for an operation
            self._release(victim)
        return namespace

    def wait_for_embeddings(self, timeout: float | None = None) -> bool:
        """Wait until every memory noted so far is embedded (benchmarks, tests, tools)."""
        return self._worker.wait(timeout)

    def _over_budget(self) -> list[FileNamespace]:
        """The least recently asked for namespaces to release so the rest fit the budget."""
        held = sum(namespace.held for namespace in self._recent.values())
        victims = []
        while len(self._recent) > 1 and (
            len(self._recent) > self.max_open_namespaces or held > self.max_memories
        ):
            _, victim = self._recent.popitem(last=False)
            held -= victim.held
            victims.append(victim)
        return victims

    def _release(self, namespace: FileNamespace) -> None:
        try:
            namespace.release()
        except MemoryStoreError as e:
            # Its journal keeps every change; it stays held, and the janitor tries again.
            log.warning("could not flush %s on release: %s", namespace.name, e.message)

    def documents(self, name: str) -> FileDocuments:
        """The documents of the namespace called ``name`` (``memory.files.documents``)."""
        return FileDocuments(self.data_dir / validate_namespace(name))

    def bot_documents(self) -> FileDocuments:
        """The client's documents outside every namespace, in ``data_dir/.bot/``."""
        return FileDocuments(self.data_dir / BOT_FOLDER)

    def bot_log(self, name: str) -> FileRecordLog:
        """The client's record log ``name``: ``data_dir/.bot/<name>.jsonl``
        (``memory.files.records``)."""
        return FileRecordLog(self.data_dir / BOT_FOLDER, name)

    def updates(self) -> None:
        """None: a data directory serves one process, which keeps its updates in its inbox
        (``bot_log("inbox")``); replicas share a PostgreSQL store's queue instead."""
        return None

    def claim_serving(self) -> None:
        """Claim the data directory for this process's bot, which serves it alone: its inbox
        (``bot_log("inbox")``) is one process's, and a second bot replaying it would handle
        the first one's updates again. A second claim, from another process or another store
        on the same directory, is ``StoreInUse`` naming the holder. The claim is an ``flock``
        on ``data_dir/.bot/serving.lock``, let go on ``close`` or when the process dies. A
        directory where the lock file cannot be made is served unclaimed, said in the log (the
        inbox fails there too, and the bot runs without it)."""
        if self._serving.held:
            return
        try:
            self._serving.path.parent.mkdir(parents=True, exist_ok=True)
            taken = self._serving.try_acquire()
        except OSError as e:
            log.warning(
                "cannot claim %s for this process (%s): a second bot on it would not be refused",
                self.data_dir,
                e.strerror or e,
            )
            return
        if not taken:
            holder = ""
            with contextlib.suppress(OSError, UnicodeDecodeError):
                holder = self._serving.path.read_text("utf-8").strip()
            raise StoreInUse(
                f"another bot process ({holder or 'its process id unknown'}) serves the data"
                f" directory {self.data_dir}; stop it first, or give each bot its own data"
                " directory (several replicas of one bot share a PostgreSQL store instead)"
            )
        with contextlib.suppress(OSError):
            started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
            self._serving.write(f"pid {os.getpid()}, since {started}\n")

    def namespace_names(self) -> list[str]:
        """Every namespace that has memories on disk, sorted."""
        names = set()
        for marker in (SNAPSHOT, JOURNAL):
            for path in self.data_dir.glob(f"**/{marker}"):
                name = path.parent.relative_to(self.data_dir).as_posix()
                with contextlib.suppress(NamespaceInvalid):
                    names.add(validate_namespace(name))
        return sorted(names)

    def ping(self) -> None:
        """The data directory exists and a file can be made in it (made and removed at once;
        root ignores permissions, so only trying tells). A missing directory is not created:
        an unmounted volume must not look like an empty store."""
        if not self.data_dir.is_dir():
            raise MemoryLoadFailed(
                f"the data directory {self.data_dir} does not exist", path=self.data_dir
            )
        try:
            fd, probe = tempfile.mkstemp(prefix=".ping-", dir=self.data_dir)
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise MemorySaveFailed(
                f"cannot write in the data directory {self.data_dir}: {e.strerror}",
                path=self.data_dir,
            ) from e

    def maintain(self) -> None:
        """One round of background work: compact what is due, release what is idle."""
        with self._lock:
            namespaces = list(self._namespaces.values())
        for namespace in namespaces:
            try:
                namespace.maintain(self.compact_seconds, self.idle_seconds)
            except MemoryStoreError as e:
                log.warning("maintenance of %s failed: %s", namespace.name, e.message)

    def _run_janitor(self) -> None:
        tick = max(0.05, min(self.compact_seconds, self.idle_seconds, 5.0) / 2)
        while not self._stop.wait(tick):
            self.maintain()

    def close(self) -> None:
        """Stop the background thread and bring every namespace's ``memory.json`` up to date."""
        with self._lock:
            janitor, self._janitor = self._janitor, None
            namespaces = list(self._namespaces.values())
        self._stop.set()
        if janitor is not None:
            janitor.join()
        self._worker.close()
        for namespace in namespaces:
            try:
                namespace.release()
            except MemoryStoreError as e:
                log.warning("could not flush %s on close: %s", namespace.name, e.message)
        self._serving.close()
