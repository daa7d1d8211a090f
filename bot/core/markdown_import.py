"""Importing Markdown: ``/export md``'s own file, or notes such as Obsidian keeps.

``read_note(text, title=...)`` turns one ``.md`` file into memory records (the article's
format, as a ``memory.json`` entry; ``bot.core.imports`` then plans and imports them exactly as
it does a JSON file: the same preview, duplicates recognised by their text):

- **Front matter** (YAML between ``---`` lines) gives every memory of the note its ``tags``
  (a list, or words separated by commas or spaces), its ``category`` and its ``created`` time
  and named ``date``. Only that simple YAML is read (``key: value``, ``key: [a, b]``, a
  ``- item`` list under ``key:``), by our code: nothing in a file can make the reader build
  objects or expand aliases.
- **A list note** (its text is ``- items`` under headings, as ``/export md`` writes it, or a
  plain list of things to remember) is one memory per top-level item: the item's lines are its
  text, a ``## heading`` above it its category (in either language: ``## 工作`` is ``work``),
  and its nested ``- tags:``, ``- created:``, ``- date:``, ``- id:`` details (English or Chinese
  labels) what they say; ``- file:`` is dropped, as a JSON import drops a file reference (it is
  valid for the bot that wrote it only). Any other nested line is part of the text.
- **Any other note** is one memory: its title (the file's name, unless the text starts with it)
  and its text.

In both, ``#hashtags`` in the text are tags too (not ``\\#escaped`` ones, nor those in code),
and CommonMark's backslash escapes are read as a viewer shows them (``\\-`` is ``-``), which
is how ``/export md`` keeps a memory's text exact. A note has at most ``MAX_TAGS`` tags (the
first ones); a memory the store refuses (too long, empty) is refused in the preview, alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from bot.categories import canonical
from bot.core.entry import hashtags
from bot.core.markdown_export import LABELS, PUNCTUATION
from memory.errors import MemoryInvalid
from memory.model import MAX_TAG_CHARS, MAX_TAGS, clean_date
from memory.timestamps import normalize_time

MAX_FRONT_MATTER_LINES = 200
_ESCAPE = re.compile(r"\\([" + re.escape(PUNCTUATION) + "])")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$|^(#{1,6})[ \t]*$")
_BULLET = re.compile(r"^[-*+](?:[ \t]+(.*))?$")
_LABEL = {word: key for key, words in LABELS.items() for word in words}
_DETAIL = re.compile(r"^[-*+][ \t]+([^\s:：]+)[ \t]*[:：][ \t]*(.*)$")
_CODE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]*`", re.DOTALL)
_ID = re.compile(r"[0-9]{1,19}")
INDENTS = ("  ", "\t")


def unescape(text: str) -> str:
    """``text`` as a Markdown viewer shows it: ``\\#`` is ``#``, ``\\\\`` is ``\\``."""
    return _ESCAPE.sub(r"\1", text)


def text_tags(text: str) -> list[str]:
    """The ``#hashtags`` of Markdown ``text``: not escaped ones, not in code, and only with
    the ASCII ``#`` (as Obsidian reads them)."""
    masked = _CODE.sub(lambda m: " " * len(m.group(0)), text)
    masked = _ESCAPE.sub("  ", masked).replace("＃", " ")
    return [tag.lower() for tag in hashtags(masked) if len(tag) <= MAX_TAG_CHARS]


@dataclass
class _Meta:
    """What a note's front matter or a memory's details say."""

    tags: list[str]
    category: str | None = None
    created: str | None = None
    date: str | None = None
    id: int | None = None


def _scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            decoded = json.loads(value)
        except ValueError:
            return value[1:-1]
        return decoded if isinstance(decoded, str) else value
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def _words(value: str) -> list[str]:
    """A tags value: ``[a, b]``, ``"a, b"``, ``#a #b`` or ``a b``."""
    value = value.strip()
    if value.startswith("[") and value.endswith("]"):
        try:
            items = json.loads(value)
        except ValueError:
            items = [_scalar(part) for part in value[1:-1].split(",")]
        return [str(item) for item in items if isinstance(item, str | int)]
    return [word.lstrip("#") for word in re.split(r"[,\s]+", _scalar(value)) if word.strip("#")]


def _time(value: str) -> str | None:
    try:
        return normalize_time(_scalar(value))
    except MemoryInvalid:
        return None


def _date(value: str) -> str | None:
    try:
        return clean_date(_scalar(value))
    except MemoryInvalid:
        return None


