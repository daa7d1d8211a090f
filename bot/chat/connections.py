"""The webhook server's connections: how many may be open, how long each may take, what it says.

Anyone on the internet can connect to a webhook. A connection costs the process a file
descriptor, and the process needs file descriptors for its real work too (the store's files or
database connections, python-telegram-bot's and the model's HTTP pools, the log). Without limits,
a thousand connections that send half a request exhaust the usual limit of 1,024: the store
fails, replies cannot be sent, Telegram's own posts and ``/healthz`` wait forever, and asyncio
logs a traceback for every refused accept. So (``Gate``):

- At most ``ConnectionLimits.max_open`` connections are open at once: half the process's soft
  ``RLIMIT_NOFILE``, and never more than ``MAX_OPEN`` (Telegram posts on at most 100
  connections; a load balancer keeps a few more). asyncio accepts up to ``backlog`` connections
  in a row before the first is handed over, and one closed to make room lets go of its
  descriptor a moment later, so in a flood up to twice the backlog (a sixteenth of the limit,
  at most 128) are open beyond ``max_open``: 5/8 of the limit, the rest (384 of 1,024) kept for
  the store's files or database connections, python-telegram-bot's pool and the model's.
  Measured: 1,124 connections sending half a request held at most 696 of 1,024 descriptors.
- A new connection beyond that closes the oldest one that is not in a request (idle, or still
  sending its request line and headers) and takes its place; a real client sends its request
  as soon as it connects, so the oldest waiting one is the one least likely to be real. Only when
  every open connection is in a request is the new one refused (closed at once, before aiohttp
  sees it). Such pressure is logged at most once a minute (``PRESSURE_LOGGED_EVERY``).
- A request's line and headers must arrive within ``read_timeout`` of its first byte, and its
  body within ``read_timeout`` of the headers (``bot.chat.webhook`` reads it under that deadline),
  however slowly the bytes trickle; a connection that sends nothing is closed after
  ``idle_timeout``, between requests too (HTTP keep-alive). What a client sends after its
  answer (the rest of a refused request's body) is read and dropped for ``LINGER`` seconds, so
  that it gets the answer before the connection closes, not aiohttp's 10.
- An accept the operating system refuses for lack of file descriptors or memory (which the cap
  should make rare: something else would be holding them) is one log line a minute
  (``AcceptErrors``), not asyncio's traceback per attempt.

Every response names the server ``SERVER_NAME``, never Python's and aiohttp's versions: the
application's answers by ``on_response_prepare``, and the ones aiohttp makes itself (a request
it cannot parse, a handler that failed) by ``Connection.handle_error``.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import resource
import time
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import hdrs, web

log = logging.getLogger(__name__)

SERVER_NAME = "cogito"  # the Server header of every response
READ_TIMEOUT = 10.0  # seconds for a request's headers, and again for its body
IDLE_TIMEOUT = 75.0  # seconds a connection may stay open without sending anything
LINGER = 2.0  # seconds the rest of an unread body is read and dropped after the answer
MAX_OPEN = 1024  # connections at most, whatever the file descriptor limit
MAX_BACKLOG = 128  # connections the kernel queues for the server (and asyncio accepts in a row)
PRESSURE_LOGGED_EVERY = 60.0  # seconds between log lines about connections closed or refused
ACCEPT_ERRORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


def open_files_allowed() -> int:
    """The process's soft ``RLIMIT_NOFILE`` (unlimited: as many as ``MAX_OPEN`` needs)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return 2 * MAX_OPEN if soft == resource.RLIM_INFINITY else soft


