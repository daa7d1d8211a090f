"""Hostile input, fuzzed with hypothesis: the command parser, the store API, the LLM tools, and
whole messages through the running bot.

Invariants: nothing crashes; a refusal is the library's own error (a code and a message) or a
clear reply; input that is refused changes nothing on disk; another namespace is never touched;
every reply is HTML that Telegram accepts (the fake Bot API parses it as Telegram does and
answers 400 otherwise).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import threading
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rel_harness import config_for, running, user

from bench.fakes.telegram_server import Call, FakeBotAPI, parse_html
from bot.assistant.executor import ToolExecutor
from bot.assistant.tools import TOOLS_BY_NAME
from bot.categories import is_known
from bot.core.entry import parse_entry, split_command
from bot.view.i18n import t
from memory.errors import MemoryInvalid, MemoryStoreError, NamespaceInvalid
from memory.files import MemoryStore
from memory.model import MAX_CONTENT_CHARS

T = TypeVar("T")

PIECES = [
    "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff",  # zero-width
    "\u200e", "\u200f", "\u202a", "\u202b", "\u202e", "\u2066", "\u2067", "\u2069",  # bidi
    "\x00", "\x07", "\x1b[31m", "\r\n", "\t", "\u2028", "\u3000",
    "<b>", "</b>", "</code>", "<pre>", "<a href='javascript:alert(1)'>x</a>", "<script>",
    "<tg-spoiler>", "&amp;", "&lt;", "&#0;", "&#x110000;", "&bogus;", "<", ">", "&",
    "*bold*", "_it_", "__u__", "~s~", "||spoiler||", "[x](tg://user?id=1)", "`", "```py\n",
    "1e309", "-1", "0", "../../x", "/etc/passwd", "%2e%2e%2f", "users/43", "chats/-100",
    "#tag", "#", "#123", "work:", "工作：", "category: ", "@CogitoTestBot", "@someone",
    "D:\\projects", "\\", "'", '"', "{}", "null", "NaN", "9" * 25, "١٢٣", "🆔", "😀", "👨‍👩‍👧",
    "代码", "ﷺ", "Z̴̡̢a̶l̷g̸o̵",
]  # fmt: skip
TEXT = st.lists(
    st.one_of(st.sampled_from(PIECES), st.text(max_size=12)), min_size=1, max_size=12
).map("".join)
HUGE = st.builds(
    lambda piece, n: (piece * n)[: n * 2], st.sampled_from(PIECES), st.integers(1000, 2600)
)
HOSTILE = st.one_of(TEXT, TEXT, HUGE)
# Lone surrogates cannot come from Telegram (its JSON is UTF-8) but can from a model's tool call.
ANY_TEXT = st.one_of(
    HOSTILE,
    st.lists(
        st.one_of(
            st.sampled_from([*PIECES, "\ud800", "\udfff", "\ud83d"]),
            st.text(st.characters(exclude_categories=()), max_size=8),
        ),
        min_size=1,
        max_size=6,
    ).map("".join),
)
IDS: st.SearchStrategy[object] = st.one_of(
    st.sampled_from(
        ["1e309", "-1", "../../x", "0", " 7 ", "١٢٣", "9" * 30, "0x10", "", "+1", "9" * 5000]
    ),
    st.sampled_from([1e309, -1, 0, 2**63, 2**64, True, None, [], {}, 1.5, float("nan")]),
    ANY_TEXT,
    st.integers(),
)
# The number of examples is the run's profile's (tests/conftest.py).
FAST = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes (the lock file has none worth comparing)."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != ".lock"
    }


# -- the command parser ------------------------------------------------------------------------


@FAST
@given(
    command=st.sampled_from(["/remember", "/edit 1", "/remember@CogitoTestBot", ""]), text=HOSTILE
)
def test_the_parser_reads_anything_and_the_store_takes_or_refuses_it(
    command: str, text: str
) -> None:
    _, argument = split_command(f"{command} {text}")
    entry = parse_entry(argument)
    assert entry.content == entry.content.strip()
    assert all(tag == tag.lower() and tag for tag in entry.tags)
    if entry.category is not None:
        # A known category word of either language is its stored (English) name.
        assert entry.category and (entry.category in argument or is_known(entry.category))
    with tempfile.TemporaryDirectory() as folder, MemoryStore(folder) as store:
        namespace = store.namespace("users/1")
        try:
            memory = namespace.add(entry.content, entry.tags, entry.category)
        except MemoryInvalid as e:
            assert e.code == "MEMORY_INVALID" and e.message
            assert files(Path(folder)) == {}
        else:
            assert memory.content == entry.content
            with MemoryStore(folder) as again:  # what a restart reads back
                assert again.namespace("users/1").get(memory.id) == memory


# -- the store API ------------------------------------------------------------------------------


def attempt(folder: Path, call: Callable[[], T]) -> T | MemoryStoreError:
    """Run ``call``; a refusal must be the library's own error and leave every file as it was."""
    before = files(folder)
    try:
        return call()
    except MemoryStoreError as e:
        assert e.code.isupper() and e.message
        assert files(folder) == before, f"{e.code} changed the files"
        return e


