"""Tidying a namespace's memories: duplicates merged, past events marked, older values replaced,
and what needs a person asked (issue 26, part 3).

``tidy`` makes every change of one run under the author its caller set (``memory.history``):
the nightly job acts as the bot (``bot.jobs.tidy``), ``/tidy`` as who sent it; either way one
run is one change, which one ``/undo`` (or the report's ↩ Undo) reverts whole.

- **Duplicates**: memories of the same content (``memory.text.content_key``: case, width,
  spacing and punctuation aside) and the same attachment, which imports, hand edits and older
  versions let in. The oldest is kept, with the tags of all; the others are removed.
- **Past events**: a memory that named a day to come when it was stored ("dentist on Dec 3 at
  3pm", "下周二下午三点看牙医": read with the reminders' parser as of its ``createdAt``, in the
  chat's zone), once that day is over, gets the tag ``past`` (``已过`` for a Chinese one). Marked,
  never deleted: what happened and when is still worth finding. Not a birthday, an
  anniversary or anything said to repeat, and not a fact about a day already past when it was
  stored ("I was born on …"): that was never a plan.
- **Older values**: two memories that give one thing different values (``memory.updates``):
  when the newer says it changed (``SURE``: "the cabin wifi password is now pinecone43" beside
  "…pinecone42", stored before updates replaced), the older is removed; when unsure (``ASK``),
  the pair is a ``Conflict`` for a person to settle with the report's buttons (``settle``):
  keep the newer, keep the older, or keep both (then never asked again:
  ``bot.core.adding.kept_apart``). A pair a person kept both of, or one still waiting in an
  unanswered question, is left alone.

A reminder's memory (category ``reminder``) is the reminders' own (``bot.jobs.reminder_memory``,
which the job calls for finished and cancelled reminders) and is left out of all three.

Candidate pairs for older values come from an index of the terms ``memory.updates`` reads
(a term more than ``COMMON`` memories share names no one thing and pairs nothing), so a
namespace of thousands of memories is not compared pair by pair.

Questions wait in the namespace's documents under ``tidy-questions/<token>`` (the pairs'
ids, which are answered) for ``KEEP_SECONDS``; a button carries the token and the pair's
number only.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from bot.core import adding
from bot.core.operations import REMINDER_CATEGORY
from bot.core.policy import Caller
from bot.core.tokens import new_token
from bot.core.when import parse_reminder
from bot.errors import NotAllowed
from memory.errors import DocumentConflict, MemoryNotFound
from memory.facts import read
from memory.interface import MemoryNamespace
from memory.model import Memory
from memory.text import content_key
from memory.timestamps import parse_time
from memory.updates import SURE, Level, judge

PAST_TAGS = {"en": "past", "zh": "已过"}
QUESTIONS = "tidy-questions/"
KEEP_SECONDS = 7 * 24 * 3600  # a question nobody answered is dropped (and asked again) after
MAX_QUESTIONS = 5  # conflicts asked in one report (the newest first)
COMMON = 50  # a term in more memories than this pairs nothing (conflict candidates)
_RECURRING = re.compile(
    r"birthday|anniversar|\bborn\b|\bevery\b|\beach\b|daily|weekly|monthly|yearly|annual"
    r"|生日|纪念日|周年|出生|每",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class Conflict:
    """Two memories that give one thing different values, for a person to settle."""

    newer: Memory
    older: Memory


@dataclass(frozen=True)
class Tidied:
    """What one tidy did: duplicates ``merged`` (removed, their twin kept), events marked
    ``past`` (as they are now), ``resolved`` older values (older removed, newer kept),
    reminder memories ``ended`` (``bot.jobs.tidy``), and the ``conflicts`` asked under
    ``token``."""

    merged: tuple[Memory, ...] = ()
    past: tuple[Memory, ...] = ()
    resolved: tuple[tuple[Memory, Memory], ...] = ()
    ended: tuple[Memory, ...] = ()
    conflicts: tuple[Conflict, ...] = ()
    token: str | None = None

    @property
    def changed(self) -> bool:
        """Whether a memory changed."""
        return bool(self.merged or self.past or self.resolved or self.ended)

    def counts(self) -> dict[str, int]:
        """How many of each (the digest's line)."""
        return {
            "merged": len(self.merged),
            "past": len(self.past),
            "ended": len(self.ended),
            "resolved": len(self.resolved),
            "questions": len(self.conflicts),
        }


def tidy(namespace: MemoryNamespace, *, now: datetime, zone: ZoneInfo) -> Tidied:
    """Tidy ``namespace`` as of ``now`` (aware), its days read in ``zone`` (module docstring)."""
    memories = [m for m in namespace.memories() if m.category != REMINDER_CATEGORY]
    merged = _merge(namespace, memories)
    gone = {m.id for m in merged}
    memories = [m for m in memories if m.id not in gone]
    past = _mark_past(namespace, memories, now, zone)
    marked = {m.id: m for m in past}
    memories = [marked.get(m.id, m) for m in memories]
    resolved, conflicts = _older_values(namespace, memories)
    token = _ask(namespace, conflicts) if conflicts else None
    return Tidied(tuple(merged), tuple(past), tuple(resolved), (), tuple(conflicts), token)


# -- duplicates ---------------------------------------------------------------------------------


def _merge(namespace: MemoryNamespace, memories: Sequence[Memory]) -> list[Memory]:
    """Remove every duplicate but the oldest, which gets their tags; the removed ones."""
    groups: dict[tuple[str, str], list[Memory]] = defaultdict(list)
    for memory in memories:
        key = content_key(memory.content)
        if key:
            attachment = json.dumps(dict(memory.attachment or {}), sort_keys=True)
            groups[key, attachment].append(memory)
    removed: list[Memory] = []
    for group in groups.values():
        if len(group) < 2:
            continue
        keep, *twins = sorted(group, key=lambda m: m.id)
        tags = list(dict.fromkeys(tag for m in (keep, *twins) for tag in m.tags))
        if tuple(tags) != keep.tags:
            namespace.update(keep.id, tags=tags)
        for twin in twins:
            try:
                removed.append(namespace.delete(twin.id))
            except MemoryNotFound:
                continue
    return removed


# -- past events --------------------------------------------------------------------------------


def past_tag(memory: Memory) -> str:
    """The tag that marks ``memory`` as a past event, in its own language."""
    return PAST_TAGS["zh" if _CJK.search(memory.content) else "en"]


def is_past_event(memory: Memory, now: datetime, zone: ZoneInfo) -> bool:
    """Whether ``memory`` named a day to come when it was stored, and that day is over."""
    if memory.category == REMINDER_CATEGORY or _RECURRING.search(memory.content):
        return False
    stored = parse_time(memory.created_at)
    try:
        parsed = parse_reminder(memory.content, stored, zone)
    except ValueError:
        return False
    if parsed is None or parsed.due.repeat is not None or parsed.due.moved:
        return False
    day = parsed.due.local().date()
    if day <= stored.astimezone(zone).date():
        return False  # today, or already past when stored: not a plan
    return day < now.astimezone(zone).date()


def _mark_past(
    namespace: MemoryNamespace, memories: Iterable[Memory], now: datetime, zone: ZoneInfo
) -> list[Memory]:
    marked = []
    for memory in memories:
        tag = past_tag(memory)
        if tag in memory.tags or not is_past_event(memory, now, zone):
            continue
        try:
            marked.append(namespace.update(memory.id, tags=[*memory.tags, tag]))
        except MemoryNotFound:
            continue
    return marked


# -- older values -------------------------------------------------------------------------------


def _when(memory: Memory) -> tuple[str, int]:
    return max(memory.created_at, memory.updated_at or ""), memory.id


def pairs(memories: Sequence[Memory]) -> list[tuple[Memory, Memory, Level]]:
    """Every (newer, older, level) of ``memories`` that gives one thing two values
    (``memory.updates.judge``), the newest first; candidates share a term (module docstring)."""
    index: dict[str, list[int]] = defaultdict(list)
    for number, memory in enumerate(memories):
        for term in read(memory.content).terms:
            index[term].append(number)
    candidates: set[tuple[int, int]] = set()
    for numbers in index.values():
        if len(numbers) > COMMON:
            continue
        for i, a in enumerate(numbers):
            for b in numbers[i + 1 :]:
                candidates.add((a, b))
    found = []
    for a, b in candidates:
        newer, older = sorted((memories[a], memories[b]), key=_when, reverse=True)
        level = judge(newer.content, older.content)
        if level is not None:
            found.append((newer, older, level))
    found.sort(key=lambda pair: (_when(pair[0]), _when(pair[1])), reverse=True)
    return found


def _older_values(
    namespace: MemoryNamespace, memories: Sequence[Memory]
) -> tuple[list[tuple[Memory, Memory]], list[Conflict]]:
    kept = adding.kept_apart(namespace)
    waiting = _waiting_pairs(namespace)
    resolved: list[tuple[Memory, Memory]] = []
    conflicts: list[Conflict] = []
    removed: set[int] = set()
    asked: set[int] = set()
    for newer, older, level in pairs(memories):
        pair = frozenset((newer.id, older.id))
        if pair in kept or pair in waiting or removed & pair:
            continue
        if level == SURE:
            try:
                resolved.append((namespace.delete(older.id), newer))
            except MemoryNotFound:
                continue
            removed.add(older.id)
        elif len(conflicts) < MAX_QUESTIONS and not asked & pair:
            conflicts.append(Conflict(newer, older))
            asked |= pair
    return resolved, [c for c in conflicts if not removed & {c.newer.id, c.older.id}]


# -- questions ----------------------------------------------------------------------------------


def _questions(namespace: MemoryNamespace) -> list[tuple[str, dict[str, Any], str]]:
    """The questions waiting (key, value, version); those too old are dropped."""
    documents = namespace.documents()
    now = time.time()
    found = []
    for document in documents.list(QUESTIONS):
        value = document.value
        at = value.get("at", 0) if isinstance(value, dict) else 0
        if not isinstance(at, int | float) or now - at > KEEP_SECONDS:
            documents.delete(document.key)
            continue
        found.append((document.key, value, document.version))
    return found


def _waiting_pairs(namespace: MemoryNamespace) -> set[frozenset[int]]:
    """The pairs asked about and not answered yet."""
    waiting = set()
    for _, value, _ in _questions(namespace):
        answered = set(value.get("answered", []))
        for number, pair in enumerate(value.get("pairs", [])):
            if number not in answered and isinstance(pair, list) and len(pair) == 2:
                waiting.add(frozenset(pair))
    return waiting


def _ask(namespace: MemoryNamespace, conflicts: Sequence[Conflict]) -> str:
    """Keep ``conflicts`` for the report's buttons; its token."""
    token = new_token()
    record = {"pairs": [[c.newer.id, c.older.id] for c in conflicts], "answered": []}
    namespace.documents().put(QUESTIONS + token, {**record, "at": time.time()})
    return token


@dataclass(frozen=True)
class Settled:
    """What a person chose for a conflict: the memory ``kept`` (None: both kept) and the one
    ``removed`` (None: both kept); ``both`` the pair when both were kept."""

    kept: Memory | None
    removed: Memory | None
    both: tuple[Memory, Memory] | None = None


def settle(
    namespace: MemoryNamespace, caller: Caller, token: str, number: int, choice: str
) -> Settled | None:
    """Settle conflict ``number`` of the question ``token``: keep the ``newer``, the ``older``,
    or ``both``; None if there is no such question or pair, or it was answered, or one of its
    memories is gone. ``NotAllowed`` unless ``caller`` may change the memory removed (keeping
    both: may change the namespace's settings, in a group an administrator)."""
    documents = namespace.documents()
    document = documents.get(QUESTIONS + token)
    value = document.value if document is not None else None
    if document is None or not isinstance(value, dict):
        return None
    pairs_ = value.get("pairs", [])
    if not 0 <= number < len(pairs_) or number in value.get("answered", []):
        return None
    try:
        newer, older = (namespace.get(memory_id) for memory_id in pairs_[number])
    except MemoryNotFound:
        return None
    if choice == "both":
        if not caller.may_change_settings:
            raise NotAllowed(older)
    else:
        loser = older if choice == "newer" else newer
        if not caller.may_change(loser):
            raise NotAllowed(loser)
    answered = {**value, "answered": [*value.get("answered", []), number]}
    try:
        documents.put(QUESTIONS + token, answered, version=document.version)
    except DocumentConflict:
        return None  # another press answered it first
    if choice == "both":
        adding.keep_apart(namespace, [(newer.id, older.id)])
        return Settled(None, None, (newer, older))
    kept, loser = (newer, older) if choice == "newer" else (older, newer)
    return Settled(kept, namespace.delete(loser.id))


__all__ = [
    "PAST_TAGS",
    "QUESTIONS",
    "Conflict",
    "Settled",
    "Tidied",
    "is_past_event",
    "pairs",
    "past_tag",
    "settle",
    "tidy",
]
