"""The console as a person uses it: notes of several lines, --config in either place, line
editing and history in a terminal (a pseudo-terminal here), and ``make run`` without a token."""

from __future__ import annotations

import os
import pty
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory.store import MemoryStore

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
        "shopping list:\nmilk\n\neggs",
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
        try:
            code = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:  # a failed test left it waiting: end it
            self.process.kill()
            code = self.process.wait()
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
