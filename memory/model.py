"""The values of the memory model: a memory, a search hit, a namespace's statistics.

A memory is the article's record ``{id, content, tags, category, createdAt, accessedAt,
accessCount}``; on disk it keeps those camelCase keys (``to_dict``/``from_dict``), in Python
it is a frozen dataclass with snake_case fields. ``updatedAt`` is ours and optional, so a
plain article-format file loads unchanged. Identity and persistence belong to the store.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memory.errors import MemoryInvalid

DEFAULT_CATEGORY = "general"
MAX_CONTENT_CHARS = 4000
MAX_TAGS = 20
MAX_TAG_CHARS = 64
MAX_CATEGORY_CHARS = 64
MAX_LIMIT = 1000


def now_iso() -> str:
    """The current time as the article writes it: ISO-8601 UTC with milliseconds and ``Z``."""
    return format_time(datetime.now(UTC))


def format_time(moment: datetime) -> str:
    """``moment`` as ``2024-01-15T10:30:00.000Z`` (naive datetimes are taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_time(text: str) -> datetime:
    """Parse an ISO-8601 time (``Z`` or an offset; none means UTC) into an aware datetime."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, AttributeError) as e:
        raise MemoryInvalid(f"not an ISO-8601 time: {text!r}", field="time") from e
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_id(value: object) -> int:
    """A memory id from an int or a string of digits; anything else is ``MemoryInvalid``."""
    if isinstance(value, bool):
        raise MemoryInvalid(f"not a memory id: {value!r}", field="id")
    if isinstance(value, int):
        memory_id = value
    elif isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        memory_id = int(value.strip())
    else:
        raise MemoryInvalid(f"not a memory id: {value!r} (ids are whole numbers)", field="id")
    if not 0 < memory_id < 2**63:
        raise MemoryInvalid(f"not a memory id: {value!r} (out of range)", field="id")
    return memory_id


def parse_limit(value: object, *, maximum: int = MAX_LIMIT) -> int:
    """A result limit: a positive whole number no larger than ``maximum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value.strip())
        else:
            raise MemoryInvalid(f"limit must be a whole number, not {value!r}", field="limit")
    if not 1 <= value <= maximum:
        raise MemoryInvalid(f"limit must be between 1 and {maximum}, not {value}", field="limit")
    return value


def clean_content(content: object) -> str:
    """Content as stored: a non-blank string of at most ``MAX_CONTENT_CHARS`` characters."""
    if not isinstance(content, str):
        raise MemoryInvalid("content must be text", field="content")
    if "\x00" in content:
        raise MemoryInvalid("content must not contain NUL characters", field="content")
    content = content.strip()
    if not content:
        raise MemoryInvalid("content is empty", field="content")
    if len(content) > MAX_CONTENT_CHARS:
        raise MemoryInvalid(
            f"content is {len(content)} characters; the maximum is {MAX_CONTENT_CHARS}",
            field="content",
        )
    return content


def _clean_label(value: object, what: str, maximum: int) -> str:
    if not isinstance(value, str):
        raise MemoryInvalid(f"{what} must be text, not {value!r}", field=what)
    label = value.strip().lower()
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in label):
        raise MemoryInvalid(f"{what} {value!r} contains control characters", field=what)
    if len(label) > maximum:
        raise MemoryInvalid(f"{what} is longer than {maximum} characters", field=what)
    return label


def clean_tags(tags: Iterable[object] | str) -> tuple[str, ...]:
    """Tags as stored: stripped, lower-cased, without blanks or duplicates, in order."""
    if isinstance(tags, str):
        tags = tags.split(",")
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
    return _clean_label(category, "category", MAX_CATEGORY_CHARS) or DEFAULT_CATEGORY


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

    def to_dict(self) -> dict[str, Any]:
        """The article's on-disk record (camelCase keys); ``updatedAt`` only once set."""
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
        return record

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> Memory:
        """Read an article-format record, tolerating what a person may have left out.

        Missing ``tags``, ``category``, ``accessedAt`` or ``accessCount`` take their defaults;
        a missing ``id`` or ``content`` is ``MemoryInvalid``.
        """
        if not isinstance(record, Mapping):
            raise MemoryInvalid(f"a memory must be a JSON object, not {record!r}")
        if "id" not in record or "content" not in record:
            raise MemoryInvalid("a memory needs an id and a content")
        created = record.get("createdAt") or now_iso()
        if not isinstance(created, str):
            raise MemoryInvalid(f"createdAt must be text, not {created!r}", field="createdAt")
        accessed = record.get("accessedAt") or created
        count = record.get("accessCount", 0)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise MemoryInvalid(f"accessCount must be a whole number, not {count!r}")
        updated = record.get("updatedAt")
        return cls(
            id=parse_id(record["id"]),
            content=clean_content(record["content"]),
            tags=clean_tags(record.get("tags") or ()),
            category=clean_category(record.get("category")),
            created_at=format_time(parse_time(created)),
            accessed_at=format_time(parse_time(str(accessed))),
            access_count=count,
            updated_at=format_time(parse_time(updated)) if isinstance(updated, str) else None,
        )


@dataclass(frozen=True, slots=True)
class Hit:
    """A memory found by ``search`` or ``related``, with its score (higher is better)."""

    memory: Memory
    score: float

    def to_dict(self) -> dict[str, Any]:
        """The memory's article record with an added ``score``."""
        return {**self.memory.to_dict(), "score": round(self.score, 4)}


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
