"""``python -m bot console``: the bot in a terminal, without Telegram.

The same ``Application``, handlers and jobs as on Telegram, on the same ``data_dir``; only the
Bot API differs: ``bot.chat.local_api.LocalBotAPI`` answers it in-process and hands what the
bot sends to ``Console.show``, so nothing leaves the machine (the language model, when
configured, is still called). Each line typed becomes a message update from a local user in a
private chat, fed to ``Application.process_update``; the replies are printed as plain text.

The JobQueue runs as under ``python -m bot``: a reminder falls due and is printed (with its ✅
Done / ⏰ snooze / 🗑 Cancel buttons), the digest comes at its scheduled time, and so does any
job ``build_application`` schedules. They serve this chat only (``build_application``'s
``chats``): another chat's reminder or report, on a data directory shared with Telegram, is
left pending for the bot that serves that chat, never printed here and marked sent.

Every message printed carries its number, ``#12``: the user's (the prompt says which number the
next one gets, ``#12 you>``) and the bot's, replies and job messages alike; an edit keeps it.
What Telegram does by touch has a typed form (``CONSOLE_FORMS``, shown after ``/help``):

- ``/press N`` (or just ``N``) presses button N of the latest message that showed buttons,
  ``/press #M N`` button N of message #M, as it is now (an edit may have removed them);
- ``/reply M text`` sends ``text`` as a reply to message #M (``/reply 3 /remember``,
  ``/reply 3 /remind tomorrow 9am``, an answer to the ✏️ Change prompt);
- ``/retype M text`` edits your message #M (Telegram's Edit: a remembered message's memory
  changes with it);
- ``/forward text`` sends ``text`` forwarded, as from someone else.

Message ids never repeat (``MessageIds``): a memory records the message it came from (its
``source``) and the store keeps one memory per source, so an id used again, by a later session,
by a second console or by Telegram in the same chat, would make a new ``/remember`` look like
one already handled, and it would be dropped. The numbers shown are the session's, short to
type; they stand for those ids.

Reading lines and printing above the one being typed is ``bot.chat.terminal``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
import logging
import re
import time
from collections.abc import Callable
from datetime import datetime
from typing import IO, TYPE_CHECKING, Any

from telegram import Update

from bot.chat.app import build_application
from bot.chat.local_api import LocalBotAPI, Outgoing, buttons_of, quoted
from bot.chat.running import serving
from bot.chat.terminal import Screen
from bot.config import Config
from memory import Documents, Store, update_document
from memory.errors import MemoryStoreError

if TYPE_CHECKING:
    from openai import AsyncOpenAI

CONSOLE_TOKEN = "0:console"
MESSAGE_IDS = "console-message-ids"  # the store's bot document
PROMPT = "you> "
_BARE = re.compile(r"\A\s*(\d{1,3})\s*\Z")  # a button of the latest keyboard, if it has one
_FORM = re.compile(r"\A\s*/(press|reply|retype|forward)(?:\s+|\Z)(.*)\Z", re.DOTALL)
_NUMBERED = re.compile(r"\A#?(\d{1,9})(?:\s+|\Z)(.*)\Z", re.DOTALL)  # "#M rest" or "M rest"
_COMMAND = re.compile(r"/[A-Za-z0-9_]+(?:@\w+)?")
_HELP = re.compile(r"\A/help(?:@\w+)?(?:\s|\Z)")  # /start's buttons say how to press

CONSOLE_FORMS = {
    "en": """In this console:
  /press N, or just N — press button N of the latest message with buttons
  /press #M N — press button N of message #M (every message has its number, #M)
  /reply M text — send text as a reply to message #M: /reply 3 /remember,
      /reply 3 /remind tomorrow 9am, or a new time for a ✏️ Change prompt
  /retype M text — edit your message #M, as Telegram's Edit does
  /forward text — send text forwarded, as from someone else
  a note of several lines goes between \"\"\" and \"\"\"; Ctrl-D ends the console
Reminders and the digest are printed here when they come, numbered like replies.""",
    "zh": """在这个控制台里：
  /press N，或只输入 N — 按下最近一条带按钮的消息的第 N 个按钮
  /press #M N — 按下第 #M 条消息的第 N 个按钮（每条消息都有编号 #M）
  /reply M 内容 — 把内容作为对第 #M 条消息的回复发送：/reply 3 /remember、
      /reply 3 /remind 明天9点，或回复 ✏️ 修改 提示写新的时间
  /retype M 内容 — 修改你发的第 #M 条消息（和 Telegram 的“编辑”一样）
  /forward 内容 — 把内容作为别人转发的消息发送
  多行笔记写在 \"\"\" 和 \"\"\" 之间；Ctrl-D 退出控制台
