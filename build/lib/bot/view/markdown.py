"""The model's Markdown, as Telegram HTML that always parses.

Models answer in Markdown (``**bold**``, ``` `code` ```, fenced blocks, lists, links). Telegram's
own Markdown modes reject unbalanced markers ("can't parse entities"), so the answer is turned
into HTML parse mode instead, where escaping is total:

1. code (fenced blocks and inline spans) is cut out first and escaped verbatim, so nothing in
   it is formatted (``D:\\projects``, ``a_b_c``, ``2*3*4`` stay as they are);
2. the rest is HTML-escaped, then the markers are converted line by line: ``**b**``/``__b__``
   bold, ``*i*``/``_i_`` italic (not inside words: ``snake_case`` stays), ``~~s~~`` strike,
   ``[text](https://...)`` links (http, https, tg and mailto only), ``# heading`` bold,
   ``- item`` and ``* item`` bullets, ``> quote`` blockquotes;
3. the result is checked: every tag Telegram allows, properly nested. Markers that cross
   (``*a **b* c**``) would nest badly; then the whole answer falls back to escaped plain text,
   which cannot fail.

No HTML the model writes survives as markup: ``<b>`` in an answer shows as ``<b>``.
"""

from __future__ import annotations

import html
import re

_FENCE = re.compile(r"```([\w+#.-]*)[^\S\n]*\n(.*?)(?:\n```|\Z)", re.S)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_SLOT = re.compile(r"\x00(\d+)\x00")
_BOLD = re.compile(r"\*\*(?=\S)([^\n]+?)(?<=\S)\*\*|__(?=\S)([^\n]+?)(?<=\S)__")
_ITALIC = re.compile(
    r"(?<![\w*])\*(?=[^\s*])([^\n*]+?)(?<=[^\s*])\*(?![\w*])"
    r"|(?<![\w_])_(?=[^\s_])([^\n_]+?)(?<=[^\s_])_(?![\w_])"
)
_STRIKE = re.compile(r"~~(?=\S)([^\n]+?)(?<=\S)~~")
_LINK = re.compile(r"\[([^\]\n]+)\]\(((?:https?|tg|mailto):[^)\s\"]+)\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+")
_TAGS = re.compile(r"<(/?)([a-z-]+)(?:\s[^>]*)?>")
ALLOWED = {"b", "i", "s", "u", "a", "code", "pre", "blockquote"}


def _inline(line: str) -> str:
    """Bold, italic, strike and links in one escaped line."""
    line = _LINK.sub(lambda m: f'<a href="{m.group(2)}">{m.group(1)}</a>', line)
    line = _BOLD.sub(lambda m: f"<b>{m.group(1) or m.group(2)}</b>", line)
    line = _ITALIC.sub(lambda m: f"<i>{m.group(1) or m.group(2)}</i>", line)
    return _STRIKE.sub(lambda m: f"<s>{m.group(1)}</s>", line)


def _blocks(text: str) -> str:
    """Headings, bullets and quotes, then inline markers, line by line."""
    out: list[str] = []
    quote: list[str] = []
    for line in text.split("\n"):
        if line.startswith("&gt; ") or line == "&gt;":
            quote.append(_inline(line[5:]))
            continue
        if quote:
            out.append("<blockquote>" + "\n".join(quote) + "</blockquote>")
            quote = []
        heading = _HEADING.match(line)
        if heading:
            out.append(f"<b>{_inline(heading.group(1))}</b>")
            continue
        out.append(_inline(_BULLET.sub(lambda m: f"{m.group(1)}• ", line)))
    if quote:
        out.append("<blockquote>" + "\n".join(quote) + "</blockquote>")
    return "\n".join(out)


def _balanced(markup: str) -> bool:
    """Whether every tag is one Telegram allows and they nest properly."""
    stack: list[str] = []
    for closing, name in _TAGS.findall(markup):
        if name not in ALLOWED:
            return False
        if not closing:
            stack.append(name)
        elif not stack or stack.pop() != name:
            return False
    return not stack


def markdown_to_html(text: str) -> str:
    """Telegram HTML for the model's Markdown ``text``; escaped plain text if in doubt."""
    text = text.replace("\x00", "")
    slots: list[str] = []

    def keep(markup: str) -> str:
        slots.append(markup)
        return f"\x00{len(slots) - 1}\x00"

    def fence(match: re.Match[str]) -> str:
        language, code = match.group(1), html.escape(match.group(2), quote=False)
        if language:
            return keep(f'<pre><code class="language-{language}">{code}</code></pre>')
        return keep(f"<pre>{code}</pre>")

    body = _FENCE.sub(fence, text)
    body = _INLINE_CODE.sub(
        lambda m: keep(f"<code>{html.escape(m.group(1), quote=False)}</code>"), body
    )
    body = _blocks(html.escape(body, quote=False))
    if not _balanced(body):
        return html.escape(text, quote=False)
    return _SLOT.sub(lambda m: slots[int(m.group(1))], body).strip()
