"""The known categories: one category for each pair of words, stored in English, shown in the
reader's language.

A known category has an English and a Chinese word (``health`` / ``健康``). Whichever a person
uses (``/remember 健康: …``, ``/list health``, ``/list 健康``, the model's ``category``
argument, the ``"category"`` of an imported file), it is stored as the English word
(``canonical``). English, because ``memory.json`` is the article's format, read by other tools
as well as by this bot: its default category is ``general``, the model's tools suggest the
English words, and a reader of the file (``python -m memory list --category health``, a script
reading an export) finds one category under one value whichever language its memories were
told in. Memories stored before with the Chinese word (or edited so by hand) are not
rewritten: wherever the bot groups or filters by category (``/list``, the ◀ ▶ of its pages,
``/stats``, the model's ``getAllMemories`` and ``getMemoryStats``) it reads each memory's
category through ``canonical`` too, so ``健康`` and ``health`` are one. What a person sees is
the word of their language (``shown``: 健康 to a Chinese reader, health to an English one).

Any other name (``#recipes: …``, ``#菜谱：…``) is the user's own category: kept and shown as
typed (lower-cased by the store), never translated.

The words are the bot's vocabulary. They live beside ``bot.errors`` rather than in
``bot.core`` or ``bot.view`` because both need them and neither may import the other: the core
reads what people type (``bot.core.entry``, the operations, imports, the model's tools) and the
view shows it (``bot.view.render``). The memory library knows a category only as a string (it
stores it, filters by equality and counts), so the bot maps a name before it calls the library
and regroups what the library counted (``merge_counts``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

from memory.model import DEFAULT_CATEGORY, Memory

# (English, Chinese): the English word is the stored one.
PAIRS = (
    (DEFAULT_CATEGORY, "通用"),
    ("personal", "个人"),
    ("work", "工作"),
    ("project", "项目"),
    ("preference", "偏好"),
    ("schedule", "日程"),
    ("contact", "联系人"),
    ("home", "家"),
    ("family", "家庭"),
    ("health", "健康"),
    ("finance", "财务"),
    ("shopping", "购物"),
    ("travel", "旅行"),
    ("study", "学习"),
    ("idea", "想法"),
    ("todo", "待办"),
    ("reminder", "提醒"),  # the memory a reminder is kept as (bot.chat.reminding)
)
# Other spellings people use for the same category.
ALIASES = {"ideas": "idea"}

# The words that may set the category at the start of a note ("work: …", "健康：…"): the known
# ones, but not "reminder" / "提醒", whose note is about a reminder, not in its category.
LEADING_WORDS = frozenset(
    word for english, chinese in PAIRS if english != "reminder" for word in (english, chinese)
) | frozenset(ALIASES)

_CANONICAL = {**{chinese: english for english, chinese in PAIRS}, **ALIASES}
_SHOWN = {"en": {english: english for english, _ in PAIRS}, "zh": dict(PAIRS)}

M = TypeVar("M", bound=Memory)


def canonical(name: str) -> str:
    """The stored name of a category: a known one's English word (``健康`` -> ``health``),
    any other name stripped and lower-cased as the store keeps it."""
    key = name.strip().lower()
    return _CANONICAL.get(key, key)


def is_known(name: str) -> bool:
    """Whether ``name`` (either language) is one of the known categories."""
    return canonical(name) in _SHOWN["en"]


def shown(name: str, language: str) -> str:
    """A category as a reader of ``language`` sees it: a known one in their language, any
    other as stored."""
    key = canonical(name)
    return _SHOWN.get(language, _SHOWN["en"]).get(key, name)


def in_category(memories: Iterable[M], name: str) -> list[M]:
    """The memories of the category ``name`` (either language), in the order given."""
    wanted = canonical(name)
    return [m for m in memories if canonical(m.category) == wanted]


def merge_counts(counts: Mapping[str, int]) -> dict[str, int]:
    """Counts by category (the library's ``byCategory``) with the words of one category added
    up under its stored name, most first (ties: first seen first)."""
    merged: dict[str, int] = {}
    for name, count in counts.items():
        key = canonical(name)
        merged[key] = merged.get(key, 0) + count
    return dict(sorted(merged.items(), key=lambda item: -item[1]))