def front_matter(lines: list[str]) -> tuple[_Meta, list[str]]:
    """The note's front matter and the lines after it (all of them when it has none)."""
    meta = _Meta([])
    if not lines or lines[0].strip() != "---":
        return meta, lines
    end = next(
        (n for n, line in enumerate(lines[1 : MAX_FRONT_MATTER_LINES + 1], 1) if line.strip()
         in ("---", "...")),
        None,
    )  # fmt: skip
    if end is None:
        return meta, lines  # no end: not front matter, the text of the note
    key = ""
    for line in lines[1:end]:
        item = re.match(r"^\s+-\s*(.*)$", line)
        if item is not None and key == "tags":
            meta.tags += _words(item.group(1))
            continue
        pair = re.match(r"^([A-Za-z_][\w -]*?)\s*:\s*(.*)$", line)
        if pair is None:
            continue
        key, value = pair.group(1).strip().lower(), pair.group(2)
        if key in ("tags", "tag") and value.strip():
            meta.tags += _words(value)
            key = "tags"
        elif key == "category" and _scalar(value):
            meta.category = _scalar(value)
        elif key in ("created", "created_at", "createdat") and value.strip():
            meta.created = _time(value)
        elif key == "date" and value.strip():
            meta.date = _date(value)
    return meta, lines[end + 1 :]


def _record(content: str, meta: _Meta, base: _Meta) -> dict[str, Any]:
    tags = list(dict.fromkeys([*base.tags, *meta.tags, *text_tags(content)]))
    tags = [tag.strip().lower() for tag in tags if tag.strip() and len(tag) <= MAX_TAG_CHARS]
    record: dict[str, Any] = {
        "content": unescape(content).strip(),
        "tags": list(dict.fromkeys(tags))[:MAX_TAGS],
        "category": canonical(meta.category or base.category or "general"),
    }
    if meta.id is not None:
        record["id"] = meta.id
    created = meta.created or base.created
    if created:
        record["createdAt"] = created
    if meta.date or base.date:
        record["date"] = meta.date or base.date
    return record


def _is_list(lines: list[str]) -> bool:
    """Whether a note's text is a list: every line at the margin a heading or an item."""
    top = [line for line in lines if line.strip() and not line[0].isspace()]
    items = [line for line in top if _BULLET.match(line)]
    return bool(items) and all(_BULLET.match(line) or _HEADING.match(line) for line in top)


def _detail(line: str, meta: _Meta) -> bool:
    """Read a nested ``- label: value`` into ``meta``; whether it was one (a value that does
    not read is not: the line stays text)."""
    match = _DETAIL.match(line)
    key = _LABEL.get(match.group(1).lower()) if match else None
    if match is None or key is None:
        return False
    value = match.group(2).strip()
    if key == "tags":
        meta.tags += _words(value)
        return True
    if key == "created":
        meta.created = _time(value)
        return meta.created is not None
    if key == "date":
        meta.date = _date(value)
        return meta.date is not None
    if key == "id":
        if _ID.fullmatch(value) and 0 < int(value) < 2**63:
            meta.id = int(value)
            return True
        return False
    return True  # file: a reference for the bot that wrote it only


def _list_records(lines: list[str], base: _Meta) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    category = base.category
    text: list[str] | None = None
    meta = _Meta([])

    def close() -> None:
        nonlocal text
        if text is not None:
            while text and not text[-1].strip():
                text.pop()
            records.append(
                _record("\n".join(text), meta, _Meta(base.tags, category, base.created, base.date))
            )
        text = None

    for line in lines:
        heading = _HEADING.match(line)
        bullet = _BULLET.match(line)
        if heading is not None:
            close()
            if (heading.group(1) or heading.group(3)) == "##" and heading.group(2):
                category = unescape(heading.group(2)).strip()
        elif bullet is not None:
            close()
            text, meta = [bullet.group(1) or ""], _Meta([])
        elif text is None:
            continue  # blank lines before the first item
        elif not line.strip() and not line.startswith(INDENTS):
            text.append("")
        else:
            inner = line[2:] if line.startswith("  ") else line[1:] if line[0] == "\t" else line
            if not (inner[:1] in "-*+" and _detail(inner, meta)):
                text.append(inner)
    close()
    return records


def read_note(text: str, *, title: str = "") -> list[dict[str, Any]]:
    """The memory records of one Markdown note (see the module docstring); ``title`` is its
    file's name without ``.md``. Records have no ``id`` unless the note gave one."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    base, body = front_matter(lines)
    if _is_list(body):
        return _list_records(body, base)
    content = "\n".join(body).strip()
    first, newline, rest = content.partition("\n")
    heading = _HEADING.match(first)
    if heading is not None:  # "# Dentist": the title, as text
        first = heading.group(2) or ""
        content = first + newline + rest
    if title and unescape(first).strip() != title.strip():
        content = f"{title}\n\n{content}" if content else title
    if not content.strip():
        return []
    return [_record(content, _Meta([]), base)]


__all__ = ["read_note", "text_tags", "unescape"]
