"""Who may use the bot, whether a message is for the bot, and whose memories it touches.

The namespace is always derived from the update being handled, never from anything the update
carries as data: a private chat is ``users/<user id>``; a group or supergroup is
``chats/<chat id>`` (shared by its members), or each member's ``users/<user id>`` when
``group_scope = "user"``. A button press is re-derived the same way, from the person who pressed,
so a callback naming a memory of another namespace finds nothing.

The gatekeeper runs before every handler (handler group -1). A user outside
``allowed_user_ids`` (when it is not empty) gets a refusal that shows their numeric id, so the
owner can add them, and nothing else happens for them. In a group the bot answers only what is
addressed to it: commands (``/recall`` or ``/recall@thisbot``), @mentions and replies to its
own messages.
"""

from __future__ import annotations

import logging

from telegram import Bot, Chat, Message, MessageEntity, Update
from telegram.constants import ChatType
from telegram.ext import ApplicationHandlerStop, ContextTypes

from bot.config import Config
from bot.i18n import language_of, t
from bot.replies import reply_html
from bot.services import services
from memory.store import Namespace

log = logging.getLogger(__name__)

GROUP_TYPES = (ChatType.GROUP, ChatType.SUPERGROUP)


def namespace_name(update: Update, config: Config) -> str | None:
    """The namespace this update may read and change (None: none, e.g. a channel post)."""
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None:
        return None
    if chat.type == ChatType.PRIVATE:
        return f"users/{user.id}"
    if chat.type in GROUP_TYPES:
        return f"users/{user.id}" if config.telegram.group_scope == "user" else f"chats/{chat.id}"
    return None


def is_allowed(user_id: int, config: Config) -> bool:
    """Whether this user may use the bot (admins always may)."""
    allowed = config.telegram.allowed_user_ids
    return not allowed or user_id in allowed or user_id in config.telegram.admin_user_ids


def addressed_to_bot(message: Message, bot: Bot) -> bool:
    """Whether ``message`` speaks to this bot: always in private; in groups a command (not one
    for another bot), an @mention, or a reply to one of the bot's messages."""
    if message.chat.type == ChatType.PRIVATE:
        return True
    username = (bot.username or "").lower()
    for entity, text in message.parse_entities().items():
        if entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0:
            _, _, target = text.partition("@")
            return not target or target.lower() == username
        if entity.type == MessageEntity.MENTION and text[1:].lower() == username:
            return True
        if entity.type == MessageEntity.TEXT_MENTION and entity.user and entity.user.id == bot.id:
            return True
    replied = message.reply_to_message
    return bool(replied and replied.from_user and replied.from_user.id == bot.id)


def without_mention(text: str, bot: Bot) -> str:
    """``text`` with this bot's @mention removed (``@CogitoBot where is my code``)."""
    username = bot.username or ""
    if not username:
        return text.strip()
    words = [w for w in text.split(" ") if w.lower().rstrip(",:，：") != f"@{username.lower()}"]
    return " ".join(words).strip()


async def gatekeeper(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Stop updates from users outside the allow list (with a refusal when spoken to)."""
    config = services(context).config
    user, chat = update.effective_user, update.effective_chat
    if user is None or chat is None or chat.type not in (ChatType.PRIVATE, *GROUP_TYPES):
        raise ApplicationHandlerStop  # channels and the like: nothing for this bot
    if is_allowed(user.id, config):
        return
    language = language_of(user)
    log.info("refused user %s in chat %s", user.id, chat.id)
    if update.callback_query is not None:
        await update.callback_query.answer(
            t(language, "refused_plain", user_id=user.id), show_alert=True
        )
    elif update.message is not None and addressed_to_bot(update.message, context.bot):
        await reply_html(update.message, t(language, "refused", user_id=user.id))
    raise ApplicationHandlerStop


def is_group(chat: Chat) -> bool:
    """Whether ``chat`` is a group or a supergroup."""
    return chat.type in GROUP_TYPES


def current_namespace(update: Update, context: ContextTypes.DEFAULT_TYPE) -> Namespace | None:
    """The namespace of this update (see ``namespace_name``), opened in the store."""
    found = services(context)
    name = namespace_name(update, found.config)
    return found.store.namespace(name) if name is not None else None
