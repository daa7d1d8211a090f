"""Telegram's side of chats and messages: what it knows, and the Bot API methods that use it.

``TelegramChats`` holds the chats the bot may write to (those the tests have made known), every
message of each chat with edits applied, the command menus, the button presses awaiting an
answer, each group's administrators (``admins``, for ``getChatMember``) and each forum's
topics (``topics``: open or closed; one deleted is not there), a private chat's too once it
has topics (``private_topics``: Bot API 9.3); its
``_api_<method>`` coroutines answer the Bot API's message methods as Telegram does, refusals
included (``ApiError`` with Telegram's descriptions). ``FakeBotAPI`` serves them.
"""

from __future__ import annotations

import itertools
import re
import time
from typing import Any

from .telegram_protocol import (
    MAX_ALERT,
    MAX_TEXT,
    bad_request,
    check_markup,
    parse_html,
    utf16_len,
)


class TelegramChats:
    """Chats, messages, menus and open button presses, and the methods that act on them."""

    def __init__(self, bot: dict[str, Any]) -> None:
        self.bot = bot
        self.chats: dict[int, dict[str, Any]] = {}
        self.messages: dict[int, dict[int, dict[str, Any]]] = {}  # chat id -> id -> message
        self.commands: dict[str, list[dict[str, str]]] = {}  # language code -> menu
        self.admins: dict[int, set[int]] = {}  # group chat id -> its administrators' user ids
        self.topics: dict[int, dict[int, str]] = {}  # forum id -> thread id -> "open"/"closed"
        self._message_ids: dict[int, itertools.count[int]] = {}
        self._open_queries: set[str] = set()

    def chat_messages(self, chat_id: int) -> list[dict[str, Any]]:
        """The bot's messages in a chat, oldest first, as they are now (edits applied)."""
        bot_id = self.bot["id"]
        return [m for m in self.messages.get(chat_id, {}).values() if m["from"]["id"] == bot_id]

    def forum(self, chat_id: int = -1001234567891, title: str = "Forum") -> dict[str, Any]:
        """A supergroup with topics (``is_forum``) the bot is in; open topics with
        ``topics[chat_id][thread_id] = "open"``, close or delete them by changing that."""
        chat = {"id": chat_id, "type": "supergroup", "title": title, "is_forum": True}
        self.chats[chat_id] = chat
        self.topics.setdefault(chat_id, {})
        return chat

    def private_topics(self, chat: dict[str, Any]) -> dict[str, Any]:
        """``chat`` (a ``private_chat``) with topics, as a bot's private chats may have them;
        open them with ``topics[chat_id][thread_id] = "open"``, as a forum's."""
        self.topics.setdefault(chat["id"], {})
        return chat

    def topic_root(self, chat: dict[str, Any], thread: int) -> dict[str, Any]:
        """The first message of topic ``thread``: the service message of its creation, which
        Telegram puts as ``reply_to_message`` on every message of the topic that answers
        nothing else (its id is the thread's)."""
        return {
            "message_id": thread,
            "date": int(time.time()),
            "chat": chat,
            "from": {"id": 1, "is_bot": False, "first_name": "Creator"},
            "message_thread_id": thread,
            "is_topic_message": True,
            "forum_topic_created": {"name": f"Topic {thread}", "icon_color": 7322096},
        }

    def _check_topic(self, chat: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
        """Telegram's answer to a message for a forum topic that is closed or gone; the
        message's topic fields if it may go there."""
        thread = params.get("message_thread_id")
        if thread is None or chat["id"] not in self.topics:
            return {}
        state = self.topics.get(chat["id"], {}).get(int(thread))
        if state is None:
            raise bad_request("message thread not found")
        if state == "closed":
            raise bad_request("TOPIC_CLOSED")
        return {"message_thread_id": int(thread), "is_topic_message": True}

    def _next_message_id(self, chat_id: int) -> int:
        return next(self._message_ids.setdefault(chat_id, itertools.count(1)))

    def _chat(self, params: dict[str, Any]) -> dict[str, Any]:
        chat = self.chats.get(params.get("chat_id"))  # type: ignore[arg-type]
        if chat is None:
            raise bad_request("chat not found")
        return chat

    def _check_text(self, params: dict[str, Any], key: str = "text") -> str:
        raw = str(params.get(key, ""))
        text = parse_html(raw) if params.get("parse_mode") == "HTML" else raw
        if key == "text" and not text.strip():
            raise bad_request("message text is empty")
        if utf16_len(text) > MAX_TEXT:
            raise bad_request("message is too long")
        check_markup(params.get("reply_markup"))
        return text

    def _bot_message(
        self, chat: dict[str, Any], params: dict[str, Any], **extra: Any
    ) -> dict[str, Any]:
        message: dict[str, Any] = {
            "message_id": self._next_message_id(chat["id"]),
            "date": int(time.time()),
            "chat": chat,
            "from": self.bot,
            **extra,
        }
        markup = params.get("reply_markup")
        if isinstance(markup, dict) and "inline_keyboard" in markup:
            # Telegram's message carries an inline keyboard only; a reply keyboard (or its
            # removal) is the chat's input field, not part of the message.
            message["reply_markup"] = markup
        self.messages.setdefault(chat["id"], {})[message["message_id"]] = message
        return message

    # -- Bot API methods ---------------------------------------------------------------------

    async def _api_setMyCommands(self, params: dict[str, Any], files: Any) -> Any:
        commands = params.get("commands")
        if not isinstance(commands, list) or len(commands) > 100:
            raise bad_request("BOT_COMMANDS_TOO_MUCH")
        for command in commands:
            if not re.fullmatch(r"[a-z0-9_]{1,32}", command.get("command", "")):
                raise bad_request("BOT_COMMAND_INVALID")
            if not 1 <= len(command.get("description", "")) <= 256:
                raise bad_request("BOT_COMMAND_DESCRIPTION_INVALID")
        self.commands[str(params.get("language_code", ""))] = commands
        return True

    async def _api_sendMessage(self, params: dict[str, Any], files: Any) -> Any:
        chat = self._chat(params)
        topic = self._check_topic(chat, params)
        text = self._check_text(params)
        return self._bot_message(chat, params, text=text, **topic)

    async def _api_sendDocument(self, params: dict[str, Any], files: Any) -> Any:
        chat = self._chat(params)
        topic = self._check_topic(chat, params)
        caption = self._check_text(params, "caption")
        if "document" not in files:
            raise bad_request("there is no document in the request")
        name, content = files["document"]
        message_id = sum(len(messages) for messages in self.messages.values())
        document = {
            "file_id": f"doc{message_id}",
            "file_unique_id": f"u{message_id}",
            "file_name": name,
            "file_size": len(content),
        }
        return self._bot_message(chat, params, caption=caption, document=document, **topic)

    async def _api_editMessageText(self, params: dict[str, Any], files: Any) -> Any:
        chat = self._chat(params)
        message = self.messages.get(chat["id"], {}).get(params.get("message_id"))  # type: ignore[arg-type]
        if message is None:
            raise bad_request("message to edit not found")
        if message["from"]["id"] != self.bot["id"]:
            raise bad_request("message can't be edited")
        text = self._check_text(params)
        markup = params.get("reply_markup")
        if text == message.get("text") and markup == message.get("reply_markup"):
            raise bad_request(
                "message is not modified: specified new message content and reply markup are "
                "exactly the same as a current content and reply markup of the message"
            )
        message["text"] = text
        message.pop("reply_markup", None)
        if markup:
            message["reply_markup"] = markup
        return message

    async def _api_editMessageReplyMarkup(self, params: dict[str, Any], files: Any) -> Any:
        chat = self._chat(params)
        message = self.messages.get(chat["id"], {}).get(params.get("message_id"))  # type: ignore[arg-type]
        if message is None:
            raise bad_request("message to edit not found")
        if message["from"]["id"] != self.bot["id"]:
            raise bad_request("message can't be edited")
        markup = params.get("reply_markup") or None  # none: the keyboard is removed
        check_markup(markup)
        if markup == (message.get("reply_markup") or None):
            raise bad_request(
                "message is not modified: specified new message content and reply markup are "
                "exactly the same as a current content and reply markup of the message"
            )
        message.pop("reply_markup", None)
        if markup:
            message["reply_markup"] = markup
        return message

    async def _api_answerCallbackQuery(self, params: dict[str, Any], files: Any) -> Any:
        query_id = str(params.get("callback_query_id"))
        if query_id not in self._open_queries:
            raise bad_request(
                "query is too old and response timeout expired or query ID is invalid"
            )
        if len(str(params.get("text", ""))) > MAX_ALERT:
            raise bad_request("MESSAGE_TOO_LONG")
        self._open_queries.discard(query_id)
        return True

    async def _api_sendChatAction(self, params: dict[str, Any], files: Any) -> Any:
        self._chat(params)
        return True

    async def _api_getChatMember(self, params: dict[str, Any], files: Any) -> Any:
        chat = self._chat(params)
        user_id = int(params["user_id"])
        user = {"id": user_id, "is_bot": False, "first_name": f"User {user_id}"}
        if user_id not in self.admins.get(chat["id"], set()):
            return {"status": "member", "user": user}
        rights = (
            "can_manage_chat can_delete_messages can_manage_video_chats can_restrict_members "
            "can_promote_members can_change_info can_invite_users can_post_stories "
            "can_edit_stories can_delete_stories"
        ).split()
        return {
            "status": "administrator",
            "user": user,
            "can_be_edited": False,
            "is_anonymous": False,
            **dict.fromkeys(rights, True),
        }

    async def _api_deleteMessage(self, params: dict[str, Any], files: Any) -> Any:
        chat = self._chat(params)
        if self.messages.get(chat["id"], {}).pop(params.get("message_id"), None) is None:  # type: ignore[arg-type]
            raise bad_request("message to delete not found")
        return True