def open_connections_allowed() -> int:
    """Half the file descriptor limit, at most ``MAX_OPEN``, at least 1."""
    return max(1, min(MAX_OPEN, open_files_allowed() // 2))


def accept_backlog() -> int:
    """A sixteenth of the file descriptor limit, at most ``MAX_BACKLOG``, at least 8."""
    return max(8, min(MAX_BACKLOG, open_files_allowed() // 16))


class Tally:
    """Events counted by kind and logged at most once an ``every`` seconds: the first at once,
    the ones after it in one line at the end of the interval (so a burst is never left out)."""

    def __init__(self, report: Callable[[dict[str, int]], None], every: float) -> None:
        self.report = report  # logs one line from the counts
        self.every = every
        self._counts: dict[str, int] = {}
        self._logged: float | None = None
        self._flush: asyncio.TimerHandle | None = None

    def add(self, kind: str) -> None:
        self._counts[kind] = self._counts.get(kind, 0) + 1
        now = time.monotonic()
        if self._logged is None or now - self._logged >= self.every:
            self._report(now)
        elif self._flush is None:
            delay = self._logged + self.every - now
            self._flush = asyncio.get_running_loop().call_later(delay, self._at_end)

    def flush(self) -> None:
        """Log what was counted since the last line now (the server stops)."""
        if self._flush is not None:
            self._flush.cancel()
        self._at_end()

    def _at_end(self) -> None:
        self._flush = None
        if self._counts:
            self._report(time.monotonic())

    def _report(self, now: float) -> None:
        counts, self._counts, self._logged = self._counts, {}, now
        self.report(counts)


@dataclass(frozen=True)
class ConnectionLimits:
    """How many connections may be open and how long a client may take (see the module)."""

    max_open: int = field(default_factory=open_connections_allowed)
    backlog: int = field(default_factory=accept_backlog)
    read_timeout: float = READ_TIMEOUT
    idle_timeout: float = IDLE_TIMEOUT


class Gate:
    """The open connections, oldest first: admits, times out, and closes them to make room."""

    def __init__(self, limits: ConnectionLimits) -> None:
        self.limits = limits
        # Each open connection, in the order they came, with its deadline (None: in a request).
        self._open: dict[Connection, asyncio.TimerHandle | None] = {}
        self.pressure = Tally(self._log_pressure, PRESSURE_LOGGED_EVERY)

    @property
    def open(self) -> int:
        """How many connections are open now."""
        return len(self._open)

    def admit(self, connection: Connection) -> bool:
        """Whether ``connection`` (just accepted) may stay; may close an older waiting one."""
        if len(self._open) >= self.limits.max_open:
            waiting = next((c for c, deadline in self._open.items() if deadline is not None), None)
            if waiting is None:
                self.pressure.add("refused")
                return False
            self.pressure.add("closed")
            self.drop(waiting)
            waiting.force_close()
        self._open[connection] = None
        self._wait(connection, self.limits.idle_timeout)
        return True

    def reading(self, connection: Connection) -> None:
        """The first bytes of a request came: its headers are due within ``read_timeout``."""
        self._wait(connection, self.limits.read_timeout)

    def busy(self, connection: Connection) -> None:
        """A request's handler runs: no deadline here (the handler bounds its body's read)."""
        if connection in self._open:
            self._cancel(connection)
            self._open[connection] = None

    def idle(self, connection: Connection) -> None:
        """The handler is done: the connection may wait ``idle_timeout`` for the next request."""
        self._wait(connection, self.limits.idle_timeout)

    def drop(self, connection: Connection) -> None:
        """Forget ``connection`` (it is closing); its deadline is cancelled."""
        if connection in self._open:
            self._cancel(connection)
            del self._open[connection]

    def _wait(self, connection: Connection, seconds: float) -> None:
        if connection not in self._open:
            return
        self._cancel(connection)
        loop = asyncio.get_running_loop()
        self._open[connection] = loop.call_later(seconds, self._expire, connection)

    def _cancel(self, connection: Connection) -> None:
        deadline = self._open.get(connection)
        if deadline is not None:
            deadline.cancel()

    def _expire(self, connection: Connection) -> None:
        self.drop(connection)
        connection.force_close()

    def _log_pressure(self, counts: dict[str, int]) -> None:
        log.warning(
            "the webhook server reached its %d open connections: %d waiting for a request "
            "closed to make room, %d new ones refused (every open one was in a request)",
            self.limits.max_open,
            counts.get("closed", 0),
            counts.get("refused", 0),
        )


class Connection(web.RequestHandler):
    """aiohttp's handler of one connection, admitted and timed by a ``Gate``."""

    def __init__(self, gate: Gate, manager: web.Server, *, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(
            manager,
            loop=loop,
            access_log=None,  # type: ignore[arg-type]  # None: no access log (aiohttp's own idiom)
            lingering_time=LINGER,
        )
        self.gate = gate
        self.admitted = False
        self.between_requests = False  # no byte of the next request yet

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Admit the connection, or close it before aiohttp holds anything for it."""
        if not self.gate.admit(self):
            typing.cast(asyncio.Transport, transport).abort()  # TCP: loop.create_server's
            return
        self.admitted = self.between_requests = True
        super().connection_made(transport)

    def data_received(self, data: bytes) -> None:
        """The first bytes of a request start its headers' deadline."""
        if self.between_requests:
            self.between_requests = False
            self.gate.reading(self)
        super().data_received(data)

    def connection_lost(self, exc: BaseException | None) -> None:
        """Forget the connection (a refused one was never aiohttp's)."""
        if not self.admitted:
            return
        self.gate.drop(self)
        super().connection_lost(exc)

    def request_started(self) -> None:
        """The handler of a request runs (called by ``middleware``)."""
        self.gate.busy(self)

    def request_done(self) -> None:
        """The handler returned: the connection waits for the next request."""
        self.between_requests = True
        self.gate.idle(self)

    def handle_error(
        self,
        request: web.BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        """aiohttp's own error answer (a request it cannot parse, a failed handler), unnamed."""
        response = super().handle_error(request, status, exc, message)
        response.headers[hdrs.SERVER] = SERVER_NAME
        return response


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Tell the request's connection that a handler runs, and when it is done."""
    connection = request.protocol
    if not isinstance(connection, Connection):  # a request made without the gate (a test client)
        return await handler(request)
    connection.request_started()
    try:
        return await handler(request)
    finally:
        connection.request_done()


async def name_server(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: the Server header of the application's answers."""
    response.headers[hdrs.SERVER] = SERVER_NAME


class AcceptErrors:
    """The event loop's exception handler while the server runs: accepts refused for lack of
    file descriptors or memory are one error line a minute, with a count (asyncio logs a
    traceback for each, several a millisecond); the rest goes on to the handler that was there
    before (or asyncio's default)."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.failures = Tally(self._log, PRESSURE_LOGGED_EVERY)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: Callable[[asyncio.AbstractEventLoop, dict[str, Any]], object] | None = None

    def install(self) -> None:
        loop = asyncio.get_running_loop()
        self._loop, self._previous = loop, loop.get_exception_handler()
        loop.set_exception_handler(self)

    def uninstall(self) -> None:
        """The handler from before again; a pending line is logged now."""
        self.failures.flush()
        if self._loop is not None and self._loop.get_exception_handler() is self:
            self._loop.set_exception_handler(self._previous)
        self._loop = None

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        error = context.get("exception")
        if "socket" in context and isinstance(error, OSError) and error.errno in ACCEPT_ERRORS:
            self.failures.add(error.strerror or errno.errorcode.get(error.errno or 0, "?"))
        elif self._previous is not None:
            self._previous(loop, context)
        else:
            loop.default_exception_handler(context)

    def _log(self, counts: dict[str, int]) -> None:
        log.error(
            "the webhook server could not accept %d connection(s) (%s); %d of its connections "
            "are open, the file descriptor limit is %d",
            sum(counts.values()),
            ", ".join(f"{reason}: {n}" for reason, n in counts.items()),
            self.gate.open,
            resource.getrlimit(resource.RLIMIT_NOFILE)[0],
        )


@dataclass
class Listening:
    """An aiohttp application served by ``listen``: its runner, its socket and its gate."""

    runner: web.AppRunner
    server: asyncio.Server
    gate: Gate

    @property
    def port(self) -> int:
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """No new connections; the requests in progress finish first (the runner's
        ``shutdown_timeout``), then the socket is closed."""
        self.server.close()  # the open connections are the runner's to close
        await self.runner.cleanup()
        await self.server.wait_closed()


async def listen(
    app: web.Application, host: str, port: int, limits: ConnectionLimits, stop_timeout: float
) -> Listening:
    """Serve ``app`` on ``host``:``port`` (0: any free port), each connection a gated
    ``Connection`` (counted, timed, closed to make room), its answers named ``SERVER_NAME``;
    ``OSError`` if the address cannot be had (in use, not this machine's)."""
    app.on_response_prepare.append(name_server)
    runner = web.AppRunner(
        app, access_log=None, handle_signals=False, shutdown_timeout=stop_timeout
    )
    await runner.setup()
    manager = runner.server
    assert manager is not None  # set up
    gate = Gate(limits)
    loop = asyncio.get_running_loop()
    try:
        # aiohttp's server is the protocol factory (its TCPSite does the same), but each
        # connection is a gated ``Connection``.
        server = await loop.create_server(
            lambda: Connection(gate, manager, loop=loop), host, port, backlog=limits.backlog
        )
    except OSError:
        await runner.cleanup()
        raise
    return Listening(runner, server, gate)
