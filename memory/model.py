"""The values of the memory model: a memory, a search hit, a namespace's statistics.

A memory is the article's record ``{id, content, tags, category, createdAt, accessedAt,
accessCount}``; on disk it keeps those camelCase keys (``to_dict``/``from_dict``), in Python
it is a frozen dataclass with snake_case fields. ``updatedAt`` and ``source`` (where the memory
came from, such as ``telegram:42:1001``, which makes a redelivered message add nothing) and
``date`` (the local day, and time if one was named, that the content speaks of: "下周二下午三点"
saved on 2026-12-01 is ``2026-12-08 15:00``; resolved when stored, searched as a date) are ours
and optional, so a
plain article-format file loads unchanged. Identity and persistence belong to the store. Its
times are the article's strings (``memory.timestamps``).

``attachment`` and ``origin`` are the client's too, optional and opaque to the library: small
flat JSON objects (``clean_extra``: text, numbers, true/false), such as the reference to a file
the memory was made from and who first wrote a forwarded message. The library keeps them with
the memory and never searches them; a hand-edited one that is not such an object is dropped on
load rather than making the memory unreadable.
"""

from __future__ import annotations

import heapq
import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from memory.errors import MemoryInvalid
from memory.timestamps import format_time_ms, normalize_time

DEFAULT_CATEGORY = "general"
MAX_CONTENT_CHARS = 4000
MAX_TAGS = 20
MAX_TAG_CHARS = 64
MAX_CATEGORY_CHARS = 64
MAX_LIMIT = 1000
MAX_EXTRA_KEYS = 12  # keys of an ``attachment`` or ``origin``
MAX_EXTRA_CHARS = 512  # characters of one of their text values
MAX_ID = 2**63  # ids stay below it: a signed 64-bit integer, as other stores keep them
_SURROGATE = re.compile("[\ud800-\udfff]")  # half a UTF-16 pair: no UTF-8 file can hold it