@FAST
@given(
    content=ANY_TEXT,
    tags=st.one_of(st.lists(ANY_TEXT, max_size=25), ANY_TEXT, st.sampled_from([None, 7, b"x"])),
    category=st.one_of(st.none(), ANY_TEXT),
    memory_id=IDS,
    limit=IDS,
)
def test_the_store_takes_or_refuses_hostile_values_and_refusals_change_nothing(
    content: str, tags: Any, category: str | None, memory_id: Any, limit: Any
) -> None:
    with tempfile.TemporaryDirectory() as name, MemoryStore(name) as store:
        folder = Path(name)
        mine, theirs = store.namespace("users/1"), store.namespace("users/2")
        own = mine.add("a memory that is already there")
        secret = theirs.add("the other user's secret")
        their_files = files(folder / "users/2")

        # Each hostile value on its own, so that a refusal of one does not hide another.
        for add in (
            lambda: mine.add(content),
            lambda: mine.add("tags", tags),
            lambda: mine.add("category", (), category),
            lambda: mine.add(content, tags, category),
        ):
            added = attempt(folder, add)
            if not isinstance(added, MemoryStoreError):
                assert mine.get(added.id) == added
        for update in (
            lambda: mine.update(own.id, content=content),
            lambda: mine.update(own.id, tags=tags),
            lambda: mine.update(own.id, category=category),
            lambda: mine.update(memory_id, content="changed"),
        ):
            attempt(folder, update)
        attempt(folder, lambda: mine.get(memory_id))
        attempt(folder, lambda: mine.related(memory_id, limit))
        attempt(folder, lambda: mine.search(content, limit))
        attempt(folder, lambda: mine.memories(category))
        attempt(folder, lambda: mine.delete(memory_id))
        # The other namespace's memory is not reachable by id from this one (ids are unique
        # within a namespace only: the same number may name a memory of this one).
        if all(m.id != secret.id for m in mine.memories()):
            assert isinstance(attempt(folder, lambda: mine.delete(secret.id)), MemoryStoreError)
        assert files(folder / "users/2") == their_files
        with MemoryStore(folder) as again:
            assert again.namespace("users/1").memories() == mine.memories()


@FAST
@given(
    name=st.one_of(ANY_TEXT, st.sampled_from(["../../x", "users/../../x", "/etc", "users/1/.."]))
)
def test_a_namespace_name_never_leaves_the_data_dir(name: str) -> None:
    with tempfile.TemporaryDirectory() as outer:
        data_dir = Path(outer) / "data"
        with MemoryStore(data_dir) as store:
            try:
                namespace = store.namespace(name)
            except NamespaceInvalid as e:
                assert e.code == "NAMESPACE_INVALID"
                return
            namespace.add("x")
        assert namespace.path.resolve().is_relative_to(data_dir.resolve())
        assert [p.name for p in Path(outer).iterdir()] == ["data"]


# -- the LLM tools ------------------------------------------------------------------------------

JSON_VALUE = st.one_of(
    ANY_TEXT,
    IDS.filter(lambda v: not (isinstance(v, float) and v != v)),
    st.lists(ANY_TEXT, max_size=25),
    st.dictionaries(st.sampled_from(["content", "tags", "id"]), ANY_TEXT, max_size=3),
)
KEYS = ["id", "content", "tags", "category", "query", "limit", "updates", "namespace", "user"]
RAW = st.one_of(
    ANY_TEXT,
    st.dictionaries(st.sampled_from(KEYS), JSON_VALUE, max_size=5).map(json.dumps),
    st.sampled_from(
        [
            '{"id": 1e309}',
            '{"id": -1}',
            '{"id": "../../x"}',
            '{"id": "1e309"}',
            "[]",
            "null",
            '{"content": "\\u0000"}',
            '{"content": "\\ud800"}',
            '{"id": 18446744073709551616}',
            '{"content": "x", "namespace": "users/2"}',
            '{"query": "secret", "limit": 1e309}',
            '{"content": "' + "x" * (MAX_CONTENT_CHARS + 1) + '"}',
            "{" * 2000,
            '{"id": NaN}',
        ]
    ),
)


