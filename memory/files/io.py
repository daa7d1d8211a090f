"""Small, careful file primitives: atomic replacement, an inter-process lock, safe reads.

``write_json_atomic`` never leaves a half-written file behind: it writes a temporary file in the
same folder, fsyncs it, renames it over the target and fsyncs the folder, so after a crash or a
power cut the path holds either the old bytes or the new ones. ``read_json`` never destroys what
it cannot parse: it moves the file aside and says where.

How the JSON is laid out and parsed is ``memory.jsontext``'s (the PostgreSQL store keeps the
same text).

A process killed inside ``write_bytes_atomic`` leaves its temporary file behind (a whole copy of
the file it was replacing). ``remove_stale_temporaries`` removes those whose writer is gone; a
namespace calls it when it is opened.

The same write for a file a person may be editing, which never destroys bytes it did not
expect to find there, is ``memory.files.swap``.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import secrets
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.errors import MemoryLoadFailed, MemorySaveFailed
from memory.jsontext import dump_json, parse_json

log = logging.getLogger(__name__)

# write_bytes_atomic's temporary names: .{name}.{pid}.{8 hex digits}.tmp
_TEMPORARY = re.compile(r"\.(?P<name>.+)\.(?P<pid>[0-9]+)\.[0-9a-f]{8}\.tmp")
# A live process other than us writes a temporary for well under a second; one this old was left
# by a process that died, and its pid has since been given to another.
STALE_TEMPORARY_SECONDS = 3600.0


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_folder(folder: Path) -> None:
    """Create ``folder`` and its parents if missing (``MemorySaveFailed`` if the disk refuses)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise MemorySaveFailed(f"could not create {folder}: {e.strerror or e}", path=folder) from e


def write_bytes_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace ``path`` with ``data`` atomically; ``MemorySaveFailed`` if not.

    A reader sees the old bytes or the new, never half. With ``durable`` (the default) the new
    bytes are also on disk when this returns, whatever happens next; without it a power cut may
    bring the old ones back, which suits conveniences (chat history) better than an fsync's cost.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
        if durable:
            fsync_dir(path.parent)
    except OSError as e:
        with contextlib.suppress(OSError):  # the temporary file may not exist; nothing to lose
            tmp.unlink()
        raise MemorySaveFailed(f"could not save {path}: {e.strerror or e}", path=path) from e


