"""Telling the bot things without a language model: notes in words, 💾 Remember this, voice.

What a plain message is comes from ``bot.core.intents`` (rules, both languages); this module
acts on it when no model is configured (with one, the model decides, as before):

- a note ("remember that my locker is 23", "帮我记一下：周五交房租") is stored as /remember
  stores its text, trigger words removed (``commands.remember_entry``: hashtags, category,
  duplicates, 📅 dates, the ⏰ offer, the same reply); a note with nothing in it gets
  /remember's usage;
- a statement or a fragment that says what the person will do at a time ("I need to call the
  plumber tomorrow morning", "明天下午三点要去接孩子") is offered a reminder
  (``bot.chat.offering``): alone when the search finds nothing, else under what it found;
- a statement ("my locker is 23") is searched as every plain message is, and the reply's
  keyboard gets one more row: 💾 Remember this (``bot.core.offers`` keeps the text; pressing
  stores it as /remember would, once however often pressed, then the button goes). Questions
  and fragments ("wifi password", "thanks") get the search alone, and a reply that found
  nothing, without 💾, ends with a hint that /remember stores things, once a day per chat at
  most (``bot.core.hints``);
- a transcribed voice note is answered as typed if it asks something (a question, a reminder
  request: nothing to keep, and a stored question would come back in later answers); anything
  else is stored, never dropped: its words as the content (a note's without the trigger), the
  voice note itself as the attachment, sent back on /recall, replied to as /remember replies.

Callback data::

    rt:<message id>      💾 Remember this, under the search that answered that message
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.chat.access import message_source, run_changing
from bot.chat.buttons import with_row
from bot.chat.commands import remember_entry, show_matches
from bot.chat.offering import plain_offer
from bot.chat.presses import pressed
from bot.chat.services import services
from bot.core import hints, intents, offers, operations, when
from bot.core.entry import parse_entry
from bot.core.policy import Caller
from bot.errors import NotAllowed
from bot.view import callbacks
from bot.view.i18n import t
from bot.view.render import memory_block
from bot.view.replies import reply_html
from memory.errors import MemoryStoreError
from memory.model import MAX_CONTENT_CHARS

log = logging.getLogger(__name__)

HINT = "free_text_hint"  # the i18n key of the /remember hint, and its name in bot.core.hints


async def answer_plainly(
    context: ContextTypes.DEFAULT_TYPE, message: Message, caller: Caller, text: str, language: str
) -> None:
    """Answer ``text`` (``message``'s words) without a model: store a note, or search, with
    💾 Remember this under the search of a statement."""
    intent = intents.read_intent(text)
    if intent.kind == intents.NOTE:
        await remember_entry(context, message, caller, language, parse_entry(intent.text))
        return
    # What the person will do, and when: a reminder offered, under what answers it, or alone.
    offer = None
    if intent.kind != intents.QUESTION:
        offer = await plain_offer(context, message, caller, text, language)
    extra: list[InlineKeyboardButton] = []
    if intent.kind == intents.STATEMENT and await _offer(context, message, caller, text):
        label = t(language, "button_remember_this_plain")
        extra.append(callbacks.REMEMBER_THIS.button(label, message.message_id))
    # The /remember hint: not beside 💾 (the button says it), not under an answer, once a day.
    hint = "" if extra or offer else await _hint_due(context, message, caller)
    found = await show_matches(
        context,
        message,
        caller,
        language,
        text,
        footer=offer[0] if offer else "",
        footer_if_none=hint and t(language, hint),
        extra=extra,
        statement=intent.kind == intents.STATEMENT,  # asks nothing: a clear match, or nothing
        last_row=offer[1].inline_keyboard[0] if offer else (),
        # Alone, the offer keeps 💾 too: "Leo's birthday is June 9" is a fact to keep as well
        # as a day to be reminded of.
        instead_of_nothing=(offer[0], with_row(offer[1], extra)) if offer else None,
    )
    if hint and not found:
        await _hint_shown(context, message, caller, hint)


async def _hint_due(context: ContextTypes.DEFAULT_TYPE, message: Message, caller: Caller) -> str:
    """``free_text_hint`` if this chat has not been shown it today (``bot.core.hints``)."""
    try:
        due = await services(context).workers.run(
            caller.namespace, hints.due, message.chat_id, HINT
        )
    except MemoryStoreError as e:  # a courtesy: the answer goes without it
        log.warning("could not read when the hint was shown in chat %s: %s", message.chat_id, e)
        return ""
    return HINT if due else ""


async def _hint_shown(
    context: ContextTypes.DEFAULT_TYPE, message: Message, caller: Caller, hint: str
) -> None:
    try:
        await services(context).workers.run(caller.namespace, hints.shown, message.chat_id, hint)
    except MemoryStoreError as e:  # a courtesy: it may be shown once more today
        log.warning("could not note the hint shown in chat %s: %s", message.chat_id, e)


async def _offer(
    context: ContextTypes.DEFAULT_TYPE, message: Message, caller: Caller, text: str
) -> bool:
    """Keep ``text`` for its 💾 button; whether it was kept (if not, the search goes without)."""
    try:
        await services(context).workers.run(
            caller.namespace,
            offers.offer,
            message.chat_id,
            message.message_id,
            text,
            message_source(message),
            caller.actor.key,
        )
    except MemoryStoreError as e:  # the answer matters more than the button
        log.warning("no 💾 button for message %s: %s", message.message_id, e)
        return False
    return True


def keeps_voice(heard: str) -> bool:
    """Whether a voice note heard as ``heard`` is stored (it asks nothing: no question, no
    reminder request), when no model is configured."""
    return not when.asks_for_reminder(heard) and intents.read_intent(heard).kind != (
        intents.QUESTION
    )


async def remember_voice(
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    heard: str,
    attachment: Mapping[str, Any] | None,
    language: str,
) -> None:
    """Store a voice note by its words (a note's without the trigger), with the voice note.

    Words over the store's limit (a long voice note) are cut, with an ellipsis: the voice note
    itself, kept with them, holds the rest, so it is not refused and lost."""
    entry = parse_entry(intents.note_of(heard) or heard)
    if len(entry.content) > MAX_CONTENT_CHARS:
        cut = entry.content[: MAX_CONTENT_CHARS - 1].rstrip() + "…"
        entry = dataclasses.replace(entry, content=cut)
    await remember_entry(context, message, caller, language, entry, attachment=attachment)


async def press_remember(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """💾 Remember this pressed: store the statement it was offered for, as /remember would."""
    press = await pressed(update, context)
    if press is None:
        return
    caller, message, language = press.caller, press.message, press.language
    try:
        found = await run_changing(
            update, context, caller, offers.offered, message.chat_id, int(press.value)
        )
    except NotAllowed:
        await press.refuse("not_yours_offer_plain")
        return
    if found is None:
        await press.refuse("offer_gone_plain")
        return
    await press.answer()
    await _drop_button(message)
    stored = await services(context).workers.run(
        caller.namespace, operations.from_source, found.source
    )
    if stored is not None:  # pressed before: one memory per message
        await reply_html(
            message,
            t(language, "already_remembered", memory=memory_block(stored, language=language)),
        )
        return
    entry = parse_entry(found.text)
    await remember_entry(context, message, caller, language, entry, source=found.source)


async def _drop_button(message: Message) -> None:
    """Take 💾 off the search reply (its other buttons stay): the statement is being stored."""
    markup = message.reply_markup
    if markup is None:
        return
    rows = [
        [b for b in row if not callbacks.REMEMBER_THIS.carries(b.callback_data)]
        for row in markup.inline_keyboard
    ]
    kept = [row for row in rows if row]
    try:
        await message.edit_reply_markup(InlineKeyboardMarkup(kept) if kept else None)
    except TelegramError as e:  # a courtesy: the memory matters, the button is answered anyway
        log.info("could not take the 💾 button off message %s: %s", message.message_id, e)
