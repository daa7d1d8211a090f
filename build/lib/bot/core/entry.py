"""What a user types after a command: the memory's text, its tags and its category.

The syntax, as /help documents it::

    /remember work: standup at 10:00 #meeting #daily
              ^^^^^ category        ^^^^^^^^^^^^^^^^ tags

- ``#hashtags`` anywhere become tags. A run of hashtags at the end is removed from the content;
  a hashtag inside a sentence keeps its word there (``my #car is blue`` -> ``my car is blue``).
- A first word followed by a colon and a space (``work: ...``), or by a full-width colon
  (``工作：...``, no space needed), is the category. ``D:\\projects``, ``10:30`` or
  ``https://...`` are not: the colon there is not followed by a space.
- No hashtags: up to five keywords of the content become the tags (``keywords``).

The bot only parses; the memory library cleans and stores (lower-cases tags and categories,
enforces the limits).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory.model import MAX_TAG_CHARS
from memory.text import STOP_WORDS, query_words

MAX_KEYWORDS = 5

_TAG_BODY = r"(?!\d+(?![\w-]))\w[\w-]*"  # letters, digits, _ and -, not only digits
_HASHTAG = re.compile(rf"(?<![\w#&/])#({_TAG_BODY})")
_TRAILING_HASHTAGS = re.compile(rf"(?:\s*(?<![\w#&/])#{_TAG_BODY})+\s*\Z")
_COMMAND = re.compile(r"\s*/(\w+)(?:@\w+)?(.*)\Z", re.DOTALL)
_CATEGORY = re.compile(r"\A\s*([^\W_][\w-]{0,31})(?::[ \t]+|:\s*\n|：\s*)(?=\S)", re.UNICODE)

# Words that say nothing about a memory in chat-style Chinese (single characters are dropped
# anyway) and the pieces of a web address; English stop words come from the search's own list.
_CHINESE_STOP_WORDS = frozenset(
    """
    我们 你们 他们 她们 它们 这个 那个 这些 那些 一个 一些 什么 怎么 怎样 为什么 哪里 哪儿
    可以 没有 因为 所以 但是 如果 还是 已经 就是 自己 记得 记住 一下 现在 时候 还有 或者
    http https www com
    """.split()
)
_NOT_A_TAG = re.compile(r"[:\\/'’]")


@dataclass(frozen=True)
class Entry:
    """A memory as the user wrote it: content, tags, category (None: not given)."""

    content: str
    tags: tuple[str, ...]
    category: str | None
    derived_tags: bool = False


def split_command(text: str) -> tuple[str, str]:
    """``/remember@bot  rest\\nmore`` -> (``remember``, ``rest\\nmore``): inner lines kept."""
    match = _COMMAND.match(text)
    if match is None:
        return "", text.strip()
    return match.group(1).lower(), match.group(2).strip()


def hashtags(text: str) -> list[str]:
    """The hashtags of ``text`` without the ``#``, in order (``#123`` is not a hashtag)."""
    return _HASHTAG.findall(text)


def keywords(text: str, limit: int = MAX_KEYWORDS) -> list[str]:
    """Up to ``limit`` keywords of ``text``, in order: no stop words, no single characters,
    nothing longer than a tag may be."""
    found: list[str] = []
    for word in query_words(text):
        # A word too long for a tag (a key, an address) stays in the content, not in the tags.
        if not 2 <= len(word) <= MAX_TAG_CHARS or word.isdigit() or _NOT_A_TAG.search(word):
            continue
        if word in STOP_WORDS or word in _CHINESE_STOP_WORDS:
            continue
        found.append(word)
        if len(found) == limit:
            break
    return found


def parse_entry(text: str, *, derive_tags: bool = True) -> Entry:
    """Read the category, the hashtags and the content of ``text`` (see the module docstring).

    With ``derive_tags`` and no hashtags, the content's keywords become the tags.
    """
    category = None
    match = _CATEGORY.match(text)
    if match and not match.group(1).isdigit():
        category = match.group(1)
        text = text[match.end() :]
    tags = tuple(dict.fromkeys(tag.lower() for tag in hashtags(text)))
    content = _TRAILING_HASHTAGS.sub("", text)
    content = _HASHTAG.sub(r"\1", content)
    content = content.strip()
    if not tags and derive_tags and content:
        return Entry(content, tuple(keywords(content)), category, derived_tags=True)
    return Entry(content, tags, category)
