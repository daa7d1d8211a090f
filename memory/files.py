"""Small, careful file primitives: atomic replacement, an inter-process lock, safe reads.

``write_json_atomic`` never leaves a half-written file behind: it writes a temporary file in the
same folder, fsyncs it, renames it over the target and fsyncs the folder, so after a crash or a
power cut the path holds either the old bytes or the new ones. ``read_json`` never destroys what
it cannot parse: it moves the file aside and says where.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.errors import MemoryLoadFailed, MemorySaveFailed

log = logging.getLogger(__name__)


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


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


def append_bytes(fd: int, data: bytes, *, durable: bool) -> None:
    """Write all of ``data`` to ``fd`` (opened with ``O_APPEND``); fdatasync with ``durable``."""
    written = 0
    while written < len(data):
        written += os.write(fd, data[written:])
    if durable:
        os.fdatasync(fd)


def dump_json(value: Any) -> bytes:
    """JSON as a person would like to read it: indented, UTF-8, non-ASCII kept as is."""
    return (json.dumps(value, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def write_json_atomic(path: Path, value: Any, *, durable: bool = True) -> None:
    """Replace ``path`` with ``value`` as readable JSON, atomically (see ``write_bytes_atomic``)."""
    write_bytes_atomic(path, dump_json(value), durable=durable)


def quarantine(path: Path) -> Path:
    """Move a file that cannot be read aside, bytes intact, and return its new path."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    try:
        os.replace(path, target)
        fsync_dir(path.parent)
    except OSError as e:
        raise MemoryLoadFailed(
            f"{path} cannot be read and could not be moved aside: {e.strerror or e}", path=path
        ) from e
    log.warning("moved unreadable %s aside to %s", path, target)
    return target


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
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError):
        quarantine(path)
        return default


class FileLock:
    """An exclusive ``flock`` on a lock file, for processes sharing a data directory.

    ``flock`` locks belong to an open file description, so two handles in one process exclude
    each other as two processes do; threads of one process must still hold their own mutex.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
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

    def release(self) -> None:
        """Let the lock go."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Close the lock file (the lock is not held between ``held`` blocks)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
