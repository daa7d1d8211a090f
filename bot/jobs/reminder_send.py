"""One reminder message to one chat, and what Telegram's refusal of it means.

Telegram refuses a message for one of three reasons, and each is answered differently by the
delivery (``bot.jobs.reminders``):

- the chat is gone for the bot (``chat_gone``): a 403 (blocked, kicked, not a member, the user
  deactivated) or a 400 that says so ("chat not found", "have no rights to send a message",
  ``CHAT_WRITE_FORBIDDEN`` ...). Nothing can be sent there: every reminder of that chat pauses.
- the message's forum topic or the message it answers is gone ("message thread not found",
  ``TOPIC_CLOSED``, ``TOPIC_DELETED``; "message to be replied not found"): ``send`` sends it
  again without them, in the chat's general topic, and says why in the message.
- anything else about this one message: the reminder pauses alone, and the chat is told
  (``tell_refused``); the chat's other reminders go on.

Texts are HTML; one Telegram cannot parse is sent again as plain text. Sends through the
Application's bot carry ``rate_limit_args=0``: a 429 comes back to the delivery, which gives its
claim back and waits for that chat (``bot.chat.pacing``), instead of waiting with it held.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from telegram import Bot, InlineKeyboardMarkup, Message, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, TelegramError
from telegram.ext import ExtBot

from bot.view.i18n import t
from bot.view.render import preview, to_plain
from bot.view.replies import is_parse_error

log = logging.getLogger(__name__)

# Telegram's descriptions (lower case) of a 400 that refuses the chat itself.
CHAT_GONE = (
    "chat not found",
    "chat_write_forbidden",
    "have no rights to send",
    "not enough rights to send",
    "chat_restricted",
    "peer_id_invalid",
    "bot was kicked",
    "bot is not a member",
    "need administrator rights",
    "group chat was deactivated",
    "user is deactivated",
)
ABOUT_TOPIC = ("message thread not found", "topic_closed", "topic_deleted", "topic_id_invalid")
ABOUT_REPLY = ("message to be replied not found", "replied message not found")
REFUSED_PREVIEW = 80


def _says(error: TelegramError, texts: tuple[str, ...]) -> bool:
    described = error.message.lower()
    return any(text in described for text in texts)


def chat_gone(error: TelegramError) -> bool:
    """Whether Telegram refused the chat itself (403, or a 400 that says so)."""
    return isinstance(error, Forbidden) or (
        isinstance(error, BadRequest) and _says(error, CHAT_GONE)
    )


def is_about_topic(error: TelegramError) -> bool:
    """Whether Telegram refused a message's forum topic: closed, deleted, or never there."""
    return isinstance(error, BadRequest) and _says(error, ABOUT_TOPIC)


@dataclass(frozen=True)
class Outgoing:
    """A reminder message: where it goes (``thread_id``: a forum topic), what it answers."""

    chat_id: int
    text: str  # HTML
    language: str
    keyboard: InlineKeyboardMarkup | None = None
    thread_id: int | None = None
    reply_to: int | None = None


async def send(bot: Bot, message: Outgoing) -> Message:
    """Send ``message``; refused for its topic or the message it answers, again without them
    (module docstring). Telegram's other refusals are raised."""
    try:
        return await _post(bot, message)
    except BadRequest as e:
        if chat_gone(e):
            raise
        if message.thread_id is not None and is_about_topic(e):
            log.warning(
                "chat %s: topic %s refused a reminder (%s); sent to the chat instead",
                message.chat_id,
                message.thread_id,
                e.message,
            )
            text = f"{message.text}\n{t(message.language, 'reminder_topic_gone')}"
            return await send(bot, replace(message, text=text, thread_id=None))
        if message.reply_to is not None and _says(e, ABOUT_REPLY):
            return await send(bot, replace(message, reply_to=None))
        raise


async def _post(bot: Bot, message: Outgoing) -> Message:
    options: dict[str, Any] = {
        "reply_markup": message.keyboard,
        "message_thread_id": message.thread_id,
    }
    if message.reply_to is not None:
        options["reply_parameters"] = ReplyParameters(
            message.reply_to, allow_sending_without_reply=True
        )
    if isinstance(bot, ExtBot):
        options["rate_limit_args"] = 0  # a 429 is the delivery's to wait out, claim given back
    chat = message.chat_id
    try:
        return await bot.send_message(chat, message.text, parse_mode=ParseMode.HTML, **options)
    except BadRequest as e:
        if not is_parse_error(e):
            raise
        log.warning("Telegram refused a reminder's HTML (%s); sent as plain text", e.message)
        return await bot.send_message(chat, to_plain(message.text), **options)


async def tell_refused(bot: Bot, chat_id: int, language: str, text: str, reason: str) -> None:
    """Tell the chat, in plain words, that Telegram refused a reminder and it is paused."""
    shown = preview(text or "…", REFUSED_PREVIEW)
    notice = t(language, "reminder_refused_plain", text=shown, reason=reason)
    await bot.send_message(chat_id, notice)
