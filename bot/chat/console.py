"""``python -m bot console``: the bot in a terminal, without Telegram.

The same ``Application`` and handlers as on Telegram, on the same ``data_dir``; only the Bot API
differs. ``LocalBotAPI`` is a python-telegram-bot request object that answers the Bot API
methods in-process (``getMe``, ``sendMessage``, ``editMessageText``, ...) and hands what the
bot sends to a callback, so nothing leaves the machine (the language model, when configured, is
still called). The console turns each line typed into a message update from a local user in a
private chat, feeds it to ``Application.process_update`` and prints the replies as plain text.

Inline buttons are printed numbered under the reply (``[1] 🗑 Forget 1: ...``); typing
``/press 1`` (or just ``1``) presses one. A note of several lines goes between triple quotes
(``/remember \"\"\"`` ... ``\"\"\"``, see ``NoteLines``). In a terminal, lines are edited with
readline (arrows, history); piped input is read as it comes. End of input (Ctrl-D) exits
cleanly: the store is closed as after a Telegram run. The benchmark uses ``LocalBotAPI`` to
time the bot without a network.

Message ids never repeat (``MessageIds``): a memory records the message it came from (its
``source``) and the store keeps one memory per source, so an id used again, by a later session,
by a second console or by Telegram in the same chat, would make a new ``/remember`` look like
one already handled, and it would be dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from telegram import Update
from telegram.request import BaseRequest, RequestData

from bot.chat.app import build_application, serving
from bot.config import Config
from bot.view.render import to_plain
from memory import Documents, Store, update_document
from memory.errors import MemoryStoreError

if TYPE_CHECKING:
    from openai import AsyncOpenAI

BOT_USER = {
    "id": 424242,
    "is_bot": True,
    "first_name": "Cogito",
    "username": "cogito_console_bot",
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}
CONSOLE_TOKEN = "0:console"
MESSAGE_IDS = "console-message-ids"  # the store's bot document
PROMPT = "you> "
CONTINUED = "...> "  # the prompt inside a note of several lines
BLOCK = '"""'  # opens and closes a note of several lines
_PRESS = re.compile(r"\A\s*(?:/press\s+)?(\d{1,2})\s*\Z")

log = logging.getLogger(__name__)


