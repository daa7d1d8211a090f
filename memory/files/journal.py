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

A person may edit ``memory.json`` while the store runs. A new signature of the snapshot that no
compaction wrote (the journal's header names the one it did) is such an edit: ``poll`` hands its
records over to be merged (``memory.files.handedit``), never taken wholesale. A file that does not
parse, or is missing, may be a save in progress: it is read once settled, and set aside and
watched if it still does not parse (``memory.files.watch``); whoever holds the namespace keeps
serving what it holds and writes it back. The watched files are named in the journal's first
line (``"watch"``), so that the next process to open the namespace merges one that was finished
after the process that set it aside had gone.
Compaction never replaces a ``memory.json`` it has not read (``replace_checked``): a file saved
over it meanwhile is kept and merged. Compaction also keeps a copy of what it wrote,
``memory.journal.base``, the snapshot the journal follows, so that a process that did not hold
the namespace when the person saved can still tell their changes from the store's.

A journal line that does not parse is skipped (the journal's bytes are first copied aside); an
incomplete last line (a crash mid-append, the zeros a power cut leaves) was never acknowledged
and is cut off, its bytes kept in ``memory.journal.torn-<time>`` first. Only under the lock: a
reader without it may be looking at another process's append in progress.

Opening a namespace removes the temporary files that compactions killed mid-write left behind
(``memory.files.io.remove_stale_temporaries``): compaction runs under the lock, so while we
hold it no temporary of ``memory.json`` or ``memory.journal`` has a writer, whichever pid is in
its name.
The one exception is written outside the lock on purpose: a snapshot written ahead (``prepare``,
``.memory.json.compacting.*``, swapped in under the lock by ``compact``), removed only once its
writer is gone. Lines appended between ``mark`` and the swap stay in the new journal.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.errors import MemoryLoadFailed, MemorySaveFailed
from memory.files.io import (
    FileLock,
    append_bytes,
    beside,
    copy_aside,
    fsync_dir,
    quarantine,
    remove_stale_temporaries,
    write_bytes_atomic,
    write_temporary,
)
from memory.files.swap import Status, digest, open_for_writing, replace_checked, settled_status
from memory.files.watch import Signature, Watch, read_settled, signature
from memory.jsontext import dump_json, dump_records, parse_json

log = logging.getLogger(__name__)

SNAPSHOT = "memory.json"
JOURNAL = "memory.journal"
LOCK = ".lock"
BASE = "memory.journal.base"


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
    # A person's edit to merge into what is held (not to take wholesale): its records, the
    # time it was saved (epoch seconds), and with ``base`` (on a reload) the records of the
    # snapshot the journal follows, to load first. ``source`` is a file to remove once merged.
    edited: list[Any] | None = None
    edited_at: float = 0.0
    base: bool = False
    source: Path | None = None
    # memory.json could not be read (not JSON, or gone) and what is held stays: write it back.
    broken: bool = False


@dataclass(frozen=True)
class Mark:
    """Where a namespace's files stood when its memories were copied for compaction."""

    journal_ino: int | None
    offset: int
    snapshot_digest: str | None


@dataclass(frozen=True)
class Prepared:
    """A snapshot written ahead to a temporary file, outside the lock, to swap in later.

    ``base`` is a second temporary holding the same bytes, to become ``memory.journal.base``
    (``None`` if it could not be written: then it is written at the swap).
    """

    data: bytes
    tmp: Path
    mark: Mark
    digest: str
    base: Path | None
    settled: Status | None  # memory.json's status when read ahead (``swap.settled_status``)


class NamespaceFiles:
    """Reads and writes one namespace folder; callers hold ``lock`` around every call."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.snapshot_path = folder / SNAPSHOT
        self.journal_path = folder / JOURNAL
        self.lock = FileLock(folder / LOCK)
        self.journal_lines = 0  # lines in the journal since the last compaction
        self._snapshot_sig: Signature | None = None
        self._snapshot_digest: str | None = None  # of the bytes last read or written there
        self.pending: list[Path] = []  # files a person saved that compaction displaced
        self.kept: list[Path] = []  # unreadable files set aside by compaction, to be told
        self._broken = False  # memory.json does not parse: compaction sets it aside
        # Unreadable files set aside, oldest first: an editor may still be writing into one
        # (an in-place save); it is merged once it parses. Named in the journal's first line.
        self._watch = Watch(self.snapshot_path)
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
        sig = signature(self.snapshot_path)
        try:
            st = os.stat(self.journal_path)
            ino, size = st.st_ino, st.st_size
        except FileNotFoundError:
            ino, size = None, 0
        if not self._loaded or ino != self._journal_ino or size < self._journal_offset:
            return self._load_all()  # first use, or another process compacted
        change = Change()
        if size > self._journal_offset:
            change.entries = self._read_journal(self._journal_offset, change)
        self._watch.take(self.pending)
        if self.pending:  # saved before memory.json last changed: merged first
            self._read_edit(self.pending[0], change)
        elif sig != self._snapshot_sig:
            self._read_edit(self.snapshot_path, change)
        return change

    @property
    def snapshot_mtime(self) -> float:
        """When the snapshot last read or written was written (epoch seconds; 0: none)."""
        return self._snapshot_sig[1] / 1e9 if self._snapshot_sig else 0.0

    def _read_edit(self, path: Path, change: Change) -> None:
        """Read a file a person saved (``memory.json``, or one compaction displaced)."""
        data, sig, records = read_settled(path)
        displaced = path != self.snapshot_path
        watched = self._watch.drop(path)  # set aside unreadable, written into since
        if records is not None:
            change.edited, change.edited_at = records, sig[1] / 1e9 if sig else time.time()
            if watched is not None:
                # Saved as its first bytes were, before it was set aside: the person read a
                # snapshot older than the store's copy written back over it.
                change.edited_at = watched.saved
            if displaced:  # merged once; removed once memory.json holds it (``done_with``)
                if watched is None or path.name.startswith(f"{SNAPSHOT}.saved-"):
                    change.source = path  # a watched corrupt- file stays where it was told
                self.pending.remove(path)
            else:
                self._snapshot_sig, self._snapshot_digest = sig, digest(data or b"")
                self._broken = False  # repaired before it was set aside
            return
        if watched is not None:  # still unreadable: watched on, and told already
            self.pending.remove(path)
            if data is not None:
                self._watch.add(path, sig, watched.saved)
            return
        change.broken = True
        if displaced:
            self.pending.remove(path)  # kept where it is, watched, and told
            if data is not None:
                self._watch.add(path, sig)
                change.quarantined.append(path)
            return
        self._snapshot_sig = sig
        self._snapshot_digest = None if data is None else digest(data)
        self._broken = data is not None

    def done_with(self, path: Path) -> None:
        """Remove a displaced file once merged: its changes are in ``memory.json`` now."""
        try:
            path.unlink()
        except OSError as e:
            log.warning("could not remove %s, merged into %s: %s", path, SNAPSHOT, e)

    def _load_all(self) -> Change:
        change = Change(reload=True)
        self._close_fd()
        if not self._loaded and self.lock.held:
            remove_stale_temporaries(self.folder, locked=frozenset({SNAPSHOT, JOURNAL}))
        # Files a person saved while compaction replaced memory.json, not merged yet (this
        # process or another stopped first): merged after this load, oldest first.
        found = sorted(self.folder.glob(f"{SNAPSHOT}.saved-*"))
        self.pending = [*dict.fromkeys([*self.pending, *found])]
        # A namespace never written has neither file: nobody is half-way through saving it.
        ever_written = self.journal_path.exists() or any(self.folder.glob(f"{SNAPSHOT}*"))
        data, self._snapshot_sig, records = read_settled(self.snapshot_path, expected=ever_written)
        self._snapshot_digest = None if data is None else digest(data)
        if data is not None and records is None:
            # The article resets to [] here and overwrites the file on the next save.
            change.broken = True
        change.snapshot = records or []
        try:
            st = os.stat(self.journal_path)
            self._journal_ino = st.st_ino
        except FileNotFoundError:
            self._journal_ino = None
        self._journal_offset = 0
        self.journal_lines = 0
        change.entries = self._read_journal(0, change)
        header = change.entries[0] if change.entries else {}
        if header.get("op") != "high":
            header = {}
        # What the last compaction (by any process) watched; those written into since it set
        # them aside are merged after this load. Its list, not ours: one merged by another
        # process is not named any more, and must not be merged twice.
        self._watch.read(header)
        unchanged = self._watch.unchanged()
        self.pending = [path for path in self.pending if path not in unchanged]
        self._watch.take(self.pending)
        if self._snapshot_sig is not None:
            change.trusted = header.get("snapshot") == list(self._snapshot_sig) or (
                "digest" in header and header["digest"] == self._snapshot_digest
            )
        if data is not None and not change.trusted and "digest" in header:
            # memory.json is not what the last compaction wrote: a person's edit, or broken.
            base = self._read_base(str(header["digest"]))
            if base is not None:
                if records is not None:
                    change.edited, change.edited_at = records, self._snapshot_sig[1] / 1e9  # type: ignore[index]
                change.snapshot, change.trusted, change.base = base, True, True
        if change.broken:
            if change.base:
                self._broken = True
            else:
                kept = quarantine(self.snapshot_path)  # a rename: an editor writes on into it
                change.quarantined.append(kept)
                self._watch.add(kept, self._snapshot_sig)
                self._snapshot_sig = self._snapshot_digest = None
                # What is held came from the journal alone; written back all the same, so that
                # the journal's first line names the file watched (for the next process).
        self._loaded = True
        return change

    def _read_base(self, expected: str) -> list[Any] | None:
        """The snapshot the journal follows, from its copy, if the copy is intact."""
        try:
            data = (self.folder / BASE).read_bytes()
        except OSError:
            return None
        if digest(data) != expected:
            return None
        try:
            records = parse_json(data)
        except (UnicodeDecodeError, ValueError):
            return None
        return records if isinstance(records, list) else None

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
            kept = copy_aside(self.journal_path)
            change.quarantined.append(kept)
            log.warning("%d unreadable lines in %s; a copy is in %s", bad, self.journal_path, kept)
        self._journal_offset = offset + complete
        self.journal_lines += len(entries)
        return entries

    def _cut_torn_tail(self, size: int, tail: bytes) -> None:
        """Cut the journal back to ``size``, keeping the ``tail`` beyond it in a file beside it.

        The next append must not glue onto those bytes, so the journal is cut even if they
        cannot be kept (a full disk); then the log has them.
        """
        kept = beside(self.journal_path, "torn")
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
            if os.stat(self.journal_path).st_size <= size:
                return  # nothing was written past it: nothing to cut
            os.truncate(self.journal_path, size)
        except OSError as e:
            log.warning(
                "an incomplete line may remain at the end of %s (the next load cuts it): %s",
                self.journal_path,
                e,
            )

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

    def mark(self) -> Mark:
        """Where the journal and the snapshot stand now (under the lock): see ``prepare``."""
        return Mark(self._journal_ino, self._journal_offset, self._snapshot_digest)

    def prepare(
        self,
        records: Iterable[dict[str, Any]],
        mark: Mark,
        *,
        pause: Callable[[], None] | None = None,
    ) -> Prepared:
        """Write ``records``, the memories held at ``mark``, to a temporary file: no lock needed.

        ``compact(..., prepared)`` swaps it in later, under the lock, if it is still current.
        Everything that costs time is done here: the layout (``pause`` is called between its
        slices, see ``memory.jsontext.dump_records``), the digest, the writes and their fsyncs,
        the copy that becomes ``memory.journal.base``, and reading back the ``memory.json`` it
        replaces (``memory.files.swap.settled_status``); the swap is left renames and the new
        journal.
        """
        data = dump_records(records, pause=pause)
        settled = None
        if mark.snapshot_digest is not None:
            settled = settled_status(self.snapshot_path, mark.snapshot_digest)
        tmp = write_temporary(self.snapshot_path, data, "compacting")
        try:
            # Not fsynced, as ever (a convenience): flushing the whole copy holds up adds.
            base: Path | None = write_temporary(
                self.folder / BASE, data, "compacting", durable=False
            )
        except MemorySaveFailed:
            base = None  # written at the swap, as without a prepared snapshot
        return Prepared(data, tmp, mark, digest(data), base, settled)

    def current(self, prepared: Prepared) -> bool:
        """Whether ``prepared`` can still be swapped in (under the lock, after ``poll``).

        Not if another process compacted meanwhile, or memory.json is not the one it followed.
        """
        mark = prepared.mark
        return (
            mark.journal_ino == self._journal_ino
            and mark.offset <= self._journal_offset
            and mark.snapshot_digest == self._snapshot_digest
            and not self._broken
            and not self.pending
        )

    def discard(self, prepared: Prepared) -> None:
        """Remove the temporary files of a ``prepared`` snapshot that will not be used."""
        for path in (prepared.tmp, prepared.base):
            if path is None:
                continue
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            except OSError as e:
                log.warning("could not remove the temporary file %s: %s", path, e)

    def compact(
        self, records: list[dict[str, Any]], high_id: int, prepared: Prepared | None = None
    ) -> bool:
        """Write ``records`` as the new snapshot, then start a journal holding only ``high_id``.

        The highest id ever used survives in the new journal's first line, so an id freed by
        a delete is not handed out again after a restart.

        With ``prepared`` (``current``), its file is swapped in instead, and the journal lines
        appended since its ``mark`` stay in the new journal, after its first line.

        False, with nothing written, if ``memory.json`` changed since it was last read: poll,
        merge, and compact again. A file saved over it at the last moment is displaced, kept
        in ``pending``, and merged by the next ``poll``.
        """
        tail = b""
        if prepared is not None:
            data, new_digest = prepared.data, prepared.digest
            try:
                with open(self.journal_path, "rb") as f:
                    f.seek(prepared.mark.offset)
                    tail = f.read(self._journal_offset - prepared.mark.offset)
            except FileNotFoundError:
                tail = b""
            except OSError as e:
                self.discard(prepared)
                raise MemorySaveFailed(
                    f"could not read {self.journal_path}: {e}", path=self.journal_path
                ) from e
        else:
            data = dump_json(records)
            new_digest = digest(data)
        aside = beside(self.snapshot_path, "corrupt" if self._broken else "saved")
        try:
            found = replace_checked(
                self.snapshot_path,
                data,
                self._snapshot_digest,
                aside,
                keep=True,  # the file replaced is looked at below, at ``aside``
                written=prepared.tmp if prepared is not None else None,
                settled=prepared.settled if prepared is not None else None,
            )
        except MemorySaveFailed:
            if prepared is not None:
                self.discard(prepared)  # its snapshot's temporary is gone already
            raise
        if found == self.snapshot_path:
            if prepared is not None:
                self.discard(prepared)
            return False
        broken, self._broken = self._broken, False
        if broken and found is None:
            # The unreadable file, kept whole at its own name; watched, in case an editor was
            # still writing into it (an in-place save): the rest is merged when it parses.
            log.warning("%s does not parse; it was kept as %s", SNAPSHOT, aside)
            self.kept.append(aside)
            # Its signature as read, which the swap checked (the digest) and kept (inode,
            # mtime, size): an editor's write after the swap, however soon, changes it.
            self._watch.add(aside, self._snapshot_sig)
        elif self._snapshot_digest is not None and found is None:
            # The snapshot replaced, as expected. An editor that opened it before the swap may
            # still write into it (an in-place save): then it is watched, merged if written
            # into, and removed once closed unchanged. Asked first: once closed, it stays.
            writing = open_for_writing(aside)
            if signature(aside) != self._snapshot_sig:
                found = aside  # written into since the swap checked it
            elif writing:
                self._watch.add(aside, self._snapshot_sig)
            else:
                self._watch.remove(aside)
        if found is not None:
            log.warning("%s was saved while being replaced; kept in %s, to merge", SNAPSHOT, found)
            self.pending.append(found)
        self._snapshot_sig = signature(self.snapshot_path)
        self._snapshot_digest = new_digest
        self._keep_base(data, prepared.base if prepared is not None else None)
        self._close_fd()
        header_entry = {
            "op": "high",
            "id": high_id,
            "snapshot": list(self._snapshot_sig or ()),
            "digest": self._snapshot_digest,
        }
        watched = self._watch.header()
        if watched:
            header_entry["watch"] = watched
        header = json.dumps(header_entry).encode() + b"\n"
        write_bytes_atomic(self.journal_path, header + tail)
        st = os.stat(self.journal_path)
        self._journal_ino = st.st_ino
        self._journal_offset = len(header) + len(tail)
        self.journal_lines = tail.count(b"\n")
        return True

    def _keep_base(self, data: bytes, written: Path | None) -> None:
        """Make ``data``, the snapshot just swapped in, ``memory.journal.base``; ``written``, a
        temporary already holding it, is renamed. Only a convenience: merging a later hand
        edit is less exact without it, so a failure is logged."""
        path = self.folder / BASE
        if written is not None:
            try:
                os.replace(written, path)
                return
            except OSError as e:
                log.warning("could not keep a copy of %s: %s", SNAPSHOT, e)
                with contextlib.suppress(OSError):  # the copy may be gone; nothing of anyone's
                    written.unlink()
                return
        try:
            write_bytes_atomic(path, data, durable=False)
        except MemorySaveFailed as e:
            log.warning("could not keep a copy of %s: %s", SNAPSHOT, e.message)

    def idle(self) -> None:
        """Close the journal's append descriptor between operations (reopened by ``append``)."""
        self._close_fd()

    def _close_fd(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def release(self) -> None:
        """Close every file; the next ``poll`` reads everything again."""
        self._close_fd()
        self.lock.close()
        self._loaded = False
