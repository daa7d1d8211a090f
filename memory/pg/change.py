"""A namespace's change as one statement: its version check, its rows, its history, its trim.

A write sends its whole change in one statement (``change_statement``), so that it costs one
round trip and its parts commit together, as the update queue's steps do (``memory.pg.updates``):
data-modifying ``WITH`` queries, each of which acts only if the first one, ``locked``, returned
the namespace's row. That one is the check the change depends on:

- ``at`` a version (``GUARDED``): the row moves to the next version only if it is still at the
  version the change was decided from, what the process held; if another process wrote first
  (a concurrent writer's commit is waited for, and the row re-read: PostgreSQL's read committed
  ``UPDATE``), nothing is returned and nothing is written, and the writer catches up and
  decides again (``memory.pg.backend``). Version 0 (a namespace never written) creates the row
  (``FIRST``); any other version never does: a row that vanished means the database was
  replaced, and the conflict sends the writer to catch up, which notices;
- ``at`` None (``LOCKED``): the row is locked by this transaction already (the writer took the
  lock and caught up before deciding), and the version it moved to is the change's.

The rest follows from ``locked``: the memories put (``INSERT ... ON CONFLICT DO UPDATE``, in
the order given: ``seq`` keeps the stored order), the ids deleted (tombstones, so a process
catching up learns of them), the change's history records, the trim of older records to the
retention, and the recorded id clock (``high_id``: the highest id put, within reach). The
parts of one statement share its snapshot and cannot see each other's rows, so the trim keeps
``max`` less the records inserted of the older ones, and records a trim would drop at once
(past ``days``, or beyond ``max`` in one change) are not inserted: what is left is what
inserting all and trimming after left.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memory.history import ChangeRecord, Retention
from memory.ids import ID_REACH_MS, clock_ms, clock_of
from memory.model import Memory

# The recorded id clock once ``top`` (the highest id put within reach; NULL: none put) is
# written: one past reach (written before that rule) is dropped for it.
HIGH = (
    "CASE WHEN %(top)s::bigint IS NULL THEN n.high_id ELSE greatest(CASE WHEN n.high_id >"
    " %(reach)s::bigint THEN 0 ELSE n.high_id END, %(top)s::bigint) END"
)
GUARDED = f"""
    UPDATE memory_namespaces AS n SET version = n.version + 1, high_id = {HIGH}
    WHERE n.name = %(name)s AND n.version = %(at)s
    RETURNING n.version, n.high_id
"""
FIRST = f"""
    INSERT INTO memory_namespaces AS n (name, version, high_id)
    VALUES (%(name)s, 1, coalesce(%(top)s::bigint, 0))
    ON CONFLICT (name) DO UPDATE SET version = n.version + 1, high_id = {HIGH}
    WHERE n.version = 0
    RETURNING n.version, n.high_id
"""
LOCKED = f"""
    UPDATE memory_namespaces AS n SET high_id = {HIGH} WHERE n.name = %(name)s
    RETURNING n.version, n.high_id
"""
FIELDS = (
    "id bigint, content text, tags text[], category text, created_at text, accessed_at text,"
    " access_count bigint, updated_at text, source text, date text, attachment text, origin text"
)
NAMES = ", ".join(field.split()[0] for field in FIELDS.split(", "))
PUT = f"""
    INSERT INTO memories AS m (namespace, changed, seq, deleted, {NAMES})
    SELECT %(name)s, locked.version, nextval('memory_seq'), false, {NAMES}
    FROM locked, ROWS FROM (jsonb_to_recordset(%(puts)s::jsonb) AS ({FIELDS}))
        WITH ORDINALITY AS p({NAMES}, ord)
    ORDER BY p.ord
    ON CONFLICT (namespace, id) DO UPDATE SET
        changed = excluded.changed, deleted = false, content = excluded.content,
        tags = excluded.tags, category = excluded.category, created_at = excluded.created_at,
        accessed_at = excluded.accessed_at, access_count = excluded.access_count,
        updated_at = excluded.updated_at, source = excluded.source, date = excluded.date,
        attachment = excluded.attachment, origin = excluded.origin,
        seq = CASE WHEN m.deleted THEN excluded.seq ELSE m.seq END
