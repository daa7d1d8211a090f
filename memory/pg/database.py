"""The connection pool, and the one place where a database error becomes a store error.

``Database.transaction`` lends a pooled connection for one transaction: committed when the
block ends, rolled back when it raises, so a change is all there or not at all, whatever
breaks (a killed connection, a stopped server, an error of ours midway). Any psycopg or pool
error becomes ``MemorySaveFailed`` (a write) or ``MemoryLoadFailed`` (a read), naming the
database without its password. A connection the server dropped is discarded by the pool, and
each connection is checked as it is lent (``ConnectionPool.check_connection``), so the store
recovers by itself once the server is back: the next operation gets a fresh connection. An
operation waits at most ``timeout`` for a connection (the server down: it fails then).

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
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from memory.errors import MemoryLoadFailed, MemorySaveFailed

log = logging.getLogger(__name__)

EXTRA_HINT = "install the extra: pip install 'cogito-memory-bot[postgres]'"
# A session's keepalives: idle seconds, then probes this far apart, this many (about 11 s).
KEEPALIVE_IDLE, KEEPALIVE_INTERVAL, KEEPALIVE_COUNT = 5, 2, 3
KEEPALIVE_SECONDS = KEEPALIVE_IDLE + KEEPALIVE_INTERVAL * KEEPALIVE_COUNT


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
            min_size=min_size,
            max_size=max_size,
            timeout=timeout,
            open=False,
            check=ConnectionPool.check_connection,
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

    @contextlib.contextmanager
    def transaction(
        self, *, write: bool, durable: bool = True, timeout: float | None = None
    ) -> Iterator[Any]:
        """A connection in a transaction, committed on success, rolled back on any error.

        Without ``durable`` the commit does not wait for the disk (``synchronous_commit``
        off): a crash of the server may lose it, never half of it. ``timeout``: seconds to
        wait for a connection (default: the pool's).
        """
        try:
            with self._pool.connection(timeout=timeout) as connection:
                if not durable:
                    connection.execute("SET LOCAL synchronous_commit = off")
                yield connection
        except self._errors as e:
            what = "save to" if write else "read from"
            message = f"could not {what} the database {self.location}: {_reason(e)}"
            error = MemorySaveFailed if write else MemoryLoadFailed
            raise error(message, path=Path(self.location)) from e


def _reason(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
