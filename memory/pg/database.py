"""The connection pool, and the one place where a database error becomes a store error.

Every transaction is all there or not at all, whatever breaks (a killed connection, a stopped
server, an error of ours midway), and costs as few round trips as it can, for a round trip is
what a replica mostly waits for (issue 28: an update took about fifty):

- ``Database.run`` is one statement in a transaction of its own, and ``Database.batch``
  several, sent together: one round trip either way, whatever the statements return;
- ``Database.transaction`` lends a connection for a transaction whose later statements depend
  on what earlier ones returned (a write reads what changed, under its lock, then writes): the
  statements go out in a pipeline as they are made, and only reading a result waits for the
  server (one round trip for everything sent so far); the ``COMMIT`` goes with the last
  statements, so a transaction that reads once costs two round trips. It is rolled back when
  the block raises.

Connections are in autocommit (no ``BEGIN`` of the driver's own, which costs a round trip
before a pipeline's first statement), and a transaction says ``BEGIN`` itself. Without
``durable`` a commit does not wait for the disk (``synchronous_commit`` off, set in the
transaction: a crash of the server may lose it, never half of it).

Any psycopg or pool error becomes ``MemorySaveFailed`` (a write) or ``MemoryLoadFailed`` (a
read), naming the database without its password. A connection the server dropped is discarded
by the pool, and each connection is checked as it is lent, so the store recovers by itself
once the server is back: the next operation gets a fresh connection. The check costs no round
trip: an idle connection has nothing to read unless the server closed it or spoke out of turn,
and only then is it asked (``ConnectionPool.check_connection``). An operation waits at most
``timeout`` for a connection (the server down: it fails then).

``Database.session`` is the exception to pooling: one connection of its own, for what lasts as
long as a session does (a replica's identity is a session-level advisory lock:
``memory.pg.updates``), closed with the pool if its holder has not. Both of its ends send TCP
keepalives and give up on data unacknowledged as long (``tcp_user_timeout``), so that the
server learns within about ``KEEPALIVE_SECONDS`` that a client host vanished (its locks are
released then), and the client that the server did; a killed process's connection is closed by
its kernel at once.
"""

from __future__ import annotations

import contextlib
import logging
import select
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from memory.errors import MemoryLoadFailed, MemorySaveFailed

log = logging.getLogger(__name__)

EXTRA_HINT = "install the extra: pip install 'cogito-memory-bot[postgres]'"
# A session's keepalives: idle seconds, then probes this far apart, this many (about 11 s).
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 5, 2, 3
KEEPALIVE_SECONDS = KEEPALIVE_IDLE + KEEPALIVE_INTERVAL * KEEPALIVE_COUNT
# A transaction's commit without waiting for the disk (``SET LOCAL``, as a query: it is one).
NOT_DURABLE = "SELECT set_config('synchronous_commit', 'off', true)"

Params = Sequence[Any] | dict[str, Any] | None
Statement = tuple[str, Params]


@dataclass(frozen=True)
class Rows:
    """What a statement returned (``rows``) and how many rows it changed or returned."""

    rows: list[tuple[Any, ...]]
    count: int

    def one(self) -> tuple[Any, ...] | None:
        """The first row, or None."""
        return self.rows[0] if self.rows else None


