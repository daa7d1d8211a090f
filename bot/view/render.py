"""Turning memories into Telegram HTML, and HTML into messages Telegram accepts.

Replies use HTML parse mode because its escaping is total and simple: after ``escape`` no
stored or user-supplied string can open a tag or an entity, so a memory containing ``<b>``,
``&`` or ``_*[`` shows literally and no reply fails with "can't parse entities" (Markdown has
no such complete escaping). Every string that did not come from ``bot.view.i18n`` goes through
``escape`` before it is put into a template.

Telegram refuses a message longer than 4096 UTF-16 code units (counted after the HTML is
parsed). ``split_html`` cuts a long reply on line boundaries, hard-cuts a single line that is
too long by itself, and closes the tags open at each cut and reopens them in the next part, so
that every part is balanced HTML on its own.

This module is pure: no Telegram calls, no store.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence

from bot.categories import shown
from bot.view.i18n import t
from memory.model import Hit, Memory, Stats

MAX_MESSAGE = 4096  # UTF-16 code units, Telegram's limit for a message's text
PREVIEW_CHARS = 200  # content shown per memory in /list and /stats

_TOKEN = re.compile(r"<[^<>]*>|&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z]+);|[^<&]+|[<&]")
_TAG = re.compile(r"<(/?)([A-Za-z-]+)")
_ANY_TAG = re.compile(r"<[^<>]*>")


def escape(text: str) -> str:
    """``text`` made safe for Telegram HTML (``&``, ``<`` and ``>`` become entities)."""
    return html.escape(text, quote=False)


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units, as Telegram counts it."""
    return len(text.encode("utf-16-le")) // 2


def to_plain(markup: str) -> str:
    """The text a user sees for ``markup``: tags dropped, entities decoded."""
    return html.unescape(_ANY_TAG.sub("", markup))


