"""A Bot API answered in-process: what the console and the benchmarks talk to.

``LocalBotAPI`` is a python-telegram-bot request object (``BaseRequest``) that answers the Bot
API methods the bot calls (``getMe``, ``sendMessage``, ``editMessageText``,
``answerCallbackQuery``, ``sendDocument``; anything else, ``setMyCommands`` and the like, is
answered ``true``) as Telegram would, successfully, and hands what the bot sends to a
callback (``Outgoing``), so that nothing leaves the machine. It keeps the chat's messages, the
bot's and (``received``) the user's, as Telegram does: an edit changes the message kept, and a
message sent as a reply to another carries it as ``reply_to_message``.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from telegram.request import BaseRequest, RequestData

from bot.view.render import to_plain

BOT_USER = {
    "id": 424242,
    "is_bot": True,
    "first_name": "Cogito",
    "username": "cogito_console_bot",
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}


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
        self.messages: dict[int, dict[str, Any]] = {}  # the chat's, by id, as they are now
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

    def received(self, message: dict[str, Any]) -> None:
        """Keep a message the chat's user sent, so that the bot can answer it as a reply."""
        self.messages[message["message_id"]] = message

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
        reply = params.get("reply_parameters")
        replied = self.messages.get(reply.get("message_id", 0)) if isinstance(reply, dict) else None
        if replied is not None:  # one gone is not quoted (allow_sending_without_reply)
            message["reply_to_message"] = quoted(replied)
        markup = params.get("reply_markup")
        if isinstance(markup, dict) and "inline_keyboard" in markup:  # as Telegram: a reply
            message["reply_markup"] = markup  # keyboard is the input field's, not the message's
        self.messages[message["message_id"]] = message
        return message

    def _send_message(self, params: dict[str, Any], data: RequestData | None) -> Any:
        message = self._message(params, text=self._text(params))
        self.on_send(Outgoing("message", message["text"], message, buttons_of(message)))
        return message

    def _edit_message_text(self, params: dict[str, Any], data: RequestData | None) -> Any:
        message = self.messages.get(int(params["message_id"]))
        if message is None:
            return True
        message["text"] = self._text(params)
        message.pop("reply_markup", None)
        if params.get("reply_markup"):
            message["reply_markup"] = params["reply_markup"]
        self.on_send(Outgoing("edit", message["text"], message, buttons_of(message)))
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


def buttons_of(message: dict[str, Any]) -> list[tuple[str, str]]:
    """The inline buttons a message has now, in order: ``(label, callback data)``."""
    markup = message.get("reply_markup") or {}
    rows = markup.get("inline_keyboard", []) if isinstance(markup, dict) else []
    return [(b["text"], b.get("callback_data", "")) for row in rows for b in row]


def quoted(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` as another one quotes it (``reply_to_message``): as it is now, without the
    message it replied to in turn (Telegram does not nest them)."""
    return {key: value for key, value in message.items() if key != "reply_to_message"}