"""
DELETE = """
    UPDATE memories SET deleted = true, content = '', tags = '{}', source = NULL, date = NULL,
        attachment = NULL, origin = NULL, changed = locked.version
    FROM locked WHERE namespace = %(name)s AND id = ANY(%(deletes)s::bigint[])
"""
RECORD = """
    INSERT INTO memory_history (namespace, at, record)
    SELECT %(name)s, r.at, r.record
    FROM locked, unnest(%(ats)s::text[], %(records)s::text[]) WITH ORDINALITY AS r(at, record, ord)
    ORDER BY r.ord
"""
# The older records past retention: before the cutoff, or not among the newest ``keep``
# (none kept: every one; ``seq`` never reaches the largest bigint).
TRIM = """
    DELETE FROM memory_history h USING locked
    WHERE h.namespace = %(name)s AND (h.at < %(cutoff)s OR h.seq < coalesce((
        SELECT min(seq) FROM (
            SELECT seq FROM memory_history WHERE namespace = %(name)s
            ORDER BY seq DESC LIMIT %(keep)s
        ) AS newest
    ), 9223372036854775807))
"""


def _row(memory: Memory) -> dict[str, Any]:
    """A memory as ``jsonb_to_recordset`` reads it (``FIELDS``)."""
    return {
        "id": memory.id,
        "content": memory.content,
        "tags": list(memory.tags),
        "category": memory.category,
        "created_at": memory.created_at,
        "accessed_at": memory.accessed_at,
        "access_count": memory.access_count,
        "updated_at": memory.updated_at,
        "source": memory.source,
        "date": memory.date,
        "attachment": _json(memory.attachment),
        "origin": _json(memory.origin),
    }


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(dict(value), ensure_ascii=False)


def change_statement(
    name: str,
    *,
    at: int | None,
    puts: Sequence[Memory],
    deletes: Sequence[int],
    records: Sequence[ChangeRecord],
    retention: Retention,
) -> tuple[str, dict[str, Any]]:
    """The statement storing a change of namespace ``name`` decided at version ``at`` (None:
    under this transaction's lock), and its parameters; it returns the namespace's new version
    and recorded id clock, or no row if the version moved (the module docstring)."""
    reach = clock_ms() + ID_REACH_MS
    top = clock_of(m.id for m in puts) if puts else None
    params: dict[str, Any] = {"name": name, "at": at, "top": top, "reach": reach}
    locked = LOCKED if at is None else FIRST if at == 0 else GUARDED
    parts = [f"locked AS ({locked})"]
    if puts:
        parts.append(f"put AS ({PUT})")
        params["puts"] = json.dumps([_row(m) for m in puts], ensure_ascii=False)
    if deletes:
        parts.append(f"deleted AS ({DELETE})")
        params["deletes"] = list(deletes)
    if records:
        cutoff = retention.cutoff()
        kept = [r for r in records if r.at >= cutoff][-retention.max :]
        parts.append(f"recorded AS ({RECORD})")
        parts.append(f"trimmed AS ({TRIM})")
        params["ats"] = [r.at for r in kept]
        params["records"] = [json.dumps(r.to_dict(), ensure_ascii=False) for r in kept]
        params["cutoff"] = cutoff
        params["keep"] = retention.max - len(kept)
    return f"WITH {', '.join(parts)} SELECT version, high_id FROM locked", params


def recorded_high(high: int, puts: Sequence[Memory]) -> int:
    """The recorded id clock ``high`` once ``puts`` are written (``HIGH``, in Python)."""
    if not puts:
        return high
    top = clock_of(m.id for m in puts)
    return max(0 if high > clock_ms() + ID_REACH_MS else high, top)
