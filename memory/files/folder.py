"""The files of one namespace: a snapshot, an append-only journal, and a lock.

``memory.json`` is the snapshot, a JSON array in the article's format; every change after it
is a line of the journal (``memory.files.journal``, which also says why replaying one is
safe). ``NamespaceFiles`` reads both (``poll``) and writes a new snapshot (``compact``).

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

Opening a namespace removes the temporary files that compactions killed mid-write left behind
(``memory.files.io.remove_stale_temporaries``): compaction runs under the lock, so while we
hold it no temporary of ``memory.json`` or ``memory.journal`` has a writer, whichever pid is in
its name.
The one exception is written outside the lock on purpose: a snapshot written ahead (``prepare``,
``.memory.json.compacting.*``, ``memory.files.compaction``, swapped in under the lock by
``compact``), removed only once its writer is gone. Lines appended between ``mark`` and the
swap stay in the new journal.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory.errors import MemorySaveFailed
from memory.files.compaction import Mark, Prepared, discard, keep_base, write_ahead
from memory.files.io import FileLock, beside, make_folder, quarantine, remove_stale_temporaries
from memory.files.journal import JOURNAL, Journal
from memory.files.swap import digest, open_for_writing, replace_checked
from memory.files.watch import Signature, Watch, read_settled, signature
from memory.jsontext import dump_json, parse_json

log = logging.getLogger(__name__)

SNAPSHOT = "memory.json"
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


class NamespaceFiles:
    """Reads and writes one namespace folder; callers hold ``lock`` around every call."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.snapshot_path = folder / SNAPSHOT
        self.lock = FileLock(folder / LOCK)
        self.journal = Journal(folder, self.lock)
        self._snapshot_sig: Signature | None = None
        self._snapshot_digest: str | None = None  # of the bytes last read or written there
        self.pending: list[Path] = []  # files a person saved that compaction displaced
        self.kept: list[Path] = []  # unreadable files set aside by compaction, to be told
        self._broken = False  # memory.json does not parse: compaction sets it aside
        # Unreadable files set aside, oldest first: an editor may still be writing into one
        # (an in-place save); it is merged once it parses. Named in the journal's first line.
        self._watch = Watch(self.snapshot_path)
        self._loaded = False

    def ensure_folder(self) -> None:
        """Create the namespace folder (``MemorySaveFailed`` if the disk refuses)."""
        make_folder(self.folder)

    def poll(self) -> Change:
        """What changed on disk since the last ``poll``: everything on the first call."""
        sig = signature(self.snapshot_path)
        ino, size = self.journal.stat()
        if not self._loaded or ino != self.journal.ino or size < self.journal.offset:
            return self._load_all()  # first use, or another process compacted
        change = Change()
        if size > self.journal.offset:
            change.entries = self.journal.read(self.journal.offset, change.quarantined)
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
        self.journal.close()
        if not self._loaded and self.lock.held:
            remove_stale_temporaries(self.folder, locked=frozenset({SNAPSHOT, JOURNAL}))
        # Files a person saved while compaction replaced memory.json, not merged yet (this
        # process or another stopped first): merged after this load, oldest first.
        found = sorted(self.folder.glob(f"{SNAPSHOT}.saved-*"))
        self.pending = [*dict.fromkeys([*self.pending, *found])]
        # A namespace never written has neither file: nobody is half-way through saving it.
        ever_written = self.journal.path.exists() or any(self.folder.glob(f"{SNAPSHOT}*"))
        data, self._snapshot_sig, records = read_settled(self.snapshot_path, expected=ever_written)
        self._snapshot_digest = None if data is None else digest(data)
        if data is not None and records is None:
            # The article resets to [] here and overwrites the file on the next save.
            change.broken = True
        change.snapshot = records or []
        self.journal.rewind()
        change.entries = self.journal.read(0, change.quarantined)
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

    def mark(self) -> Mark:
        """Where the journal and the snapshot stand now (under the lock): see ``prepare``."""
        return Mark(self.journal.ino, self.journal.offset, self._snapshot_digest)

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
        return write_ahead(self.snapshot_path, self.folder / BASE, records, mark, pause=pause)

    def current(self, prepared: Prepared) -> bool:
        """Whether ``prepared`` can still be swapped in (under the lock, after ``poll``).

        Not if another process compacted meanwhile, or memory.json is not the one it followed.
        """
        mark = prepared.mark
        return (
            mark.journal_ino == self.journal.ino
            and mark.offset <= self.journal.offset
            and mark.snapshot_digest == self._snapshot_digest
            and not self._broken
            and not self.pending
        )

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
                tail = self.journal.since(prepared.mark.offset)
            except MemorySaveFailed:
                discard(prepared)
                raise
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
                discard(prepared)  # its snapshot's temporary is gone already
            raise
        if found == self.snapshot_path:
            if prepared is not None:
                discard(prepared)
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
        written = prepared.base if prepared is not None else None
        keep_base(self.snapshot_path, self.folder / BASE, data, written)
        self.journal.close()
        header_entry = {
            "op": "high",
            "id": high_id,
            "snapshot": list(self._snapshot_sig or ()),
            "digest": self._snapshot_digest,
        }
        watched = self._watch.header()
        if watched:
            header_entry["watch"] = watched
        self.journal.restart(header_entry, tail)
        return True

    def idle(self) -> None:
        """Close the journal's append descriptor between operations (reopened by ``append``)."""
        self.journal.close()

    def release(self) -> None:
        """Close every file; the next ``poll`` reads everything again."""
        self.journal.close()
        self.lock.close()
        self._loaded = False
