"""``/export`` in its three formats, and ``/calendar``: the doors of what leaves the chat.

- ``/export`` (or ``/export json``): the article's ``memory.json`` (``bot.chat.commands.export``).
- ``/export md``: every memory as Markdown, by category, in the reader's language
  (``bot.core.markdown_export``); sent back, it imports (``bot.chat.imports``).
- ``/export ics``: the chat's reminders as an iCalendar file (``bot.core.calendar_export``).
- ``/calendar``: the chat's private subscription URL of the same calendar
  (``bot.core.calendar_feeds``, served by ``bot.chat.calendar_feed``), made on first use and
  shown again after; ``/calendar reset`` replaces it (the old one stops working at once: in a
  group's shared namespace only its administrators may, as for its other settings).

Each export is one document, read in a worker thread (store work never runs on the event
loop); reading memories for an export is not a use of them (no access is counted).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from telegram import Message, Update
from telegram.ext import ContextTypes

from bot.chat import commands
from bot.chat.access import caller_of, is_group, may_change_settings
from bot.chat.calendar_feed import calendar_name, feed_base, feed_url
from bot.chat.services import services
from bot.core import calendar_export, calendar_feeds, reminders
from bot.core.entry import split_command
from bot.core.markdown_export import markdown_of
from bot.core.policy import Caller
from bot.view.i18n import language_of, t
from bot.view.replies import reply_html
from memory.interface import MemoryNamespace

log = logging.getLogger(__name__)

JSON_WORDS = ("", "json")
MARKDOWN_WORDS = ("md", "markdown", "obsidian")
CALENDAR_WORDS = ("ics", "ical", "icalendar", "calendar", "日历")


def _title(message: Message) -> str | None:
    return message.chat.title if is_group(message.chat) else None


async def export(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Send the memories (JSON or Markdown) or the chat's reminders (iCalendar) as a file."""
    message, caller = update.effective_message, caller_of(update, context)
    if message is None or caller is None:
        return
    _, argument = split_command(message.text or message.caption or "")
    word = argument.split(maxsplit=1)[0].lower() if argument else ""
    language = language_of(update.effective_user)
    if word in JSON_WORDS:
        await commands.export(update, context)
    elif word in MARKDOWN_WORDS:
        await _send_markdown(context, message, caller, language)
    elif word in CALENDAR_WORDS:
        await _send_calendar(context, message, caller, language)
    else:
        await reply_html(message, t(language, "export_usage"))


async def _send_markdown(
    context: ContextTypes.DEFAULT_TYPE, message: Message, caller: Caller, language: str
) -> None:
    now = datetime.now(UTC)

    def write(namespace: MemoryNamespace) -> tuple[str, int]:
        memories = namespace.memories()
        text = markdown_of(memories, namespace=caller.namespace, language=language, now=now)
        return text, len(memories)

    text, count = await services(context).workers.run(caller.namespace, write)
    if not count:
        await reply_html(message, t(language, "export_empty"))
        return
    await message.reply_document(
        text.encode(),
        filename="memories.md",
        caption=t(language, "export_md_caption", count=count),
    )


async def _send_calendar(
    context: ContextTypes.DEFAULT_TYPE, message: Message, caller: Caller, language: str
) -> None:
    found = services(context)
    kept = await found.workers.call(lambda: reminders.every(found.store, caller.namespace))
    shown = [reminder for reminder in kept if calendar_export.included(reminder)]
    if not shown:
        await reply_html(message, t(language, "export_ics_empty"))
        return
    ics = calendar_export.calendar_of(
        shown,
        namespace=caller.namespace,
        name=calendar_name(language, _title(message)),
        untitled=t(language, "reminder_untitled_plain"),
        now=datetime.now(UTC),
    )
    await message.reply_document(
        ics, filename="reminders.ics", caption=t(language, "export_ics_caption", count=len(shown))
    )


async def calendar(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Give the chat's private calendar subscription URL (``reset``: a new one)."""
    message, caller = update.effective_message, caller_of(update, context)
    if message is None or caller is None:
        return
    _, argument = split_command(message.text or "")
    word = argument.split(maxsplit=1)[0].lower() if argument else ""
    language = language_of(update.effective_user)
    found = services(context)
    base = feed_base(found.config)
    if word not in ("", "reset"):
        await reply_html(message, t(language, "calendar_usage"))
    elif not found.config.calendar.enabled:
        await reply_html(message, t(language, "calendar_disabled"))
    elif base is None:
        await reply_html(message, t(language, "calendar_unavailable"))
    elif word == "reset" and not await may_change_settings(update, context):
        await reply_html(message, t(language, "calendar_admins_only"))
    else:
        store, now, reset = found.store, datetime.now(UTC), word == "reset"
        feed, _ = await found.workers.call(
            lambda: calendar_feeds.feed_of(
                store,
                caller.namespace,
                language=language,
                title=_title(message),
                by=caller.actor.key,
                now=now,
                reset=reset,
            )
        )
        key = "calendar_reset_done" if reset else "calendar_link"
        await reply_html(message, t(language, key, url=feed_url(base, feed.token)))


__all__ = ["calendar", "export"]