class MessageIds:
    """Message ids that are never handed out twice, by any session or process on a store.

    An id is the clock in milliseconds, and above every id handed out before: the store's bot
    document ``console-message-ids`` holds the end of the last block reserved. A block of
    ``block`` ids is reserved by a compare-and-set on it (``memory.update_document``, durable)
    before any of it is used, so two consoles at once draw disjoint blocks, a crash loses no
    more than unused ids, and a session usually writes it once. Telegram numbers a chat's
    messages from 1, so the clock also keeps these clear of the ids of a real chat the console
    shares a namespace with. If the store refuses (a read-only data dir) the clock alone is used.
    """

    def __init__(self, documents: Documents, *, block: int = 1000) -> None:
        self.documents = documents
        self.block = block
        self._next = self._end = 0  # the block in use: [_next, _end)

    def take(self) -> int:
        """The next id."""
        if self._next >= self._end:
            self.reserve()
        self._next += 1
        return self._next - 1

    def reserve(self) -> None:
        """Start a new block of ids (store work: call it off the event loop when it matters)."""
        start = max(time.time_ns() // 1_000_000, self._end)

        def claim(value: Any) -> int:
            # None yet, or not ours (a hand edit): the clock is still above its ids.
            last = value if isinstance(value, int) and not isinstance(value, bool) else 0
            return max(start, last + 1) + self.block - 1

        try:
            end: int = update_document(self.documents, MESSAGE_IDS, claim)
            start = end - self.block + 1
        except MemoryStoreError as e:
            log.warning("cannot keep the console's message ids (%s); using the clock", e.message)
        self._next, self._end = start, start + self.block


@dataclass
class Outgoing:
    """Something the bot sent: a message, an edit, a notice (button answer) or a document."""

    kind: str
    text: str
    message: dict[str, Any] | None = None
    buttons: list[tuple[str, str]] = field(default_factory=list)
    alert: bool = False
    document: bytes = b""


class LocalBotAPI(BaseRequest):
    """A Bot API answered in-process; each outgoing message goes to ``on_send``."""

    def __init__(
        self,
        on_send: Callable[[Outgoing], None],
        chat: dict[str, Any],
        message_ids: Callable[[], int] | None = None,
    ) -> None:
        self.on_send = on_send
        self.chat = chat
        self.messages: dict[int, dict[str, Any]] = {}
        # The chat's message ids (the user's and the bot's share them); 1, 2, 3... by default.
        self.message_ids = message_ids or itertools.count(1).__next__

    @property
    def read_timeout(self) -> float | None:
        """No network, no timeout."""
        return None

    async def initialize(self) -> None:
        """Nothing to open."""

    async def shutdown(self) -> None:
        """Nothing to close."""

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: Any = None,
        write_timeout: Any = None,
        connect_timeout: Any = None,
        pool_timeout: Any = None,
    ) -> tuple[int, bytes]:
        """Answer one Bot API call as Telegram would, successfully."""
        name = url.rsplit("/", 1)[-1]
        params: dict[str, Any] = dict(request_data.parameters) if request_data else {}
        answers = {
            "getMe": self._get_me,
            "getUpdates": self._get_updates,
            "sendMessage": self._send_message,
            "editMessageText": self._edit_message_text,
            "answerCallbackQuery": self._answer_callback_query,
            "sendDocument": self._send_document,
        }
        answer = answers.get(name)
        result = answer(params, request_data) if answer else True  # setMyCommands and the like
        return 200, json.dumps({"ok": True, "result": result}).encode()

    def new_message_id(self) -> int:
        """The next message id of the console's chat."""
        return self.message_ids()

    def _get_me(self, params: dict[str, Any], data: RequestData | None) -> Any:
        return BOT_USER

    def _get_updates(self, params: dict[str, Any], data: RequestData | None) -> Any:
        return []

    def _message(self, params: dict[str, Any], **extra: Any) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": self.new_message_id(),
            "date": int(time.time()),
            "chat": self.chat,
            "from": BOT_USER,
            **extra,
        }
        markup = params.get("reply_markup")
        if isinstance(markup, dict) and "inline_keyboard" in markup:  # as Telegram: a reply
            message["reply_markup"] = markup  # keyboard is the input field's, not the message's
        self.messages[message["message_id"]] = message
        return message

    def _send_message(self, params: dict[str, Any], data: RequestData | None) -> Any:
        message = self._message(params, text=self._text(params))
        self.on_send(Outgoing("message", message["text"], message, _buttons(params)))
        return message

    def _edit_message_text(self, params: dict[str, Any], data: RequestData | None) -> Any:
        message = self.messages.get(int(params["message_id"]))
        if message is None:
            return True
        message["text"] = self._text(params)
        message.pop("reply_markup", None)
        if params.get("reply_markup"):
            message["reply_markup"] = params["reply_markup"]
        self.on_send(Outgoing("edit", message["text"], message, _buttons(params)))
        return message

    def _answer_callback_query(self, params: dict[str, Any], data: RequestData | None) -> Any:
        if params.get("text"):
            self.on_send(Outgoing("notice", params["text"], alert=bool(params.get("show_alert"))))
        return True

    def _send_document(self, params: dict[str, Any], data: RequestData | None) -> Any:
        files = data.multipart_data if data else {}
        filename, content = "document", b""
        for name, payload, *_ in files.values():
            filename = name or filename
            content = payload if isinstance(payload, bytes) else payload.read()
        caption = params.get("caption", "")
        message = self._message(
            params,
            caption=caption,
            document={"file_id": "local", "file_unique_id": "local", "file_name": filename},
        )
        self.on_send(Outgoing("document", caption, message, document=content))
        return message

    @staticmethod
    def _text(params: dict[str, Any]) -> str:
        text = str(params.get("text", ""))
        return to_plain(text) if params.get("parse_mode") == "HTML" else text


def _buttons(params: dict[str, Any]) -> list[tuple[str, str]]:
    markup = params.get("reply_markup") or {}
    rows = markup.get("inline_keyboard", []) if isinstance(markup, dict) else []
    return [(b["text"], b.get("callback_data", "")) for row in rows for b in row]