提醒和摘要到时会显示在这里，和回复一样带编号。""",
}
STRINGS = {
    "en": {
        "you": "You",
        "edited": "(edited)",
        "document": "[{name}, {size} bytes]",
        "no_button": "(there is no such button)",
        "no_message": "(there is no message #{number})",
        "press_hint": "  (type /press N, or just N, to press a button)",
        "usage_press": "(press a button: /press N, or /press #M N for button N of message #M)",
        "usage_reply": "(reply to a message: /reply M text, e.g. /reply 3 /remember)",
        "usage_retype": "(edit a message you sent: /retype M new text)",
        "usage_forward": "(forward a text, as from someone else: /forward text)",
        "not_yours": "(#{number} is not yours: only a message you sent can be retyped)",
    },
    "zh": {
        "you": "你",
        "edited": "（已修改）",
        "document": "[{name}，{size} 字节]",
        "no_button": "（没有这个按钮）",
        "no_message": "（没有第 #{number} 条消息）",
        "press_hint": "  （输入 /press N 或只输入 N 按下按钮）",
        "usage_press": "（按按钮：/press N，或 /press #M N 按第 #M 条消息的第 N 个按钮）",
        "usage_reply": "（回复一条消息：/reply M 内容，例如 /reply 3 /remember）",
        "usage_retype": "（修改你发的消息：/retype M 新内容）",
        "usage_forward": "（转发一段文字，如同别人发的：/forward 内容）",
        "not_yours": "（#{number} 不是你发的：只能修改你自己发的消息）",
    },
}

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


class Console:
    """Lines in, replies out: one local user talking to the bot in a private chat, and what
    the bot's jobs send that chat printed as it comes."""

    def __init__(
        self,
        config: Config,
        store: Store,
        llm: AsyncOpenAI | None,
        *,
        user_id: int,
        language: str,
        out: IO[str],
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.screen = Screen(out)
        self.language = "zh" if language == "zh" else "en"
        name = STRINGS.get(language, STRINGS["en"])["you"]  # as /start and /history call them
        self.user = {"id": user_id, "is_bot": False, "first_name": name, "language_code": language}
        self.chat = {"id": user_id, "type": "private", "first_name": name}
        self.message_ids = MessageIds(store.bot_documents())
        self.api = LocalBotAPI(self.show, self.chat, self.message_ids.take)
        telegram = dataclasses.replace(config.telegram, token=CONSOLE_TOKEN, flood_control=False)
        local = dataclasses.replace(config, telegram=telegram)
        # The jobs as on Telegram (reminders, the digest, whatever build_application adds),
        # sending to this chat only; ``clock`` is their time (UTC now), for tests.
        self.application = build_application(
            local, store, llm, request=self.api, clock=clock, chats=(user_id,)
        )
        self.update_ids = itertools.count(1)
        self._numbers = itertools.count(1)  # #1, #2 ...: the session's, for typing
        self._by_number: dict[int, dict[str, Any]] = {}  # the messages as they are now
        self._number_of: dict[int, int] = {}  # message id -> its number
        self._next: int | None = None  # the number the prompt promised the next message typed
        self._keyboard: int | None = None  # the latest message printed with buttons
        self._running = contextlib.AsyncExitStack()  # holds ``serving`` while in ``async with``

    # -- printing --------------------------------------------------------------------------

    def prompt(self) -> str:
        """The prompt, with the number the next message typed will have: ``#7 you> ``."""
        return f"#{self._promised()} {PROMPT}"

    def _promised(self) -> int:
        if self._next is None:
            self._next = next(self._numbers)
        return self._next

    def _number(self, message: dict[str, Any], *, typed: bool = False) -> int:
        """The number of ``message``: the one it has, or the next (typed: the prompt's)."""
        number = self._number_of.get(message["message_id"])
        if number is None:
            number = self._promised() if typed else next(self._numbers)
            if typed:
                self._next = None
            self._number_of[message["message_id"]] = number
        self._by_number[number] = message
        return number

    def show(self, sent: Outgoing) -> None:
        """Print what the bot sent, as plain text: its number, then its buttons numbered."""
        say = self.screen.show
        if sent.kind == "notice" or sent.message is None:
            say(f"({'!' if sent.alert else 'i'}) {sent.text}\n\n")
            return
        message = sent.message
        number = self._number(message)
        head = [f"#{number}"]
        replied = message.get("reply_to_message")
        if replied is not None and replied["message_id"] in self._number_of:
            head.append(f"↩ #{self._number_of[replied['message_id']]}")
        if sent.kind == "edit":
            head.append(self._text("edited"))
        lines = [" ".join([*head, sent.text]).rstrip()]
        if sent.kind == "document":
            name = message.get("document", {}).get("file_name", "document")
            lines.append(self._text("document", name=name, size=len(sent.document)))
            lines.append(sent.document.decode("utf-8", "replace"))
        if sent.buttons:
            self._keyboard = number
            lines += [f"  [{n}] {label}" for n, (label, _) in enumerate(sent.buttons, start=1)]
            lines.append(self._text("press_hint"))
        say("\n".join(lines) + "\n\n")

    def _text(self, key: str, **values: Any) -> str:
        return STRINGS[self.language][key].format(**values)

    def _tell(self, key: str, **values: Any) -> None:
        self.screen.show(self._text(key, **values) + "\n\n")

    # -- running ---------------------------------------------------------------------------

    async def __aenter__(self) -> Console:
        """Start the application as ``run_polling`` would, minus the polling: the JobQueue too."""
        await asyncio.to_thread(self.message_ids.reserve)
        await self._running.enter_async_context(serving(self.application))
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop the jobs and the application and close its resources (the store): a job in
        progress finishes first (``post_shutdown``)."""
        await self._running.aclose()

    async def say(self, line: str) -> None:
        """Handle one typed line: a console form (``/press``, ``/reply`` ...) or a message."""
        bare = _BARE.match(line)
        if bare is not None and self._keyboard is not None:
            data = self._button(self._keyboard, int(bare.group(1)))
            if data is not None:
                await self._press(self._keyboard, data)
                return
        form = _FORM.match(line)
        if form is None:
            text = line.strip()
            await self._process("message", self._message(text))
            if _HELP.match(text):
                self.screen.show(CONSOLE_FORMS[self.language] + "\n\n")
            return
        doors = {
            "press": self._press_form,
            "reply": self._reply_form,
            "retype": self._retype_form,
            "forward": self._forward_form,
        }
        await doors[form.group(1)](form.group(2).strip())

    async def _press_form(self, rest: str) -> None:
        """``/press N`` (the latest keyboard), ``/press #M N`` or ``/press N #M``."""
        words = rest.split()
        if len(words) == 1 and words[0].isdigit():
            number, button = self._keyboard, int(words[0])
        elif len(words) == 2 and all(w.lstrip("#").isdigit() for w in words):
            first, second = words
            if second.startswith("#") and not first.startswith("#"):
                first, second = second, first
            number, button = int(first.lstrip("#")), int(second.lstrip("#"))
            if number not in self._by_number:
                self._tell("no_message", number=number)
                return
        else:
            self._tell("usage_press")
            return
        data = self._button(number, button) if number is not None else None
        if number is None or data is None:
            self._tell("no_button")
            return
        await self._press(number, data)

    def _button(self, number: int, button: int) -> str | None:
        """The callback data of button ``button`` (from 1) of message ``number`` as it is now."""
        message = self._by_number.get(number)
        found = buttons_of(message) if message is not None else []
        return found[button - 1][1] if 1 <= button <= len(found) else None

    async def _press(self, number: int, data: str) -> None:
        query = {
            "id": str(next(self.update_ids)),
            "from": self.user,
            "message": self._by_number[number],
            "chat_instance": "console",
            "data": data,
        }
        await self._process("callback_query", query)

    def _target(self, rest: str, usage: str) -> tuple[dict[str, Any], int, str] | None:
        """Message #M and the text after it, from ``M text``; None once told why not."""
        found = _NUMBERED.match(rest)
        if found is None or not found.group(2).strip():
            self._tell(usage)
            return None
        number = int(found.group(1))
        message = self._by_number.get(number)
        if message is None:
            self._tell("no_message", number=number)
            return None
        return message, number, found.group(2).strip()

    async def _reply_form(self, rest: str) -> None:
        """``/reply M text``: ``text`` as a reply to message #M."""
        target = self._target(rest, "usage_reply")
        if target is not None:
            replied, _, text = target
            await self._process("message", self._message(text, reply_to_message=quoted(replied)))

    async def _retype_form(self, rest: str) -> None:
        """``/retype M text``: the user's message #M edited to ``text``."""
        target = self._target(rest, "usage_retype")
        if target is None:
            return
        message, number, text = target
        if message.get("from", {}).get("id") != self.user["id"]:
            self._tell("not_yours", number=number)
            return
        message.update(text=text, edit_date=int(time.time()))  # kept as edited, as Telegram does
        message.pop("entities", None)
        message.update(_entities(text))
        await self._process("edited_message", message)

    async def _forward_form(self, rest: str) -> None:
        """``/forward text``: ``text`` forwarded from someone who hides their account."""
        if not rest:
            self._tell("usage_forward")
            return
        origin = {"type": "hidden_user", "sender_user_name": "Someone", "date": int(time.time())}
        await self._process("message", self._message(rest, forward_origin=origin))

    def _message(self, text: str, **extra: Any) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": self.api.new_message_id(),
            "date": int(time.time()),
            "chat": self.chat,
            "from": self.user,
            "text": text,
            **_entities(text),
            **extra,
        }
        self._number(message, typed=True)
        self.api.received(message)
        return message

    async def _process(self, kind: str, value: dict[str, Any]) -> None:
        update = {"update_id": next(self.update_ids), kind: value}
        await self.application.process_update(Update.de_json(update, self.application.bot))


def _entities(text: str) -> dict[str, Any]:
    """The ``entities`` of a typed text: a command at its start, as Telegram marks one."""
    command = _COMMAND.match(text)
    if command is None:
        return {}
    return {"entities": [{"type": "bot_command", "offset": 0, "length": command.end()}]}
