"""The console as a person uses it: notes of several lines, --config in either place, line
editing and history in a terminal (a pseudo-terminal here), and ``make run`` without a token."""

from __future__ import annotations

import asyncio
import io
import os
import pty
import select
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from test_bot_chinese import english_left, latin_words

from bot.chat.console import Console
from bot.config import parse_config
from bot.core import delivery, reminders
from bot.core.due import Due
from bot.core.policy import Actor, Caller
from bot.core.reminders import Reminder
from memory import Store
from memory.files import MemoryStore

ROOT = Path(__file__).resolve().parents[2]


def run_bot(*args: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        input=stdin,
        cwd=cwd,
        env={**os.environ, "LANG": "en_US.UTF-8"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def stored(data_dir: Path, namespace: str = "users/1") -> list[str]:
    with MemoryStore(data_dir) as store:
        return [m.content for m in store.namespace(namespace).memories()]


def test_a_note_of_several_lines_goes_between_triple_quotes(tmp_path: Path) -> None:
    session = "\n".join(
        [
            '/remember """shopping list:',
            "milk",
            "",
            "eggs #groceries",
            '"""',
            '/remember one line with """ and """ inside',
            '/remember """never closed',
            "the end of input sends it anyway",
        ]
    )
    run = run_bot("console", cwd=tmp_path, stdin=session + "\n")
    assert run.returncode == 0, run.stderr
    assert stored(tmp_path / "data") == [
        "shopping list:\nmilk\n\neggs #groceries",
        'one line with """ and """ inside',
        "never closed\nthe end of input sends it anyway",
    ]
    assert '"""' in run.stderr  # the banner says how


@pytest.mark.parametrize("order", ["before", "after"])
def test_console_takes_config_before_or_after_the_mode(tmp_path: Path, order: str) -> None:
    config = tmp_path / "elsewhere.toml"
    config.write_text(f'data_dir = "{tmp_path / "kept"}"\n')
    flag = ["--config", str(config)]
    args = [*flag, "console"] if order == "before" else ["console", *flag]
    run = run_bot(*args, cwd=tmp_path, stdin="/remember from the console\n")
    assert run.returncode == 0, run.stderr
    assert stored(tmp_path / "kept") == ["from the console"]
    assert not (tmp_path / "data").exists()


def test_make_run_without_a_token_opens_the_console_with_a_hint(tmp_path: Path) -> None:
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    (tmp_path / "config.toml").write_text('data_dir = "data"\n[telegram]\ntoken = ""\n')
    (tmp_path / "pyproject.toml").write_text("")
    os.utime(tmp_path / "pyproject.toml", (0, 0))  # older than the stamp: nothing to install
    venv = Path(sys.executable).parent.parent
    env = {k: v for k, v in os.environ.items() if k != "TELEGRAM_BOT_TOKEN"}
    run = subprocess.run(
        [make, "-s", "-f", str(ROOT / "Makefile"), "-C", str(tmp_path), "run", f"VENV={venv}"],
        input="/remember made it\n",
        env={**env, "LANG": "en_US.UTF-8", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    hint, banner, *_ = run.stderr.splitlines()
    assert "No Telegram bot token in config.toml" in hint and "console" in hint
    assert banner.startswith("Cogito console")
    assert "@BotFather" not in run.stderr  # the long explanation is for python -m bot alone
    assert stored(tmp_path / "data") == ["made it"]


class Terminal:
    """``python -m bot console`` on a pseudo-terminal: keys in, screen text out."""

    def __init__(self, cwd: Path) -> None:
        self.fd, child = pty.openpty()
        env = {**os.environ, "LANG": "en_US.UTF-8", "TERM": "xterm", "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot", "console"],
            stdin=child,
            stdout=child,
            stderr=child,
            cwd=cwd,
            env=env,
            close_fds=True,
        )
        os.close(child)
        self.screen = ""

    def type(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def wait_for(self, text: str, count: int = 1) -> None:
        """Read until ``text`` has appeared ``count`` times (a minute at most: a hang fails)."""
        deadline = time.monotonic() + 60
        while self.screen.count(text) < count:
            assert time.monotonic() < deadline, f"never saw {text!r} in {self.screen!r}"
            ready, _, _ = select.select([self.fd], [], [], 1)
            if ready:
                try:
                    self.screen += os.read(self.fd, 4096).decode("utf-8", "replace")
                except OSError:  # the child has gone: nothing more will come
                    break

    def close(self) -> int:
        self.type("\x04")  # Ctrl-D
        # The terminal is read while the console closes: what it writes then (a late line of
        # the log on a loaded machine) would otherwise fill the terminal's buffer and block it
        # for ever. Generous: a hang still fails, with the screen.
        deadline = time.monotonic() + 180
        while self.process.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                try:
                    self.screen += os.read(self.fd, 4096).decode("utf-8", "replace")
                except OSError:  # the child has closed the terminal: it is exiting
                    break
        try:
            code = self.process.wait(timeout=max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:  # a failed test left it waiting: end it
            self.process.kill()
            code = self.process.wait()
            print(self.screen[-2000:])  # shown with the failure: where it stopped
        os.close(self.fd)
        return code


def test_a_terminal_gets_line_editing_and_history(tmp_path: Path) -> None:
    terminal = Terminal(tmp_path)
    try:
        terminal.wait_for("you> ")
        terminal.type("/recall zz\r")
        terminal.wait_for("I found nothing about “zz”")
        terminal.wait_for("you> ", 2)  # the prompt comes after the reply
        terminal.type("\x1b[A\r")  # ↑: the last line again
        terminal.wait_for("I found nothing about “zz”", 2)
        terminal.wait_for("you> ", 3)
        terminal.type("/recall zz\x1b[D\x1b[Dy\r")  # ← ← and a letter inserted there
        terminal.wait_for("I found nothing about “yzz”")
        terminal.wait_for("you> ", 4)  # Ctrl-D only once input() reads again
    finally:
        code = terminal.close()
    assert code == 0


def test_timezone_in_the_console_shows_and_sets_the_zone(tmp_path: Path) -> None:
    """/timezone alone offers Telegram's "send my location" keyboard button, which the console
    cannot show: it must not break the reply (Telegram keeps such a keyboard off the message)."""
    run = run_bot("console", cwd=tmp_path, stdin="/timezone\n/timezone CST\n1\n")
    assert run.returncode == 0, run.stderr
    assert "Time zone here" in run.stdout and "went wrong" not in run.stdout
    assert "[1] Chicago · America/Chicago" in run.stdout
    assert "Time zone set to America/Chicago (Chicago, " in run.stdout


def test_a_reminder_fires_while_a_line_is_half_typed_and_the_line_survives(
    tmp_path: Path,
) -> None:
    terminal = Terminal(tmp_path)
    try:
        terminal.wait_for("#1 you> ")
        with MemoryStore(tmp_path / "data") as store:  # due in 8 s, set by another process
            reminder_of(store, 1, "tea", datetime.now(UTC) + timedelta(seconds=8))
        terminal.type("/reminders\r")  # read from the store: the job knows it now
        terminal.wait_for("— tea")
        terminal.wait_for("#3 you> ")
        terminal.type("/recall ab")  # half typed when the reminder comes
        terminal.wait_for("⏰ Reminder: tea")
        terminal.wait_for("#3 you> /recall ab", 2)  # drawn again below the reminder
        reminder = terminal.screen.rindex("⏰ Reminder: tea")
        assert terminal.screen.rindex("#3 you> /recall ab") > reminder
        assert "[1] ✅ Done" in terminal.screen[reminder:]
        terminal.type("c\r")
        terminal.wait_for("I found nothing about “abc”")
        terminal.wait_for("you> ", 4)
        terminal.type("/press #4 1\r")  # ✅ Done on the reminder, by its number
        terminal.wait_for("#4 (edited) ✅ Done: tea")
        terminal.wait_for("you> ", 5)
    finally:
        code = terminal.close()
    assert code == 0
    assert "Traceback" not in terminal.screen


# -- in-process: the Console object itself, on a controlled clock ----------------------------

# Tuesday 1 December 2026, 01:00 UTC.
START = datetime(2026, 12, 1, 1, 0, tzinfo=UTC)


class Clock:
    """Real time plus an offset: starts at ``start``, moved on by ``advance``."""

    def __init__(self, start: datetime = START) -> None:
        self.offset = start - datetime.now(UTC)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, **delta: float) -> None:
        self.offset += timedelta(**delta)


class Session:
    """A console running in this event loop: lines in (``say``), the screen's text out."""

    def __init__(self, console: Console, out: io.StringIO) -> None:
        self.console = console
        self.out = out

    @property
    def screen(self) -> str:
        return self.out.getvalue()

    async def say(self, line: str) -> str:
        """Type ``line``; what was printed while it was handled."""
        before = len(self.screen)
        await self.console.say(line)
        return self.screen[before:]

    async def shown(self, text: str, count: int = 1) -> str:
        """Wait until ``text`` has been printed ``count`` times (a job prints it on its own
        tick); the screen from the first of those on. The limit only keeps a hang from
        hanging the test."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while self.screen.count(text) < count:
            assert loop.time() < deadline, f"never printed {text!r}:\n{self.screen}"
            await asyncio.sleep(0.05)
        return self.screen[self.screen.index(text) :]


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def open_console(data_dir: Path, tmp_path: Path) -> Any:
    @asynccontextmanager
    async def opened(
        clock: Clock, *, language: str = "en", **sections: Any
    ) -> AsyncIterator[Session]:
        config = parse_config({"data_dir": str(data_dir), **sections}, base_dir=tmp_path)
        out = io.StringIO()
        store = MemoryStore(config.data_dir)
        console = Console(config, store, None, user_id=1, language=language, out=out, clock=clock)
        async with console:
            yield Session(console, out)

    return opened


def reminder_of(store: MemoryStore, chat_id: int, text: str, due: datetime) -> Reminder:
    """A reminder of ``text`` in the private chat ``chat_id``, due at ``due`` (set an hour
    before), as another process (the bot on Telegram) would have set it."""
    caller = Caller(Actor("user", chat_id, "Someone"), f"users/{chat_id}")
    wall = due.time().replace(tzinfo=None)
    return reminders.create(
        store,
        caller,
        chat_id=chat_id,
        text=text,
        due=Due(due, ZoneInfo("UTC"), wall),
        language="en",
        now=due - timedelta(hours=1),
    )


async def test_a_reminder_fires_in_the_console_and_its_buttons_work(
    open_console: Any, data_dir: Path
) -> None:
    clock = Clock()
    with MemoryStore(data_dir) as store:  # another chat's, due now: not this console's to send
        theirs = reminder_of(store, 2, "their tea", START + timedelta(seconds=30))
    async with open_console(clock) as session:
        reply = await session.say("/remind in 1 minute tea")
        assert reply.startswith("#2 ✅ I will remind you:\n⏰ 2026-12-01 (Tue) 01:01 UTC — tea")
        clock.advance(minutes=1)
        delivery = await session.shown("⏰ Reminder: tea")
        assert delivery.startswith(
            "⏰ Reminder: tea\n  [1] ✅ Done\n  [2] ⏰ 10 min\n  [3] 1 hour\n  [4] tomorrow\n"
            "  [5] 🗑 Cancel\n"
        )
        assert "#3 ⏰ Reminder: tea" in session.screen  # numbered like a reply
        snoozed = await session.say("2")  # ⏰ 10 min, on the message the job sent
        assert "#3 (edited) ⏰ Snoozed until 2026-12-01 (Tue) 01:11 UTC: tea" in snoozed
        clock.advance(minutes=10)
        await session.shown("⏰ Reminder: tea", count=2)
        assert "#4 ⏰ Reminder: tea" in session.screen
        newer = await session.say("/remind tomorrow 9am cake")  # the latest keyboard now
        assert "#6 ✅ I will remind you:" in newer and "[1] 🗑 Cancel" in newer
        done = await session.say("/press #4 1")  # ✅ Done on the delivery, by its number
        assert "#4 (edited) ✅ Done: tea" in done
        listing = await session.say("/reminders")
        assert "cake" in listing and "tea" not in listing
        assert "their tea" not in session.screen
    assert not session.console.application.job_queue.scheduler.running  # stopped on leaving
    with MemoryStore(data_dir) as store:
        [left] = [r for r in reminders.every(store) if r.chat_id == 2]
    assert left.state == reminders.PENDING and left.claim is None and left.sent_at is None
    assert left.next_at == theirs.next_at  # left to the bot that serves chat 2


@pytest.mark.parametrize(
    ("language", "title", "weekday", "due_now"),
    [
        (
            "en",
            "⏰ Your reminders (1), soonest first; ⌛ marks one whose time has come:",
            "Tue",
            "due now: being sent",
        ),
        ("zh", "⏰ 提醒列表（1 个），最近的在前；⌛ 表示已经到时间：", "周二", "正在发送"),
    ],
)
async def test_a_reminder_whose_time_has_come_is_not_listed_as_upcoming(
    open_console: Any, language: str, title: str, weekday: str, due_now: str
) -> None:
    clock = Clock()
    async with open_console(clock, language=language) as session:
        await session.say("/remind in 1 minute tea")
        store: Store = session.console.application.bot_data["services"].store
        [tea] = reminders.every(store)
        assert tea.next_at is not None
        # Another process claims it as it falls due: in flight, sent by that one any moment.
        clock.advance(minutes=1)
        now = clock()
        claimed = delivery.claim(store, tea.key, tea.next_at, "another-process", now)
        assert claimed.send
        listing = await session.say("/reminders")
        assert title in listing
        assert f"⌛ 2026-12-01 ({weekday}) 01:01 UTC — tea" in listing and due_now in listing
        assert "Upcoming" not in listing and "即将到来" not in listing


async def test_the_scheduled_digest_is_printed_and_only_this_chat_s(
    open_console: Any, data_dir: Path
) -> None:
    # Monday 7 December 2026, 09:00:30 UTC: the weekly digest fell due 30 seconds ago.
    clock = Clock(datetime(2026, 12, 7, 9, 0, 30, tzinfo=UTC))
    with MemoryStore(data_dir) as store:
        store.namespace("users/1").add("the spare key is under the mat")
        store.namespace("users/2").add("someone else's note")
    digest = {"default": "on", "schedule": "0 9 * * mon", "timezone": "UTC"}
    async with open_console(clock, digest=digest) as session:
        report = await session.shown("📬 Your memory digest · 1 memories")
        assert "the spare key is under the mat" in report
        assert "someone else's note" not in session.screen
        now = await session.say("/digest now")
        assert now.startswith("#") and "📬 Your memory digest" in now
    with MemoryStore(data_dir) as store:
        assert store.documents("users/2").get("digest") is None  # nobody claimed theirs
        ours = store.documents("users/1").get("digest")
        assert ours is not None and ours.value["last_period"] == "2026-12-07T09:00:00.000Z"


async def test_the_console_in_chinese_shows_no_english_with_its_jobs(
    open_console: Any, data_dir: Path
) -> None:
    """A reminder falling due, its buttons, the scheduled digest and the console's own lines,
    in Chinese: the scanner of test_bot_chinese finds no English word of the bot's."""
    clock = Clock(datetime(2026, 12, 7, 9, 0, 30, tzinfo=UTC))  # the digest fell due at 09:00
    with MemoryStore(data_dir) as store:
        store.namespace("users/1").add("备用钥匙在花盆下面", category="家")
    digest = {"default": "on", "schedule": "0 9 * * mon", "timezone": "UTC"}
    typed = ["/start", "1", "/remind 1分钟后 喝水", "/history", "/press 9", "/reply 99 x"]
    async with open_console(clock, language="zh", digest=digest) as session:
        await session.shown("📬")
        for line in typed[:3]:
            await session.say(line)
        clock.advance(minutes=1)
        await session.shown("喝水", count=2)  # confirmed, then due
        await session.say("2")  # ⏰ 10 分钟
        for line in ("/digest now", *typed[3:]):
            await session.say(line)
    screen = session.screen.split("\n", 2)[2]  # after the banner (English for the terminal)
    left = english_left(screen, {w.lower() for line in typed for w in latin_words(line)})
    assert left == [], screen


async def test_every_reply_based_action_has_a_console_form(
    open_console: Any, data_dir: Path
) -> None:
    clock = Clock()
    async with open_console(clock) as session:
        assert "#2 " in await session.say("the spare key is under the mat")  # a question
        remembered = await session.say("/reply 1 /remember")  # stores the message replied to
        assert "#4 ✅ Remembered.\nthe spare key is under the mat" in remembered
        reminded = await session.say("/reply #1 /remind tomorrow 9am")
        assert "#6 ✅ I will remind you:" in reminded
        assert "2026-12-02 (Wed) 09:00 UTC — the spare key is under the mat" in reminded
        prompt = await session.say("/press 2")  # ✏️ Change: "reply to this message"
        assert prompt.startswith("#7 ✏️ ⏰#")
        changed = await session.say("/reply 7 in 2 hours")
        assert "#9 ✏️ Changed:\n⏰ 2026-12-01 (Tue) 03:00 UTC" in changed
        clock.advance(hours=2)
        delivery = await session.shown("⏰ Reminder: the spare key")
        assert session.screen.count("↩ #1 ⏰ Reminder: the spare key is under the mat") == 1
        assert delivery  # it quotes the message it is about, by its number
        retyped = await session.say("/retype 3 /remember the spare key is in the drawer")
        assert "Updated" in retyped and "the spare key is in the drawer" in retyped
        await session.say("/forward the wifi password is hunter2")
        forwarded = await session.shown("🧠 Remembered:\nthe wifi password is hunter2")
        assert "↪️ Someone" in forwarded  # a burst of forwards is answered once, after a pause
        assert "(there is no message #99)" in await session.say("/reply 99 hello")
        assert "(reply to a message: /reply M text" in await session.say("/reply 2")
        assert "is not yours" in await session.say("/retype 2 hello")
        forms = await session.say("/help")
        assert "/reply M text" in forms and "/press #M N" in forms and "/retype" in forms
    with MemoryStore(data_dir) as store:
        contents = [m.content for m in store.namespace("users/1").memories()]
    assert "the spare key is in the drawer" in contents
    assert "the wifi password is hunter2" in contents


async def test_a_button_is_pressed_as_its_message_is_now(open_console: Any, data_dir: Path) -> None:
    async with open_console(Clock()) as session:
        await session.say("/remember the boiler code is 4711")
        listed = await session.say("/recall boiler")
        assert "[1] ⋯" in listed  # the answer's own menu
        menu = await session.say("1")
        number = int(menu.split(" ", 1)[0].lstrip("#"))
        assert "[1] 🗑 Forget" in menu and "the boiler code is 4711" in menu
        assert "Forget this memory?" in await session.say("1")
        assert "(edited) 👍 Kept" in await session.say("2")  # its buttons are gone now
        assert "(there is no such button)" in await session.say("/press 1")
        assert "(there is no such button)" in await session.say("/press 2")
        again = await session.say(f"/press #{number} 1")  # an older message, still with its own
        assert "Forget this memory?" in again
        assert "(there is no message #999)" in await session.say("/press #999 1")
    with MemoryStore(data_dir) as store:
        assert [m.content for m in store.namespace("users/1").memories()] == [
            "the boiler code is 4711"
        ]
