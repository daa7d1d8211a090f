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

``replace_checked`` is the same write for a file a person may be editing: it never destroys
bytes it did not expect to find there (see its docstring).
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import functools
import hashlib
import logging
import os
import re
import secrets
import shutil
import time
from collections.abc import Callable
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


def digest(data: bytes) -> str:
    """A short content hash: whether two versions of a file hold the same bytes."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2


@functools.cache
def _renameat2() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        function: Callable[..., int] = libc.renameat2
    except (OSError, AttributeError):
        return None
    return function


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2``); False where the system cannot."""
    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False  # this file system cannot exchange: the caller checks, then renames
    raise OSError(code, os.strerror(code), str(b))


Status = tuple[int, int, int, int]  # inode, size, mtime_ns, ctime_ns
SETTLED = 1.0  # seconds since its last change after which a file's status stands for its bytes


def _status(path: Path) -> Status | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def settled_status(path: Path, expected: str) -> Status | None:
    """The status of ``path`` if it holds the bytes whose ``digest`` is ``expected`` and had not
    changed for ``SETTLED`` seconds when read; else ``None``.

    Any later change to the file (a write, a truncation, even setting its times back) sets
    its ctime to the time of the change, later than this one, so the same status found later
    means the same bytes, without reading them (``replace_checked``).
    """
    try:
        with open(path, "rb") as f:
            before = os.fstat(f.fileno())
            data = f.read()
            after = os.fstat(f.fileno())
    except OSError:
        return None
    status = (before.st_ino, before.st_size, before.st_mtime_ns, before.st_ctime_ns)
    if status != (after.st_ino, after.st_size, after.st_mtime_ns, after.st_ctime_ns):
        return None  # changed while read
    if time.time_ns() - before.st_ctime_ns < SETTLED * 1e9 or digest(data) != expected:
        return None
    return status


def replace_checked(
    path: Path,
    data: bytes,
    expected: str | None,
    aside: Path,
    *,
    keep: bool = False,
    written: Path | None = None,
    settled: Status | None = None,
) -> Path | None:
    """Replace ``path`` with ``data`` if it still holds the bytes whose ``digest`` is ``expected``
    (``None``: if there is no file); ``MemorySaveFailed`` if the disk refuses.

    Returns ``None`` when ``path`` held what was expected and now holds ``data``. When it held
    something else (a person saved over it since it was last read), that file is kept: it is
    moved to ``aside`` and its path returned, or, where the file system cannot swap two names,
    ``path`` is left alone and ``path`` itself returned; either way nothing is lost. With
    ``keep``, the file replaced is moved to ``aside`` even when it was the one expected.

    On Linux the swap is one ``renameat2(RENAME_EXCHANGE)``: the file found at ``path`` is
    compared after it has left, so a person's save that lands between a check and a rename
    cannot be overwritten, and an editor still writing into the old file (an in-place save)
    goes on writing into the file at ``aside``.

    ``written`` is a temporary file in the same folder already holding ``data``, fsynced
    (``write_temporary``): then only the check and the swap are left to do. ``settled`` is
    what ``settled_status`` found, before: if ``path`` still has that status just before the
    swap, and the file swapped out still has its inode, size and mtime, it is the file that
    ``settled_status`` read, and it is not read again.

    A failure after the swap (``aside`` cannot be written) swaps back: the file found at
    ``path`` is there again, as before the call. Cleaning up removes only the temporary file
    this call wrote, known by its inode, never the file swapped out in its place.
    """
    tmp = written or path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    ours: tuple[int, int] | None = None
    try:
        if written is None:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
                ours = _identity(os.fstat(f.fileno()))
        else:
            ours = _identity(os.stat(written))
        before = None
        if settled is not None and _status(path) == settled:
            before = settled  # the bytes settled_status read, unchanged since
        if expected is None:
            try:
                os.link(tmp, path)  # fails if a file appeared: never replaces one
            except FileExistsError:
                return path
            finally:
                tmp.unlink()
        elif _exchange(tmp, path):
            # Renaming sets a file's ctime, so the file swapped out is compared by inode, size
            # and mtime: any write since the status just before the swap set its mtime anew.
            after = _status(tmp)
            same = before is not None and after is not None and after[:3] == before[:3]
            if not same and digest(tmp.read_bytes()) != expected:
                os.replace(tmp, aside)
                fsync_dir(path.parent)
                return aside
            if keep:
                os.replace(tmp, aside)
            else:
                tmp.unlink()
        else:
            try:
                found = digest(path.read_bytes())
            except FileNotFoundError:
                found = None
            if found != expected:
                tmp.unlink()
                return path
            if keep:
                os.link(path, aside)  # the same file: an editor's late writes still land there
            os.replace(tmp, path)
        fsync_dir(path.parent)
    except FileNotFoundError:  # the file went while we swapped: nothing of anyone's to keep
        _clean_up(tmp, path, ours)
        return path
    except OSError as e:
        _clean_up(tmp, path, ours)
        raise MemorySaveFailed(f"could not save {path}: {e.strerror or e}", path=path) from e
    return None


def _identity(st: os.stat_result) -> tuple[int, int]:
    return st.st_dev, st.st_ino


def _clean_up(tmp: Path, path: Path, ours: tuple[int, int] | None) -> None:
    """After ``replace_checked`` failed: remove ``tmp`` if it is still the file it wrote
    (``ours``; None: failed while writing it, before any swap); if it is the file swapped out
    of ``path`` (maybe a person's save), swap back, so that ``path`` holds it again and ``tmp``
    the file written, then removed."""
    for _ in range(2):
        try:
            found = _identity(os.lstat(tmp))
        except OSError:
            return  # renamed into place, or never written: nothing left of ours
        if ours is None or found == ours:
            with contextlib.suppress(OSError):  # nothing of anyone's to lose
                tmp.unlink()
            return
        try:
            if not _exchange(tmp, path):
                break
        except OSError:
            break
    log.error("%s holds the file that was at %s; it was left there, not removed", tmp, path)


def open_for_writing(path: Path) -> bool | None:
    """Whether some process holds ``path`` open for writing; ``None`` where the system cannot
    tell (``False`` if there is no file).

    On Linux a read lease (``F_SETLEASE``) is refused while any descriptor of the file is open
    for writing: an editor that opened it before it was replaced (an in-place save) may still
    write into it. The lease is let go at once.
    """
    setlease = getattr(fcntl, "F_SETLEASE", None)
    if setlease is None:
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    try:
        fcntl.fcntl(fd, setlease, fcntl.F_RDLCK)
    except OSError as e:
        return True if e.errno in (errno.EAGAIN, errno.EBUSY) else None
    else:
        fcntl.fcntl(fd, setlease, fcntl.F_UNLCK)
        return False
    finally:
        os.close(fd)


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
