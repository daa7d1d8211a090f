"""Adding a memory that may already be stored: say so, replace what it updates, or ask.

The store never keeps the same content twice (``MemoryNamespace.add_unique``: the memory
already stored comes back as a duplicate, from every door). A new value for what a memory says
(``memory.updates``: "the cabin wifi password is now pinecone43") replaces it when the new text
says it changed (``sure``) and one memory is so updated: the old memory takes the new text,
keeps its id, and its old version stays in its history (one undo brings it back). That is for a
person's doors (``replace=True``: /remember, a note, 💾, a voice note), and only when the
person may change the old memory (``bot.core.policy``: in a group, a member not an
administrator's); otherwise, and for any other near-duplicate (``memory.duplicates``: most of
the words of one stored memory, or a new value the text does not say is one), nothing is
stored until someone chooses:

- a person (``/remember``) gets buttons: keep both, replace the old one (one button per
  near-duplicate), cancel. What waits is kept in the namespace's documents under
  ``adding/<token>`` (content, tags, category, source, who asked, the near-duplicates' ids);
  a button carries only the token. Only who asked, or an administrator of the group, may
  choose; replacing also needs the right to change the old memory (``bot.core.policy``).
  The record is deleted (compare-and-set on its version) before anything is stored, so two
  presses store once; should the store then fail, the record is put back for another press.
- the model (``addMemory``) is told which memories are near-duplicates, with their ids, and
  which one the text would replace, so that it updates that one instead, or adds anyway
  (``keep_both``) when the user said it is a different thing (``bot.assistant.tools``).

Candidates are the store's near-duplicates (``MemoryNamespace.similar``: the best keyword
matches) and, where the store searches by meaning, the ``MEANING_CANDIDATES`` memories closest
in meaning, which share no word with the new text as often as not ("we moved to Birch Lane" /
"I live at 12 Oak Street"); the rules of ``memory.updates`` judge both alike.

Keeping both after the question is remembered (``kept_apart``), so that the nightly tidy
(``bot.core.tidying``) does not ask about the same two memories again.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.categories import canonical
from bot.core.dating import date_named
from bot.core.operations import REMINDER_CATEGORY
from bot.core.policy import Caller
from bot.core.tokens import new_token
from bot.errors import NotAllowed
from memory.documents import update_document
from memory.duplicates import MAX_NEAR, Near
from memory.errors import DocumentConflict, MemoryNotFound, MemoryStoreError
from memory.interface import MemoryNamespace
from memory.model import Memory, clean_category, clean_content, clean_tags
from memory.updates import SURE, judge

PREFIX = "adding/"
KEEP_SECONDS = 7 * 24 * 3600  # a choice nobody made is dropped after a week
MEANING_CANDIDATES = 10  # the closest memories in meaning judged beside the keyword ones
KEPT_APART = "kept-apart"  # the pairs of memories a person chose to keep both of
MAX_KEPT_APART = 500


@dataclass(frozen=True)
class Remembered:
    """What adding did: stored ``memory``, or found it already stored (``duplicate``), or
    stored nothing because of the near-duplicates ``near`` (waiting under ``token``, if a
    person is to choose)."""

    memory: Memory | None = None
    duplicate: bool = False
    near: tuple[Near, ...] = ()
    token: str | None = None
    replaced: Memory | None = None  # the old version of ``memory``, which this text replaced


@dataclass(frozen=True)
class Settled:
    """What a choice did: ``memory`` stored or changed (None: cancelled), and whether it was
    found already stored (``duplicate``) or replaced an old memory (``replaced``)."""

    memory: Memory | None
    duplicate: bool = False
    replaced: Memory | None = None


def remember(
    namespace: MemoryNamespace,
    content: str,
    tags: Iterable[str] | str = (),
    category: str | None = None,
    *,
    source: str | None = None,
    asker: Caller | None = None,
    keep_both: bool = False,
    replace: bool = False,
    zone: ZoneInfo | Callable[[], ZoneInfo] | None = None,
    now: datetime | None = None,
    attachment: Mapping[str, Any] | None = None,
) -> Remembered:
    """Store a memory unless it is already stored; with ``replace``, replace the one memory it
    surely updates (if ``asker`` may change it); unless ``keep_both``, store nothing when it
    has near-duplicates (with ``asker``: keep it waiting for their choice). The date the
    content names is resolved now, in ``zone`` (UTC by default; or how to read it, read only
    for content that names a time: ``bot.core.dating``);
    ``attachment`` is the file the memory was said in (a transcribed voice note)."""
    content, clean, group = clean_content(content), clean_tags(tags), None
    if category is not None:
        group = canonical(clean_category(category))  # 健康 is health (bot.categories)
    date = date_named(content, now or datetime.now(UTC), zone or ZoneInfo("UTC"))
    updates: list[int] = []  # kept both beside these: the tidy is not to ask about them
    if not keep_both:
        similar = candidates(namespace, content)
        near = tuple(n for n in similar if n.reason != "same")
        if near and len(near) == len(similar):  # with the same content there, it is that one
            sure = [n.memory for n in near if n.sure]
            if replace and len(sure) == 1 and (asker is None or asker.may_change(sure[0])):
                old = sure[0]
                changed = namespace.update(
                    old.id, content=content, tags=clean or None, category=group
                )
                return Remembered(changed, replaced=old)
            token = None
            if asker is not None:
                record: dict[str, Any] = {"content": content, "tags": list(clean)}
                record.update(category=group, source=source, date=date)
                if attachment:
                    record["attachment"] = dict(attachment)
                token = _keep_waiting(namespace, asker, record, near)
            return Remembered(near=near, token=token)
    else:
        updates = [n.memory.id for n in candidates(namespace, content) if n.reason == "update"]
    added = namespace.add_unique(
        content, clean, group, source=source, date=date, attachment=attachment
    )
    if not added.duplicate and updates:
        with contextlib.suppress(MemoryStoreError):  # lost, the tidy asks once more
            keep_apart(namespace, [(old, added.memory.id) for old in updates])
    return Remembered(added.memory, added.duplicate)


def candidates(namespace: MemoryNamespace, content: str) -> list[Near]:
    """The near-duplicates of ``content`` (``MemoryNamespace.similar``), and the updates among
    the memories closest to it in meaning (module docstring); a sure update first."""
    found = namespace.similar(content)
    if any(n.reason == "same" for n in found):
        return found
    # A reminder's memory follows its reminder (✏️ Change moves it): never replaced by a note.
    found = [n for n in found if n.reason != "update" or n.memory.category != REMINDER_CATEGORY]
    known = {n.memory.id for n in found}
    hits = namespace.search(content, MEANING_CANDIDATES, ranker="hybrid", touch=False)
    for hit in hits:
        if hit.memory.id in known or hit.memory.category == REMINDER_CATEGORY:
            continue
        verdict = judge(content, hit.memory.content)
        if verdict is not None:
            found.append(Near(hit.memory, "update", 0.0, sure=verdict == SURE))
    rank = {"same": 0, "update": 1, "contained": 2}
    found.sort(key=lambda near: (rank.get(near.reason, 3), not near.sure, -near.share))
    return found[:MAX_NEAR]


def kept_apart(namespace: MemoryNamespace) -> set[frozenset[int]]:
    """The pairs of memories a person chose to keep both of (ids)."""
    document = namespace.documents().get(KEPT_APART)
    pairs = document.value.get("pairs", []) if document and isinstance(document.value, dict) else []
    return {frozenset(p) for p in pairs if isinstance(p, list) and len(p) == 2}


def keep_apart(namespace: MemoryNamespace, pairs: Iterable[tuple[int, int]]) -> None:
    """Remember that each pair of memories was kept both of (the newest ``MAX_KEPT_APART``)."""
    new = [sorted(pair) for pair in pairs]
    if not new:
        return

    def change(value: Any) -> dict[str, Any]:
        old = value.get("pairs", []) if isinstance(value, dict) else []
        kept = [p for p in old if isinstance(p, list) and p not in new]
        return {"pairs": [*kept, *new][-MAX_KEPT_APART:]}

    update_document(namespace.documents(), KEPT_APART, change)


def waiting(namespace: MemoryNamespace, token: str) -> list[Memory]:
    """The near-duplicates an add waiting under ``token`` was held for (those still stored)."""
    document = namespace.documents().get(PREFIX + token)
    found = []
    for memory_id in document.value.get("near", []) if document else []:
        try:
            found.append(namespace.get(memory_id))
        except MemoryNotFound:
            continue
    return found


def settle(
    namespace: MemoryNamespace, caller: Caller, token: str, choice: str, index: int = 0
) -> Settled | None:
    """Make the choice (``keep``, ``replace`` the ``index``-th near-duplicate, ``cancel``) for
    the add waiting under ``token``; None if nothing waits there (chosen already, or too old).
    ``NotAllowed`` if ``caller`` may not make it."""
    documents = namespace.documents()
    document = documents.get(PREFIX + token)
    if document is None or not isinstance(document.value, dict):
        return None
    record: dict[str, Any] = document.value
    old = None
    if choice == "replace":
        ids = record.get("near", [])
        if not 0 <= index < len(ids):
            return None
        try:
            old = namespace.get(ids[index])
        except MemoryNotFound:
            return None
    if record.get("by") != caller.actor.key and not caller.admin:
        raise NotAllowed(old or Memory(1, record["content"]))
    if old is not None and not caller.may_change(old):
        raise NotAllowed(old)
    try:
        if not documents.delete(PREFIX + token, version=document.version):
            return None
    except DocumentConflict:
        return None  # another press took it first
    try:
        return _make(namespace, record, choice, old)
    except MemoryStoreError:
        documents.put(PREFIX + token, record)  # not made: the buttons still work
        raise


def _make(
    namespace: MemoryNamespace, record: dict[str, Any], choice: str, old: Memory | None
) -> Settled:
    if choice == "cancel":
        return Settled(None)
    content, tags, category = record["content"], record["tags"], record.get("category")
    if old is not None:
        # The old memory takes the new text; its tags and category too when they were given.
        changed = namespace.update(old.id, content=content, tags=tags or None, category=category)
        return Settled(changed, replaced=old)
    source, date, attachment = record.get("source"), record.get("date"), record.get("attachment")
    added = namespace.add_unique(
        content, tags, category, source=source, date=date, attachment=attachment
    )
    if not added.duplicate and record.get("updates"):
        with contextlib.suppress(MemoryStoreError):  # lost, the tidy asks once more
            keep_apart(namespace, [(old, added.memory.id) for old in record["updates"]])
    return Settled(added.memory, duplicate=added.duplicate)


def _keep_waiting(
    namespace: MemoryNamespace, asker: Caller, record: dict[str, Any], near: tuple[Near, ...]
) -> str:
    """Keep the add waiting for the asker's choice; its token. Drops choices too old."""
    documents = namespace.documents()
    now = time.time()
    for old in documents.list(PREFIX):
        at = old.value.get("at", 0) if isinstance(old.value, dict) else 0
        if not isinstance(at, int | float) or now - at > KEEP_SECONDS:
            documents.delete(old.key)
    token = new_token()
    updates = [n.memory.id for n in near if n.reason == "update"]
    record = {**record, "by": asker.actor.key, "near": [n.memory.id for n in near], "at": now}
    if updates:
        record["updates"] = updates
    documents.put(PREFIX + token, record)
    return token
