"""The one error handler, and what the admins are told.

Expected failures (an unknown id) are answered by the handlers; everything else reaches
``on_error`` (registered last by ``bot.chat.app.register_handlers``), which logs the traceback,
tells the user briefly in their language (a press: in a pop-up) and, for unexpected errors,
notifies the admins (``[telegram] admin_user_ids``). Telegram refusing to deliver (blocked,
removed from the group), its flood control past the retries and network trouble are one log
line each: nobody can be told, and nothing is wrong with the bot. An update set aside as poison
(``bot.chat.inbox``, ``bot.chat.lanes``), after crashes or past the handler deadline
(``bot.chat.deadlines``; ``set_aside_overdue`` sets it aside in the inbox), is reported to the
admins by ``tell_admins_set_aside``.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram import Update
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError
from telegram.ext import Application, ContextTypes

from bot.chat.deadlines import reason
from bot.chat.inbox import InboxQueue, Pending
from bot.chat.services import KEY, services
from bot.config import Config
from bot.view.i18n import language_of, t
from bot.view.render import escape
from bot.view.replies import reply_html
from memory.errors import MemoryLoadFailed, MemorySaveFailed

log = logging.getLogger(__name__)

RETRIES_ON_429 = 3  # the rate limiter's retries of a request Telegram answered with 429
POISON_PREVIEW = 100  # characters of a set-aside message the admins are shown


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log a failed update, tell its user briefly, and keep the bot running."""
    error = context.error
    if isinstance(error, Forbidden):  # blocked by the user, or removed from the group
        log.info("Telegram refused to deliver: %s", error.message)
        return
    if isinstance(error, RetryAfter):
        log.warning("flood control: still limited after %d retries: %s", RETRIES_ON_429, error)
        return
    if isinstance(error, NetworkError) and not isinstance(error, BadRequest):
        log.warning("network trouble talking to Telegram: %s", error)
        return
    update_id = update.update_id if isinstance(update, Update) else None
    log.error("update %s failed", update_id, exc_info=error)
    if not isinstance(update, Update):
        return
    language = language_of(update.effective_user)
    storage = isinstance(error, MemorySaveFailed | MemoryLoadFailed)
    try:
        if update.callback_query is not None:
            await update.callback_query.answer(t(language, "error_plain"), show_alert=True)
        elif update.effective_message is not None:
            text = t(language, "error_storage" if storage else "error_generic")
            await reply_html(update.effective_message, text)
    except TelegramError as e:  # the apology failed too (blocked, gone): the log has it all
        log.warning("could not tell the user about the failure: %s", e)
    if not isinstance(error, TelegramError):
        await _tell_admins(context, f"{type(error).__name__}: {error}")


def set_aside_overdue(
    application: Application[Any, Any, Any, Any, Any, Any], update: object
) -> None:
    """An update past the handler deadline (``bot.chat.deadlines``): set aside in the inbox
    (``InboxQueue.give_up``) and the admins told; its chat has gone on."""
    if not isinstance(update, Update):
        return
    config: Config = application.bot_data[KEY].config
    deadline = config.telegram.handler_deadline_seconds
    queue = application.update_queue
    pending = queue.give_up(update, reason(deadline)) if isinstance(queue, InboxQueue) else None
    pending = pending or Pending(update.to_dict(), 0)
    application.create_task(
        tell_admins_set_aside(application, pending, overdue=deadline),
        name=f"set aside {update.update_id}",
    )


async def tell_admins_set_aside(
    application: Application[Any, Any, Any, Any, Any, Any],
    pending: Pending,
    *,
    overdue: float | None = None,
) -> None:
    """Tell the admins of an update set aside as poison (``bot.chat.inbox``, ``bot.chat.lanes``):
    after crashes, or ``overdue`` (the handler deadline it ran past)."""
    update = Update.de_json(pending.update, application.bot)
    chat = update.effective_chat.id if update.effective_chat is not None else "?"
    message, query = update.effective_message, update.callback_query
    text = (message.text or message.caption or "") if message is not None else ""
    text = text or ((query.data or "") if query is not None else "")
    config: Config = application.bot_data[KEY].config
    about = {"update_id": pending.update_id, "chat": chat, "text": escape(text[:POISON_PREVIEW])}
    for admin in config.telegram.admin_user_ids:
        if overdue is None:
            notice = t("en", "admin_poison", tries=pending.tries, **about)
        else:
            notice = t("en", "admin_overdue", seconds=f"{overdue:g}", **about)
        try:
            await application.bot.send_message(admin, notice, parse_mode="HTML")
        except TelegramError as e:
            log.warning("could not notify admin %s: %s", admin, e)


async def _tell_admins(context: ContextTypes.DEFAULT_TYPE, summary: str) -> None:
    config = services(context).config
    for admin in config.telegram.admin_user_ids:
        text = t("en", "admin_error", error=escape(summary[:300]))
        try:
            await context.bot.send_message(admin, text, parse_mode="HTML")
        except TelegramError as e:
            log.warning("could not notify admin %s: %s", admin, e)