def preview(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters with an ellipsis (not escaped)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


# -- memories ----------------------------------------------------------------------------------


def meta_line(memory: Memory, language: str) -> str:
    """Tags, category (a known one in the reader's ``language``: ``bot.categories``), creation
    date and id of a memory, in one line of HTML."""
    tags = " ".join(f"#{escape(tag)}" for tag in memory.tags) or "—"
    date = escape(memory.created_at[:10])
    # The day the content speaks of ("next Tuesday 3pm"), resolved when it was stored.
    named = f" · 📅 {escape(memory.date)}" if memory.date else ""
    return (
        f"<i>🏷 {tags} · 📁 {escape(shown(memory.category, language))} · {date}{named}</i>"
        f" · 🆔 <code>{memory.id}</code>"
    )


def memory_block(
    memory: Memory,
    index: int | None = None,
    *,
    language: str,
    limit: int | None = None,
    note: str = "",
) -> str:
    """One memory: its content (cut to ``limit`` characters if given), then its meta line, for a
    reader of ``language``; ``note`` (HTML, such as "(older)") before the content."""
    content = preview(memory.content, limit) if limit else memory.content
    number = f"<b>{index}.</b> " if index is not None else ""
    meta = meta_line(memory, language)
    return f"{number}{note}{escape(content)}\n{origin_line(memory)}{meta}"


def origin_line(memory: Memory) -> str:
    """Where a forwarded memory came from, who and when (a line of HTML), or nothing."""
    origin = memory.origin
    if not origin:
        return ""
    name = str(origin.get("name") or "?")
    chat = origin.get("chat")
    if isinstance(chat, str) and chat.startswith("@") and chat[1:].lower() != name.lower():
        name += f" ({chat})"
    hidden = " 👤?" if origin.get("kind") == "hidden_user" else ""
    date = str(origin.get("date") or "")[:10]
    return f"<i>↪️ {escape(name)}{hidden} · {escape(date)}</i>\n"


def memory_list(
    title: str, memories: Iterable[Memory], *, language: str, limit: int | None = None
) -> str:
    """A titled, numbered list of memories, blank lines between them."""
    blocks = [
        memory_block(m, i, language=language, limit=limit) for i, m in enumerate(memories, start=1)
    ]
    return "\n\n".join([title, *blocks])


def hit_memories(hits: Sequence[Hit]) -> list[Memory]:
    """The memories of search hits, best first (the scores are not shown to users)."""
    return [hit.memory for hit in hits]


def stats_text(stats: Stats, language: str) -> str:
    """The article's getMemoryStats, readable."""
    lines = [t(language, "stats_title", total=stats.total)]
    if stats.by_category:
        items = " · ".join(
            f"{escape(shown(c, language))} {n}" for c, n in stats.by_category.items()
        )
        lines.append(t(language, "stats_by_category", items=items))
    if stats.top_tags:
        items = " · ".join(f"#{escape(tag)} ({n})" for tag, n in stats.top_tags)
        lines.append(t(language, "stats_top_tags", items=items))
    if stats.most_accessed:
        lines.append(t(language, "stats_most_accessed"))
        for i, memory in enumerate(stats.most_accessed, start=1):
            times = t(language, "stats_times", count=memory.access_count)
            content = escape(preview(memory.content, 80))
            lines.append(f"{i}. {content} <i>({times})</i> · 🆔 <code>{memory.id}</code>")
    return "\n".join(lines)


# -- splitting ---------------------------------------------------------------------------------


class _Splitter:
    """Greedy packing of tokens into parts of at most ``limit`` visible UTF-16 units."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[str] = []
        self.pieces: list[str] = []
        self.size = 0
        self.open: list[tuple[str, str]] = []  # (name, opening tag) of the tags open right now

    def cut(self) -> None:
        closing = "".join(f"</{name}>" for name, _ in reversed(self.open))
        part = "".join(self.pieces) + closing
        if to_plain(part).strip():
            self.parts.append(part)
        self.pieces = [tag for _, tag in self.open]
        self.size = 0

    def add(self, token: str, size: int) -> None:
        if size and self.size + size > self.limit:
            self.cut()
        self.pieces.append(token)
        self.size += size
        match = _TAG.match(token) if token.startswith("<") and size == 0 else None
        if match is None:
            return
        closing, name = match.group(1), match.group(2).lower()
        if not closing:
            self.open.append((name, token))
            return
        for i in range(len(self.open) - 1, -1, -1):
            if self.open[i][0] == name:
                del self.open[i]
                break


def _tokens(line: str) -> list[tuple[str, int]]:
    """(token, visible size) pairs; text comes out one character at a time."""
    out: list[tuple[str, int]] = []
    for token in _TOKEN.findall(line):
        if token.startswith("<") and token.endswith(">") and len(token) > 1:
            out.append((token, 0))
        elif token.startswith("&") and token.endswith(";") and len(token) > 1:
            out.append((token, utf16_len(html.unescape(token))))
        else:
            out.extend((ch, 2 if ord(ch) > 0xFFFF else 1) for ch in token)
    return out


def _visible(tokens: Sequence[tuple[str, int]]) -> int:
    return sum(size for _, size in tokens)


def split_html(markup: str, limit: int = MAX_MESSAGE) -> list[str]:
    """``markup`` as parts of at most ``limit`` visible UTF-16 units, each balanced HTML.

    Cuts fall on line boundaries when possible; a single line longer than ``limit`` is cut
    between characters (never inside a tag, an entity or a surrogate pair). Parts that would be
    blank are dropped (Telegram refuses empty messages).
    """
    if utf16_len(markup) <= limit:  # visible text is never longer than the markup
        return [markup] if to_plain(markup).strip() else []
    splitter = _Splitter(limit)
    for number, line in enumerate(markup.split("\n")):
        tokens = _tokens(line)
        newline = 1 if number and splitter.size else 0
        if splitter.size + newline + _visible(tokens) > limit and splitter.size:
            splitter.cut()
            newline = 0
        if newline:
            splitter.add("\n", 1)
        for token, size in tokens:
            splitter.add(token, size)
    splitter.cut()
    return splitter.parts