@FAST
@given(
    name=st.one_of(st.sampled_from(sorted(TOOLS_BY_NAME)), ANY_TEXT),
    raw=st.one_of(RAW, st.none()),
    data=st.data(),
)
def test_the_tools_answer_every_call_and_never_leave_their_namespace(
    name: str, raw: str | None, data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as folder_name, MemoryStore(folder_name) as store:
        folder = Path(folder_name)
        mine, theirs = store.namespace("users/1"), store.namespace("users/2")
        own = mine.add("a memory that is already there")
        secret = theirs.add("the other user's secret", ["secret"])
        their_files = files(folder / "users/2")
        if data.draw(st.booleans()):  # aim at a real id: this namespace's or the other one's
            target = data.draw(st.sampled_from([own.id, secret.id, str(secret.id)]))
            raw = json.dumps({"id": target})
        executor = ToolExecutor(mine)
        before = files(folder)
        result = json.loads(executor.execute(name, raw))
        assert isinstance(result, dict) and isinstance(result["ok"], bool)
        if not result["ok"]:
            assert result.get("needsConfirmation") or (
                result["error"]["code"] and result["error"]["message"]
            )
            assert files(folder) == before
        assert files(folder / "users/2") == their_files
        assert "the other user's secret" not in json.dumps(result)
        assert theirs.get(secret.id) == secret


# -- whole messages through the running bot -----------------------------------------------------


class BotThread:
    """The fake Bot API and the bot, running in an event loop of their own thread, so that a
    synchronous hypothesis test can drive them (``run``)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(60)

    def __enter__(self) -> BotThread:
        self.thread.start()
        self.telegram = self.run(FakeBotAPI().start())
        self._bot = running(config_for(self.telegram, self.data_dir))
        self.run(self._bot.__aenter__())
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.run(self._bot.__aexit__(None, None, None))
            self.run(self.telegram.close())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()

    async def exchange(self, text: str, who: dict[str, Any]) -> list[Call]:
        """Every call the bot made for ``text`` (a /help after it marks the end)."""
        telegram = self.telegram
        since = telegram.mark()
        telegram.send(text, user=who)
        telegram.send("/help", user=who)
        help_text = t("en", "help")
        await telegram.wait(
            "sendMessage",
            since=since,
            ok=None,
            chat_id=who["id"],
            where=lambda c: c.params.get("text") == help_text,
            timeout=30,
        )
        return [c for c in telegram.calls[since:] if c.params.get("text") != help_text]


@pytest.fixture
def bot_thread(tmp_path: Path) -> Iterator[BotThread]:
    with BotThread(tmp_path / "data") as running_bot:
        yield running_bot


WRITES = ("/remember", "/edit", "/forget", "/related", "/list")
# Stored, changed, or (a near-duplicate, a new value for a stored one) kept waiting for the
# person's choice: those questions begin with their emoji.
SUCCESS = (
    "✅ Remembered.",
    "✏️ Updated.",
    *(t("en", key, content="").split(" ", 1)[0] for key in ("near_duplicate", "near_update")),
)


@pytest.mark.slow
def test_hostile_messages_get_clear_replies_in_html_telegram_accepts(
    bot_thread: BotThread,
) -> None:
    alice = user(42)
    [stored] = bot_thread.run(bot_thread.exchange("/remember a memory to aim at", alice))
    seed = stored.text.rsplit("🆔 ", 1)[1].strip()
    namespace = bot_thread.data_dir / "users/42"
    templates = [
        "/remember {}", "/recall {}", "/forget {}", "/edit {}", "/related {}", "/list {}", "{}",
        "/remember work: {} #tag", f"/edit {seed} {{}}", "/nonsense {}", "/remember\n{}",
    ]  # fmt: skip

    @settings(deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(template=st.sampled_from(templates), text=HOSTILE.filter(lambda s: s.strip()))
    def message(template: str, text: str) -> None:
        sent = template.format(text)
        before = files(namespace)
        calls = bot_thread.run(bot_thread.exchange(sent, alice))
        replies = [c for c in calls if c.method in ("sendMessage", "sendDocument")]
        assert replies, f"no answer to {sent!r}"
        for call in calls:
            assert call.ok, f"{call.method} refused: {call.error}"
            assert call.params.get("parse_mode") == "HTML"  # no plain-text fallback was needed
            parse_html(str(call.params.get("text", "")))  # balanced, Telegram's tags only
            assert "went wrong" not in call.text and "Traceback" not in call.text
        succeeded = any(r.text.startswith(SUCCESS) for r in replies)
        if sent.startswith(WRITES) and not succeeded:
            assert files(namespace) == before, f"{sent!r} was refused but changed the files"

    message()
