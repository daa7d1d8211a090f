"""Reminders offered for what people say they will do: the offer, its buttons, the time typed.

A message that states a plan ("I need to call the plumber tomorrow morning", "明天下午三点要去
接孩子"; ``bot.core.plans``) gets one message::

    ⏰ Remind you 2026-12-02 (Wed) 09:00 Europe/Berlin? — call the plumber
    [✅ Yes] [🕒 Another time] [✖️ No]

Where it comes from: a plain message without a model (``bot.chat.noting``: alone, or under the
memories a search found that answer it), a memory just stored (``/remember``, a note in words,
a voice note, a forward: the offer is added under the "Remembered" reply,
``offer_for_memory``), and the model's ``offerReminder`` tool (``bot.assistant.reminder_desk``,
sent by ``bot.chat.conversation``). Nothing is scheduled until Yes (``bot.core.reminder_offers``).

What the buttons do, and a time typed after 🕒 Another time, is ``bot.chat.offer_answers``.
Callback data::

    ro:<offer id>:y          ✅ Yes
    ro:<offer id>:o          🕒 Another time
    ro:<offer id>:n          ✖️ No
    ro:<offer id>:h|d|e      a time picked: 1 hour before, the day before, the evening before
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message
from telegram.ext import ContextTypes

from bot.chat.services import services
from bot.core import chat_zones, plans, reminder_offers, timephrase
from bot.core.plans import Plan, plan_in
from bot.core.policy import Caller
from bot.core.reminder_offers import ReminderOffer
from bot.view import reminder_view
from bot.view.callbacks import OFFER
from bot.view.i18n import t
from bot.view.render import escape, preview
from bot.view.replies import reply_html
from bot.view.times import local_time
from memory.errors import MemoryStoreError
from memory.interface import Store
from memory.model import Memory

log = logging.getLogger(__name__)

TEXT_PREVIEW = 200


def _thread(message: Message) -> int | None:
    return message.message_thread_id if message.is_topic_message else None


def offer_view(offer: ReminderOffer, language: str) -> tuple[str, InlineKeyboardMarkup]:
    """The offer's line (HTML) and its Yes / Another time / No buttons."""
    due = offer.due
    when_shown = escape(local_time(due.at, due.zone, language))
    text = escape(preview(offer.text, TEXT_PREVIEW))
    lines = [t(language, "offer_reminder", when=when_shown, text=text)]
    if due.repeat is not None:
        rule = escape(reminder_view.repeat_text(due.repeat, language))
        lines.append(t(language, "offer_reminder_repeat", rule=rule))
    keys = (("y", "button_offer_yes_plain"), ("o", "button_offer_other_plain"))
    row = [
        offer_button(t(language, key), offer, what)
        for what, key in (*keys, ("n", "button_offer_no_plain"))
    ]
    return "\n".join(lines), InlineKeyboardMarkup([row])


def offer_button(label: str, offer: ReminderOffer, what: str) -> InlineKeyboardButton:
    """A button of the offer: ``what`` is y, o, n, or a pick (``bot.chat.offer_answers``)."""
    return OFFER.button(label, offer.id, what)


async def _keep(context: ContextTypes.DEFAULT_TYPE, caller: Caller, offer: ReminderOffer) -> bool:
    """Store ``offer`` for its buttons; whether it was (if not, the reply goes without)."""
    try:
        await services(context).workers.run(caller.namespace, reminder_offers.offer, offer)
    except MemoryStoreError as e:  # the answer matters more than the offer
        log.warning("no reminder offer %s in chat %s: %s", offer.id, offer.chat_id, e)
        return False
    return True


async def _plan(
    context: ContextTypes.DEFAULT_TYPE, chat_id: int, text: str, said_at: datetime | None = None
) -> Plan | None:
    """The plan ``text`` states, read in the chat's zone as of ``said_at`` (default: now);
    None if none, or if its time has passed by now."""
    job = services(context).reminders
    if job is None or not any(timephrase.read(s) for s in plans.sentences(text)):
        return None  # no time in it: no store read for the chat's zone
    now = job.clock()
    zone = await services(context).workers.call(
        lambda: chat_zones.chat_zone(job.store, chat_id, job.zone)
    )
    plan = plan_in(text, said_at or now, zone.zone, default_hour=job.config.default_hour)
    if plan is None or plan.due.at <= now:
        return None
    return plan


async def plain_offer(
    context: ContextTypes.DEFAULT_TYPE, message: Message, caller: Caller, text: str, language: str
) -> tuple[str, InlineKeyboardMarkup] | None:
    """The offer for a plain message that states a plan (kept for its buttons), or None."""
    plan = await _plan(context, message.chat_id, text)
    if plan is None:
        return None
    offer = ReminderOffer(
        str(message.message_id),
        message.chat_id,
        plan.text,
        plan.due,
        caller.actor,
        language,
        thread_id=_thread(message),
    )
    return offer_view(offer, language) if await _keep(context, caller, offer) else None


async def offer_for_memory(
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    memory: Memory,
    language: str,
    said_at: datetime | None = None,
) -> tuple[str, InlineKeyboardMarkup] | None:
    """The offer under a memory just stored whose words state a plan, read as of ``said_at``
    (a forward's original date) or now; None if they state none."""
    plan = await _plan(context, message.chat_id, memory.content, said_at)
    if plan is None:
        return None
    offer = ReminderOffer(
        f"m{memory.id}",
        message.chat_id,
        plan.text,
        plan.due,
        caller.actor,
        language,
        memory_id=memory.id,
        thread_id=_thread(message),
    )
    return offer_view(offer, language) if await _keep(context, caller, offer) else None


async def send_offer(store: Store, caller: Caller, message: Message, offer: ReminderOffer) -> None:
    """Send an offer the model made (its ``offerReminder``), kept first for its buttons."""
    namespace = store.namespace(caller.namespace)
    try:
        await asyncio.to_thread(reminder_offers.offer, namespace, offer)
    except MemoryStoreError as e:
        log.warning("the model's reminder offer %s was not kept: %s", offer.id, e)
        return
    await reply_html(message, *offer_view(offer, offer.language))
