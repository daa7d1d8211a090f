"""The PostgreSQL store: every namespace of one database, shared by several processes.

``open_store("postgresql://bot@db/cogito")`` gives a ``PgStore``; the bot and the command line
use it through ``memory.interface`` as they use the file store. What it keeps and how: the
schema in ``memory.pg.schema`` (created and migrated on open, under an advisory lock), each
namespace's rows in ``memory.pg.backend`` (the backend of ``memory.namespace``, whose operations
both stores share: held per process, checked on every operation; a write one statement, in
``memory.pg.change``; their change history in a table of its own), their embeddings in
``memory.pg.vectors``, documents and record logs in ``memory.pg.documents``, the updates the
bot's replicas share in ``memory.pg.updates`` (and which replica a process is in
``memory.pg.identity``), the pool and the translation of database errors in
``memory.pg.database``.

Needs the ``postgres`` extra (psycopg 3 and psycopg-pool); without it, opening a
``postgresql://`` URL says which extra to install.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

from memory.embedding import Embedder
from memory.history import DEFAULT_DAYS, DEFAULT_MAX, Retention
from memory.meaning import EmbeddingWorker, guarded
from memory.names import validate_namespace
from memory.namespace import Namespace
from memory.pg.backend import PgBackend
from memory.pg.database import Database, redact
from memory.pg.documents import PgDocuments, PgRecordLog
from memory.pg.schema import migrate
from memory.pg.updates import PgUpdateQueue

__all__ = ["PgBackend", "PgDocuments", "PgRecordLog", "PgStore", "PgUpdateQueue", "redact"]

log = logging.getLogger(__name__)

BOT_SCOPE = ""  # the bot's own documents: no namespace name is empty
PING_TIMEOUT = 2.0  # seconds a health check waits for a connection


class PgStore:
    """Every namespace in one PostgreSQL database.

    Opening migrates the schema (``memory.pg.schema``): if the database cannot be reached
    then, that is ``MemoryLoadFailed``. At most ``max_cached_namespaces`` namespaces keep
    their memories cached in the process; the least recently asked for is dropped first.
    """

    def __init__(
        self,
        url: str,
        *,
        max_cached_namespaces: int = 512,
        pool_size: int = 8,
        timeout: float = 10.0,
        embedder: Embedder | None = None,
        history_days: int = DEFAULT_DAYS,
        history_max: int = DEFAULT_MAX,
    ) -> None:
        if max_cached_namespaces < 1:
            raise ValueError("max_cached_namespaces must be at least 1")
        self.retention = Retention(history_days, history_max)  # memory.history
        self.embedder = guarded(embedder)  # one health guard for every namespace
        self._worker = EmbeddingWorker()
        self.location = redact(url)
        self.max_cached_namespaces = max_cached_namespaces
        self._db = Database(url, max_size=pool_size, timeout=timeout)
        self._namespaces: OrderedDict[str, Namespace] = OrderedDict()
        self._lock = threading.Lock()
        with self._db.opening() as connection:
            applied = migrate(connection)
        self._db.open()
        if applied:
            log.info("migrated the schema of %s: %s", self.location, applied)

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def namespace(self, name: str) -> Namespace:
        """The namespace called ``name`` (``users/42``); created by its first write."""
        validate_namespace(name)
        with self._lock:
            namespace = self._namespaces.get(name)
            if namespace is None:
                namespace = Namespace(
                    name,
                    PgBackend(self._db, name, self.documents(name), self.retention),
                    embedder=self.embedder,
                    wake=self._worker.wake,
                    wait=self._worker.wait,
                )
                self._namespaces[name] = namespace
            self._namespaces.move_to_end(name)
            victims = []
            while len(self._namespaces) > self.max_cached_namespaces:
                victims.append(self._namespaces.popitem(last=False)[1])
        for victim in victims:
            victim.release()  # it stays usable, and loads again if asked for
        return namespace

    def wait_for_embeddings(self, timeout: float | None = None) -> bool:
        """Wait until every memory noted so far is embedded (benchmarks, tests, tools)."""
        return self._worker.wait(timeout)

    def documents(self, name: str) -> PgDocuments:
        """The documents of the namespace called ``name``."""
        return PgDocuments(self._db, validate_namespace(name))

    def bot_documents(self) -> PgDocuments:
        """The client's documents outside every namespace."""
        return PgDocuments(self._db, BOT_SCOPE)

    def bot_log(self, name: str) -> PgRecordLog:
        """The client's record log ``name``."""
        return PgRecordLog(self._db, name)

    def updates(self) -> PgUpdateQueue:
        """The updates every replica on this database shares (``memory.pg.updates``)."""
        return PgUpdateQueue(self._db)

    def claim_serving(self) -> None:
        """Nothing to claim: every replica on this database shares its update queue."""

    def namespace_names(self) -> list[str]:
        """Every namespace that was ever written, sorted."""
        found = self._db.run(
            'SELECT name FROM memory_namespaces ORDER BY name COLLATE "C"', write=False
        )
        return [row[0] for row in found.rows]

    def document_scopes(self) -> list[str]:
        """Every namespace holding documents, sorted (for ``memory.migrate``)."""
        found = self._db.run(
            "SELECT DISTINCT scope FROM documents WHERE scope <> %s", (BOT_SCOPE,), write=False
        )
        return sorted(row[0] for row in found.rows)

    def bot_log_names(self) -> list[str]:
        """Every record log of the client, sorted (for ``memory.migrate``)."""
        found = self._db.run("SELECT DISTINCT name FROM record_logs", write=False)
        return sorted(row[0] for row in found.rows)

    def ping(self) -> None:
        """``SELECT 1`` through the pool, waiting at most ``PING_TIMEOUT`` for a connection."""
        self._db.run("SELECT 1", write=False, timeout=PING_TIMEOUT)

    def close(self) -> None:
        """Stop the embedding, save the vectors held, and let every connection go (every
        change is committed already)."""
        self._worker.close()
        with self._lock:
            held = list(self._namespaces.values())
        for namespace in held:
            namespace.release()
        self._db.close()
