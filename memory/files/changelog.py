"""A namespace's history as a file: ``memory.history``, one ``ChangeRecord`` a JSON line.

The file backend of the history (``memory.history``). The namespace calls it under its lock
(its mutex and its folder's ``flock``), so appends of several processes never interleave and
a trim never races an append; nothing here holds a file open between two calls, so an idle
namespace holds none (and an append after another process's trim writes into the new file).

Write-ahead: a change's records are appended, and fsynced, *before* the change is committed
to the journal; if the journal then refuses it, the records are cut off again (``cut``). So no
change stands without its record. A crash between the two leaves a record of a change that
was never acknowledged: undo finds that memory not as the record left it and leaves it alone.

A line that does not parse (a torn last line after a crash, a bad hand edit, a damaged disk) is
skipped, and the first time a file with such lines is read it is copied aside whole
(``memory.history.corrupt-<time>``) before anything rewrites it: the records lost to it are
counted (``History.unreadable``), never silently dropped. An append after a torn last line
starts on a new line, so the torn bytes never spoil the next record.

Retention (``memory.history.Retention``): reads leave out records older than ``days``; once
the file holds more than ``max`` records (plus a slack of a tenth, so that a trim is not a
rewrite per change), or its oldest is past ``days``, it is rewritten atomically with the newest
``max`` within ``days``.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from memory.errors import MemoryInvalid, MemoryLoadFailed, MemorySaveFailed
from memory.files.io import append_bytes, beside, fsync_dir, write_bytes_atomic
from memory.history import ChangeRecord, History, Retention
from memory.jsontext import parse_json

log = logging.getLogger(__name__)

HISTORY = "memory.history"

_Signature = tuple[int, int]  # inode, size


def _line(record: ChangeRecord) -> bytes:
    text = json.dumps(record.to_dict(), ensure_ascii=False, separators=(",", ":"))
    return text.encode() + b"\n"


class ChangeLog:
    """The history file of one namespace folder; callers hold the namespace's lock."""

    def __init__(self, folder: Path, retention: Retention) -> None:
        self.path = folder / HISTORY
        self.retention = retention
        self._count: int | None = None  # records in the file, as of ``_signature``
        self._oldest = ""  # time of the oldest record then
        self._signature: _Signature | None = None
        self._unreadable = 0  # lines this process found unreadable so far
        self._kept: Path | None = None  # the copy of the file that held the last of them

    def read(self) -> History:
        """The records within retention, oldest first."""
        records, bad = self._parse(self._bytes())
        if bad:
            self._set_aside(bad, records)
        self._remember(records)
        cutoff = self.retention.cutoff()
        shown = [r for r in records if r.at >= cutoff][-self.retention.max :]
        return History(tuple(shown), self._unreadable, self._kept)

    def append(self, records: list[ChangeRecord]) -> int:
        """Append ``records`` durably; the file's size before them (for ``cut``)."""
        lines = b"".join(_line(r) for r in records)
        signature = self._stat()
        size = signature[1] if signature is not None else 0
        if signature != self._signature or self._count is None:
            self.read()  # another process wrote meanwhile: count again (and keep bad lines)
        if size and not self._ends_with_newline(size):
            lines = b"\n" + lines  # after a torn line: start afresh
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as e:
            raise MemorySaveFailed(
                f"could not open {self.path}: {e.strerror or e}", path=self.path
            ) from e
        try:
            append_bytes(fd, lines, durable=True)
            if not size:
                fsync_dir(self.path.parent)
        except OSError as e:
            self._truncate(fd, size)
            raise MemorySaveFailed(
                f"could not write {self.path}: {e.strerror or e}", path=self.path
            ) from e
        finally:
            os.close(fd)
        self._count = (self._count or 0) + len(records)
        self._oldest = self._oldest or records[0].at
        self._signature = self._stat()
        return size

    def cut(self, size: int) -> None:
        """Cut the file back to ``size`` (the change whose records follow was refused)."""
        try:
            os.truncate(self.path, size)
        except OSError as e:
            log.warning("could not cut %s back to %d bytes: %s", self.path, size, e)
        self._signature = None

    def trim(self) -> None:
        """Rewrite the file within retention, if it has outgrown it."""
        if self._count is None:
            return
        slack = max(10, self.retention.max // 10)
        if self._count <= self.retention.max + slack and self._oldest >= self.retention.cutoff():
            return
        history = self.read()  # within retention; unreadable lines copied aside first
        self._write(history.records)
        self._remember(list(history.records))

    # -- internals --------------------------------------------------------------------------

    def _remember(self, records: list[ChangeRecord]) -> None:
        self._count = len(records)
        self._oldest = records[0].at if records else ""
        self._signature = self._stat()

    def _stat(self) -> _Signature | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        except OSError as e:
            raise MemoryLoadFailed(
                f"could not read {self.path}: {e.strerror}", path=self.path
            ) from e
        return (st.st_ino, st.st_size)

    def _bytes(self) -> bytes:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return b""
        except OSError as e:
            raise MemoryLoadFailed(
                f"could not read {self.path}: {e.strerror or e}", path=self.path
            ) from e

    @staticmethod
    def _parse(data: bytes) -> tuple[list[ChangeRecord], int]:
        records: list[ChangeRecord] = []
        bad = 0
        lines = data.split(b"\n")
        torn = lines.pop()  # after the last newline: empty, or a line a crash cut short
        for line in lines:
            if not line.strip():
                continue
            try:
                records.append(ChangeRecord.from_dict(parse_json(line)))
            except (ValueError, MemoryInvalid, RecursionError):
                bad += 1
        return records, bad + bool(torn.strip())

    def _set_aside(self, bad: int, records: list[ChangeRecord]) -> None:
        """Copy a file with unreadable lines aside, then rewrite it with the readable ones
        (so that the copy is made once); if the copy fails, the file stays as it is."""
        target = beside(self.path, "corrupt")
        try:
            shutil.copyfile(self.path, target)
        except OSError as e:
            log.warning(
                "%d unreadable lines in %s, which could not be copied aside: %s", bad, self.path, e
            )
            return
        self._write(records)
        self._unreadable += bad
        self._kept = target
        log.warning(
            "%d unreadable lines in %s; the file as it was is in %s", bad, self.path, target
        )

    def _write(self, records: Sequence[ChangeRecord]) -> None:
        write_bytes_atomic(self.path, b"".join(_line(r) for r in records))

    def _ends_with_newline(self, size: int) -> bool:
        try:
            with self.path.open("rb") as handle:
                handle.seek(size - 1)
                return handle.read(1) == b"\n"
        except OSError:
            return True  # it will fail to append anyway, and say so

    def _truncate(self, fd: int, size: int) -> None:
        try:
            os.ftruncate(fd, size)
        except OSError as e:  # a full disk can still shrink a file; if not, say so
            log.warning("could not cut %s back after a failed append: %s", self.path, e)
