"""HTML escaping and splitting: end to end against the fake's Telegram-strict HTML parser, and
``bot.view.render.split_html``'s guarantees on any input."""

from __future__ import annotations

import re

from bot_harness import ALICE, Bot
from hypothesis import given
from hypothesis import strategies as st

from bench.fakes.telegram_server import FakeBotAPI, parse_html, utf16_len
from bot.view.render import escape, split_html

TRICKY = "<b>not bold</b> & <i>x</i> &amp; _*[link](http://x) `code` <script>"


async def test_stored_markup_shows_literally_everywhere(bot: Bot, telegram: FakeBotAPI) -> None:
    [stored] = await bot.say(f"/remember {TRICKY} #tag<&>", user=ALICE)
    assert TRICKY in stored.text
    for command in ("/recall not bold", "/list", "/stats"):
        [reply] = await bot.say(command, user=ALICE)
        assert TRICKY[:40] in reply.text, command
    assert all(call.ok for call in telegram.find("sendMessage", ok=None))


async def test_a_long_reply_is_split_on_line_boundaries(bot: Bot, telegram: FakeBotAPI) -> None:
    lines = [f"line {n}: " + "lorem ipsum dolor " * 10 for n in range(20)]  # ~3800 characters
    for n in range(3):
        [reply] = await bot.say(f"/remember part{n} " + "\n".join(lines) + f" #long{n}", user=ALICE)
        if reply.buttons:  # much like the one before: keep both
            since = telegram.mark()
            await bot.press(reply, reply.buttons[0][1], user=ALICE)
            await telegram.wait("editMessageText", since=since)
    [*parts, last] = await bot.exchange("/recall lorem", user=ALICE)
    assert len(parts) >= 2 and all(part.ok for part in [*parts, last])
    assert all(not part.buttons for part in parts) and len(last.buttons) == 3
    for part in [*parts, last]:
        assert utf16_len(part.text) <= 4096
        assert not part.text.startswith(" ")
    text = "\n".join(part.text for part in [*parts, last])
    for n in range(3):
        assert f"part{n} line 0:" in text
    assert text.count("line 19:") == 3  # no line lost or cut at a part boundary
    assert all(re.search(r"line \d+: (lorem ipsum dolor ){10}", p.text) for p in parts)


async def test_a_single_overlong_line_is_hard_split(bot: Bot, telegram: FakeBotAPI) -> None:
    content = "😀" * 2100 + "&<>" * 10  # 4230 UTF-16 units on one line
    parts = await bot.exchange(f"/remember {content}", user=ALICE)
    assert len(parts) == 3 and all(p.ok and utf16_len(p.text) <= 4096 for p in parts)
    assert content in "".join(p.text for p in parts)
    assert [r["content"] for r in bot.memories("users/42")] == [content]


# -- split_html on anything ---------------------------------------------------------------------

_text = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",)) | st.sampled_from("<>&\n 😀"),
    max_size=60,
).map(escape)


@st.composite
def markup(draw: st.DrawFn) -> str:
    """HTML the way the bot builds it: escaped text, Telegram's tags, nested, over lines."""
    pieces = []
    for _ in range(draw(st.integers(1, 30))):
        text = draw(_text)
        tags = draw(st.lists(st.sampled_from(["b", "i", "code", "u"]), max_size=2))
        for tag in tags:
            text = f"<{tag}>{text}</{tag}>"
        pieces.append(text + draw(st.sampled_from(["", "\n", "\n\n"])))
    return "".join(pieces)


def _squash(text: str) -> str:
    return re.sub(r"\s", "", text)


@given(markup(), st.integers(8, 200))
def test_split_html_parts_are_balanced_short_and_lose_nothing(html: str, limit: int) -> None:
    parts = split_html(html, limit)
    plain = [parse_html(part) for part in parts]  # raises if a part is not balanced
    assert all(utf16_len(p) <= limit for p in plain)
    assert all(p.strip() for p in plain)
    assert _squash("".join(plain)) == _squash(parse_html(html))


@given(markup())
def test_split_html_keeps_what_fits_in_one_message(html: str) -> None:
    parts = split_html(html)
    if parse_html(html).strip():
        assert parts == [html]
    else:
        assert parts == []


def test_split_html_cuts_between_lines_when_it_can() -> None:
    html = "\n".join(f"<b>{n}</b> " + "x" * 50 for n in range(10))
    parts = split_html(html, 120)
    assert [parse_html(p).count("\n") for p in parts] == [1] * 5
    assert parts[0] == "<b>0</b> " + "x" * 50 + "\n<b>1</b> " + "x" * 50


def test_split_html_reopens_tags_across_a_cut() -> None:
    html = "<i>" + "\n".join("y" * 30 for _ in range(4)) + "</i>"
    parts = split_html(html, 70)
    assert parts == [
        "<i>" + "y" * 30 + "\n" + "y" * 30 + "</i>",
        "<i>" + "y" * 30 + "\n" + "y" * 30 + "</i>",
    ]