def write_temporary(path: Path, data: bytes, kind: str, *, durable: bool = True) -> Path:
    """A new temporary file beside ``path`` holding ``data``, fsynced, for ``replace_checked``
    (not fsynced without ``durable``: a copy that may be lost, to rename later).

    Named ``.{name}.{kind}.{pid}.{hex}.tmp``: a temporary of its own kind, which
    ``remove_stale_temporaries`` removes only once its writer is gone.
    """
    tmp = path.with_name(f".{path.name}.{kind}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
    except OSError as e:
        with contextlib.suppress(OSError):  # the temporary file may not exist; nothing to lose
            tmp.unlink()
        raise MemorySaveFailed(f"could not save {path}: {e.strerror or e}", path=path) from e
    return tmp


def append_bytes(fd: int, data: bytes, *, durable: bool) -> None:
    """Write all of ``data`` to ``fd`` (opened with ``O_APPEND``); fdatasync with ``durable``."""
    written = 0
    while written < len(data):
        written += os.write(fd, data[written:])
    if durable:
        os.fdatasync(fd)


class CacheFile:
    """A file that only caches what can be made again (the search index): read whole, or
    None if it cannot be; replaced atomically, without fsync."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except OSError:
            return None

    def write(self, data: bytes) -> None:
        write_bytes_atomic(self.path, data, durable=False)


def write_json_atomic(path: Path, value: Any, *, durable: bool = True) -> None:
    """Replace ``path`` with ``value`` as readable JSON, atomically (see ``write_bytes_atomic``)."""
    write_bytes_atomic(path, dump_json(value), durable=durable)


def beside(path: Path, kind: str) -> Path:
    """A name for a file kept beside ``path``: ``<name>.<kind>-<UTC time>``
    (``memory.json.corrupt-20240115T103000123456Z``); sorted, oldest first."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return path.with_name(f"{path.name}.{kind}-{stamp}")


def copy_aside(path: Path) -> Path:
    """Copy a file with parts that cannot be read aside (``.corrupt-<time>``) before it is
    rewritten without them; the copy's path."""
    target = beside(path, "corrupt")
    try:
        shutil.copyfile(path, target)
    except OSError as e:
        raise MemoryLoadFailed(f"could not copy {path} aside: {e}", path=path) from e
    return target


def quarantine(path: Path) -> Path:
    """Move a file that cannot be read aside, bytes intact, and return its new path."""
    target = beside(path, "corrupt")
    try:
        os.replace(path, target)
        fsync_dir(path.parent)
    except OSError as e:
        raise MemoryLoadFailed(
            f"{path} cannot be read and could not be moved aside: {e.strerror or e}", path=path
        ) from e
    log.warning("moved unreadable %s aside to %s", path, target)
    return target


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    except (OverflowError, OSError):
        return False  # not a pid this system can have
    return True


def remove_stale_temporaries(folder: Path, *, locked: frozenset[str] = frozenset()) -> list[Path]:
    """Remove the temporary files of ``write_bytes_atomic`` in ``folder`` that nobody will finish.

    A temporary is stale when its writer's pid is not alive, or is alive but is not us and the
    file is older than ``STALE_TEMPORARY_SECONDS`` (the pid was reused). Ours are left alone
    (another thread may be writing). ``locked`` names files that are only ever replaced under a
    lock the caller holds now: their temporaries are stale whoever wrote them, since no writer
    can be at work. Returns what was removed; a file that cannot be removed is logged.
    """
    try:
        names = os.listdir(folder)
    except OSError:
        return []  # no folder yet, or unreadable: nothing to clean
    removed: list[Path] = []
    now = time.time()
    for name in names:
        match = _TEMPORARY.fullmatch(name)
        if match is None:
            continue
        path = folder / name
        pid = int(match["pid"])
        if match["name"] not in locked:
            if pid == os.getpid():
                continue
            if _alive(pid):
                try:
                    age = now - path.stat().st_mtime
                except OSError:
                    continue  # renamed into place or removed meanwhile
                if age < STALE_TEMPORARY_SECONDS:
                    continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as e:
            log.warning("could not remove the stale temporary file %s: %s", path, e.strerror or e)
            continue
        removed.append(path)
    if removed:
        log.warning(
            "removed %d temporary files left by interrupted writes in %s: %s",
            len(removed),
            folder,
            ", ".join(p.name for p in removed),
        )
    return removed


def read_json(path: Path, default: Any) -> Any:
    """The JSON value in ``path``, or ``default`` if there is none.

    A file that does not parse is moved aside (see ``quarantine``) and ``default`` returned;
    a file that cannot be read at all is ``MemoryLoadFailed``.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return default
    except OSError as e:
        raise MemoryLoadFailed(f"could not read {path}: {e.strerror or e}", path=path) from e
    try:
        return parse_json(data)
    except ValueError:
        quarantine(path)
        return default


class FileLock:
    """An exclusive ``flock`` on a lock file, for processes sharing a data directory.

    ``flock`` locks belong to an open file description, so two handles in one process exclude
    each other as two processes do; threads of one process must still hold their own mutex.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.held = False  # this handle holds the lock now
        self._fd: int | None = None

    def _open(self) -> int:
        if self._fd is None:
            try:
                self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError:
                # A read-only data directory: an existing lock file still locks read-only.
                self._fd = os.open(self.path, os.O_RDONLY)
        return self._fd

    def acquire(self) -> None:
        """Wait for the lock (``OSError`` if the lock file cannot be opened)."""
        fcntl.flock(self._open(), fcntl.LOCK_EX)
        self.held = True

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; whether it was taken (``OSError`` as ``acquire``)."""
        try:
            fcntl.flock(self._open(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        self.held = True
        return True

    def write(self, text: str) -> None:
        """Replace the lock file's text (who holds it, for whoever finds it held)."""
        fd = self._open()
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode("utf-8"), 0)

    def release(self) -> None:
        """Let the lock go, and close the lock file: an idle holder keeps no file open."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self.close()

    def close(self) -> None:
        """Close the lock file (which lets the lock go, if held)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.held = False