class Console:
    """Lines in, replies out: one local user talking to the bot in a private chat."""

    def __init__(
        self,
        config: Config,
        store: Store,
        llm: AsyncOpenAI | None,
        *,
        user_id: int,
        language: str,
        out: IO[str],
    ) -> None:
        self.out = out
        self.user = {"id": user_id, "is_bot": False, "first_name": "You", "language_code": language}
        self.chat = {"id": user_id, "type": "private", "first_name": "You"}
        self.message_ids = MessageIds(store.bot_documents())
        self.api = LocalBotAPI(self.show, self.chat, self.message_ids.take)
        telegram = dataclasses.replace(config.telegram, token=CONSOLE_TOKEN, flood_control=False)
        local = dataclasses.replace(config, telegram=telegram)
        # No scheduled jobs: a digest "sent" to this terminal would count as sent to Telegram.
        self.application = build_application(local, store, llm, request=self.api, jobs=False)
        self.update_ids = itertools.count(1)
        self.buttons: list[tuple[dict[str, Any], str]] = []  # the latest keyboard shown
        self._running = contextlib.AsyncExitStack()  # holds ``serving`` while in ``async with``

    def show(self, sent: Outgoing) -> None:
        """Print what the bot sent, as plain text, numbering its buttons."""
        if sent.kind == "notice":
            print(f"({'!' if sent.alert else 'i'}) {sent.text}", file=self.out)
        elif sent.kind == "document":
            name = (sent.message or {}).get("document", {}).get("file_name", "document")
            print(f"{sent.text}\n[{name}, {len(sent.document)} bytes]", file=self.out)
            print(sent.document.decode("utf-8", "replace"), file=self.out)
        else:
            prefix = "(edited) " if sent.kind == "edit" else ""
            print(prefix + sent.text, file=self.out)
        if sent.buttons and sent.message is not None:
            self.buttons = [(sent.message, data) for _, data in sent.buttons]
            for number, (label, _) in enumerate(sent.buttons, start=1):
                print(f"  [{number}] {label}", file=self.out)
            print("  (type /press N, or just N, to press a button)", file=self.out)
        print(file=self.out)
        self.out.flush()

    async def __aenter__(self) -> Console:
        """Start the application as ``run_polling`` would, minus the polling."""
        await asyncio.to_thread(self.message_ids.reserve)
        await self._running.enter_async_context(serving(self.application))
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop the application and close its resources (the store)."""
        await self._running.aclose()

    async def say(self, line: str) -> None:
        """Handle one typed line: a button press, or a message to the bot."""
        update: dict[str, Any]
        pressed = _PRESS.match(line)
        if pressed and self.buttons and 1 <= int(pressed.group(1)) <= len(self.buttons):
            message, data = self.buttons[int(pressed.group(1)) - 1]
            update = {"callback_query": self._callback(message, data)}
        elif line.strip().startswith("/press"):
            print("(there is no such button)\n", file=self.out)
            return
        else:
            update = {"message": self._message(line.strip())}
        update["update_id"] = next(self.update_ids)
        await self.application.process_update(Update.de_json(update, self.application.bot))

    def _message(self, text: str) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": self.api.new_message_id(),
            "date": int(time.time()),
            "chat": self.chat,
            "from": self.user,
            "text": text,
        }
        command = re.match(r"/[A-Za-z0-9_]+(?:@\w+)?", text)
        if command:
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": command.end()}]
        return message

    def _callback(self, message: dict[str, Any], data: str) -> dict[str, Any]:
        return {
            "id": str(next(self.update_ids)),
            "from": self.user,
            "message": message,
            "chat_instance": "console",
            "data": data,
        }


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
    console: Console, stream: IO[str], *, prompt: bool, editing: bool = False
) -> None:
    """Feed ``stream``'s lines to ``console`` until end of input.

    With ``editing`` (a terminal; ``stream`` is then ``sys.stdin``) lines are read by
    ``input()`` with readline: arrows, Ctrl-A/E, and the session's history on ↑ ↓. Each line is
    asked for only once the previous one is answered, so the prompt comes after the reply.
    Without it (a pipe) lines are read as they come, and readline is never loaded. A note of
    several lines goes between triple quotes (``NoteLines``).
    """
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()
    ready = threading.Event()
    asked = [PROMPT]  # the prompt of the next line (a continuation inside a note)

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
                put(input(asked[0]))
            except EOFError:
                put(None)
                return

    if editing:
        _line_editing()
    threading.Thread(target=read, name="console-stdin", daemon=True).start()
    note = NoteLines()
    async with console:
        while True:
            asked[0] = CONTINUED if note.open else PROMPT
            if editing:
                ready.set()
            elif prompt:
                print(asked[0], end="", file=console.out, flush=True)
            line = await lines.get()
            text = note.flush() if line is None else note.feed(line)
            if text is not None and text.strip():
                await console.say(text)
            if line is None:
                break
