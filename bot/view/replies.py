"""Sending rendered HTML: split to Telegram's size, and never lost to a parse error.

Every reply goes through ``reply_html`` or ``edit_html``, and a message nobody asked for (the
digest) through ``send_html``. A long reply becomes several messages (``render.split_html``),
the keyboard on the last one. Escaping makes "can't parse
entities" impossible for what the bot renders; should Telegram refuse a part anyway, that part
is sent again as plain text (tags dropped, entities decoded), so the user still gets the answer
and the log records why.
"""

from __future__ import annotations

import logging

from telegram import (
    Bot,
    CallbackQuery,
    InlineKeyboardMarkup,
    Message,
    ReplyKeyboardMarkup,
    ReplyKeyboardRemove,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest

from bot.view.render import split_html, to_plain

log = logging.getLogger(__name__)


def is_parse_error(error: BadRequest) -> bool:
    """Whether Telegram refused the text's markup ("can't parse entities")."""
    return "can't parse entities" in error.message.lower()


def is_not_modified(error: BadRequest) -> bool:
    """Whether an edit changed nothing (a double tap on the same button)."""
    return "message is not modified" in error.message.lower()


async def reply_html(
    message: Message,
    markup: str,
    keyboard: InlineKeyboardMarkup | ReplyKeyboardMarkup | ReplyKeyboardRemove | None = None,
) -> Message | None:
    """Answer ``message`` in its chat (and topic) with ``markup``; the last part is returned."""
    parts = split_html(markup)
    sent = None
    for number, part in enumerate(parts, start=1):
        buttons = keyboard if number == len(parts) else None
        try:
            sent = await message.reply_text(part, parse_mode=ParseMode.HTML, reply_markup=buttons)
        except BadRequest as e:
            if not is_parse_error(e):
                raise
            log.warning("Telegram refused a reply's HTML (%s); sent as plain text", e.message)
            sent = await message.reply_text(to_plain(part), reply_markup=buttons)
    return sent


async def send_html(
    bot: Bot, chat_id: int, markup: str, *, thread_id: int | None = None
) -> Message | None:
    """Send ``markup`` to ``chat_id`` (in forum topic ``thread_id``) unprompted (the digest),
    as ``reply_html`` answers."""
    sent = None
    for part in split_html(markup):
        try:
            sent = await bot.send_message(
                chat_id, part, parse_mode=ParseMode.HTML, message_thread_id=thread_id
            )
        except BadRequest as e:
            if not is_parse_error(e):
                raise
            log.warning("Telegram refused a message's HTML (%s); sent as plain text", e.message)
            sent = await bot.send_message(chat_id, to_plain(part), message_thread_id=thread_id)
    return sent


async def edit_html(
    query: CallbackQuery, markup: str, keyboard: InlineKeyboardMarkup | None = None
) -> None:
    """Replace the text of the message whose button was pressed (one part: callers render
    less than a message holds; anything beyond the first part is dropped)."""
    parts = split_html(markup) or [markup]
    try:
        try:
            await query.edit_message_text(
                parts[0], parse_mode=ParseMode.HTML, reply_markup=keyboard
            )
        except BadRequest as e:
            if not is_parse_error(e):
                raise
            log.warning("Telegram refused an edit's HTML (%s); sent as plain text", e.message)
            await query.edit_message_text(to_plain(parts[0]), reply_markup=keyboard)
    except BadRequest as e:
        if not is_not_modified(e):
            raise
