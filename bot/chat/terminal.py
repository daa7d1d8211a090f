"""The console's terminal: lines read (readline, notes of several lines) and blocks printed.

Lines are read in a daemon thread, so that Ctrl-C never waits for a blocked read; the event
loop meanwhile answers them and runs the bot's jobs. In a terminal (``editing``) a line is read
by ``input()`` with readline (arrows, Ctrl-A/E, the session's history on ↑ ↓), asked for only
once the previous one is answered, so the prompt comes after the reply. Piped input is read as
it comes, and readline is never loaded.

A job's message (a reminder, the digest) comes while a line may be half typed. ``Screen``
prints it over that line (cleared first) and has readline draw the prompt and what was typed
again below it, the cursor where it was (``rl_forced_update_display``; without it, the prompt
and the line are written again, the cursor at their end). Readline edits in its own thread
without Python's lock, so a key pressed at the very instant a job prints may be drawn out of
place (only drawn: what was typed stays as typed). Piped output gets the blocks alone.

A note of several lines goes between triple quotes (``NoteLines``). End of input (Ctrl-D) ends
the console cleanly.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import logging
import threading
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import IO, Any, Protocol

CONTINUED = "...> "  # the prompt inside a note of several lines
BLOCK = '"""'  # opens and closes a note of several lines
_CLEAR_LINE = "\r\x1b[K"  # to the start of the line, and erase it

log = logging.getLogger(__name__)


class Screen:
    """Where the console prints: whole blocks, above the line being typed (module docstring)."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self._lock = threading.Lock()
        self._waiting: str | None = None  # the prompt of the line being read, if one is
        self._editing = False  # the line is read by readline

    def show(self, block: str) -> None:
        """Print ``block`` (from the event loop), then the line being typed again, if any."""
        with self._lock:
            waiting = self._waiting
            if waiting is not None:
                self.out.write(_CLEAR_LINE if self._editing else "\n")
            self.out.write(block)
            self.out.flush()
            if waiting is not None:
                self._redraw(waiting)

    def _redraw(self, prompt: str) -> None:
        if self._editing:
            redisplay = _readline_redisplay()
            if redisplay is not None:
                redisplay()
                return
            self.out.write(prompt + _line_buffer())
        else:
            self.out.write(prompt)
        self.out.flush()

    def read(self, prompt: str) -> str:
        """One line by ``input()`` with readline (in the reader thread); EOFError at the end."""
        with self._lock:
            self._waiting, self._editing = prompt, True
        try:
            return input(prompt)
        finally:
            with self._lock:
                self._waiting = None

    def asking(self, prompt: str | None) -> None:
        """A prompt was printed and a piped line is awaited (None: it came)."""
        with self._lock:
            self._waiting = prompt


@functools.cache
def _readline_redisplay() -> Callable[[], object] | None:
    """Readline's ``rl_forced_update_display`` (GNU readline and libedit have it), or None."""
    try:
        import readline
    except ImportError:
        return None
    try:
        library = ctypes.CDLL(getattr(readline, "__file__", None))  # None: linked into Python
        redisplay: Callable[[], object] = library.rl_forced_update_display
    except (OSError, AttributeError):
        log.debug("readline cannot redraw a line: it is written again instead")
        return None
    return redisplay


def _line_buffer() -> str:
    try:
        import readline
    except ImportError:
        return ""
    return readline.get_line_buffer()


class Session(AbstractAsyncContextManager[Any], Protocol):
    """What ``run_console`` feeds: ``bot.chat.console.Console``, running while in ``async with``."""

    screen: Screen

    def prompt(self) -> str:
        """The prompt of the next line."""
        ...

    async def say(self, line: str) -> None:
        """Handle one line typed."""
        ...


class NoteLines:
    """Joins the lines of a note typed over several lines, between triple quotes.

    A line with an odd number of ``\"\"\"`` opens a note (``/remember \"\"\"`` or
    ``\"\"\"first line``); the lines after it join it, newlines kept, until a line with an odd
    number of ``\"\"\"`` closes it. The opening and the closing marker are dropped, nothing
    else: a line with ``\"\"\"`` twice (or never) is sent as it is.
    """

    def __init__(self) -> None:
        self.lines: list[str] | None = None  # the note being typed, if any

    @property
    def open(self) -> bool:
        """Whether a note is being typed (the next line continues it)."""
        return self.lines is not None

    def feed(self, line: str) -> str | None:
        """The text to send once ``line`` completes one, else None."""
        line = line.rstrip("\r\n")
        odd = line.count(BLOCK) % 2 == 1
        if self.lines is None:
            if not odd:
                return line
            self.lines = [line.replace(BLOCK, "", 1)]
            return None
        if not odd:
            self.lines.append(line)
            return None
        head, _, tail = line.rpartition(BLOCK)
        self.lines.append(head + tail)
        return self.flush()

    def flush(self) -> str | None:
        """What was typed of an unfinished note (at the end of input), or None."""
        lines, self.lines = self.lines, None
        return "\n".join(lines) if lines is not None else None


def _line_editing() -> None:
    """Line editing and history for ``input()`` (readline), when the platform has it."""
    try:
        import readline  # noqa: F401  (importing it is what turns editing on for input())
    except ImportError:  # Windows without pyreadline: plain input() still works
        log.debug("readline is not available: no line editing")


async def run_console(
    console: Session, stream: IO[str], *, prompt: bool, editing: bool = False
) -> None:
    """Feed ``stream``'s lines to ``console`` until end of input (module docstring).

    With ``editing`` (a terminal; ``stream`` is then ``sys.stdin``) lines are read by
    ``input()`` with readline; without it they are read from ``stream`` as they come, after a
    printed prompt if ``prompt``.
    """
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()
    ready = threading.Event()
    asked = [""]  # the prompt of the next line: the next message's number, or a continuation
    screen = console.screen

    def put(line: str | None) -> None:
        loop.call_soon_threadsafe(lines.put_nowait, line)

    def read() -> None:  # a daemon thread: Ctrl-C never waits for a blocked readline
        if not editing:
            for line in iter(stream.readline, ""):
                put(line)
            put(None)
            return
        while True:
            ready.wait()
            ready.clear()
            try:
                put(screen.read(asked[0]))
            except EOFError:
                put(None)
                return

    if editing:
        _line_editing()
    threading.Thread(target=read, name="console-stdin", daemon=True).start()
    note = NoteLines()
    async with console:
        while True:
            shown = editing or prompt  # else a message is numbered when it is sent
            asked[0] = CONTINUED if note.open else console.prompt() if shown else ""
            if editing:
                ready.set()
            elif prompt:
                screen.show(asked[0])
                screen.asking(asked[0])
            line = await lines.get()
            screen.asking(None)
            text = note.flush() if line is None else note.feed(line)
            if text is not None and text.strip():
                await console.say(text)
            if line is None:
                break
