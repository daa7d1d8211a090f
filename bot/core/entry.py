"""What a user types after a command: the memory's text, its tags and its category.

The syntax, as /help documents it::

    /remember work: standup at 10:00 #meeting #daily
              ^^^^^ category        ^^^^^^^^^^^^^^^^ tags

- ``#hashtags`` (or full-width ``＃``) anywhere become tags; a tag is letters, digits, ``_``,
  ``-`` or emoji (``#🍕``), never only digits, and ends at punctuation (``#买菜，#周末`` is
  ``买菜`` and ``周末``). They also stay in the content exactly as typed, ``#`` included: a
  hashtag inside a sentence is part of it (``Buy #milk and eggs``), and so is a run of them at
  the end (``standup at 10 #work #daily``): what the person wrote is what they read back, and
  the store's duplicate check reads ``#milk`` as ``milk`` (``memory.text.content_key``). Only a
  text that is nothing but hashtags (``/edit 17… #car``, ``/remember #wifi`` as a reply) has no
  content: its hashtags are labels for the memory, not a note.
- The content is the whole text as typed. A category is set only at the very start, by one of
  the known category words (``bot.categories.LEADING_WORDS``: ``work``, ``personal``, ``工作``,
  ``个人`` ...) followed by a colon (``work: ...``, ``工作：...``), or by any name written as a
  hashtag with a colon (``#recipes: ...``, ``#菜谱：...``); that word and its colon are then the
  category, not content. A known category is given by its stored (English) name whichever
  language it was typed in (``健康：…`` is ``health``: ``bot.categories``); any other name
  as typed. Any other text before a colon is the note itself: ``Password:
  hunter2``, ``Re: the contract``, ``公司WiFi密码：Tr0ub4dor&3`` keep every character (a
  category read from "any first word" swallowed them before).
- No hashtags: up to five words of the content a person would pick as tags become the tags
  (``bot.core.keywords``: names, things, places, identifying numbers).

The bot only parses; the memory library cleans and stores (lower-cases tags and categories,
enforces the limits).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.categories import LEADING_WORDS, canonical, is_known
from bot.core.keywords import keywords

# Emoji (pictographs, symbols, dingbats), their variation selector, skin tones and joiner.
_EMOJI = "\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff\ufe0f\u200d"
_TAG_CHAR = rf"[\w{_EMOJI}]"
# Letters, digits, _, - and emoji; not only digits (``#123`` is a number, not a tag).
_TAG_BODY = rf"(?!\d+(?![\w-]))(?:{_TAG_CHAR}[\w{_EMOJI}-]*)"
_MARK = "[#＃]"  # full-width ＃ as typed on Chinese and Japanese phone keyboards
_HASHTAG = re.compile(rf"(?<![\w#＃&/]){_MARK}({_TAG_BODY})")
_TAG_SEPARATORS = r"[\s,，、;；]*"
_ONLY_HASHTAGS = re.compile(
    rf"(?:{_TAG_SEPARATORS}(?<![\w#＃&/]){_MARK}{_TAG_BODY})+[\s,，、;；.。!！]*"
)
_COMMAND = re.compile(r"\s*/(\w+)(?:@\w+)?(.*)\Z", re.DOTALL)
_COLON = r"\s*(?::[ \t]+|:\s*\n|：\s*)(?=\S)"
_CATEGORY = re.compile(rf"\A\s*(?P<mark>{_MARK})?(?P<name>[^\W_][\w-]{{0,63}}){_COLON}")


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


def hashtag_spans(text: str) -> list[tuple[int, str]]:
    """Where each hashtag of ``text`` starts (its ``#``) and its tag, in order."""
    return [(match.start(), match.group(1)) for match in _HASHTAG.finditer(text)]


def parse_entry(text: str, *, derive_tags: bool = True) -> Entry:
    """Read the category, the hashtags and the content of ``text`` (see the module docstring).

    With ``derive_tags`` and no hashtags, the content's keywords become the tags.
    """
    category = None
    match = _CATEGORY.match(text)
    if match and (match["mark"] or match["name"].lower() in LEADING_WORDS):
        category = canonical(match["name"]) if is_known(match["name"]) else match["name"]
        text = text[match.end() :]
    tags = tuple(dict.fromkeys(tag.lower() for tag in hashtags(text)))
    content = "" if _ONLY_HASHTAGS.fullmatch(text) else text.strip()
    if not tags and derive_tags and content:
        return Entry(content, tuple(keywords(content)), category, derived_tags=True)
    return Entry(content, tags, category)
