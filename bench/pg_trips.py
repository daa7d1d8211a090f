"""Round trips to PostgreSQL, counted on the wire by a relay between the clients and the server.

A round trip is the client waiting for the server: it sends one or more messages, and the
server answers. ``TripCounter`` listens on a unix socket in a folder of its own, passes every
byte on to the server's socket and back, and counts, per connection, every time the client
sends after the server has answered (or first): psycopg sends a statement's messages and waits
for the reply, a pipeline's only at its sync or a flush, so a count is exactly the waits. No
driver hook, no server extension: what is counted is what went over the socket, for any client
(the bot's processes reach the database through it by its ``url``).

Each trip is put under what it was for, read from the statements the client sent in it (the
text of a ``Query`` or a ``Parse``, and of a prepared statement a ``Bind`` names): ``queue``
(``bot_updates``, ``bot_lanes``), ``namespace`` (memories, their version and history),
``documents``, ``logs``, ``vectors``, ``replica`` (a replica's identity and presence:
advisory locks, ``SELECT 1``), ``check`` (a pool's empty query checking a connection), ``connect``
(a connection's start-up), ``other``. A trip that only begins a transaction goes with the
connection's next one, one that only ends it with its last one, so that a transaction's
``BEGIN`` and ``COMMIT`` count for what it did.

``python -m bench.replica_bench`` reads it (its counting run); ``tests/bench/test_pg_trips.py``
and ``tests/bot/test_replica_trips.py`` assert with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import struct
import tempfile
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SOCKET = ".s.PGSQL.{port}"
UNTYPED = {80877102, 80877103, 80877104}  # cancel, SSL and GSS requests: before the start-up
KINDS = (
    ("queue", re.compile(r"\bbot_(updates|lanes)\b")),
    ("vectors", re.compile(r"\bmemory_vectors\b")),
    ("namespace", re.compile(r"\b(memories|memory_namespaces|memory_history)\b")),
    ("documents", re.compile(r"\bdocuments\b")),
    ("logs", re.compile(r"\brecord_logs\b")),
    ("replica", re.compile(r"advisory|\bnextval\('bot_lane_tokens'\)|^\s*SELECT 1\s*$", re.I)),
)
BEGIN = re.compile(r"^\s*(BEGIN|START TRANSACTION)\b", re.I)
END = re.compile(r"^\s*(COMMIT|ROLLBACK|END)\b", re.I)
SETTING = re.compile(r"^\s*(SET\b|SELECT set_config\()", re.I)


def kind_of(statement: str) -> str:
    """What a statement is for (the module docstring's kinds); "" for transaction control."""
    if not statement.strip():
        return "check"
    if BEGIN.match(statement) or END.match(statement) or SETTING.match(statement):
        return ""
    for kind, pattern in KINDS:
        if pattern.search(statement):
            return kind
    return "other"


class _Connection:
    """One client connection's trips: parses what the client sends, to name each trip."""

    def __init__(self, counter: TripCounter) -> None:
        self._counter = counter
        self._buffer = b""
        self._started = False
        self._prepared: dict[str, str] = {}
        self._answered = True  # the server spoke last: the client's next bytes are a new trip
        self._trip: list[str] | None = None  # statements of the trip in progress
        self._last = "other"  # the kind of this connection's last trip
        self._pending = 0  # trips that only began a transaction, waiting for its kind

    def client(self, data: bytes) -> None:
        if self._answered:
            self._trip = []
            self._answered = False
        self._buffer += data
        self._parse()

    def server(self) -> None:
        """The server answers: the trip is over (counted before the client has the answer)."""
        if not self._answered:
            self._close_trip()
        self._answered = True

    def close(self) -> None:
        self._close_trip()
        if self._pending:
            self._counter.add(self._last, self._pending)
            self._pending = 0

    def _close_trip(self) -> None:
        trip, self._trip = self._trip, None
        if trip is None:
            return
        kinds = [kind_of(statement) for statement in trip]
        named = [kind for kind in kinds if kind]
        if named:
            self._last = named[0]
            self._counter.add(self._last, 1 + self._pending)
            self._pending = 0
        elif not trip:  # the start-up, authentication
            self._counter.add("connect", 1)
        elif any(BEGIN.match(s) for s in trip) and not any(END.match(s) for s in trip):
            self._pending += 1  # a BEGIN alone: counted with what the transaction does
        else:  # a COMMIT alone: with what the transaction did
            self._counter.add(self._last, 1 + self._pending)
            self._pending = 0

    def _parse(self) -> None:
        while True:
            if not self._started:  # untyped messages: the start-up, or a request before it
                if len(self._buffer) < 8:
                    return
                length, code = struct.unpack("!ii", self._buffer[:8])
                if len(self._buffer) < length:
                    return
                self._buffer = self._buffer[length:]
                self._started = code not in UNTYPED
                continue
            if len(self._buffer) < 5:
                return
            (length,) = struct.unpack("!i", self._buffer[1:5])
            if len(self._buffer) < 1 + length:
                return
            kind, body = self._buffer[:1], self._buffer[5 : 1 + length]
            self._buffer = self._buffer[1 + length :]
            self._message(kind, body)

    def _message(self, kind: bytes, body: bytes) -> None:
        trip = self._trip if self._trip is not None else []
        self._trip = trip
        if kind == b"Q":
            trip.append(_cstring(body, 0)[0])
        elif kind == b"P":
            name, end = _cstring(body, 0)
            query, _ = _cstring(body, end)
            if name:
                self._prepared[name] = query
            trip.append(query)
        elif kind == b"X":  # the goodbye: the client waits for nothing
            self._trip = None
        elif kind == b"B":
            _, end = _cstring(body, 0)
            name, _ = _cstring(body, end)
            if name:  # a prepared statement: its text came with its Parse, trips ago
                trip.append(self._prepared.get(name, "prepared"))


def _cstring(data: bytes, start: int) -> tuple[str, int]:
    end = data.index(b"\0", start)
    return data[start:end].decode("utf-8", "replace"), end + 1


class TripCounter:
    """A relay to the PostgreSQL server whose socket is in ``server_folder``; ``url`` gives
    a server URL through it. A context manager: it serves from a thread of its own."""

    def __init__(self, server_folder: Path, port: int = 5432) -> None:
        self.server_socket = Path(server_folder) / SOCKET.format(port=port)
        self.port = port
        self.folder = Path(tempfile.mkdtemp(prefix="cogito-trips-"))
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.AbstractServer | None = None
        self._connections: set[_Connection] = set()

    def url(self, server_url: str) -> str:
        """``server_url`` (``postgresql://postgres@/db?host=...``) through this relay."""
        parts = urlsplit(server_url)
        query = dict(parse_qsl(parts.query))
        query["host"] = str(self.folder)
        return urlunsplit(parts._replace(query=urlencode(query)))

    def add(self, kind: str, trips: int) -> None:
        with self._lock:
            self._counts[kind] += trips

    def counts(self) -> Counter[str]:
        """The trips so far, by kind (a copy); ``total`` is their sum."""
        with self._lock:
            counts = Counter(self._counts)
        counts["total"] = sum(n for kind, n in counts.items() if kind != "total")
        return counts

    def __enter__(self) -> TripCounter:
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            path = str(self.folder / SOCKET.format(port=self.port))
            self._server = loop.run_until_complete(asyncio.start_unix_server(self._relay, path))
            ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

        self._thread = threading.Thread(target=serve, name="pg-trips", daemon=True)
        self._thread.start()
        ready.wait()
        return self

    def __exit__(self, *exc: object) -> None:
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None:

            async def stop() -> None:
                if self._server is not None:
                    self._server.close()
                for task in [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
                    task.cancel()

            asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)
        with contextlib.suppress(OSError):
            for path in self.folder.iterdir():
                path.unlink()
            self.folder.rmdir()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = _Connection(self)
        try:
            server_reader, server_writer = await asyncio.open_unix_connection(
                str(self.server_socket)
            )
        except OSError:
            writer.close()
            return

        async def upstream() -> None:
            while data := await reader.read(65536):
                connection.client(data)
                server_writer.write(data)
                await server_writer.drain()
            server_writer.close()

        async def downstream() -> None:
            while data := await server_reader.read(65536):
                connection.server()
                writer.write(data)
                await writer.drain()
            writer.close()

        try:
            await asyncio.gather(upstream(), downstream())
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            connection.close()
            for end in (writer, server_writer):
                end.close()


@contextlib.contextmanager
def counting(server_folder: Path) -> Iterator[TripCounter]:
    """A started ``TripCounter`` for the server in ``server_folder``, stopped afterwards."""
    with TripCounter(server_folder) as counter:
        yield counter
