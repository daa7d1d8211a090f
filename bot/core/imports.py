"""Importing a memory file: read it safely, say what it would do, then do exactly that.

The file is the article's format: a JSON array of memory records (what /export gives, or the
article's own ``data/memory.json``). ``read_records`` refuses, with a reason and before anything
changes, a file over ``MAX_IMPORT_BYTES``, one that is not JSON (bad UTF-8, bad syntax, nesting
deeper than the parser allows) and one of the wrong shape (not an
array, more than ``MAX_IMPORT_RECORDS`` entries): ``ImportRefused`` with a stable ``code``.

``plan`` sorts the records against the namespace: new, already present (the same content, once
folded as the store folds text for search: width, case and accents; or the same id with that
content), refused (not an object, not a valid memory, an id that belongs to a different memory
here), counted by reason. The bot's own fields of a record (``source``, ``attachment``,
``origin``: who stored it, a file reference valid for another bot only) are dropped: an import
can never pass as another member's memory. A new record whose id is more than a day ahead of
now is ``renumbered``: the store gives it a fresh id when it is imported (an id from the far
future, such as 2**63 - 1, would leave none for later adds: ``memory.model.renumber``).
``apply`` plans again on the namespace as it is then and imports the new records with their
ids through the store's bulk import, which skips an id already present, and says which ids
it renumbered, old -> new: importing the same file twice adds nothing the second time.

Markdown is imported the same way (``read_entries``): a ``.md`` file (``/export md``'s, or a
note) and a ``.zip`` of notes (``bot.core.note_archive``: an Obsidian vault) become records
(``bot.core.markdown_import``), planned with ``assign_ids``: a note has no id, or one that
another memory here holds, so it is given a free one (from its ``createdAt``) rather than
refused. A ``.md`` that is not UTF-8 text is ``not_text``; an archive refused as a whole is
``archive`` with the ``reason`` and the entry (``member``) of ``ArchiveRefused``.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from bot.categories import canonical
from bot.core import markdown_import, note_archive
from bot.core.operations import BOT_FIELDS
from memory.errors import MemoryInvalid
from memory.ids import clock_ms, within_reach
from memory.interface import MemoryNamespace
from memory.model import Memory, parse_id
from memory.text import fold
from memory.timestamps import parse_time

MAX_IMPORT_BYTES = 5 * 1024 * 1024
MAX_IMPORT_RECORDS = 20_000

NOT_JSON, WRONG_SHAPE, TOO_BIG = "not_json", "wrong_shape", "too_big"
NOT_TEXT, ARCHIVE = "not_text", "archive"
NOT_OBJECT, INVALID, ID_TAKEN = "not_object", "invalid", "id_taken"
# The kinds of file an import reads, by the name's ending.
JSON, MARKDOWN, NOTES = "json", "markdown", "notes"
SUFFIXES = {".json": JSON, ".md": MARKDOWN, ".markdown": MARKDOWN, ".zip": NOTES}
MIME_TYPES = {"application/json": JSON, "text/markdown": MARKDOWN, "application/zip": NOTES}


class ImportRefused(Exception):
    """The file cannot be imported at all: ``code`` (``not_json``, ``wrong_shape``,
    ``too_big``) and ``reason``, a word saying why (``syntax``, ``encoding``, ``nested``;
    ``not_list``, ``too_many``); ``values`` fill the user's message (the ``line`` of a syntax
    error, what the file holds instead of a list: ``found``). The parser's own message is the
    ``__cause__``, for the log."""

    def __init__(self, code: str, reason: str = "", **values: object) -> None:
        super().__init__(f"{code}: {reason}" if reason else code)
        self.code = code
        self.reason = reason
        self.values = values


@dataclass(frozen=True)
class ImportPlan:
    """What importing a file would do to a namespace."""

    total: int
    new: list[dict[str, Any]] = field(default_factory=list)  # records, bot fields dropped
    present: int = 0
    refused: Counter[str] = field(default_factory=Counter)  # reason -> how many
    examples: dict[str, int] = field(default_factory=dict)  # reason -> an entry (1-based) of it
    renumbered: list[int] = field(default_factory=list)  # ids of new ones, a fresh id each

    @property
    def refused_count(self) -> int:
        return sum(self.refused.values())


def _kind(value: object) -> str:
    """What a JSON value is, in a word (``object``, ``text``, ``number``, ``constant``)."""
    if value is None or isinstance(value, bool):
        return "constant"
    return {dict: "object", str: "text", int: "number", float: "number"}.get(type(value), "value")


def read_records(data: bytes) -> list[Any]:
    """The entries of a memory file (``ImportRefused`` if it cannot be one)."""
    if len(data) > MAX_IMPORT_BYTES:
        raise ImportRefused(TOO_BIG, size=len(data))
    try:
        value = json.loads(data)
    except RecursionError as e:  # [[[[... deeper than the parser goes: not a memory file either
        raise ImportRefused(NOT_JSON, "nested") from e
    except json.JSONDecodeError as e:
        raise ImportRefused(NOT_JSON, "syntax", line=e.lineno) from e
    except ValueError as e:  # bad UTF-8 (UnicodeDecodeError is one), or UTF-16 without a BOM
        raise ImportRefused(NOT_JSON, "encoding") from e
    if not isinstance(value, list):
        raise ImportRefused(WRONG_SHAPE, "not_list", found=_kind(value))
    if len(value) > MAX_IMPORT_RECORDS:
        raise ImportRefused(WRONG_SHAPE, "too_many", count=len(value), limit=MAX_IMPORT_RECORDS)
    return value


def kind_of(name: str, mime_type: str = "") -> str | None:
    """What kind of import a file is, by its name's ending or else its MIME type (None: it
    is not one)."""
    lower = name.lower()
    for suffix, kind in SUFFIXES.items():
        if lower.endswith(suffix):
            return kind
    return MIME_TYPES.get(mime_type.lower())


def limit_of(kind: str) -> int:
    """The largest file of ``kind`` imported, in bytes (a zip of notes: what a bot may
    download; its notes are bounded again as they are unpacked)."""
    return note_archive.MAX_ARCHIVE_BYTES if kind == NOTES else MAX_IMPORT_BYTES


def read_entries(kind: str, data: bytes) -> tuple[list[Any], int]:
    """The entries of a file of ``kind`` and how many files of an archive were skipped (not
    notes); ``ImportRefused`` if it cannot be imported at all."""
    if len(data) > limit_of(kind):
        raise ImportRefused(TOO_BIG, size=len(data))
    if kind == JSON:
        return read_records(data), 0
    if kind == MARKDOWN:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise ImportRefused(NOT_TEXT, "encoding") from e
        if "\x00" in text:
            raise ImportRefused(NOT_TEXT, "binary")
        entries = markdown_import.read_note(text)
        skipped = 0
    else:
        try:
            notes, skipped = note_archive.read_archive(data)
        except note_archive.ArchiveRefused as e:
            raise ImportRefused(ARCHIVE, e.reason, member=e.member) from e
        entries = []
        for note in notes:
            entries += markdown_import.read_note(note.text, title=note.title)
            if len(entries) > MAX_IMPORT_RECORDS:
                break
    if len(entries) > MAX_IMPORT_RECORDS:
        raise ImportRefused(WRONG_SHAPE, "too_many", count=len(entries), limit=MAX_IMPORT_RECORDS)
    return entries, skipped


def _free_id(entry: dict[str, Any], taken: set[int], now: int) -> dict[str, Any]:
    """``entry`` with an id no memory here and no earlier entry holds: its own, else one
    from its ``createdAt`` (or now), the next free one after it."""
    try:
        wanted = parse_id(entry.get("id"))
    except MemoryInvalid:
        wanted = 0
    if wanted and wanted not in taken:
        return entry
    try:
        created = parse_time(str(entry.get("createdAt")))
        candidate = int(created.timestamp() * 1000)
    except (MemoryInvalid, OverflowError, ValueError):
        candidate = now
    candidate = candidate if 0 < candidate <= now else now
    while candidate in taken:
        candidate += 1
    return {**entry, "id": candidate}


def plan(namespace: MemoryNamespace, entries: list[Any], *, assign_ids: bool = False) -> ImportPlan:
    """Sort ``entries`` (``read_records``) against the namespace as it is now; with
    ``assign_ids`` an entry without an id of its own that is free here is given one."""
    held = {memory.id: fold(memory.content) for memory in namespace.memories()}
    contents = set(held.values())
    result = ImportPlan(len(entries))
    now = clock_ms()
    new_ids: set[int] = set()
    taken = set(held) if assign_ids else set()
    present = 0
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            result.refused[NOT_OBJECT] += 1
            result.examples.setdefault(NOT_OBJECT, number)
            continue
        if assign_ids:
            entry = _free_id(entry, taken, now)
            taken.add(entry["id"])
        record = {key: value for key, value in entry.items() if key not in BOT_FIELDS}
        try:
            memory = Memory.from_dict(record)
        except (MemoryInvalid, RecursionError, TypeError, ValueError) as e:
            reason = f"{INVALID}:{(e.field if isinstance(e, MemoryInvalid) else None) or 'record'}"
            result.refused[reason] += 1
            result.examples.setdefault(reason, number)
            continue
        folded = fold(memory.content)
        if folded in contents:  # here already, or earlier in this file
            present += 1
            continue
        if memory.id in held or memory.id in new_ids:
            result.refused[ID_TAKEN] += 1
            result.examples.setdefault(ID_TAKEN, number)
            continue
        contents.add(folded)
        new_ids.add(memory.id)
        # A known category in either language is stored by its English name (bot.categories).
        result.new.append({**memory.to_dict(), "category": canonical(memory.category)})
        if not within_reach(memory.id, now):
            result.renumbered.append(memory.id)
    return dataclasses.replace(result, present=present)


def apply(
    namespace: MemoryNamespace, entries: list[Any], *, assign_ids: bool = False
) -> tuple[ImportPlan, int, dict[int, int]]:
    """Import the new records of ``entries`` (planned again now); the plan, how many were
    added (fewer than planned only if the same ids arrived meanwhile) and the ids renumbered,
    old -> new."""
    planned = plan(namespace, entries, assign_ids=assign_ids)
    renumbered: dict[int, int] = {}
    added = namespace.import_memories(planned.new, renumbered=renumbered) if planned.new else 0
    return planned, added, renumbered
