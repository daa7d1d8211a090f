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
own messages. A group's shared settings (``/digest on|off``) are changed by its administrators
only (``may_change_settings``); everyone may read them.

A group's shared memory may be deleted or edited by the member who stored it or by one of the
group's administrators (``may_change_memory``); everyone may read it. The gatekeeper also tells
a user, once, when their namespace's file was unreadable and moved aside (quarantined).
"""

from __future__ import annotations

import logging

from telegram import Bot, Chat, Message, MessageEntity, Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.ext import ApplicationHandlerStop, ContextTypes

from bot.config import Config
from bot.i18n import language_of, t
from bot.render import escape
from bot.replies import reply_html
from bot.services import services
from memory.errors import MemoryStoreError
from memory.model import Memory
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
        await _tell_about_quarantine(update, context)
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


async def may_change_settings(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """Whether the sender may change the settings of this update's namespace: their own always;
    a group's shared one only as one of its administrators (asked of Telegram each time)."""
    chat, user, message = update.effective_chat, update.effective_user, update.effective_message
    if chat is None or user is None:
        return False
    if not is_group(chat) or services(context).config.telegram.group_scope == "user":
        return True
    if (
        message is not None
        and message.sender_chat is not None
        and message.sender_chat.id == chat.id
    ):
        return True  # an anonymous administrator, writing as the group itself
    member = await context.bot.get_chat_member(chat.id, user.id)
    return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


async def _tell_about_quarantine(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Tell the user, once, that their namespace's file was unreadable and set aside.

    Every handler's namespace passes through here first (this is the gatekeeper's group), so
    no command needs to know: the namespace is loaded now, and ``pop_quarantine`` answers once
    per quarantine, whoever asks first. Only updates meant for the bot count as the user's next
    interaction (not a group's chatter). A store that cannot be read at all is left to the
    handler, whose error reaches ``on_error``.
    """
    message = update.message
    if update.callback_query is None and (
        message is None or not addressed_to_bot(message, context.bot)
    ):
        return
    namespace = current_namespace(update, context)
    if namespace is None:
        return
    try:
        held = len(namespace.memories())  # loads it: a damaged file is set aside now
    except MemoryStoreError:
        return
    moved = namespace.pop_quarantine()
    if moved is None:
        return
    log.warning("told chat %s that %s was quarantined", update.effective_chat, moved)
    key = "quarantined" if held else "quarantined_empty"
    text = t(language_of(update.effective_user), key, file=escape(moved.name), count=held)
    if message is not None:
        await reply_html(message, text)
    elif update.effective_chat is not None:
        await context.bot.send_message(update.effective_chat.id, text, parse_mode="HTML")


def message_source(message: Message) -> str:
    """The ``source`` of a memory stored from ``message``: ``telegram:<chat>:<message>:<user>``.

    The store keeps one memory per source (``Namespace.add``), so a message that Telegram
    delivers twice is remembered once; the last part records who stored it (``stored_by``).
    """
    user = message.from_user.id if message.from_user is not None else 0
    return f"telegram:{message.chat.id}:{message.message_id}:{user}"


def stored_by(memory: Memory) -> int | None:
    """The Telegram user whose message stored ``memory``, if its source says so.

    ``telegram:<chat>:<message>:<user>`` from a command, with ``:<n>`` after it when the
    assistant stored it while answering that user's message.
    """
    parts = (memory.source or "").split(":")
    if len(parts) not in (4, 5) or parts[0] != "telegram" or not parts[3].isdigit():
        return None
    return int(parts[3]) or None


async def may_change_memory(
    update: Update, context: ContextTypes.DEFAULT_TYPE, memory: Memory
) -> bool:
    """Whether the sender may delete or edit ``memory`` (the group policy of the README).

    In their own namespace, always. In a group's shared namespace, only the member who stored
    it, or one of the group's administrators, as Telegram lets members delete their own
    messages and administrators anyone's. A memory with no recorded author (added by the
    assistant, imported, or stored before authors were recorded) is the administrators'.
    """
    user = update.effective_user
    if user is not None and stored_by(memory) == user.id:
        return True
    return await may_change_settings(update, context)
