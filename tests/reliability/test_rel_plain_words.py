"""Refusals in words for people: no library or parser message reaches a user.

The memory library's errors and the JSON parser's are written for programmers, in English
("content must not contain NUL characters or lone surrogates", "Expecting ',' delimiter:
line 1 column 5 (char 4)"). Fed the hostile pieces of ``test_rel_hostile`` (and inputs over
every limit) as notes, edits and lists, and bad memory files as imports, in English and in
Chinese, the bot answers every one, and no four words in a row of any message that the
library or the parser itself gives for the same input appear in what the user is sent
(four: three are often plain English, "a list of").
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rel_harness import config_for, running, user
from test_rel_hostile import PIECES

from bench.fakes.telegram_server import Call, FakeBotAPI
from bot.core.entry import parse_entry, split_command
from memory.errors import MemoryInvalid
from memory.model import Memory, clean_category, clean_content, clean_tags, parse_id

# Words that no reply to a person may hold, whatever the input: a programmer's vocabulary.
NEVER = re.compile(
    r"Traceback|Exception|Error\b|MEMORY_|NUL\b|surrogate|codec|Expecting|delimiter|"
    r"char \d|column \d|JSONDecode|\bNone\b|\bTypeError\b|\bValueError\b"
)
OVER_LIMITS = [
    "x" * 4001,
    "长" * 4001,
    "too many tags " + " ".join(f"#t{i}" for i in range(25)),
    "a tag too long #" + "t" * 70,
    "#" + "c" * 70 + ": a category too long",
    "nul\x00inside",
    "\x00",
]
BAD_FILES = [
    b"{not json",
    b'[\n{"id": 1,\n "content": "x"\n "tags": []}]',
    b"[1, 2,",
    b"\xff\xfe\x00garbage",
    b"\x80\x81 not utf-8",
    b"[" * 100_000 + b"]" * 100_000,
    b'{"memories": []}',
    b'"just text"',
    b"null",
    json.dumps(
        [
            {"id": 1_700_000_000_001, "content": "   "},
            {"id": 1_700_000_000_002, "content": "nul\u0000inside"},
            {"id": 1_700_000_000_003, "content": "x", "tags": 5},
            {"id": 1_700_000_000_004, "content": "x", "category": "c" * 70},
            {"id": -1, "content": "x"},
            {"id": 1_700_000_000_005, "content": "x", "createdAt": "yesterday"},
            {"content": "no id"},
            "not an object",
        ]
    ).encode(),
]


def phrases(message: str) -> set[str]:
    """Every four words in a row of ``message`` (its letters only, lower case), leaving out
    what it quotes of the input (``'...'``: the person's own words may be shown back)."""
    words = re.findall(r"[a-z]+", re.sub(r"'[^']*'|\"[^\"]*\"", " | ", message).lower())
    return {" ".join(words[i : i + 4]) for i in range(len(words) - 3)}


def library_messages(calls: list[Callable[[], object]]) -> list[str]:
    """The messages of the library's refusals of ``calls``, each run on its own."""
    found = []
    for call in calls:
        try:
            call()
        except MemoryInvalid as e:
            found.append(e.message)
    return found


def entry_messages(text: str) -> list[str]:
    """What the library says about ``text`` sent as a note, an edit or a /list category."""
    command, argument = split_command(text)
    value = ""
    if command == "edit":
        value, _, argument = argument.partition(" ")
    entry = parse_entry(argument)
    return library_messages(
        [
            lambda: parse_id(value) if value else None,
            lambda: clean_content(entry.content),
            lambda: clean_tags(entry.tags),
            lambda: clean_category(entry.category),
            lambda: clean_category(argument),
        ]
    )


def file_messages(data: bytes) -> list[str]:
    """What the parser and the library say about ``data`` as a memory file."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError) as e:
        return [str(e)]
    if not isinstance(value, list):
        return []
    return library_messages([lambda entry=entry: Memory.from_dict(entry) for entry in value])


def assert_plain(reply: str, messages: list[str], sent: object) -> None:
    assert not NEVER.search(reply), (sent, reply)
    words = " " + " ".join(re.findall(r"[a-z]+", reply.lower())) + " "
    for message in messages:
        leaked = [p for p in phrases(message) if f" {p} " in words]
        assert not leaked, (sent, message, reply)


async def exchange(telegram: FakeBotAPI, who: dict[str, Any], **message: Any) -> list[Call]:
    """The bot's messages for one message (``text=`` or a ``document=``), /help marking the end."""
    since = telegram.mark()
    telegram.post(user=who, **message)
    telegram.send("/help", user=who)
    await telegram.wait(
        "sendMessage", since=since, chat_id=who["id"], where=lambda c: "/related" in c.text
    )
    replies = [c for c in telegram.calls[since:] if c.method in ("sendMessage", "editMessageText")]
    return [c for c in replies if "/related" not in c.text or "/export" not in c.text]


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_refused_input_is_told_in_words_never_in_the_library_s(
    telegram: FakeBotAPI, tmp_path: Path, language: str
) -> None:
    who = user(42, language)
    async with running(config_for(telegram, tmp_path / "data")):
        [stored] = await exchange(telegram, who, text="/remember a memory to aim at")
        seed = re.findall(r"🆔 (\d+)", stored.text)[-1]
        templates = ["/remember {}", f"/edit {seed} {{}}", "/remember work: {} #tag", "/list {}"]
        inputs = [templates[i % len(templates)].format(p) for i, p in enumerate(PIECES)]
        inputs += [f"{t.split('{')[0]}{text}" for t in templates[:2] for text in OVER_LIMITS]
        for text in inputs:
            replies = await exchange(telegram, who, text=text)
            assert replies, f"no answer to {text!r}"
            for reply in replies:
                assert_plain(reply.text, entry_messages(text), text)


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_bad_memory_file_is_told_in_words_never_in_the_parser_s(
    telegram: FakeBotAPI, tmp_path: Path, language: str
) -> None:
    who = user(42, language)
    async with running(config_for(telegram, tmp_path / "data")):
        for data in BAD_FILES:
            stored = telegram.upload(data, "memory.json")
            [reply] = await exchange(telegram, who, document={**stored, "file_name": "memory.json"})
            assert reply.text.startswith("📥"), reply.text
            assert_plain(reply.text, file_messages(data), data[:40])
