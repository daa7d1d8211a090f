"""A namespace's journal: every change since its snapshot, one JSON line each, appended.

``memory.json`` is the snapshot (``memory.files.folder``). Every change after it is a line
appended to ``memory.journal``:

    {"op": "put", "m": {...article record...}}     add or update (the whole new record)
    {"op": "del", "id": 1705312200000}             delete
    {"op": "touch", "at": "...Z", "n": {"<id>": 7}} access bookkeeping (absolute counts)
    {"op": "high", "id": 1705312200000,            the highest id used so far, and the inode,
     "snapshot": [ino, mtime_ns, size]}             mtime and size of the snapshot compaction
                                                    wrote (the journal's first line)

Every op is idempotent (a put carries the whole record, a touch absolute counts), so replaying a
journal onto a snapshot that already contains some of it changes nothing: a crash between the two
renames of a compaction loses nothing and doubles nothing. Puts and deletes are fsynced before the
caller hears of success; touches are not (an access count is not worth a disk flush per search).
Compaction starts a new journal (a new inode, ``restart``) holding only its first line and the
lines appended since the snapshot was copied; other processes notice the new inode by ``stat``.

A journal line that does not parse is skipped (the journal's bytes are first copied aside); an
incomplete last line (a crash mid-append, the zeros a power cut leaves) was never acknowledged
and is cut off, its bytes kept in ``memory.journal.torn-<time>`` first. Only under the lock: a
reader without it may be looking at another process's append in progress.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from memory.errors import MemoryLoadFailed, MemorySaveFailed
from memory.files.io import (
    FileLock,
    append_bytes,
    beside,
    copy_aside,
    fsync_dir,
    make_folder,
    write_bytes_atomic,
)
from memory.jsontext import parse_json

log = logging.getLogger(__name__)

JOURNAL = "memory.journal"
# One line a change: the layout's encoder made once (``json.dumps`` with options makes one a call).
_LINE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


class Journal:
    """``memory.journal`` of one namespace folder: how far it has been read, and its appends.

    Callers hold the folder's ``lock`` around every call, as for the rest of its files.
    """

    def __init__(self, folder: Path, lock: FileLock) -> None:
        self.folder = folder
        self.path = folder / JOURNAL
        self._lock = lock
        self.lines = 0  # lines in the journal since the last compaction
        self.ino: int | None = None  # of the journal read so far
        self.offset = 0  # bytes read (or appended) so far
        self._fd: int | None = None

    def stat(self) -> tuple[int | None, int]:
        """The journal's inode and size on disk now (None and 0: there is none)."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None, 0
        return st.st_ino, st.st_size

    def rewind(self) -> None:
        """Read the journal from its start next (a reload): its inode now, nothing read yet."""
        try:
            st = os.stat(self.path)
            self.ino = st.st_ino
        except FileNotFoundError:
            self.ino = None
        self.offset = 0
        self.lines = 0

    def read(self, offset: int, quarantined: list[Path]) -> list[dict[str, Any]]:
        """The whole lines from ``offset`` on; a copy of the journal is added to
        ``quarantined`` if one does not parse."""
        try:
            with open(self.path, "rb") as f:
                f.seek(offset)
                data = f.read()
        except FileNotFoundError:
            return []
        except OSError as e:
            raise MemoryLoadFailed(f"could not read {self.path}: {e}", path=self.path) from e
        complete = data.rfind(b"\n") + 1
        if complete < len(data) and self._lock.held:
            # An append cut short by a crash: never acknowledged, so cut it off.
            self._cut_torn_tail(offset + complete, data[complete:])
        entries: list[dict[str, Any]] = []
        bad = 0
        for line in data[:complete].splitlines():
            try:
                entry = parse_json(line)
            except ValueError:
                entry = None
            if isinstance(entry, dict):
                entries.append(entry)
            elif line.strip():
                bad += 1
        if bad:
            kept = copy_aside(self.path)
            quarantined.append(kept)
            log.warning("%d unreadable lines in %s; a copy is in %s", bad, self.path, kept)
        self.offset = offset + complete
        self.lines += len(entries)
        return entries

    def _cut_torn_tail(self, size: int, tail: bytes) -> None:
        """Cut the journal back to ``size``, keeping the ``tail`` beyond it in a file beside it.

        The next append must not glue onto those bytes, so the journal is cut even if they
        cannot be kept (a full disk); then the log has them.
        """
        kept = beside(self.path, "torn")
        try:
            write_bytes_atomic(kept, tail)
        except MemorySaveFailed as e:
            log.warning(
                "cutting an incomplete last line of %d bytes off %s; it could not be kept (%s): %r",
                len(tail),
                self.path,
                e.message,
                tail[:2000],
            )
        else:
            log.warning(
                "cut an incomplete last line of %d bytes off %s (a crash mid-write); "
                "its bytes are in %s",
                len(tail),
                self.path,
                kept,
            )
        self._truncate(size)

    def _truncate(self, size: int) -> None:
        try:
            if os.stat(self.path).st_size <= size:
                return  # nothing was written past it: nothing to cut
            os.truncate(self.path, size)
        except OSError as e:
            log.warning(
                "an incomplete line may remain at the end of %s (the next load cuts it): %s",
                self.path,
                e,
            )

    def append(self, entries: list[dict[str, Any]], *, durable: bool) -> None:
        """Append journal lines; with ``durable``, fsynced before returning.

        On failure the journal is cut back to its previous length, so a half-written line
        never precedes the next append, and ``MemorySaveFailed`` is raised.
        """
        data = b"".join(_LINE.encode(e).encode() + b"\n" for e in entries)
        try:
            if self._fd is None:
                self._fd = self._open()
            append_bytes(self._fd, data, durable=durable)
        except OSError as e:
            if self._fd is not None:
                self._truncate(self.offset)
                self.close()
            raise MemorySaveFailed(
                f"could not save to {self.path}: {e.strerror or e}", path=self.path
            ) from e
        self.offset += len(data)
        self.lines += len(entries)

    def _open(self) -> int:
        """The journal opened for appending, created (and its folder) if missing.

        The descriptor is reopened at every append after an idle (a search's touch), so the
        common case costs one system call: a journal read under the lock held now (``ino``;
        only compaction replaces it, under that lock) is opened as it is. Only an open that
        finds it gone creates it, ``fstat``s it and makes it durable in its folder; and makes
        the folder only if that is gone too (a ``mkdir`` costs as much as the append)."""
        if self.ino is not None:
            with contextlib.suppress(FileNotFoundError):  # removed by hand: created below
                return os.open(self.path, os.O_WRONLY | os.O_APPEND)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        try:
            fd = os.open(self.path, flags, 0o644)
        except FileNotFoundError:
            make_folder(self.folder)
            fd = os.open(self.path, flags, 0o644)
        try:
            ino = os.fstat(fd).st_ino
            if self.ino != ino:  # we just created it
                self.ino = ino
                fsync_dir(self.folder)
        except OSError:
            os.close(fd)
            raise
        return fd

    def since(self, offset: int) -> bytes:
        """The bytes appended from ``offset`` to what has been read (for compaction)."""
        try:
            with open(self.path, "rb") as f:
                f.seek(offset)
                return f.read(self.offset - offset)
        except FileNotFoundError:
            return b""
        except OSError as e:
            raise MemorySaveFailed(f"could not read {self.path}: {e}", path=self.path) from e

    def restart(self, first: dict[str, Any], tail: bytes) -> None:
        """Replace the journal (atomically, a new inode) with its ``first`` line and ``tail``,
        the lines appended since the snapshot that ``first`` names was copied."""
        header = json.dumps(first).encode() + b"\n"
        write_bytes_atomic(self.path, header + tail)
        st = os.stat(self.path)
        self.ino = st.st_ino
        self.offset = len(header) + len(tail)
        self.lines = tail.count(b"\n")

    def close(self) -> None:
        """Close the append descriptor (reopened by the next ``append``)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
