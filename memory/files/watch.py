"""Files a person may still be saving: read once settled, and watched once set aside.

A ``memory.json`` that does not parse, or is missing, may be a save in progress: it is read
again after short pauses while it keeps changing (``read_settled``), and only then copied
aside. No wait is long enough for every editor, so a file set aside that way is watched
(``Watch``): the swap keeps its inode, an editor still writing into it (an in-place save) writes
into the file set aside, and once it parses it is merged like any other save, as saved when its
first bytes were (before the store's copy was written back over it). Likewise the snapshot that
compaction replaces, if a process holds it open for writing (an editor that opened
``memory.json`` before the swap): kept as ``memory.json.saved-<time>`` and watched, merged once
written into, removed once closed unwritten. The journal's first line names the files watched
(``memory.files.folder``), so that the next process to open the namespace watches them on.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.errors import MemoryLoadFailed
from memory.files.swap import open_for_writing
from memory.jsontext import parse_json

log = logging.getLogger(__name__)

PAUSE = 0.1  # seconds between reads of a file that does not parse (a save in progress?)
PAUSES = 20  # at most this many pauses, while the file keeps changing
STABLE = 2  # pauses with the file unchanged after which it is taken as it is
WATCHED = 16  # at most this many unreadable files set aside are watched, the newest

Signature = tuple[int, int, int]  # inode, mtime_ns, size


def signature(path: Path) -> Signature | None:
    """The inode, modification time and size of ``path`` (None if there is no such file)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def read_settled(
    path: Path, *, expected: bool = True
) -> tuple[bytes | None, Signature | None, Any]:
    """The bytes of ``path``, its signature and its records (``None`` if not a JSON array).

    A file that does not parse, or is missing, is read again after a pause while it keeps
    changing: an editor may be half-way through an in-place save. A missing file that is not
    ``expected`` (a namespace that has never been written) is taken as missing at once.
    """
    stable, last = 0, None
    for _ in range(PAUSES + 1):
        try:
            with open(path, "rb") as f:
                st = os.fstat(f.fileno())
                sig: Signature | None = (st.st_ino, st.st_mtime_ns, st.st_size)
                data: bytes | None = f.read()
        except FileNotFoundError:
            if not expected:
                return None, None, None
            sig, data = None, None
        except OSError as e:
            raise MemoryLoadFailed(f"could not read {path}: {e}", path=path) from e
        if data is not None:
            try:
                records = parse_json(data)
                if isinstance(records, list):
                    return data, sig, records
            except (UnicodeDecodeError, ValueError):
                pass  # not (yet) JSON: read again below
        stable = stable + 1 if (sig, data) == last else 0
        if stable >= STABLE:
            break
        last = (sig, data)
        time.sleep(PAUSE)
    return data, sig, None


@dataclass(frozen=True)
class Watched:
    """An unreadable file set aside, that an editor may still be writing into."""

    path: Path
    seen: Signature | None  # as last read: any write since changes it
    saved: float  # when its save began (epoch seconds): its mtime when set aside

    def to_json(self) -> dict[str, Any]:
        return {"name": self.path.name, "seen": list(self.seen or ()), "saved": self.saved}


class Watch:
    """The files set aside beside one ``snapshot`` (``memory.json``) that are watched, oldest
    first."""

    def __init__(self, snapshot: Path) -> None:
        self.snapshot = snapshot
        self.files: list[Watched] = []

    def remove(self, path: Path) -> None:
        """Remove ``path``, a copy of the snapshot nobody needs any more (logged if it cannot)."""
        try:
            path.unlink()
        except FileNotFoundError:
            return
        except OSError as e:
            log.warning("could not remove %s, a copy of %s: %s", path, self.snapshot.name, e)

    def add(self, path: Path, seen: Signature | None, saved: float | None = None) -> None:
        """Watch ``path``, an unreadable file set aside, as read (``seen``)."""
        if saved is None:
            saved = seen[1] / 1e9 if seen else time.time()
        self.files = [*self.files[1 - WATCHED :], Watched(path, seen, saved)]

    def take(self, pending: list[Path]) -> None:
        """Queue in ``pending`` the files written into since they were last read, to be
        merged; stop watching those removed, and remove the store's own copies closed
        unwritten."""
        watch = []
        for watched in self.files:
            # Asked first: once nobody holds it open for writing, it can change no more.
            replaced = watched.path.name.startswith(f"{self.snapshot.name}.saved-")
            writing = open_for_writing(watched.path) if replaced else None
            now = signature(watched.path)
            if now is None:
                continue  # removed (by the person): nothing left to merge
            if replaced and writing is False and now == watched.seen:
                self.remove(watched.path)  # the store's own copy, closed unwritten
                continue
            watch.append(watched)
            if now != watched.seen and watched.path not in pending:
                pending.append(watched.path)
        self.files = watch

    def drop(self, path: Path) -> Watched | None:
        """Stop watching ``path``; how it was watched, if it was."""
        found = next((watched for watched in self.files if watched.path == path), None)
        self.files = [watched for watched in self.files if watched.path != path]
        return found

    def unchanged(self) -> set[Path]:
        """The files watched that nobody has written into since they were read."""
        return {watched.path for watched in self.files if signature(watched.path) == watched.seen}

    def read(self, header: dict[str, Any]) -> None:
        """Watch the files the journal's first line names: files beside memory.json only."""
        entries = header.get("watch")
        watch = []
        for entry in entries[-WATCHED:] if isinstance(entries, list) else []:
            name = entry.get("name") if isinstance(entry, dict) else None
            if not isinstance(name, str) or Path(name).name != name:
                continue  # not a file this store set aside: never read from elsewhere
            if not name.startswith(f"{self.snapshot.name}."):
                continue
            seen, saved = entry.get("seen"), entry.get("saved")
            ok = isinstance(seen, list) and len(seen) == 3 and all(type(v) is int for v in seen)
            watch.append(
                Watched(
                    self.snapshot.with_name(name),
                    (seen[0], seen[1], seen[2]) if ok else None,
                    float(saved) if type(saved) in (int, float) else 0.0,
                )
            )
        self.files = watch

    def header(self) -> list[dict[str, Any]]:
        """What the journal's first line names: the files watched that still exist."""
        self.files = [watched for watched in self.files if watched.path.exists()]
        return [watched.to_json() for watched in self.files]
