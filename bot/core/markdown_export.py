"""``/export md``: every memory of a namespace as one Markdown file a person can read and keep.

The file, for a reader of English (a Chinese reader gets 记忆, 工作 and 标签, 创建 ...)::

    ---
    title: "Memories"
    exported: "2026-12-01T08:30:00.000Z"
    namespace: "users/42"
    count: 2
    generator: "Cogito Memory Bot"
    ---

    # Memories

    ## work

    - standup at 10:00 #meeting
      - tags: #meeting #daily
      - created: 2026-11-30T09:12:44.120Z
      - date: 2026-12-08 15:00
      - id: 1764493964120

Front matter in YAML (the export's time, the namespace, the count); one ``##`` section per
category, in the reader's language (``bot.categories.shown``), the largest first; in each, one
list item per memory, oldest first: its text as written, then its details as a nested list:
tags, when it was stored, the day it speaks of (``date``), for a photo, file or voice note the
file's kind, name and Telegram ``file_id`` (valid for this bot only), and its id. Obsidian
shows the ``#tags`` as tags and the rest as text.

The file reads back exactly (``bot.core.markdown_import``: an export imported into another
namespace gives the same memories, and into its own adds nothing). For that, a memory's text is
escaped where Markdown would read it otherwise, with CommonMark's backslash, which every
Markdown viewer hides: a line that would start a list, a quote, a heading or a rule (``\\- ``,
``\\#``), a backslash before punctuation (``\\\\``), and a ``#word`` that is not one of the
memory's tags (``\\#include``), which would otherwise be read back (and shown by Obsidian) as
a tag. Lines after the first are indented by two spaces, as a list item's are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime

from bot.categories import canonical, shown
from bot.core.entry import hashtag_spans, hashtags
from memory.model import Memory
from memory.timestamps import format_time

GENERATOR = "Cogito Memory Bot"
TITLE = {"en": "Memories", "zh": "记忆"}
# A detail's label in each language: (English, Chinese); the reader takes either.
LABELS = {
    "tags": ("tags", "标签"),
    "created": ("created", "创建"),
    "date": ("date", "日期"),
    "file": ("file", "文件"),
    "id": ("id", "编号"),
}
INDENT = "  "
# ASCII punctuation: what a CommonMark backslash escapes.
PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
_BACKSLASH = re.compile(r"\\(?=[" + re.escape(PUNCTUATION) + "])")
# What a line must not start with to stay text: a list item, a quote, a heading, a rule or
# a heading's underline, a fence, a table row.
# The backslash goes before the group ``mark``: ``\\- item``, ``1\\. item``, ``\\# heading``.
_BLOCK_START = re.compile(
    r"^\s*(?:\d{1,9}(?P<ordered>[.)])|(?P<mark>[-+*>|]|#{1,6}(?=\s|$)|```|~~~|=+\s*$))"
)


def label(key: str, language: str) -> str:
    """A detail's label in ``language``."""
    english, chinese = LABELS[key]
    return chinese if language == "zh" else english


def escape_line(line: str, tags: frozenset[str]) -> str:
    """One line of a memory's text, escaped so that Markdown shows it and the reader reads it
    back as it is (see the module docstring); ``tags`` are the memory's own."""
    line = _BACKSLASH.sub(r"\\\\", line)
    for start, tag in reversed(hashtag_spans(line)):
        if line[start] == "#" and tag.lower() not in tags:
            line = f"{line[:start]}\\{line[start:]}"
    match = _BLOCK_START.match(line)
    if match is not None:
        at = match.start("ordered") if match["ordered"] else match.start("mark")
        line = f"{line[:at]}\\{line[at:]}"
    return line


def _quoted(value: str) -> str:
    """A YAML double-quoted scalar (JSON's string syntax is YAML's)."""
    return json.dumps(value, ensure_ascii=False)


def tags_text(tags: Sequence[str]) -> str:
    """The tags as hashtags (``#work #daily``), or as a YAML list when one cannot be a
    hashtag (a space in it: ``["new york", "work"]``)."""
    if all(hashtags(f"#{tag}") == [tag] for tag in tags):
        return " ".join(f"#{tag}" for tag in tags)
    return "[" + ", ".join(_quoted(tag) for tag in tags) + "]"


def file_text(attachment: object) -> str | None:
    """A memory's file as a detail: kind, name, size and ``file_id`` (None: no file)."""
    if not isinstance(attachment, dict) or not attachment.get("file_id"):
        return None
    parts = [str(attachment.get("kind") or "file")]
    for key in ("name", "title"):
        if attachment.get(key):
            parts.append(str(attachment[key]))
    parts.append(f"file_id `{attachment['file_id']}`")
    return " · ".join(parts)


def memory_item(memory: Memory, language: str) -> list[str]:
    """One memory as a list item with its details."""
    own = frozenset(memory.tags)
    first, *rest = memory.content.split("\n")
    lines = [f"- {escape_line(first, own)}"]
    lines += [INDENT + escape_line(line, own) if line else "" for line in rest]
    details = []
    if memory.tags:
        details.append(("tags", tags_text(memory.tags)))
    details.append(("created", memory.created_at))
    if memory.date:
        details.append(("date", memory.date))
    attached = file_text(dict(memory.attachment) if memory.attachment else None)
    if attached:
        details.append(("file", attached))
    details.append(("id", str(memory.id)))
    lines += [f"{INDENT}- {label(key, language)}: {value}" for key, value in details]
    return lines


def markdown_of(memories: Sequence[Memory], *, namespace: str, language: str, now: datetime) -> str:
    """The Markdown file of ``memories`` (see the module docstring)."""
    title = TITLE.get(language, TITLE["en"])
    groups: dict[str, list[Memory]] = {}
    for memory in memories:
        groups.setdefault(canonical(memory.category), []).append(memory)
    order = sorted(groups, key=lambda name: (-len(groups[name]), shown(name, language)))
    lines = [
        "---",
        f"title: {_quoted(title)}",
        f"exported: {_quoted(format_time(now))}",
        f"namespace: {_quoted(namespace)}",
        f"count: {len(memories)}",
        f"generator: {_quoted(GENERATOR)}",
        "---",
        "",
        f"# {title}",
    ]
    for name in order:
        lines += ["", f"## {escape_line(shown(name, language), frozenset())}", ""]
        for number, memory in enumerate(groups[name]):
            if number:
                lines.append("")
            lines += memory_item(memory, language)
    return "\n".join(lines) + "\n"


__all__ = ["LABELS", "TITLE", "escape_line", "label", "markdown_of", "tags_text"]
