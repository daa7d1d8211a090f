"""The files of one namespace: a snapshot, an append-only journal, and a lock.

``memory.json`` is the snapshot, a JSON array in the article's format. Every change after it is a
line appended to ``memory.journal``:

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

Compaction writes a new snapshot atomically, then swaps in an empty journal (a new inode). Other
processes notice either change by ``stat`` on their next operation, under the lock, and reload.

A journal line that does not parse is skipped (the journal's bytes are first copied aside); an
incomplete last line (a crash mid-append, the zeros a power cut leaves) was never acknowledged
and is cut off, its bytes kept in ``memory.journal.torn-<time>`` first. Only under the lock: a
reader without it may be looking at another process's append in progress.

Opening a namespace removes the temporary files that compactions killed mid-write left behind
(``files.remove_stale_temporaries``): compaction runs under the lock, so while we hold it no
temporary of ``memory.json`` or ``memory.journal`` has a writer, whichever pid is in its name.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memory.errors import MemoryLoadFailed, MemorySaveFailed
from memory.files import (
    FileLock,
    append_bytes,
    dump_json,
    fsync_dir,
    parse_json,
    quarantine,
    remove_stale_temporaries,
    write_bytes_atomic,
)

log = logging.getLogger(__name__)

SNAPSHOT = "memory.json"
JOURNAL = "memory.journal"
LOCK = ".lock"

_Signature = tuple[int, int, int]  # inode, mtime_ns, size


@dataclass
class Change:
    """What ``poll`` found on disk since the last look."""

    reload: bool = False
    snapshot: list[Any] = field(default_factory=list)  # records, when reload
    entries: list[dict[str, Any]] = field(default_factory=list)  # journal lines to apply
    quarantined: list[Path] = field(default_factory=list)
    # The snapshot is byte for byte the one the last compaction wrote (its signature is in the
    # journal's first line), so its records need no validation: nobody has edited it since.
    trusted: bool = False


def _signature(path: Path) -> _Signature | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


class NamespaceFiles:
    """Reads and writes one namespace folder; callers hold ``lock`` around every call."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.snapshot_path = folder / SNAPSHOT
        self.journal_path = folder / JOURNAL
        self.lock = FileLock(folder / LOCK)
        self.journal_lines = 0  # lines in the journal since the last compaction
        self._snapshot_sig: _Signature | None = None
        self._journal_ino: int | None = None
        self._journal_offset = 0
        self._fd: int | None = None
        self._loaded = False

    def ensure_folder(self) -> None:
        """Create the namespace folder (``MemorySaveFailed`` if the disk refuses)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise MemorySaveFailed(
                f"could not create {self.folder}: {e.strerror or e}", path=self.folder
            ) from e

    def poll(self) -> Change:
        """What changed on disk since the last ``poll``: everything on the first call."""
        sig = _signature(self.snapshot_path)
        try:
            st = os.stat(self.journal_path)
            ino, size = st.st_ino, st.st_size
        except FileNotFoundError:
            ino, size = None, 0
        if (
            not self._loaded
            or sig != self._snapshot_sig
            or ino != self._journal_ino
            or size < self._journal_offset
        ):
            return self._load_all()
        if size == self._journal_offset:
            return Change()
        change = Change()
        change.entries = self._read_journal(self._journal_offset, change)
        return change

    def _load_all(self) -> Change:
        change = Change(reload=True)
        self._close_fd()
        if not self._loaded and self.lock.held:
            remove_stale_temporaries(self.folder, locked=frozenset({SNAPSHOT, JOURNAL}))
        try:
            with open(self.snapshot_path, "rb") as f:
                st = os.fstat(f.fileno())
                self._snapshot_sig = (st.st_ino, st.st_mtime_ns, st.st_size)
                data: bytes | None = f.read()
        except FileNotFoundError:
            self._snapshot_sig, data = None, None
        except OSError as e:
            raise MemoryLoadFailed(
                f"could not read {self.snapshot_path}: {e}", path=self.snapshot_path
            ) from e
        if data is not None:
            try:
                records = parse_json(data)
                if not isinstance(records, list):
                    raise ValueError("memory.json must hold a JSON array")
            except ValueError:
                # The article resets to [] here and overwrites the file on the next save.
                change.quarantined.append(quarantine(self.snapshot_path))
                records = []
                self._snapshot_sig = None
            change.snapshot = records
        try:
            st = os.stat(self.journal_path)
            self._journal_ino = st.st_ino
        except FileNotFoundError:
            self._journal_ino = None
        self._journal_offset = 0
        self.journal_lines = 0
        change.entries = self._read_journal(0, change)
        if change.entries and self._snapshot_sig is not None:
            header = change.entries[0]
            change.trusted = header.get("op") == "high" and header.get("snapshot") == list(
                self._snapshot_sig
            )
        self._loaded = True
        return change

    def _read_journal(self, offset: int, change: Change) -> list[dict[str, Any]]:
        try:
            with open(self.journal_path, "rb") as f:
                f.seek(offset)
                data = f.read()
        except FileNotFoundError:
            return []
        except OSError as e:
            raise MemoryLoadFailed(
                f"could not read {self.journal_path}: {e}", path=self.journal_path
            ) from e
        complete = data.rfind(b"\n") + 1
        if complete < len(data) and self.lock.held:
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
            kept = self.copy_aside(self.journal_path)
            change.quarantined.append(kept)
            log.warning("%d unreadable lines in %s; a copy is in %s", bad, self.journal_path, kept)
        self._journal_offset = offset + complete
        self.journal_lines += len(entries)
        return entries

    def copy_aside(self, path: Path) -> Path:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        target = path.with_name(f"{path.name}.corrupt-{stamp}")
        try:
            shutil.copyfile(path, target)
        except OSError as e:
            raise MemoryLoadFailed(f"could not copy {path} aside: {e}", path=path) from e
        return target

    def _cut_torn_tail(self, size: int, tail: bytes) -> None:
        """Cut the journal back to ``size``, keeping the ``tail`` beyond it in a file beside it.

        The next append must not glue onto those bytes, so the journal is cut even if they
        cannot be kept (a full disk); then the log has them.
        """
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
        kept = self.journal_path.with_name(f"{self.journal_path.name}.torn-{stamp}")
        try:
            write_bytes_atomic(kept, tail)
        except MemorySaveFailed as e:
            log.warning(
                "cutting an incomplete last line of %d bytes off %s; it could not be kept (%s): %r",
                len(tail),
                self.journal_path,
                e.message,
                tail[:2000],
            )
        else:
            log.warning(
                "cut an incomplete last line of %d bytes off %s (a crash mid-write); "
                "its bytes are in %s",
                len(tail),
                self.journal_path,
                kept,
            )
        self._truncate(size)

    def _truncate(self, size: int) -> None:
        try:
            os.truncate(self.journal_path, size)
        except OSError as e:
            log.warning("could not cut the incomplete end of %s: %s", self.journal_path, e)

    def append(self, entries: list[dict[str, Any]], *, durable: bool) -> None:
        """Append journal lines; with ``durable``, fsynced before returning.

        On failure the journal is cut back to its previous length, so a half-written line
        never precedes the next append, and ``MemorySaveFailed`` is raised.
        """
        data = b"".join(
            json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for e in entries
        )
        try:
            if self._fd is None:
                self.ensure_folder()
                self._fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
                st = os.fstat(self._fd)
                if self._journal_ino != st.st_ino:  # we just created it
                    self._journal_ino = st.st_ino
                    fsync_dir(self.folder)
            append_bytes(self._fd, data, durable=durable)
        except OSError as e:
            if self._fd is not None:
                self._truncate(self._journal_offset)
                self._close_fd()
            raise MemorySaveFailed(
                f"could not save to {self.journal_path}: {e.strerror or e}", path=self.journal_path
            ) from e
        self._journal_offset += len(data)
        self.journal_lines += len(entries)

    def compact(self, records: list[dict[str, Any]], high_id: int) -> None:
        """Write ``records`` as the new snapshot, then start a journal holding only ``high_id``.

        The highest id ever used survives in the new journal's first line, so an id freed by
        a delete is not handed out again after a restart.
        """
        write_bytes_atomic(self.snapshot_path, dump_json(records))
        self._snapshot_sig = _signature(self.snapshot_path)
        self._close_fd()
        snapshot = list(self._snapshot_sig or ())
        header = json.dumps({"op": "high", "id": high_id, "snapshot": snapshot}).encode() + b"\n"
        write_bytes_atomic(self.journal_path, header)
        st = os.stat(self.journal_path)
        self._journal_ino = st.st_ino
        self._journal_offset = len(header)
        self.journal_lines = 0

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def release(self) -> None:
        """Close every file; the next ``poll`` reads everything again."""
        self._close_fd()
        self.lock.close()
        self._loaded = False
