"""Swapping a new ``memory.json`` in while a person may be editing it.

``replace_checked`` is ``memory.files.io.write_bytes_atomic`` for a file a person may be
editing: it never destroys bytes it did not expect to find there (see its docstring), and
exchanges the files in one step where the system can (Linux ``renameat2``).
``settled_status`` lets compaction read the file it will replace ahead of time, outside the
lock, and ``open_for_writing`` says whether an editor still holds a file open to write into it
(``memory.files.watch``).
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
import secrets
import time
from collections.abc import Callable
from pathlib import Path

from memory.errors import MemorySaveFailed
from memory.files.io import fsync_dir

log = logging.getLogger(__name__)


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
