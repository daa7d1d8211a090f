"""A snapshot written ahead, outside the namespace's lock, for compaction to swap in.

Compaction (``memory.files.folder``: ``NamespaceFiles.compact``) replaces ``memory.json`` with
what the namespace holds. Laying out and writing tens of thousands of memories takes time that
adds must not wait for, so the background compaction copies the memories under the lock, notes
where the files stood (a ``Mark``), and writes the snapshot here without the lock
(``write_ahead``): the layout, its digest, the writes and their fsyncs, the copy that becomes
``memory.journal.base``, and reading back the ``memory.json`` it will replace. Under the lock
again the swap is left renames and the new journal; a snapshot the files have moved on from
is thrown away (``discard``).

The temporary files are ``.memory.json.compacting.*``: written outside the lock on purpose,
so a namespace opened meanwhile leaves them alone until their writer is gone
(``memory.files.io.remove_stale_temporaries``).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.errors import MemorySaveFailed
from memory.files.io import write_bytes_atomic, write_temporary
from memory.files.swap import Status, digest, settled_status
from memory.jsontext import dump_records

log = logging.getLogger(__name__)


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


def write_ahead(
    snapshot: Path,
    base: Path,
    records: Iterable[dict[str, Any]],
    mark: Mark,
    *,
    pause: Callable[[], None] | None = None,
) -> Prepared:
    """Write ``records``, the memories held at ``mark``, to temporaries beside ``snapshot``
    (``memory.json``) and ``base`` (``memory.journal.base``); see the module docstring."""
    data = dump_records(records, pause=pause)
    settled = None
    if mark.snapshot_digest is not None:
        settled = settled_status(snapshot, mark.snapshot_digest)
    tmp = write_temporary(snapshot, data, "compacting")
    try:
        # Not fsynced, as ever (a convenience): flushing the whole copy holds up adds.
        kept: Path | None = write_temporary(base, data, "compacting", durable=False)
    except MemorySaveFailed:
        kept = None  # written at the swap, as without a prepared snapshot
    return Prepared(data, tmp, mark, digest(data), kept, settled)


def discard(prepared: Prepared) -> None:
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


def keep_base(snapshot: Path, base: Path, data: bytes, written: Path | None) -> None:
    """Make ``data``, the snapshot just swapped in at ``snapshot``, the ``base`` copy
    (``memory.journal.base``); ``written``, a temporary already holding it, is renamed. Only a
    convenience: merging a later hand edit is less exact without it, so a failure is logged."""
    if written is not None:
        try:
            os.replace(written, base)
            return
        except OSError as e:
            log.warning("could not keep a copy of %s: %s", snapshot.name, e)
            with contextlib.suppress(OSError):  # the copy may be gone; nothing of anyone's
                written.unlink()
            return
    try:
        write_bytes_atomic(base, data, durable=False)
    except MemorySaveFailed as e:
        log.warning("could not keep a copy of %s: %s", snapshot.name, e.message)
