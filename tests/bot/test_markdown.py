"""The model's Markdown becomes Telegram HTML that always parses."""

from __future__ import annotations

import html
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.view.markdown import markdown_to_html

TELEGRAM_TAGS = {"b", "i", "s", "u", "a", "code", "pre", "blockquote"}


class _Checker(HTMLParser):
    """Parses like Telegram's HTML mode: known tags, properly nested, known entities."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.stack: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        assert tag in TELEGRAM_TAGS, tag
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack.pop() == tag, tag

    def handle_data(self, data: str) -> None:
        assert "<" not in data and ">" not in data
        self.text.append(data)

    def handle_entityref(self, name: str) -> None:
        assert name in ("amp", "lt", "gt", "quot"), name
        self.text.append(html.unescape(f"&{name};"))

    def handle_charref(self, name: str) -> None:
        raise AssertionError(f"unexpected &#{name};")


def visible(markup: str) -> str:
    checker = _Checker()
    checker.feed(markup)
    checker.close()
    assert not checker.stack
    return "".join(checker.text)


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("**项目** 在 `D:\\projects`", "<b>项目</b> 在 <code>D:\\projects</code>"),
        ("*italic* and _also_", "<i>italic</i> and <i>also</i>"),
        ("~~old~~ new", "<s>old</s> new"),
        ("# Title\n- one\n* two", "<b>Title</b>\n• one\n• two"),
        (
            "see [docs](https://example.com/a?b=1&c=2)",
            'see <a href="https://example.com/a?b=1&amp;c=2">docs</a>',
        ),
        ("> quoted\n> twice\nafter", "<blockquote>quoted\ntwice</blockquote>\nafter"),
        (
            "```python\nif a < b and c_d:\n    pass\n```",
            '<pre><code class="language-python">if a &lt; b and c_d:\n    pass</code></pre>',
        ),
    ],
)
def test_markdown_becomes_html(markdown: str, expected: str) -> None:
    assert markdown_to_html(markdown) == expected


@pytest.mark.parametrize(
    "text",
    [
        "<b>not bold</b> & <script>",
        "snake_case_name and 2*3*4 and D:\\projects\\a_b",
        "a ** b ** c",
        "[link](javascript:alert(1))",
        'tricky [x](https://a"onclick="b)',
    ],
)
def test_what_is_not_markdown_shows_literally(text: str) -> None:
    assert visible(markdown_to_html(text)) == text.replace("\x00", "").strip()


def test_crossing_markers_fall_back_to_plain_text() -> None:
    out = markdown_to_html("*a **b* c** `x`")
    assert out == "*a **b* c** `x`"


PIECES = [*'ab 项\n*_~`#>-[]()<&"\\:/.', "https://x.y", "```", "**", "&amp;"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
def test_any_answer_parses(text: str) -> None:
    visible(markdown_to_html(text))
