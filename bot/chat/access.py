"""Who acts in an update, whether they may use the bot, and whose memories they touch.

Who acts (``Actor``, from ``actor_of``) is the real sender: ``sender_chat`` when Telegram sets
it, else ``from``. Posting "as a channel" (or a linked channel's automatic forward) puts a shared
placeholder user in ``from`` (``Channel_Bot``, 136817688; ``Telegram``, 777000) and the channel
in ``sender_chat``; an anonymous administrator is ``GroupAnonymousBot`` (1087968824) with the
group itself in ``sender_chat``. Those placeholders are never a person: without a
``sender_chat`` they are nobody, and the update is ignored. A button press has no
``sender_chat``: its ``from`` is always the real person who pressed, so a press is theirs,
whoever's message the button is under (an anonymous administrator presses as themself and has
their administrator rights, asked of Telegram).

The namespace is always derived from the update being handled, never from anything the update
carries as data: a private chat is ``users/<user id>``; a group or supergroup is
``chats/<chat id>`` (shared by its members), or with ``group_scope = "user"`` each member's
``users/<user id>``, a channel's ``channels/<chat id>`` (its own, in every group it writes in)
and the group itself's (its anonymous administrators) ``chats/<chat id>``. With
``group_scope = "topic"`` each forum topic is a namespace of its own,
``chats/<chat id>/topics/<thread id>`` (``users/<user id>/topics/<thread id>`` for a topic of
a private chat), the general topic ``chats/<chat id>`` (``bot.core.topics``); the topic is the
message's (``topic_of``), and everything else is as with ``"chat"``. A button press is
re-derived the same way, from the person who pressed and the message the button is under (so
in that message's topic), so a callback naming a memory of another namespace finds nothing.

The gatekeeper runs before every handler (handler group -1), and says who acts in the update
for the history of the memories (``author_of``). An actor outside
``allowed_user_ids`` (when it is not empty) gets a refusal that shows their numeric id, so the
owner can add them, and nothing else happens for them; a channel (or an anonymous administrator,
the group itself) is allowed when that chat's id is in the list. In a group the bot answers only
what is addressed to it: commands (``/recall`` or ``/recall@thisbot``), @mentions and replies to
its own messages. A group's shared settings (``/digest on|off``) are changed by its
administrators only (``may_change_settings``), an anonymous administrator included and a channel
never; everyone may read them. Every button press the gatekeeper stops is answered, so no
client is left spinning (a press on an inline-mode message has no chat, and so no namespace).

A group's shared memory may be deleted or edited by the member who stored it or by one of the
group's administrators (``bot.core.policy``); everyone may read it. Who stored it is the
actor recorded in its ``source`` (``message_source``). The gatekeeper also tells a user, once,
when their namespace's file was unreadable and moved aside (quarantined).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from pathlib import PurePath
from typing import Concatenate, ParamSpec, TypeVar

from telegram import Bot, Chat, Message, MessageEntity, Update, User
from telegram.constants import ChatMemberStatus, ChatType
from telegram.ext import ApplicationHandlerStop, ContextTypes

from bot.chat.services import services
from bot.config import Config
from bot.core.policy import PLACEHOLDER_USERS, Actor, Caller, source_of
from bot.core.topics import topic_namespace
from bot.errors import NotAllowed
from bot.view.i18n import language_of, t
from bot.view.render import escape
from bot.view.replies import reply_html
from memory.errors import MemoryStoreError
from memory.history import Author, set_author
from memory.interface import MemoryNamespace

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

GROUP_TYPES = (ChatType.GROUP, ChatType.SUPERGROUP)


def _person(user: User | None) -> Actor | None:
    if user is None or user.id in PLACEHOLDER_USERS:
        return None
    return Actor("user", user.id, user.full_name)


def message_actor(message: Message) -> Actor | None:
    """Who wrote ``message``: its ``sender_chat`` when set, else its (real) ``from``."""
    sender = message.sender_chat
    if sender is not None:
        name = sender.title or sender.full_name or str(sender.id)
        return Actor("chat", sender.id, name, is_group_itself=sender.id == message.chat.id)
    return _person(message.from_user)


def actor_of(update: Update) -> Actor | None:
    """Who acts in ``update`` (None: nobody the bot can tell apart, e.g. a bare placeholder).

    A button press is the person who pressed (callback queries have no ``sender_chat``), not
    the author of the message the button is under.
    """
    if update.callback_query is not None:
        return _person(update.callback_query.from_user)
    message = update.effective_message
    if message is not None:
        return message_actor(message)
    return _person(update.effective_user)


def namespace_for(actor: Actor, chat: Chat, config: Config, topic: int | None = None) -> str | None:
    """The namespace ``actor`` reads and changes in ``chat`` (None: none, e.g. a channel),
    in its forum topic ``topic`` (``topic_of``; None: the general topic, or no topics)."""
    if chat.type == ChatType.PRIVATE:
        if not actor.is_user:
            return None
        return topic_namespace(f"users/{actor.id}", topic if _by_topic(config) else None)
    if chat.type not in GROUP_TYPES:
        return None
    if config.telegram.group_scope != "user" or (actor.is_group_itself and actor.id == chat.id):
        return topic_namespace(f"chats/{chat.id}", topic if _by_topic(config) else None)
    # A chat's id is negative and a user's positive; the prefixes keep them apart anyway.
    return f"users/{actor.id}" if actor.is_user else f"channels/{actor.id}"


def _by_topic(config: Config) -> bool:
    return config.telegram.group_scope == "topic"


def topic_of(update: Update) -> int | None:
    """The forum topic ``update`` is in (a supergroup's, or a private chat's with topics): the
    thread id of its message (for a button press, of the message the button is under); None
    in the general topic and outside topics. A reply thread of a group without topics has a
    thread id too, but is no topic (``is_topic_message`` tells them apart)."""
    query = update.callback_query
    message = query.message if query is not None else update.effective_message
    if not isinstance(message, Message) or not message.is_topic_message:
        return None  # an inaccessible message (too old) is in no topic the bot can tell
    return message.message_thread_id


def replied_to(message: Message) -> Message | None:
    """The message ``message`` answers, if it answers one: its ``reply_to_message``, unless
    that is only the topic it is in (in a forum topic Telegram sets it to the topic's first
    message, the service message of its creation, on every message that answers nothing)."""
    replied = message.reply_to_message
    if replied is None or replied.forum_topic_created is not None:
        return None
    return replied


def namespace_name(update: Update, config: Config) -> str | None:
    """The namespace this update may read and change (None: none, e.g. a channel post)."""
    chat, actor = update.effective_chat, actor_of(update)
    if chat is None or actor is None:
        return None
    return namespace_for(actor, chat, config, topic_of(update))


def is_allowed(actor: Actor, config: Config) -> bool:
    """Whether ``actor`` may use the bot: a user or a chat whose id is in ``allowed_user_ids``
    (everyone when it is empty); the bot's admins (users) always may."""
    allowed = config.telegram.allowed_user_ids
    if not allowed:
        return True
    if not actor.is_user:  # a chat's id is negative: it never matches a user's entry
        return actor.id < 0 and actor.id in allowed
    return actor.id in allowed or actor.id in config.telegram.admin_user_ids


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
    replied = replied_to(message)
    return bool(replied and replied.from_user and replied.from_user.id == bot.id)


