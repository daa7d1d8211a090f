"""``python -m memory migrate --from SOURCE --to TARGET``: copy one store into another.

Either side is a data directory or a ``postgresql://`` URL, so the same command moves a bot
from files to PostgreSQL and back. It copies every namespace's memories (ids, times, access
counts and sources kept, through ``import_memories``) with their change history (the
source's records, kept as they are, in place of ``import`` records: ``/history`` and
``/undo`` go on as before the move), every namespace's embeddings (so nothing is embedded, or
paid for, again), every namespace's documents, the bot's own documents, and the bot's record
logs. It only adds: a memory whose id the target has, a change record whose ``ref`` it has, a
vector it has for that model and text, a document whose key it has, a log it already holds
are left as they are, so running it twice copies nothing twice, and an interrupted run is
finished by running it again. What it left because the target differs is counted in the
summary (``kept``), never overwritten.

Embeddings: every model's vectors are copied to PostgreSQL; a namespace folder keeps one
model's (``memory.vectors``), so to files only the set with the most vectors is copied.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np

from memory.documents import ABSENT, Documents
from memory.errors import DocumentConflict, MemoryStoreError, NamespaceInvalid
from memory.files.records import SUFFIX as LOG_SUFFIX
from memory.files.store import BOT_FOLDER, MemoryStore
from memory.interface import Store
from memory.names import validate_namespace
from memory.open import open_store
from memory.vectors import VectorSet, VectorStore


@dataclass
class Summary:
    """What a migration did."""

    namespaces: int = 0
    memories: int = 0
    memories_present: int = 0
    documents: int = 0
    documents_present: int = 0
    documents_kept: int = 0
    logs: int = 0
    logs_present: int = 0
    logs_kept: int = 0
    changes: int = 0
    changes_present: int = 0
    vectors: int = 0
    vectors_present: int = 0

    def __str__(self) -> str:
        return ", ".join(
            f"{f.name.replace('_', ' ')} {getattr(self, f.name)}" for f in fields(self)
        )


def document_scopes(store: Store) -> list[str]:
    """Every namespace of ``store`` holding documents (memories or not), sorted."""
    if isinstance(store, MemoryStore):
        found = set()
        for path in store.data_dir.rglob("*.json"):
            with contextlib.suppress(NamespaceInvalid, ValueError):
                found.add(validate_namespace(path.parent.relative_to(store.data_dir).as_posix()))
        return sorted(found)
    scopes: list[str] = getattr(store, "document_scopes")()  # noqa: B009  (memory.pg.PgStore)
    return scopes


def bot_log_names(store: Store) -> list[str]:
    """Every record log of the store's client, sorted."""
    if isinstance(store, MemoryStore):
        folder = store.data_dir / BOT_FOLDER
        names = [p.name[: -len(LOG_SUFFIX)] for p in folder.glob(f"*{LOG_SUFFIX}")]
        return sorted(name.replace(".", "/") for name in names)
    logs: list[str] = getattr(store, "bot_log_names")()  # noqa: B009  (memory.pg.PgStore)
    return logs


def _copy_documents(source: Documents, target: Documents, summary: Summary) -> None:
    for document in source.list():
        existing = target.get(document.key)
        if existing is not None:
            if existing.value == document.value:
                summary.documents_present += 1
            else:
                summary.documents_kept += 1
            continue
        try:
            target.put(document.key, document.value, version=ABSENT)
        except DocumentConflict:  # written meanwhile by a running bot: theirs is newer
            summary.documents_kept += 1
            continue
        summary.documents += 1


def _copy_vectors(
    source: VectorStore, target: VectorStore, one_set: bool, summary: Summary
) -> None:
    """Add to ``target`` the vectors of ``source`` it lacks, per model (the largest set only,
    for a target that keeps ``one_set``)."""
    found = [v for model in source.stored() if (v := source.load(*model)) is not None]
    if one_set and found:
        found = [max(found, key=lambda v: (len(v.keys), v.model))]
    for vectors in found:
        held = target.load(vectors.model, vectors.dimensions)
        keys = set(held.keys) if held is not None else set()
        rows = [i for i, key in enumerate(vectors.keys) if key not in keys]
        summary.vectors_present += len(vectors.keys) - len(rows)
        if not rows:
            continue
        new_keys = tuple(vectors.keys[i] for i in rows)
        if held is not None:
            merged = np.vstack([held.vectors, vectors.vectors[rows]])
            new_keys = held.keys + new_keys
        else:
            merged = vectors.vectors[rows]
        target.save(VectorSet(vectors.model, vectors.dimensions, new_keys, merged))
        summary.vectors += len(rows)


def migrate(source: Store, target: Store) -> Summary:
    """Copy everything of ``source`` that ``target`` does not hold yet."""
    summary = Summary()
    names = source.namespace_names()
    for name in names:
        origin, copy = source.namespace(name), target.namespace(name)
        records = origin.export()
        history = origin.history().records
        before = {r.ref for r in copy.history().records}
        # Everything as it is: two memories of the same content stay two (not "duplicates").
        added = copy.import_memories(records, skip_duplicates=False, history=history)
        summary.namespaces += 1
        summary.memories += added
        summary.memories_present += len(records) - added
        copied = sum(1 for r in copy.history().records if r.ref not in before)
        summary.changes += copied
        summary.changes_present += sum(1 for r in history if r.ref in before)
        one_set = isinstance(target, MemoryStore)  # one memory.vectors file per folder
        _copy_vectors(origin.vectors(), copy.vectors(), one_set, summary)
    for scope in sorted(set(document_scopes(source)) | set(names)):
        _copy_documents(source.documents(scope), target.documents(scope), summary)
    _copy_documents(source.bot_documents(), target.bot_documents(), summary)
    for log_name in bot_log_names(source):
        records = source.bot_log(log_name).read()
        log = target.bot_log(log_name)
        held = log.read()
        if held == records:
            summary.logs_present += 1
        elif held:
            summary.logs_kept += 1
        else:
            log.rewrite(records)
            summary.logs += 1
    return summary


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; 0 on success, 1 on a store error."""
    parser = argparse.ArgumentParser(
        prog="python -m memory migrate", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--from", dest="source", required=True, help="data directory or URL")
    parser.add_argument("--to", dest="target", required=True, help="data directory or URL")
    args = parser.parse_args(argv)
    try:
        with open_store(args.source) as source, open_store(args.target) as target:
            summary = migrate(source, target)
    except MemoryStoreError as e:
        print(f"error [{e.code}]: {e.message}", file=sys.stderr)
        return 1
    print(f"copied: {summary}")
    return 0
