"""Helpers of the bot's end-to-end tests (the fixtures are in conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from bench.fakes.telegram_server import Call, FakeBotAPI
from bot.config import Config
from memory.files import MemoryStore

StartBot = Callable[..., AbstractAsyncContextManager["Bot"]]


class Bot:
    """The running bot and the fake Telegram it talks to."""

    def __init__(self, telegram: FakeBotAPI, config: Config, store: Any = None) -> None:
        self.telegram = telegram
        self.config = config
        self.store = store  # the bot's own store (for waiting on its embeddings)

    async def say(
        self,
        text: str,
        *,
        user: dict[str, Any],
        chat: dict[str, Any] | None = None,
        reply_to: dict[str, Any] | None = None,
        replies: int = 1,
        method: str = "sendMessage",
        thread: int | None = None,
    ) -> list[Call]:
        """Send ``text`` as ``user`` (in forum topic ``thread``) and return the bot's
        ``replies`` messages to that chat."""
        since = self.telegram.mark()
        message = self.telegram.send(text, user=user, chat=chat, reply_to=reply_to, thread=thread)
        chat_id = message["chat"]["id"]
        return await self.telegram.wait(method, count=replies, since=since, chat_id=chat_id)

    async def exchange(
        self,
        text: str,
        *,
        user: dict[str, Any],
        chat: dict[str, Any] | None = None,
        reply_to: dict[str, Any] | None = None,
        sentinel_user: dict[str, Any] | None = None,
        thread: int | None = None,
    ) -> list[Call]:
        """Send ``text`` (in forum topic ``thread``), then /help as a sentinel; return every
        call the bot made in between (failed ones included). Updates are handled in order, so
        once the sentinel is answered, ``text`` has been handled completely, however many
        messages (or none) it caused."""
        since = self.telegram.mark()
        message = self.telegram.send(text, user=user, chat=chat, reply_to=reply_to, thread=thread)
        self.telegram.send("/help", user=sentinel_user or user, chat=message["chat"], thread=thread)
        [*_, sentinel] = await self.telegram.wait(
            "sendMessage", since=since, chat_id=message["chat"]["id"], where=is_help
        )
        return [call for call in self.telegram.calls[since:] if call is not sentinel]

    async def press(self, call: Call | dict[str, Any], data: str, *, user: dict[str, Any]) -> str:
        """Press the button ``data`` under the bot message sent by ``call``; wait for the answer."""
        message = call.result if isinstance(call, Call) else call
        since = self.telegram.mark()
        query_id = self.telegram.press(message, data, user=user)
        await self.telegram.wait("answerCallbackQuery", since=since, callback_query_id=query_id)
        return query_id

    def memories(self, namespace: str) -> list[dict[str, Any]]:
        """The records of ``data_dir/<namespace>/memory.json`` as read by a fresh store."""
        with MemoryStore(self.config.data_dir) as store:
            return store.namespace(namespace).export()

    def namespaces(self) -> list[str]:
        """The namespaces with files on disk."""
        return MemoryStore(self.config.data_dir).namespace_names()


def is_help(call: Call) -> bool:
    """Whether ``call`` sent the /help text (in either language)."""
    return "/related" in call.text and "/export" in call.text and not call.text.startswith("👋")


def memory_file(data_dir: Path, namespace: str) -> list[dict[str, Any]]:
    """``memory.json`` of a namespace as a person would read it (after a clean stop)."""
    return list(json.loads((data_dir / namespace / "memory.json").read_text("utf-8")))


ALICE = FakeBotAPI.user(42, "Alice")
BOB = FakeBotAPI.user(43, "Bob")
LI = FakeBotAPI.user(44, "李雷", language_code="zh-hans")