def without_mention(text: str, bot: Bot) -> str:
    """``text`` with this bot's @mention removed (``@CogitoBot where is my code``)."""
    username = bot.username or ""
    if not username:
        return text.strip()
    words = [w for w in text.split(" ") if w.lower().rstrip(",:，：") != f"@{username.lower()}"]
    return " ".join(words).strip()


async def gatekeeper(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Stop updates from actors outside the allow list (with a refusal when spoken to)."""
    config = services(context).config
    if update.inline_query is not None:  # no chat: bot.chat.inline checks the allow list
        return
    actor, chat, query = actor_of(update), update.effective_chat, update.callback_query
    language = language_of(update.effective_user)
    if (
        actor is None
        or chat is None
        or namespace_for(actor, chat, config, topic_of(update)) is None
    ):
        # Channels, inline-mode messages, bare placeholders: nothing for this bot. A press is
        # still answered, or the presser's client keeps spinning.
        if query is not None:
            await query.answer(t(language, "stale_plain"), show_alert=True)
        raise ApplicationHandlerStop
    if is_allowed(actor, config):
        set_author(author_of(update, actor, chat.id))
        await _tell_about_quarantine(update, context)
        return
    log.info("refused %s in chat %s", actor.key, chat.id)
    if query is not None:
        await query.answer(t(language, "refused_plain", user_id=actor.id), show_alert=True)
    elif update.message is not None and addressed_to_bot(update.message, context.bot):
        key, values = ("refused", {"user_id": actor.id})
        if not actor.is_user:
            key, values = ("refused_chat", {"chat_id": actor.id})
        await reply_html(update.message, t(language, key, **values))
    raise ApplicationHandlerStop


def author_of(update: Update, actor: Actor, chat_id: int) -> Author:
    """Who makes the changes of this update, through which door (``/edit``, ``button``, ``text``;
    the model's tools say ``model``), in which chat: one change (``memory.history``) per update.
    The gatekeeper sets it for the update's task; ``bot.core.workers`` carries it into its
    threads."""
    message = update.effective_message
    text = (message.text or message.caption or "") if message is not None else ""
    if update.callback_query is not None:
        door = "button"
    elif text.startswith("/"):
        door = text.split(maxsplit=1)[0].partition("@")[0].lower()[:32]
    else:
        door = "text"
    return Author(actor.key, door, actor.name[:64], chat_id)


def is_group(chat: Chat) -> bool:
    """Whether ``chat`` is a group or a supergroup."""
    return chat.type in GROUP_TYPES


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
    caller = caller_of(update, context)
    if caller is None:
        return
    store = services(context).workers.store

    def load() -> tuple[int, PurePath | None]:
        namespace = store.namespace(caller.namespace)
        held = namespace.count()  # loads it: a damaged file is set aside now
        return held, namespace.pop_quarantine()

    try:
        held, moved = await services(context).workers.call(load)
    except MemoryStoreError:
        return
    if moved is None:
        return
    log.warning("told chat %s that %s was quarantined", update.effective_chat, moved)
    key = "quarantined" if held else "quarantined_empty"
    text = t(language_of(update.effective_user), key, file=escape(moved.name), count=held)
    if message is not None:
        await reply_html(message, text)
    elif update.effective_chat is not None:
        chat_id, topic = update.effective_chat.id, topic_of(update)
        await context.bot.send_message(chat_id, text, parse_mode="HTML", message_thread_id=topic)


def message_source(message: Message) -> str:
    """The ``source`` of a memory stored from ``message`` (``bot.core.policy.source_of``)."""
    return source_of(message.chat.id, message.message_id, message_actor(message))


async def is_admin(context: ContextTypes.DEFAULT_TYPE, chat_id: int, actor: Actor) -> bool:
    """Whether ``actor`` administers the group ``chat_id`` (asked of Telegram each time; a
    chat never is, but the group itself, writing as an anonymous administrator)."""
    if not actor.is_user:
        return actor.is_group_itself and actor.id == chat_id
    member = await context.bot.get_chat_member(chat_id, actor.id)
    return member.status in (ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER)


def caller_of(update: Update, context: ContextTypes.DEFAULT_TYPE) -> Caller | None:
    """Who acts in ``update`` and in which namespace (None: nobody, or no namespace).

    ``admin`` is known without asking Telegram only for the group itself (an anonymous
    administrator); for a member it is asked when a change needs it (``with_admin``).
    """
    chat, actor = update.effective_chat, actor_of(update)
    if chat is None or actor is None:
        return None
    config = services(context).config
    namespace = namespace_for(actor, chat, config, topic_of(update))
    if namespace is None:
        return None
    shared = is_group(chat) and config.telegram.group_scope != "user"
    group_itself = actor.is_group_itself and actor.id == chat.id
    return Caller(actor, namespace, shared=shared, admin=shared and group_itself)


async def with_admin(context: ContextTypes.DEFAULT_TYPE, update: Update, caller: Caller) -> Caller:
    """``caller`` with its administrator rights, asked of Telegram if they matter and are not
    known yet (a group's shared namespace); the caller as it was otherwise."""
    chat = update.effective_chat
    if not caller.shared or caller.admin or chat is None:
        return caller
    if not await is_admin(context, chat.id, caller.actor):
        return caller
    return dataclasses.replace(caller, admin=True)


async def run_changing(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    caller: Caller,
    operation: Callable[Concatenate[MemoryNamespace, Caller, P], T],
    *args: P.args,
    **kwargs: P.kwargs,
) -> T:
    """Run an operation that changes a memory (``bot.core.operations``) for ``caller``.

    Telegram is asked whether the caller administers the group only when the policy refused
    them without those rights (their own memories need no call); ``NotAllowed`` if it still
    refuses.
    """
    workers = services(context).workers
    try:
        return await workers.run(caller.namespace, operation, caller, *args, **kwargs)
    except NotAllowed:
        admin = await with_admin(context, update, caller)
        if admin is caller:
            raise
        return await workers.run(caller.namespace, operation, admin, *args, **kwargs)


async def may_change_settings(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """Whether the actor may change the settings of this update's namespace: their own always;
    a group's shared one only as one of its administrators (asked of Telegram), or as the group
    itself (an anonymous administrator). A channel is never an administrator."""
    caller = caller_of(update, context)
    if caller is None:
        return False
    return caller.may_change_settings or (await with_admin(context, update, caller)).admin
