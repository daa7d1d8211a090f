"""A record log as a file: one JSON record a line, ``<folder>/<name>.jsonl``.

The file backend of ``memory.interface.RecordLog`` (the bot's ``inbox.jsonl`` and
``poison.jsonl`` in ``data/.bot/``). Appends go through one file descriptor opened with
``O_APPEND`` and kept open, written without an fsync; ``sync`` is one ``fdatasync`` for all of
them. A new file's folder entry is fsynced once, when the file is created, so that a synced
record is never in a file that a power cut forgets. An append that fails (a full disk) is cut
back to where the file ended, so a half line never spoils the next one; a line a crash cut
short is skipped by ``read``. ``rewrite`` replaces the file atomically and durably
(``memory.files.io.write_bytes_atomic``); ``read`` first removes the temporaries of rewrites a
kill interrupted (``memory.files.io.remove_stale_temporaries``).

One process writes a log; nothing here locks it against a second one.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory.documents import validate_key
from memory.errors import MemoryInvalid, MemoryLoadFailed, MemorySaveFailed
from memory.files.io import append_bytes, fsync_dir, remove_stale_temporaries, write_bytes_atomic
from memory.jsontext import parse_json

SUFFIX = ".jsonl"


def _line(record: Any) -> bytes:
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as e:
        raise MemoryInvalid(f"a record is not JSON: {e}", field="record") from e
    return text.encode() + b"\n"


class FileRecordLog:
    """The log ``name`` in ``folder``: ``folder/<name>.jsonl``."""

    def __init__(self, folder: Path, name: str) -> None:
        self.name = validate_key(name)
        self.path = folder / (name.replace("/", ".") + SUFFIX)
        self._fd: int | None = None
        self._unsynced = False

    def read(self) -> list[Any]:
        """Every whole record, oldest first."""
        remove_stale_temporaries(self.path.parent)  # rewrites a kill interrupted
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as e:
            raise MemoryLoadFailed(
                f"could not read {self.path}: {e.strerror or e}", path=self.path
            ) from e
        records = []
        for line in data.splitlines():
            try:
                records.append(parse_json(line))
            except ValueError:
                continue  # an append cut short by a crash: never acknowledged
        return records

    def append(self, record: Any, *, durable: bool = False) -> None:
        """Add ``record`` at the end; nothing of it stays if that fails."""
        data = _line(record)
        size: int | None = None
        try:
            fd = self._open()
            size = os.lseek(fd, 0, os.SEEK_END)
            append_bytes(fd, data, durable=durable)
        except OSError as e:
            if self._fd is not None and size is not None:
                with contextlib.suppress(OSError):  # a full disk can still shrink a file
                    os.ftruncate(self._fd, size)
            self.close()
            raise MemorySaveFailed(
                f"could not write {self.path}: {e.strerror or e}", path=self.path
            ) from e
        self._unsynced = not durable

    def sync(self) -> None:
        """Make every record appended so far durable."""
        if not self._unsynced or self._fd is None:
            return
        self._unsynced = False
        try:
            os.fdatasync(self._fd)
        except OSError as e:
            self.close()
            raise MemorySaveFailed(
                f"could not sync {self.path}: {e.strerror or e}", path=self.path
            ) from e

    def rewrite(self, records: Sequence[Any]) -> None:
        """Replace the file with ``records``, atomically and durably."""
        data = b"".join(_line(record) for record in records)
        self.close()
        write_bytes_atomic(self.path, data)

    def close(self) -> None:
        """Close the file (reopened by the next append)."""
        self._unsynced = False
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def _open(self) -> int:
        if self._fd is None:
            new = not self.path.exists()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            if new:
                fsync_dir(self.path.parent)
        return self._fd
