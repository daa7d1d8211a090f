"""A fake Telegram Bot API server on 127.0.0.1, driven by tests.

The bot under test is the real python-telegram-bot ``Application``, pointed here with
``ApplicationBuilder().base_url(server.base_url)`` (``telegram.base_url`` in the config): it
long-polls ``getUpdates`` and calls ``sendMessage`` & co over real HTTP. A test injects updates
(messages, button presses) and reads back every request the bot made::

    async with FakeBotAPI() as telegram:
        alice = telegram.user(42, "Alice")
        ... start the bot against telegram.base_url ...
        telegram.send("/remember standup at 10 #work", user=alice)
        [reply] = await telegram.wait("sendMessage", chat_id=42)
        assert "standup" in reply.text

It behaves like Telegram where a bot can get it wrong: the token in the URL must match (else
401); ``parse_mode=HTML`` text is parsed as Telegram does (only its tags, balanced; ``<``,
``>`` and ``&`` escaped; known entities only) and refused with "can't parse entities" otherwise;
a message over 4096 UTF-16 units after parsing, an empty one, callback data over 64 bytes, a
message to an unknown chat or to a forum topic closed or deleted (``forum``, ``topics``), an
edit that changes nothing and a second answer to a button press are refused with Telegram's 400
descriptions. ``fail`` injects errors (429 with ``retry_after``, 400, 403, ...) for the next
matching calls; ``hold`` keeps matching calls waiting for their answer until the test releases
them (a slow chat). Unknown methods answer 404.

Each call records when the fake received it (``Call.received``), so that a test can check the
bot's pace against Telegram's limits. Bot messages are stored per chat (``messages``), edits
applied, so that a test can press a button of a message the bot sent (``press``) or reply to it
(``send(..., reply_to=...)``).
Telegram's side of chats and messages is ``telegram_chats``; its rules and the wire format are
``telegram_protocol``. Updates wait in ``updates`` for ``getUpdates`` or, once the bot has called
``setWebhook``, are POSTed to it as Telegram does (``telegram_webhook``: one chat's in order,
failed deliveries retried, every attempt in ``deliveries``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from .telegram_chats import TelegramChats
from .telegram_media import FILE_ROUTE, TelegramMedia
from .telegram_protocol import ApiError, Call, parse_html, read_params, utf16_len
from .telegram_webhook import Delivery, TelegramWebhook

__all__ = [
    "ANONYMOUS_ADMIN",
    "BOT_ID",
    "BOT_USERNAME",
    "CHANNEL_BOT",
    "SERVICE_USER",
    "TOKEN",
    "ApiError",
    "Call",
    "Delivery",
    "FakeBotAPI",
    "parse_html",
    "utf16_len",
]

TOKEN = "123456789:TEST-token_for-the-fake-Bot-API"
BOT_ID = 123456789
BOT_USERNAME = "CogitoTestBot"

# The users Telegram puts in ``from`` when a chat is the sender (``sender_chat``).
CHANNEL_BOT = {"id": 136817688, "is_bot": True, "first_name": "Channel", "username": "Channel_Bot"}
ANONYMOUS_ADMIN = {
    "id": 1087968824,
    "is_bot": True,
    "first_name": "Group",
    "username": "GroupAnonymousBot",
}
SERVICE_USER = {"id": 777000, "is_bot": False, "first_name": "Telegram"}

_COMMAND = re.compile(r"/[A-Za-z0-9_]+(?:@[A-Za-z0-9_]+)?")
_MENTION = re.compile(r"(?<![\w@])@[A-Za-z0-9_]{3,32}")


@dataclass
class _Failure:
    method: str
    error: ApiError
    times: int
    when: Callable[[dict[str, Any]], bool] | None


class FakeBotAPI(TelegramWebhook, TelegramMedia, TelegramChats):
    """The fake server. Use as ``async with FakeBotAPI() as telegram:`` (or start/close)."""

    def __init__(self, token: str = TOKEN, *, username: str = BOT_USERNAME) -> None:
        super().__init__(
            {
                "id": BOT_ID,
                "is_bot": True,
                "first_name": "Cogito",
                "username": username,
                "can_join_groups": True,
                "can_read_all_group_messages": False,
                "supports_inline_queries": False,
            }
        )
        self.token = token
        self._init_media()
        self._init_webhook()
        self.calls: list[Call] = []
        self.updates: list[dict[str, Any]] = []
        self.port = 0
        self._update_ids = itertools.count(1)
        self._failures: list[_Failure] = []
        self._holds: list[tuple[str, Callable[[dict[str, Any]], bool] | None, asyncio.Event]] = []
        self._updates_changed = asyncio.Event()
        self._calls_changed = asyncio.Event()
        self._closing = False
        self._runner: web.AppRunner | None = None

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """What ``ApplicationBuilder().base_url`` takes (the token is appended)."""
        return f"http://127.0.0.1:{self.port}/bot"

    @property
    def base_file_url(self) -> str:
        """What ``ApplicationBuilder().base_file_url`` takes (files are served there)."""
        return f"http://127.0.0.1:{self.port}/file/bot"

    async def start(self) -> FakeBotAPI:
        """Listen on ``port`` (0: any free one; after ``close``, the same one again, with the
        chats and the pending updates kept: Telegram back after an outage)."""
        self._closing = False
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get(FILE_ROUTE, self.download)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._start_webhook()  # a webhook set before a close is served again
        return self

    async def close(self) -> None:
        self._closing = True
        self._updates_changed.set()
        await self._stop_webhook()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeBotAPI:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- people, chats and updates ------------------------------------------------------------

    @staticmethod
    def user(user_id: int, first_name: str = "Alice", language_code: str = "en") -> dict[str, Any]:
        """A Telegram user (a person)."""
        return {
            "id": user_id,
            "is_bot": False,
            "first_name": first_name,
            "language_code": language_code,
        }

    def group(
        self, chat_id: int = -1001234567890, title: str = "Team", kind: str = "supergroup"
    ) -> dict[str, Any]:
        """A group chat the bot is in."""
        chat = {"id": chat_id, "type": kind, "title": title}
        self.chats[chat_id] = chat
        return chat

    @staticmethod
    def channel(chat_id: int = -1009876543210, title: str = "News") -> dict[str, Any]:
        """A channel, to post "as" in a group (``send(..., sender_chat=...)``)."""
        return {"id": chat_id, "type": "channel", "title": title}

    def private_chat(self, user: dict[str, Any]) -> dict[str, Any]:
        """The private chat of ``user`` with the bot (they have started the bot)."""
        chat = {"id": user["id"], "type": "private", "first_name": user["first_name"]}
        self.chats[user["id"]] = chat
        return chat

    def push(self, update: dict[str, Any]) -> int:
        """Queue a raw update (``update_id`` is assigned) for the bot's next getUpdates."""
        update = {"update_id": next(self._update_ids), **update}
        self.updates.append(update)
        self._updates_changed.set()
        self._wake_webhook()
        return int(update["update_id"])

    def send(
        self,
        text: str,
        *,
        user: dict[str, Any] | None = None,
        chat: dict[str, Any] | None = None,
        reply_to: dict[str, Any] | None = None,
        sender_chat: dict[str, Any] | None = None,
        automatic_forward: bool = False,
        thread: int | None = None,
    ) -> dict[str, Any]:
        """A user sends ``text`` (in their private chat unless ``chat``); returns the message.

        With ``thread``, in that forum topic (of a ``forum``, or of a private chat with
        ``private_topics``), as Telegram has it: ``message_thread_id``, ``is_topic_message``,
        and the topic's first message as ``reply_to_message`` unless ``reply_to`` is given.

        Entities are set as Telegram sets them: a leading bot command, @mentions. With
        ``sender_chat`` (a ``channel``, or the group ``chat`` itself: an anonymous
        administrator) the message is sent on behalf of that chat, and ``from`` is Telegram's
        placeholder unless ``user`` is given: ``Channel_Bot``, ``GroupAnonymousBot``, or
        ``Telegram`` for a linked channel's ``automatic_forward``.
        """
        if user is None:
            if sender_chat is None:
                raise ValueError("a message needs a user or a sender_chat")
            if automatic_forward:
                user = SERVICE_USER
            elif chat is not None and sender_chat["id"] == chat["id"]:
                user = ANONYMOUS_ADMIN
            else:
                user = CHANNEL_BOT
        chat = chat if chat is not None else self.private_chat(user)
        self.chats.setdefault(chat["id"], chat)
        message: dict[str, Any] = {
            "message_id": self._next_message_id(chat["id"]),
            "date": int(time.time()),
            "chat": chat,
            "from": user,
            "text": text,
        }
        if sender_chat is not None:
            message["sender_chat"] = sender_chat
        if automatic_forward:
            message["is_automatic_forward"] = True
        entities = []
        command = _COMMAND.match(text)
        if command:
            entities.append({"type": "bot_command", "offset": 0, "length": command.end()})
        for mention in _MENTION.finditer(text):
            offset = utf16_len(text[: mention.start()])
            entities.append({"type": "mention", "offset": offset, "length": utf16_len(mention[0])})
        if entities:
            message["entities"] = entities
        if thread is not None:
            message.update(message_thread_id=thread, is_topic_message=True)
            if reply_to is None:
                reply_to = self.topic_root(chat, thread)
        if reply_to is not None:
            message["reply_to_message"] = reply_to
        self.push({"message": message})
        return message

    def post(
        self,
        *,
        user: dict[str, Any],
        chat: dict[str, Any] | None = None,
        text: str | None = None,
        **fields: Any,
    ) -> dict[str, Any]:
        """A user sends a message of any kind: ``fields`` are its Bot API fields as Telegram
        sets them (``photo=[telegram.upload(...)]``, ``caption``, ``forward_origin``,
        ``media_group_id``, ``location``, ``voice`` ...); ``text`` gets entities as in ``send``.
        Returns the message."""
        if text is not None:
            message = self.send(text, user=user, chat=chat)
            self.updates.pop()  # sent again below, with the other fields
        else:
            chat = chat if chat is not None else self.private_chat(user)
            self.chats.setdefault(chat["id"], chat)
            message = {
                "message_id": self._next_message_id(chat["id"]),
                "date": int(time.time()),
                "chat": chat,
                "from": user,
            }
        caption = fields.get("caption")
        if isinstance(caption, str):
            mentions = [
                {
                    "type": "mention",
                    "offset": utf16_len(caption[: m.start()]),
                    "length": utf16_len(m[0]),
                }
                for m in _MENTION.finditer(caption)
            ]
            if mentions:
                fields.setdefault("caption_entities", mentions)
        message.update(fields)
        self.push({"message": message})
        return message

    def edit(self, message: dict[str, Any], **fields: Any) -> dict[str, Any]:
        """The user edits ``message`` (one they sent): ``text=`` or ``caption=``; Telegram
        sends it again as ``edited_message`` with an ``edit_date``. Returns the edited one."""
        edited = {**message, **fields, "edit_date": int(time.time())}
        if "text" in fields:
            edited.pop("entities", None)
            command = _COMMAND.match(fields["text"])
            if command:
                edited["entities"] = [{"type": "bot_command", "offset": 0, "length": command.end()}]
        self.push({"edited_message": edited})
        return edited

    def inline(self, query: str, *, user: dict[str, Any], chat_type: str = "private") -> str:
        """``user`` types ``@bot <query>`` in some chat (``chat_type``: Telegram's kind of the
        chat the query is typed in); returns the query id to find its answer by."""
        query_id = f"iq{next(self._update_ids)}"
        self.open_inline_query(query_id)
        self.push(
            {
                "inline_query": {
                    "id": query_id,
                    "from": user,
                    "query": query,
                    "offset": "",
                    "chat_type": chat_type,
                }
            }
        )
        return query_id

    def press(self, message: dict[str, Any] | None, data: str, *, user: dict[str, Any]) -> str:
        """``user`` presses the button with callback ``data`` under ``message`` (any data: a
        test may forge it); ``message=None`` is a button of an inline-mode message, which
        Telegram sends with ``inline_message_id`` and no message. Returns the query id."""
        query_id = f"q{next(self._update_ids)}"
        self._open_queries.add(query_id)
        query: dict[str, Any] = {"id": query_id, "from": user, "data": data}
        if message is None:
            query["inline_message_id"] = f"inline{query_id}"
            query["chat_instance"] = f"instance{query_id}"
        else:
            query["message"] = message
            query["chat_instance"] = str(message["chat"]["id"])
        self.push({"callback_query": query})
        return query_id

    # -- errors ------------------------------------------------------------------------------

    def fail(
        self,
        method: str,
        error_code: int,
        description: str,
        *,
        retry_after: int | None = None,
        times: int = 1,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> None:
        """Answer the next ``times`` calls of ``method`` (those ``when`` accepts) with an error:
        ``fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)``."""
        self._failures.append(
            _Failure(method, ApiError(error_code, description, retry_after), times, when)
        )

    def hold(
        self, method: str, *, when: Callable[[dict[str, Any]], bool] | None = None
    ) -> asyncio.Event:
        """Keep calls of ``method`` (those ``when`` accepts) waiting for their answer until the
        returned event is set: a slow Telegram, or a slow network, for one chat."""
        release = asyncio.Event()
        self._holds.append((method, when, release))
        return release

    # -- what the bot did --------------------------------------------------------------------

    def mark(self) -> int:
        """A position in ``calls``: pass it as ``since`` to look only at later calls."""
        return len(self.calls)

    def find(
        self,
        method: str,
        *,
        since: int = 0,
        ok: bool | None = True,
        where: Callable[[Call], bool] | None = None,
        **match: Any,
    ) -> list[Call]:
        """The calls of ``method`` after ``since`` whose params equal ``match``, that succeeded
        (``ok=False``: that failed; ``None``: both) and that ``where`` accepts."""
        return [
            call
            for call in self.calls[since:]
            if call.method == method
            and (ok is None or call.ok == ok)
            and all(call.params.get(key) == value for key, value in match.items())
            and (where is None or where(call))
        ]

    async def wait(
        self,
        method: str,
        *,
        count: int = 1,
        since: int = 0,
        ok: bool | None = True,
        where: Callable[[Call], bool] | None = None,
        timeout: float = 30.0,
        **match: Any,
    ) -> list[Call]:
        """Wait until the bot has made ``count`` matching calls (see ``find``); return them all.

        ``timeout`` only keeps a broken test from hanging (generous: a process started on a loaded
        machine takes seconds); it is not a performance assertion.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        found: list[Call] = []
        start = since
        while True:
            # Only the calls recorded since the last look are checked: waiting for n calls
            # costs O(n), which matters to the benchmark that waits for thousands.
            found += self.find(method, since=since, ok=ok, where=where, **match)
            since = len(self.calls)
            if len(found) >= count:
                return found
            remaining = deadline - loop.time()
            if remaining <= 0:
                seen = [(c.method, c.status, c.text[:60]) for c in self.calls[start:]]
                raise AssertionError(f"expected {count} {method} {match}; the bot made {seen}")
            self._calls_changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._calls_changed.wait(), remaining)

    # -- the HTTP side -----------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.match_info["token"] != self.token:
            return web.json_response(ApiError(401, "Unauthorized").payload(), status=401)
        params, files = await read_params(request)
        call = Call(method, params, files)
        for held, when, release in self._holds:
            if held == method and (when is None or when(params)):
                await release.wait()
        try:
            for failure in self._failures:
                if (
                    failure.method == method
                    and failure.times
                    and (failure.when is None or failure.when(params))
                ):
                    failure.times -= 1
                    raise failure.error
            answer = getattr(self, f"_api_{method}", None)
            if answer is None:
                raise ApiError(404, "Not Found")
            call.result = await answer(params, files)
        except ApiError as e:
            call.status, call.error = e.error_code, e.description
            self._record(call)
            return web.json_response(e.payload(), status=e.error_code)
        self._record(call)
        return web.json_response({"ok": True, "result": call.result})

    def _record(self, call: Call) -> None:
        if call.method != "getUpdates":
            self.calls.append(call)
            self._calls_changed.set()

    # -- Bot API methods ---------------------------------------------------------------------

    async def _api_getMe(self, params: dict[str, Any], files: Any) -> Any:
        return self.bot

    async def _api_getUpdates(self, params: dict[str, Any], files: Any) -> Any:
        self._check_polling()  # 409 while a webhook is set
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        timeout = float(params.get("timeout") or 0)
        if offset:
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not self.updates and not self._closing and loop.time() < deadline:
            self._updates_changed.clear()
            try:
                await asyncio.wait_for(self._updates_changed.wait(), deadline - loop.time())
            except TimeoutError:
                break
        return self.updates[:limit]
