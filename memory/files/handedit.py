"""Merging a ``memory.json`` that a person edited while the store had the namespace open.

A person's editor reads ``memory.json``, the person takes their time, and saves. Meanwhile the
store went on: it confirmed adds, updates and deletes (in the journal) and may have rewritten
``memory.json`` (compaction) once or more. Taking the person's file wholesale would undo those
confirmed changes; ignoring it would undo the person's. So the file is read as a set of changes
relative to the snapshot the person started from, and merged into what the store holds.

The store does not know which snapshot the person's editor read, but it knows every snapshot it
wrote: ``History`` numbers them (generations) and keeps, per memory, each version it wrote and
the generation that first held it. A record of the person's file whose version the store wrote
is not the person's change (their file may be older than the store's); any other record is.
The person's editor read a snapshot at least as new as the newest version their file holds
(``base``). A memory the store holds that is missing from the file was deleted by the person if
every snapshot they may have read held it (``base`` to the oldest snapshot that replaced a
version their file holds, or the last written before they saved); if none did (written to
``memory.json`` later, or only ever to the journal), they never saw it, and it is kept.

Where both sides changed the same memory, the later change wins, by time: the file's mtime
against the memory's ``updatedAt`` (or ``createdAt``). The losing side is written to a
conflict file beside ``memory.json`` (``memory.json.conflict-<time>``), so nothing is dropped
silently; so is a memory kept although the person's file lacked it, when the file alone cannot
tell an unseen add from a deletion (the store wrote it to ``memory.json`` after the newest
version the file holds). Only the fields a person edits count as a change (content, tags,
category, createdAt, source): access bookkeeping is the store's.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from memory.errors import MemoryInvalid
from memory.files.io import beside, write_bytes_atomic
from memory.jsontext import dump_json
from memory.model import Memory
from memory.timestamps import format_time, parse_time

MAX_VERSIONS = 16  # versions remembered per memory; an older one reads as the person's edit


def _user_key(memory: Memory) -> int:
    return hash((memory.content, memory.tags, memory.category, memory.created_at, memory.source))


def _full_key(memory: Memory) -> int:
    return hash((_user_key(memory), memory.accessed_at, memory.access_count, memory.updated_at))


class _Version(NamedTuple):
    """The one version recorded of a memory (most have one; see ``History``)."""

    key: int  # the full version
    first: int  # the first generation that held it
    last: int  # the last generation that held it
    user: int  # its version of the person's fields


@dataclass(frozen=True)
class Comparison:
    """A snapshot's memories against the newest generation a ``History`` recorded.

    Made without a lock (a ``History`` never changes the dicts it has recorded, it replaces
    them), so that compaction compares its 50,000 memories before it takes the namespace's
    lock, and records under it only what changed.
    """

    previous: dict[int, Memory]  # the generation compared with
    current: dict[int, Memory]  # the snapshot's memories by id
    changed: list[Memory]  # those that are not the very value the previous generation held
    removed: list[int]  # ids the previous generation held and the snapshot does not


class History:
    """Every snapshot the store wrote or read as its own, as versions of each memory.

    Recording a snapshot costs in proportion to what changed since the previous one, not to
    its size (compaction records under the namespace's lock): the memories of the newest
    generation are kept (``_current``), one that is the very same value as then is skipped,
    and its run of generations and its version are open, ending at the newest generation
    whatever ``last`` they store; ``last`` is written when it leaves or changes.
    """

    def __init__(self) -> None:
        self.generation = 0
        # id -> {full version: [first generation, last generation that held it, version of the
        # person's fields]}. Most memories have one version, one of the person's fields and
        # one run, each kept as a tuple until a second comes (a fifth of the RAM of dicts of
        # lists: at 100,000 memories, some 60 MiB less).
        self._versions: dict[int, _Version | dict[int, list[int]]] = {}
        self._users: dict[int, tuple[int, int] | dict[int, int]] = {}  # {person's fields: gen}
        self._held: dict[int, tuple[int, int] | list[list[int]]] = {}  # runs [first, last]
        self._written: list[float] = [0.0]  # when each generation was written (epoch seconds)
        self._current: dict[int, Memory] = {}  # the newest generation's memories

    def compare(self, memories: Iterable[Memory]) -> Comparison:
        """What ``record(memories, ...)`` has to change; needs no lock (see ``Comparison``)."""
        previous = self._current
        current = {memory.id: memory for memory in memories}
        changed = [m for m in current.values() if previous.get(m.id) is not m]
        return Comparison(previous, current, changed, list(previous.keys() - current.keys()))

    def record(
        self,
        memories: Iterable[Memory],
        written_at: float,
        *,
        compared: Comparison | None = None,
    ) -> None:
        """Note a snapshot, written at ``written_at`` (its mtime), as the next generation.

        ``memories`` have distinct ids (a snapshot's). ``compared`` is ``compare(memories)``,
        made earlier; it is made again if a generation was recorded since.
        """
        if compared is None or compared.previous is not self._current:
            compared = self.compare(memories)
        self.generation += 1
        generation = self.generation
        self._written.append(max(written_at, self._written[-1]))
        previous = compared.previous
        for memory in compared.changed:
            before = previous.get(memory.id)
            user = _user_key(memory)
            self._add_user(memory.id, user, generation)
            if before is None:  # not in the previous generation: a new run
                self._add_run(memory.id, generation)
            key = _full_key(memory)
            if before is not None:
                old = _full_key(before)
                if old == key:
                    continue
                self._close_version(memory.id, old, generation - 1)
            if not self._close_version(memory.id, key, generation):
                self._add_version(memory.id, key, generation, user)
        for memory_id in compared.removed:
            runs = self._held[memory_id]
            if isinstance(runs, tuple):
                self._held[memory_id] = (runs[0], generation - 1)
            else:
                runs[-1][1] = generation - 1
            self._close_version(memory_id, _full_key(previous[memory_id]), generation - 1)
        self._current = compared.current

    def _add_user(self, memory_id: int, user: int, generation: int) -> None:
        users = self._users.get(memory_id)
        if users is None:
            self._users[memory_id] = (user, generation)
            return
        if isinstance(users, tuple):
            if users[0] == user:
                return
            users = self._users[memory_id] = {users[0]: users[1]}
        users.setdefault(user, generation)
        if len(users) > MAX_VERSIONS:
            del users[next(iter(users))]

    def _add_run(self, memory_id: int, generation: int) -> None:
        runs = self._held.get(memory_id)
        if runs is None:
            self._held[memory_id] = (generation, generation)
            return
        if isinstance(runs, tuple):
            runs = self._held[memory_id] = [list(runs)]
        runs.append([generation, generation])
        if len(runs) > MAX_VERSIONS:
            del runs[0]

    def _add_version(self, memory_id: int, key: int, generation: int, user: int) -> None:
        versions = self._versions.get(memory_id)
        if versions is None:
            self._versions[memory_id] = _Version(key, generation, generation, user)
            return
        if isinstance(versions, _Version):
            one = versions
            versions = self._versions[memory_id] = {one.key: [one.first, one.last, one.user]}
        versions[key] = [generation, generation, user]
        if len(versions) > MAX_VERSIONS:
            del versions[next(iter(versions))]

    def _close_version(self, memory_id: int, key: int, last: int) -> bool:
        """Set the last generation of a version; whether it was there."""
        versions = self._versions.get(memory_id)
        if isinstance(versions, _Version):
            if versions.key != key:
                return False
            self._versions[memory_id] = versions._replace(last=last)
            return True
        found = versions.get(key) if versions is not None else None
        if found is not None:
            found[1] = last
        return found is not None

    def _version(self, memory_id: int, key: int) -> tuple[int, int] | None:
        """The first and last generation recorded for a version, if there is one."""
        versions = self._versions.get(memory_id)
        if isinstance(versions, _Version):
            return (versions.first, versions.last) if versions.key == key else None
        found = versions.get(key) if versions is not None else None
        return (found[0], found[1]) if found is not None else None

    def _user_versions(self, memory_id: int) -> Mapping[int, int]:
        users = self._users.get(memory_id)
        if isinstance(users, tuple):
            return {users[0]: users[1]}
        return users if users is not None else {}

    def held(self, memory: Memory) -> tuple[int, int] | None:
        """The first and the last generation that held exactly this version, if any did."""
        key = _full_key(memory)
        found = self._version(memory.id, key)
        if found is None:
            return None
        now = self._current.get(memory.id)
        if now is not None and (now is memory or _full_key(now) == key):
            return found[0], self.generation
        return found[0], found[1]

    def before(self, moment: float) -> int:
        """The newest generation written by ``moment`` (0: none)."""
        return bisect.bisect_right(self._written, moment) - 1

    def seen(self, memory_id: int) -> bool:
        """Whether any snapshot held this memory."""
        return memory_id in self._versions

    def held_in(self, memory_id: int, first: int, last: int) -> tuple[bool, bool]:
        """Whether every, and whether any, of the generations ``first..last`` held it."""
        held = self._held.get(memory_id, [])
        runs = [held] if isinstance(held, tuple) else [(a, b) for a, b in held]
        if memory_id in self._current:
            runs[-1] = (runs[-1][0], self.generation)  # the open run
        every = any(a <= first and last <= b for a, b in runs)
        return every, every or any(a <= last and first <= b for a, b in runs)

    def first_user(self, memory: Memory) -> int | None:
        """The first generation that held these person's fields of ``memory``, if any did."""
        return self._user_versions(memory.id).get(_user_key(memory))

    def wrote(self, memory: Memory) -> bool:
        """Whether the store ever wrote these person's fields for this memory."""
        return _user_key(memory) in self._user_versions(memory.id)


@dataclass
class Merge:
    """The outcome of merging a person's file into what the store holds."""

    memories: dict[int, Memory]  # the merged namespace, in the person's order, then the rest
    edited: dict[int, Memory] = field(default_factory=dict)  # the file's records, as read
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    changed: int = 0  # the person's changes taken (adds, edits, deletes)
    bad: int = 0  # records of the file that could not be read (the file is copied aside)


def _changed_at(memory: Memory) -> float:
    try:
        return parse_time(memory.updated_at or memory.created_at).timestamp()
    except MemoryInvalid:
        return 0.0


LATER_STORE = "changed in the file and by the store; the store's change is later"
LATER_FILE = "changed in the file and by the store; the file's change is later"
DELETED_LATER = "changed in the file, deleted by the store later"
EDITED_LATER = "deleted by the store, changed in the file later"
CHANGED_LATER = "deleted in the file, changed by the store later"
REMOVED_LATER = "changed by the store, deleted in the file later"
OLDER_FILE = (
    "changed in a file older than the store's history (it was restarted or idle since), and"
    " by the store: the store's confirmed version is kept, the file's is here"
)
DELETED_THIN = (
    "deleted in the file; kept here in case the file was opened before the store wrote this"
    " memory to memory.json (the store was restarted or idle since, and cannot tell)"
)
MISSING = (
    "missing from the edited file, which may have been read before the store wrote this memory"
    " to memory.json: kept (delete it with the bot, or by hand again once the file shows it)"
)


def _conflict(
    reason: str, kept: str, memory_id: int, file: Memory | None, store: Memory | None
) -> dict[str, Any]:
    return {
        "id": memory_id,
        "kept": kept,
        "reason": reason,
        "file": file.to_dict() if file else None,
        "store": store.to_dict() if store else None,
    }


def merge(
    records: Iterable[Any],
    edited_at: float,
    held: Mapping[int, Memory],
    history: History | None,
    deleted_at: Mapping[int, float],
) -> Merge:
    """Merge the records of a person's ``memory.json`` (saved at ``edited_at``, epoch seconds)
    into the memories ``held``; ``history`` is ``None`` when the store knows none of what it
    wrote (a new process): then every record of the file counts as the person's."""
    edited: dict[int, Memory] = {}
    bad = 0
    for record in records:
        try:
            memory = Memory.from_dict(record)
        except MemoryInvalid:
            bad += 1
            continue
        if memory.id in edited:
            bad += 1
            continue
        edited[memory.id] = memory
    stamp = format_time(datetime.fromtimestamp(edited_at, UTC))
    # The snapshot the person's editor read is one of base..latest: as new as the newest
    # version in the file, and older than any version in it that a later snapshot replaced.
    base, latest, predates = 0, 0, False
    if history is not None:
        spans = [span for m in edited.values() if (span := history.held(m)) is not None]
        base = max((first for first, _ in spans), default=0)
        latest = min((last for _, last in spans), default=history.generation)
        # ... and was written before the person saved: a file older than every snapshot known
        # (kept aside since, or a history begun after it) proves nothing deleted.
        latest = min(latest, history.before(edited_at))
        base = min(base, latest)
        predates = any(history.held(m) is None and history.wrote(m) for m in edited.values())
        if predates:
            # A memory the person left alone, with access counts no snapshot known had: the
            # file is older than the history (a restart, a release since): it proves no
            # deletion, and whatever it lacks is kept (and noted).
            base, latest = 0, history.generation
    out = Merge({}, edited, bad=bad)

    def store_newer(theirs: Memory) -> bool:
        """Whether the store's version may be newer than the snapshot the person read."""
        first = history.first_user(theirs) if history is not None else None
        return first is None or first > base

    for memory_id, mine in edited.items():
        theirs = held.get(memory_id)
        if theirs is not None and _user_key(mine) == _user_key(theirs):
            out.memories[memory_id] = theirs  # unchanged by the person: keep the bookkeeping
            continue
        if history is not None and history.wrote(mine):
            if theirs is not None:  # an older version the store wrote: not the person's
                out.memories[memory_id] = theirs
            continue  # or a memory the store deleted since the person's editor read it
        if theirs is not None:
            if store_newer(theirs):
                if predates:  # the file is older than all the store knows: keep what it confirmed
                    out.memories[memory_id] = theirs
                    out.conflicts.append(_conflict(OLDER_FILE, "store", memory_id, mine, theirs))
                    continue
                if _changed_at(theirs) > edited_at:
                    out.memories[memory_id] = theirs
                    out.conflicts.append(_conflict(LATER_STORE, "store", memory_id, mine, theirs))
                    continue
                out.conflicts.append(_conflict(LATER_FILE, "file", memory_id, mine, theirs))
            mine = replace(
                mine,
                accessed_at=theirs.accessed_at,
                access_count=theirs.access_count,
                updated_at=stamp,
            )
        elif memory_id in deleted_at:
            if deleted_at[memory_id] > edited_at:
                out.conflicts.append(_conflict(DELETED_LATER, "store", memory_id, mine, None))
                continue
            out.conflicts.append(_conflict(EDITED_LATER, "file", memory_id, mine, None))
        if theirs is None:
            mine = replace(mine, updated_at=stamp)  # when it changed, for a later conflict
        out.memories[memory_id] = mine
        out.changed += 1
    for memory_id, theirs in held.items():
        if memory_id in edited:
            continue
        every, some = history.held_in(memory_id, base, latest) if history else (False, False)
        if not some:
            out.memories[memory_id] = theirs  # not in memory.json when the person read it
        elif not every:
            out.memories[memory_id] = theirs
            out.conflicts.append(_conflict(MISSING, "store", memory_id, None, theirs))
        elif base <= 1:
            # Deleted, as far as a history of one snapshot tells (a restart since, or it was
            # released): the file may have been opened before that snapshot; kept here.
            out.conflicts.append(_conflict(DELETED_THIN, "file", memory_id, None, theirs))
            out.changed += 1
        elif not store_newer(theirs):
            out.changed += 1  # the person deleted it
        elif _changed_at(theirs) > edited_at:
            out.memories[memory_id] = theirs
            out.conflicts.append(_conflict(CHANGED_LATER, "store", memory_id, None, theirs))
        else:
            out.conflicts.append(_conflict(REMOVED_LATER, "file", memory_id, None, theirs))
            out.changed += 1
    return out


def write_conflicts(snapshot: Path, conflicts: list[dict[str, Any]]) -> Path:
    """Write ``conflicts`` beside ``snapshot`` as ``<name>.conflict-<time>``; its path."""
    path = beside(snapshot, "conflict")
    write_bytes_atomic(path, dump_json(conflicts))
    return path
