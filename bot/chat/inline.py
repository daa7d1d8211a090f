"""Inline mode: ``@YourBot dentist`` in any chat lists your own memories that match.

The results come from the private namespace of the person typing (``users/<their id>``),
whatever chat they type in: never a group's, whose members did not choose to show its memories
in other chats. Only someone the bot serves (``allowed_user_ids``) gets results; anyone else,
and an empty namespace, gets an empty list. Typing runs a query per keystroke, so looking does
not count as an access (``operations.browse``).

Every answer is ``is_personal`` with ``cache_time = 0``: Telegram caches inline answers per
query text, across users unless told otherwise, and one user's memories must never be shown to
another who types the same words. Choosing a result sends its content into that chat as plain
text, or the memory's photo, file, voice note, location or contact itself (``Cached*`` results
by file id), the content as its caption.

Inline mode must be switched on for the bot with @BotFather (``/setinline``); until then
Telegram sends no inline queries.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram import (
    InlineQueryResultArticle,
    InlineQueryResultCachedAudio,
    InlineQueryResultCachedDocument,
    InlineQueryResultCachedGif,
    InlineQueryResultCachedPhoto,
    InlineQueryResultCachedVideo,
    InlineQueryResultCachedVoice,
    InlineQueryResultContact,
    InlineQueryResultLocation,
    InputTextMessageContent,
    Update,
)
from telegram.ext import ContextTypes, InlineQueryHandler

from bot.chat.access import is_allowed
from bot.chat.services import services
from bot.core import operations
from bot.core.policy import Actor
from bot.view.i18n import language_of, t
from bot.view.render import preview
from memory.errors import MemoryInvalid
from memory.model import Memory

log = logging.getLogger(__name__)

RESULTS = 20  # Telegram shows up to 50; a phone screen fewer
TITLE_CHARS = 60
CAPTION_CHARS = 1024
MAX_QUERY = 256  # Telegram's limit for an inline query's text


def _result(memory: Memory, language: str) -> Any:
    """The inline result of one memory: its file when it has one, else its text."""
    rid = str(memory.id)
    title = preview(memory.content, TITLE_CHARS) or t(language, "inline_untitled_plain", id=rid)
    caption = memory.content[:CAPTION_CHARS]
    attachment = memory.attachment or {}
    kind, file_id = attachment.get("kind"), str(attachment.get("file_id", ""))
    try:
        if kind == "photo" and file_id:
            return InlineQueryResultCachedPhoto(rid, file_id, title=title, caption=caption)
        if kind == "document" and file_id:
            return InlineQueryResultCachedDocument(rid, title, file_id, caption=caption)
        if kind == "video" and file_id:
            return InlineQueryResultCachedVideo(rid, file_id, title, caption=caption)
        if kind == "animation" and file_id:
            return InlineQueryResultCachedGif(rid, file_id, title=title, caption=caption)
        if kind == "voice" and file_id:
            return InlineQueryResultCachedVoice(rid, file_id, title, caption=caption)
        if kind == "audio" and file_id:
            return InlineQueryResultCachedAudio(rid, file_id, caption=caption)
        if kind == "location":
            latitude, longitude = float(attachment["latitude"]), float(attachment["longitude"])
            return InlineQueryResultLocation(rid, latitude, longitude, title)
        if kind == "contact":
            phone = str(attachment["phone"])
            name = str(attachment.get("first_name") or phone)
            return InlineQueryResultContact(rid, phone, name)
    except (KeyError, TypeError, ValueError) as e:  # a hand-edited attachment: its text only
        log.warning("memory %s has an attachment that cannot be shown inline: %r", memory.id, e)
    return InlineQueryResultArticle(
        rid,
        title,
        InputTextMessageContent(memory.content),
        description=" ".join(f"#{tag}" for tag in memory.tags) or None,
    )


async def inline_query(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Answer ``@bot <words>`` with the user's own matching memories (never cached)."""
    query = update.inline_query
    if query is None:
        return
    user = query.from_user
    actor = Actor("user", user.id, user.full_name)
    memories: list[Memory] = []
    if not user.is_bot and is_allowed(actor, services(context).config):
        try:
            memories = await services(context).workers.run(
                f"users/{user.id}", operations.browse, query.query[:MAX_QUERY], RESULTS
            )
        except MemoryInvalid:  # a query the search refuses: nothing to show
            memories = []
    language = language_of(user)
    results = [_result(memory, language) for memory in memories]
    await query.answer(results, cache_time=0, is_personal=True)


def register(application: Any) -> None:
    """Add the inline-query handler."""
    application.add_handler(InlineQueryHandler(inline_query))