# Full-width digits (Chinese and Japanese keyboards) as ASCII; zero-width characters (pasted
# along with a number) as nothing. Other digits (superscripts, Arabic-Indic) stay refused.
_PHONE_DIGITS: dict[int, int | None] = {0xFF10 + n: ord("0") + n for n in range(10)}
_PHONE_DIGITS.update(dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"), None))


def _digits(value: str) -> str:
    """``value`` as typed on a phone, read as plain text: full-width ``１２３`` is ``123``."""
    return value.translate(_PHONE_DIGITS).strip()


def parse_id(value: object) -> int:
    """A memory id from an int or a string of digits (full-width ones too); anything else is
    ``MemoryInvalid``."""
    if isinstance(value, bool):
        raise MemoryInvalid(f"not a memory id: {value!r}", field="id")
    text = _digits(value) if isinstance(value, str) else ""
    if isinstance(value, int):
        memory_id = value
    elif text.isascii() and text.isdigit():
        digits = text.lstrip("0") or "0"
        memory_id = int(digits) if len(digits) < 20 else MAX_ID  # int() refuses 4300+ digits
    else:
        raise MemoryInvalid(f"not a memory id: {value!r} (ids are whole numbers)", field="id")
    if not 0 < memory_id < MAX_ID:
        raise MemoryInvalid(f"not a memory id: {value!r} (out of range)", field="id")
    return memory_id


def parse_limit(value: object, *, maximum: int = MAX_LIMIT) -> int:
    """A result limit: a positive whole number no larger than ``maximum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        text = _digits(value) if isinstance(value, str) else ""
        if text.isascii() and text.isdigit():
            digits = text.lstrip("0") or "0"
            value = int(digits) if len(digits) < 20 else 10**20  # int() refuses 4300+ digits
        else:
            raise MemoryInvalid(f"limit must be a whole number, not {value!r}", field="limit")
    if not 1 <= value <= maximum:
        raise MemoryInvalid(f"limit must be between 1 and {maximum}, not {value}", field="limit")
    return value


def clean_content(content: object) -> str:
    """Content as stored: a non-blank string of at most ``MAX_CONTENT_CHARS`` characters."""
    if not isinstance(content, str):
        raise MemoryInvalid("content must be text", field="content")
    if "\x00" in content or _SURROGATE.search(content):
        raise MemoryInvalid(
            "content must not contain NUL characters or lone surrogates", field="content"
        )
    content = content.strip()
    if not content:
        raise MemoryInvalid("content is empty", field="content")
    if len(content) > MAX_CONTENT_CHARS:
        raise MemoryInvalid(
            f"content is {len(content)} characters; the maximum is {MAX_CONTENT_CHARS}",
            field="content",
        )
    return content


_DATE = re.compile(r"\d{4}-\d\d-\d\d(?: \d\d:\d\d)?")


def clean_date(date: object) -> str | None:
    """A memory's ``date``: ``YYYY-MM-DD`` or ``YYYY-MM-DD HH:MM`` (local), or None."""
    if date is None:
        return None
    if not isinstance(date, str) or not _DATE.fullmatch(date):
        raise MemoryInvalid(f"a date is YYYY-MM-DD or YYYY-MM-DD HH:MM, not {date!r}", field="date")
    return date


def _time_of_id(memory_id: object) -> str:
    try:
        return format_time_ms(parse_id(memory_id))
    except (OverflowError, OSError, ValueError):
        return format_time_ms(0)


def _is_clean_content(content: object) -> TypeGuard[str]:
    """Whether ``content`` is already stored content (a fast check, no errors)."""
    return (
        type(content) is str
        and 0 < len(content) <= MAX_CONTENT_CHARS
        and not content[0].isspace()
        and not content[-1].isspace()
        and "\x00" not in content
    )


def _clean_label(value: object, what: str, maximum: int) -> str:
    if not isinstance(value, str):
        raise MemoryInvalid(f"{what} must be text, not {value!r}", field=what)
    label = value.strip().lower()
    # isprintable() is a fast pass; it also refuses spaces such as U+3000, which are allowed.
    if not label.isprintable() and any(
        unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp") for ch in label
    ):
        raise MemoryInvalid(f"{what} {value!r} contains control characters", field=what)
    if len(label) > maximum:
        raise MemoryInvalid(f"{what} is longer than {maximum} characters", field=what)
    return label


def _is_clean(label: object) -> TypeGuard[str]:
    """Whether ``label`` is already a stored tag or category (a fast check, no errors)."""
    return (
        type(label) is str
        and 0 < len(label) <= MAX_TAG_CHARS
        and label.isprintable()
        and label == label.strip().lower()
    )


def clean_tags(tags: Iterable[object] | str) -> tuple[str, ...]:
    """Tags as stored: stripped, lower-cased, without blanks or duplicates, in order."""
    if isinstance(tags, str):
        tags = tags.split(",")
    elif (
        type(tags) is list
        and len(tags) <= MAX_TAGS
        and all(_is_clean(t) for t in tags)
        and len(set(tags)) == len(tags)
    ):
        return tuple(tags)  # the fast path for files the store wrote itself
    elif not isinstance(tags, Iterable) or isinstance(tags, Mapping | bytes):
        raise MemoryInvalid(f"tags must be a list of text, not {tags!r}", field="tags")
    seen: dict[str, None] = {}
    for tag in tags:
        label = _clean_label(tag, "tag", MAX_TAG_CHARS)
        if label:
            seen.setdefault(label, None)
    if len(seen) > MAX_TAGS:
        raise MemoryInvalid(f"{len(seen)} tags; the maximum is {MAX_TAGS}", field="tags")
    return tuple(seen)


def clean_category(category: object) -> str:
    """A category as stored: lower-cased; blank or missing means ``general``."""
    if category is None:
        return DEFAULT_CATEGORY
    if _is_clean(category) and len(category) <= MAX_CATEGORY_CHARS:
        return category
    return _clean_label(category, "category", MAX_CATEGORY_CHARS) or DEFAULT_CATEGORY


_EXTRA_KEY = re.compile(r"[a-z][a-z0-9_]{0,31}")


def clean_extra(value: object, what: str) -> dict[str, str | int | float | bool] | None:
    """An ``attachment`` or ``origin`` as stored: None, or a flat object of at most
    ``MAX_EXTRA_KEYS`` lower-case keys whose values are text (``MAX_EXTRA_CHARS`` at most),
    whole numbers, numbers or true/false (``MemoryInvalid`` otherwise; null values dropped)."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or len(value) > MAX_EXTRA_KEYS:
        raise MemoryInvalid(
            f"{what} must be an object of at most {MAX_EXTRA_KEYS} keys", field=what
        )
    clean: dict[str, str | int | float | bool] = {}
    for key, item in value.items():
        if not isinstance(key, str) or not _EXTRA_KEY.fullmatch(key):
            raise MemoryInvalid(f"{what}: invalid key {key!r}", field=what)
        if item is None:
            continue
        if isinstance(item, str):
            if len(item) > MAX_EXTRA_CHARS or "\x00" in item or _SURROGATE.search(item):
                raise MemoryInvalid(f"{what}.{key}: text too long or not valid", field=what)
        elif isinstance(item, int) and not isinstance(item, bool):
            if not -MAX_ID < item < MAX_ID:
                raise MemoryInvalid(f"{what}.{key}: number out of range", field=what)
        elif not isinstance(item, bool | float) or item != item or item in (_INF, -_INF):
            raise MemoryInvalid(f"{what}.{key} must be text, a number or true/false", field=what)
        clean[key] = item
    return clean or None


def _loaded_extra(value: object) -> dict[str, str | int | float | bool] | None:
    """``clean_extra`` for a record read back: a damaged one is dropped, not fatal."""
    try:
        return clean_extra(value, "extra")
    except MemoryInvalid:
        return None


_INF = float("inf")


@dataclass(frozen=True, slots=True)
class Memory:
    """One remembered thing, with the article's fields."""

    id: int
    content: str
    tags: tuple[str, ...] = ()
    category: str = DEFAULT_CATEGORY
    created_at: str = ""
    accessed_at: str = ""
    access_count: int = 0
    updated_at: str | None = None
    source: str | None = None
    date: str | None = None
    # The client's file reference and forward origin (``clean_extra``); not part of the hash:
    # they are dicts, and a memory's identity is its id anyway.
    attachment: Mapping[str, str | int | float | bool] | None = field(default=None, hash=False)
    origin: Mapping[str, str | int | float | bool] | None = field(default=None, hash=False)

    def used(self, at: str) -> Memory:
        """This memory counted as used at ``at``: ``accessCount`` + 1, ``accessedAt`` ``at``.

        ``dataclasses.replace`` with those two, made directly: a search touches every hit,
        and ``replace`` costs several times as much (tests/memory/test_model.py holds the two
        equal with every field set)."""
        return Memory(
            self.id,
            self.content,
            self.tags,
            self.category,
            self.created_at,
            at,
            self.access_count + 1,
            self.updated_at,
            self.source,
            self.date,
            self.attachment,
            self.origin,
        )

    def to_dict(self) -> dict[str, Any]:
        """The article's on-disk record (camelCase keys); ``updatedAt``, ``source``, ``date``,
        ``attachment`` and ``origin`` when set."""
        record: dict[str, Any] = {
            "id": self.id,
            "content": self.content,
            "tags": list(self.tags),
            "category": self.category,
            "createdAt": self.created_at,
            "accessedAt": self.accessed_at,
            "accessCount": self.access_count,
        }
        if self.updated_at is not None:
            record["updatedAt"] = self.updated_at
        if self.source is not None:
            record["source"] = self.source
        if self.date is not None:
            record["date"] = self.date
        if self.attachment is not None:
            record["attachment"] = dict(self.attachment)
        if self.origin is not None:
            record["origin"] = dict(self.origin)
        return record

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Memory:
        """Read an article-format record, tolerating what a person may have left out.

        Missing ``tags``, ``category``, ``accessedAt`` or ``accessCount`` take their defaults;
        a missing ``id`` or ``content`` is ``MemoryInvalid``.
        """
        if not isinstance(record, dict | Mapping):
            raise MemoryInvalid(f"a memory must be a JSON object, not {record!r}")
        if "id" not in record or "content" not in record:
            raise MemoryInvalid("a memory needs an id and a content")
        # The article's ids are Date.now(): a missing time is taken from the id, the same on
        # every load (a fresh "now" would change each time the file is read).
        created = record.get("createdAt") or _time_of_id(record["id"])
        if not isinstance(created, str):
            raise MemoryInvalid(f"createdAt must be text, not {created!r}", field="createdAt")
        accessed = record.get("accessedAt") or created
        count = record.get("accessCount", 0)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise MemoryInvalid(f"accessCount must be a whole number, not {count!r}")
        updated = record.get("updatedAt")
        source = record.get("source")
        memory_id, content = record["id"], record["content"]
        if type(memory_id) is not int or not 0 < memory_id < MAX_ID:
            memory_id = parse_id(memory_id)
        return cls(
            id=memory_id,
            content=content if _is_clean_content(content) else clean_content(content),
            tags=clean_tags(record.get("tags") or ()),
            category=clean_category(record.get("category")),
            created_at=normalize_time(created),
            accessed_at=normalize_time(str(accessed)),
            access_count=count,
            updated_at=normalize_time(updated) if isinstance(updated, str) else None,
            source=source if isinstance(source, str) and source else None,
            date=clean_date(record.get("date")),
            attachment=_loaded_extra(record.get("attachment")),
            origin=_loaded_extra(record.get("origin")),
        )

    @classmethod
    def from_store(cls, record: Mapping[str, Any]) -> Memory:
        """Read a record the store itself wrote and nobody has edited since (unvalidated).

        Opening a namespace of 10,000 memories spends most of its time validating; a snapshot
        known to be the store's own output (see ``memory.files.folder``) skips that. Anything
        unexpected still falls back to ``from_dict``.
        """
        try:
            # One string for a category and for an access time equal to the creation time,
            # not one per memory: some 13 MiB of 100,000 memories.
            created, accessed = record["createdAt"], record["accessedAt"]
            return cls(
                record["id"],
                record["content"],
                tuple(record["tags"]),
                sys.intern(record["category"]),
                created,
                created if accessed == created else accessed,
                record["accessCount"],
                record.get("updatedAt"),
                record.get("source"),
                record.get("date"),
                record.get("attachment"),
                record.get("origin"),
            )
        except (KeyError, TypeError):
            return cls.from_dict(record)


@dataclass(frozen=True, slots=True)
class Added:
    """What an add did: the memory stored, or the one already stored with the same content
    (``duplicate``: nothing was written)."""

    memory: Memory
    duplicate: bool = False


@dataclass(frozen=True, slots=True)
class Evidence:
    """How a search hit matched its query, beyond its place in the ranking.

    The ranking's score says which memory is better; these say how good the best is, which
    the fused score cannot (it is scaled to the best keyword match, so the top hit scores about
    1.0 whatever was asked). ``memory.relevance`` decides from them what is shown.

    - ``coverage``: the share of the query's keyword weight (idf x query frequency, the
      question's own terms, not the feedback round's) found in the memory, 0..1;
    - ``keyword_rank``: the memory's place in the keyword ranking (0: its best), None if it is
      not among its best ``memory.hybrid.DEPTH``;
    - ``cosine``: its cosine with the query's embedding (None: no vector for it, or keywords
      only);
    - ``typical``: the mean cosine of the namespace's embedded memories with the query, the
      level an unrelated memory reaches (the same for every hit of one search);
    - ``best``: the highest cosine of any memory of the namespace with the query;
    - ``embedded``: how many of the namespace's memories have a vector (``typical`` is their
      mean: of one memory, it is that memory's own cosine, and says nothing); None: not told.
    """

    coverage: float
    keyword_rank: int | None
    cosine: float | None = None
    typical: float | None = None
    best: float | None = None
    embedded: int | None = None


@dataclass(frozen=True, slots=True)
class Hit:
    """A memory found by ``search`` or ``related``, with its score (higher is better) and, for
    a search, how it matched (``evidence``)."""

    memory: Memory
    score: float
    evidence: Evidence | None = None

    def to_dict(self) -> dict[str, Any]:
        """The memory's article record with an added ``score``."""
        return {**self.memory.to_dict(), "score": round(self.score, 4)}


def most_used(memories: Iterable[Memory], limit: int, *, used_only: bool = True) -> list[Memory]:
    """The ``limit`` memories used most often; with ``used_only``, never one unused.

    The one order of "most used", for ``stats`` and the bot's digest alike: the higher
    ``accessCount`` first, ties to the one used last (``accessedAt``; stored times are all in
    the article's fixed-width UTC form, so they compare as text), then to the newer id. The
    article's ``mostAccessed`` is the top 5 by ``accessCount`` whatever it is (``used_only``
    false); the bot never calls an unused memory "most used".
    """
    used = (m for m in memories if m.access_count > 0 or not used_only)
    return heapq.nlargest(limit, used, key=lambda m: (m.access_count, m.accessed_at, m.id))


@dataclass(frozen=True, slots=True)
class Stats:
    """The article's ``getMemoryStats``: totals, categories, top tags, most accessed."""

    total: int
    by_category: dict[str, int] = field(default_factory=dict)
    top_tags: list[tuple[str, int]] = field(default_factory=list)
    most_accessed: list[Memory] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """The article's JSON shape (``topTags`` as an object, most frequent first)."""
        return {
            "total": self.total,
            "byCategory": dict(self.by_category),
            "topTags": dict(self.top_tags),
            "mostAccessed": [m.to_dict() for m in self.most_accessed],
        }