def redact(url: str) -> str:
    """``url`` without its password (``postgresql://bot:***@host/db``), for messages and logs."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url.split("?", 1)[0]
        user = parts.username or ""
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return urlunsplit((parts.scheme, f"{user}:***@{host}{port}", parts.path, "", ""))
    except ValueError:
        return "postgresql://(unparsable URL)"


class Database:
    """A pool of connections to one database."""

    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8, timeout: float = 10.0):
        try:
            import psycopg
            from psycopg_pool import ConnectionPool, PoolTimeout
        except ImportError as e:
            raise MemoryLoadFailed(
                f"the PostgreSQL store needs psycopg and psycopg-pool: {EXTRA_HINT}",
                path=Path("postgresql"),
            ) from e
        self.location = redact(url)
        self._url, self._timeout, self._connect = url, timeout, psycopg.connect
        self._errors: tuple[type[Exception], ...] = (psycopg.Error, PoolTimeout)
        self._pool = ConnectionPool(
            url,
            kwargs={"autocommit": True},
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            open=False,
            check=_check,
            # The pool's own reconnection backs off up to this long, then gives up and lets
            # the next request start afresh: so the store is back within about ``timeout``
            # of the server, not after a back-off grown over a long outage.
            reconnect_timeout=timeout,
            name="memory",
        )
        self._sessions: list[Any] = []  # closed with the pool
        self._sessions_lock = threading.Lock()

    def open(self) -> None:
        """Open the pool (connections are made in the background, and again after a loss)."""
        self._pool.open(wait=False)

    def close(self) -> None:
        """Close every connection, the sessions' too."""
        with self._sessions_lock:
            sessions, self._sessions = self._sessions, []
        for session in sessions:
            session.close()
        self._pool.close()

    @contextlib.contextmanager
    def opening(self) -> Iterator[Any]:
        """One connection of its own, in a transaction (start-up: its error says why).

        The pool only says it got no connection in time; a connection made here says what the
        server answered (no such database, authentication failed, nobody listening).
        """
        try:
            with self._connect(self._url, connect_timeout=max(1, round(self._timeout))) as conn:
                yield conn
        except self._errors as e:
            message = f"could not open the database {self.location}: {_reason(e)}"
            raise MemoryLoadFailed(message, path=Path(self.location)) from e

    def session(self, name: str) -> Any:
        """A connection of its own, outside the pool, in autocommit, named ``name`` in
        ``pg_stat_activity`` (its ``application_name``); the caller closes it. Errors are
        ``MemoryLoadFailed``; inside ``guarded``, so are those of the calls made on it."""
        with self.guarded(write=False):
            connection = self._connect(
                self._url,
                autocommit=True,
                connect_timeout=max(1, round(self._timeout)),
                application_name=name[:63],  # NAMEDATALEN - 1
                keepalives=1,
                keepalives_idle=KEEPALIVE_IDLE,
                keepalives_interval=KEEPALIVE_INTERVAL,
                keepalives_count=KEEPALIVE_COUNT,
                tcp_user_timeout=KEEPALIVE_SECONDS * 1000,  # unanswered data: as long
            )
            try:  # the server's side (a unix socket has none: its peer is on the same host)
                connection.execute(
                    f"SET tcp_keepalives_idle = {KEEPALIVE_IDLE};"
                    f" SET tcp_keepalives_interval = {KEEPALIVE_INTERVAL};"
                    f" SET tcp_keepalives_count = {KEEPALIVE_COUNT};"
                    f" SET tcp_user_timeout = {KEEPALIVE_SECONDS * 1000}"
                )
            except BaseException:
                connection.close()
                raise
        with self._sessions_lock:
            self._sessions = [*(s for s in self._sessions if not s.closed), connection]
        return connection

    @contextlib.contextmanager
    def guarded(self, *, write: bool) -> Iterator[None]:
        """Database errors inside become the store's (as in ``transaction``): for the calls on
        a ``session``."""
        try:
            yield
        except self._errors as e:
            what = "save to" if write else "read from"
            message = f"could not {what} the database {self.location}: {_reason(e)}"
            error = MemorySaveFailed if write else MemoryLoadFailed
            raise error(message, path=Path(self.location)) from e

    def run(
        self, sql: str, params: Params = None, *, write: bool, durable: bool = True,
        timeout: float | None = None,
    ) -> Rows:  # fmt: skip
        """One statement in a transaction of its own: one round trip. ``timeout``: seconds
        to wait for a connection (default: the pool's)."""
        return self.batch([(sql, params)], write=write, durable=durable, timeout=timeout)[0]

    def batch(
        self, statements: Sequence[Statement], *, write: bool, durable: bool = True,
        timeout: float | None = None,
    ) -> list[Rows]:  # fmt: skip
        """``statements`` in one transaction, sent together: one round trip; what each
        returned. None depends on what another returned (each sees the ones before it)."""
        with self.guarded(write=write), self._pool.connection(timeout=timeout) as connection:
            # A pipeline's statements up to its sync are one transaction (the protocol's
            # implicit one), rolled back whole if one fails; and a statement prepared as it
            # runs (psycopg prepares one run often) costs no round trip of its own there.
            with connection.pipeline():
                if not durable:
                    connection.execute(NOT_DURABLE)
                cursors = [connection.execute(sql, params) for sql, params in statements]
            return [_rows(cursor) for cursor in cursors]

    @contextlib.contextmanager
    def transaction(
        self, *, write: bool, durable: bool = True, timeout: float | None = None
    ) -> Iterator[Any]:
        """A connection in a transaction, committed on success, rolled back on any error; its
        statements are pipelined (the module docstring): reading a result waits for the
        server, the commit goes with the statements after the last read.

        Without ``durable`` the commit does not wait for the disk. ``timeout``: seconds to
        wait for a connection (default: the pool's).
        """
        with self.guarded(write=write), self._pool.connection(timeout=timeout) as connection:
            try:
                with connection.pipeline():
                    connection.execute("BEGIN")
                    if not durable:
                        connection.execute(NOT_DURABLE)
                    yield connection
                    connection.execute("COMMIT")
            finally:
                if _in_transaction(connection):  # it failed: roll back what was sent
                    with contextlib.suppress(*self._errors):  # a broken one: the pool drops it
                        connection.rollback()


def _in_transaction(connection: Any) -> bool:
    from psycopg.pq import TransactionStatus

    return not connection.closed and connection.info.transaction_status != TransactionStatus.IDLE


def _rows(cursor: Any) -> Rows:
    rows = cursor.fetchall() if cursor.description is not None else []
    return Rows(rows, cursor.rowcount)


def _check(connection: Any) -> None:
    """Check a connection as the pool lends it, without a round trip: one the server closed,
    or spoke to out of turn, has something to read; only such a one is asked."""
    import psycopg

    if connection.closed or connection.broken:
        raise psycopg.OperationalError("the connection is closed")
    poller = select.poll()
    poller.register(connection.fileno(), select.POLLIN)
    if poller.poll(0):
        connection.execute("")  # fails on a closed connection: the pool takes another


def _reason(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
