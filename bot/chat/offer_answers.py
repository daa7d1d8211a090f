"""The answers to a reminder offer (``bot.chat.offering``): its buttons, and a time typed.

- ✅ Yes sets the reminder for who said it, as ``/remind`` would (a memory of it too, unless it
  came from one), and the offer becomes its confirmation (🗑 Cancel, ✏️ Change); under a
  memory just stored, the "Remembered" reply stays and the confirmation follows it.
- 🕒 Another time asks for the time: a few picks (an hour before, the day before, the evening
  before), or a time typed as a reply to the question (in a private chat: the next message, if
  it is a time and nothing else; ``take_time``).
- ✖️ No drops it.

Each is resolved in the presser's namespace (``bot.chat.presses``): in a group only who
said it, or an administrator, may answer; a press on an offer that is gone (a week old,
another chat's, forged) is told so; a press twice acts once (``bot.core.reminder_offers``).
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import datetime, time, timedelta

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Message, Update
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.chat.access import run_changing
from bot.chat.offering import TEXT_PREVIEW, offer_button
from bot.chat.presses import pressed
from bot.chat.reminding import remember_reminder
from bot.chat.services import services
from bot.core import chat_zones, reminder_offers, reminders, timephrase, when
from bot.core.due import Due, wall_time
from bot.core.policy import Caller
from bot.core.reminder_offers import DECLINED, OPEN, TAKEN, ReminderOffer
from bot.errors import NotAllowed
from bot.view import reminder_view
from bot.view.callbacks import OFFER
from bot.view.i18n import t
from bot.view.render import escape, preview
from bot.view.replies import edit_html, reply_html
from memory.errors import MemoryInvalid

log = logging.getLogger(__name__)

EVENING = time(20)  # "the evening before"


async def press_offer(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """✅ Yes, 🕒 Another time, ✖️ No, or a time picked, under a reminder offer."""
    press = await pressed(update, context)
    if press is None:
        return
    caller, message, language, query = press.caller, press.message, press.language, press.query
    offer_id, _, what = press.value.rpartition(":")
    try:
        found = await run_changing(
            update, context, caller, reminder_offers.offered, message.chat_id, offer_id
        )
    except NotAllowed:
        await press.refuse("offer_not_yours_plain")
        return
    if found is None:
        await press.refuse("offer_gone_reminder_plain")
        return
    if found.state == DECLINED:
        await press.refuse("offer_declined_plain")
        return
    if what == "n":
        await _decline(update, context, caller, found, language)
        return
    if what == "o":
        await _ask_time(update, context, caller, found, language)
        return
    due = found.due if what == "y" else _picked(found, what)
    taken = await _take(context, caller, found, due, language)
    if isinstance(taken, str):
        await press.refuse(taken)
        return
    await press.answer()
    if _beside(message):  # "✅ Remembered …", answers: they stay, the confirmation follows
        await _drop_buttons(message)
        await reply_html(message, *taken)
    else:  # the offer alone, or the question of another time: it becomes the confirmation
        await edit_html(query, *taken)


def _beside(message: Message) -> bool:
    """Whether the offer is under something else (a memory stored, the answers to a search),
    not a message of its own (which starts with ⏰, or 🕒 when asking for another time)."""
    return not (message.text or "").startswith(("⏰", "🕒"))


async def _decline(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    caller: Caller,
    found: ReminderOffer,
    language: str,
) -> None:
    query = update.callback_query
    assert query is not None
    now = await services(context).workers.run(
        caller.namespace, reminder_offers.answer, found.chat_id, found.id, DECLINED
    )
    if now is not None and now.state == TAKEN:
        await query.answer(t(language, "offer_taken_plain"), show_alert=True)
        return
    await query.answer()
    text = escape(preview(found.text, TEXT_PREVIEW))
    message = query.message
    if isinstance(message, Message) and _beside(message):
        await _drop_buttons(message)
        return
    await edit_html(query, t(language, "offer_declined", text=text))


def _picked(found: ReminderOffer, what: str) -> Due:
    """The time picked instead of the offer's: ``h`` an hour before, ``d`` the day before at
    the same time, ``e`` the evening before at 20:00."""
    due = found.due
    local = due.local()
    if what == "h":
        at = due.at - timedelta(hours=1)
    elif what == "d":
        at = wall_time(local.date() - timedelta(days=1), due.wall, due.zone)
    else:
        at = wall_time(local.date() - timedelta(days=1), EVENING, due.zone)
    wall = at.astimezone(due.zone).time().replace(tzinfo=None)
    return dataclasses.replace(due, at=at, wall=wall, date_only=False, moved=False)


def _picks(found: ReminderOffer, now: datetime, language: str) -> list[InlineKeyboardButton]:
    """The times offered instead, those still ahead (and before the offer's own)."""
    buttons = []
    keys = (
        ("h", "button_offer_hour_before_plain"),
        ("d", "button_offer_day_before_plain"),
        ("e", "button_offer_evening_before_plain"),
    )
    seen = set()
    for what, key in keys:
        due = _picked(found, what)
        if not now < due.at < found.due.at or due.at in seen:
            continue
        seen.add(due.at)
        local = due.local()
        weekday = t(language, "weekdays_plain").split()[local.weekday()]
        label = t(language, key, time=f"{local:%H:%M}", when=f"{weekday} {local:%H:%M}")
        buttons.append(offer_button(label, found, what))
    return buttons


async def _ask_time(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    caller: Caller,
    found: ReminderOffer,
    language: str,
) -> None:
    """🕒 Another time: the picks, and the question a typed time answers."""
    query = update.callback_query
    assert query is not None and isinstance(query.message, Message)
    job = services(context).reminders
    assert job is not None, "offers are made only with reminders"
    await query.answer()
    message = query.message
    private = message.chat.type == ChatType.PRIVATE
    text = escape(preview(found.text, TEXT_PREVIEW))
    ask = t(language, "offer_ask_time_private" if private else "offer_ask_time", text=text)
    rows = [[b] for b in _picks(found, job.clock(), language)]
    rows.append([offer_button(t(language, "button_offer_no_plain"), found, "n")])
    await _drop_buttons(message)
    sent = await reply_html(message, ask, InlineKeyboardMarkup(rows))
    if sent is not None:
        await services(context).workers.run(
            caller.namespace,
            reminder_offers.ask,
            found.chat_id,
            caller.actor.key,
            found.id,
            sent.message_id,
        )


async def _take(
    context: ContextTypes.DEFAULT_TYPE,
    caller: Caller,
    found: ReminderOffer,
    due: Due,
    language: str,
) -> tuple[str, InlineKeyboardMarkup] | str:
    """Set the offered reminder at ``due``, for who said it: its confirmation, or the key of
    the (plain) string that says why not."""
    job = services(context).reminders
    assert job is not None, "offers are made only with reminders"
    run = services(context).workers
    now = job.clock()
    if due.at <= now:
        later = due.next_after(now)
        if later is None:
            return "offer_past_plain"
        due = dataclasses.replace(due, at=later)
    claimed = await run.run(
        caller.namespace, reminder_offers.answer, found.chat_id, found.id, TAKEN
    )
    if claimed is None:
        return "offer_gone_reminder_plain"
    if claimed.state == DECLINED:
        return "offer_declined_plain"
    sayer = dataclasses.replace(caller, actor=found.by)
    try:
        reminder, new = await run.call(
            lambda: reminders.create_once(
                job.store,
                sayer,
                chat_id=found.chat_id,
                text=found.text,
                due=due,
                language=found.language,
                now=now,
                memory_id=found.memory_id,
                thread_id=found.thread_id,
                source=found.source,
            )
        )
    except MemoryInvalid as e:  # its time passed meanwhile, or the chat has too many
        await run.run(caller.namespace, reminder_offers.answer, found.chat_id, found.id, OPEN)
        log.info("reminder offer %s not taken: %s", found.id, e)
        return "offer_too_many_plain" if e.field == "count" else "offer_past_plain"
    if not new:  # pressed again, here or on another replica: the first press set it
        return "offer_taken_plain"
    job.track(reminder)
    if found.memory_id is None:  # the reminder is a memory too, as /remind's are
        await run.call(lambda: remember_reminder(job.store, sayer, reminder, found.source))
    return reminder_view.confirmation(reminder, language, date_only=due.date_only)


async def _drop_buttons(message: Message) -> None:
    """Take the offer's buttons off ``message`` (its other buttons stay)."""
    markup = message.reply_markup
    if markup is None:
        return
    rows = [
        [b for b in row if not OFFER.carries(b.callback_data)] for row in markup.inline_keyboard
    ]
    kept = [row for row in rows if row]
    try:
        await message.edit_reply_markup(InlineKeyboardMarkup(kept) if kept else None)
    except TelegramError as e:  # a courtesy: the answer is given anyway
        log.info("could not take the offer's buttons off message %s: %s", message.message_id, e)


# -- a time typed --------------------------------------------------------------------------------


async def take_time(
    context: ContextTypes.DEFAULT_TYPE, message: Message, caller: Caller, text: str, language: str
) -> bool:
    """A time for an offer: a reply to the offer (or to its question after 🕒 Another time), or
    after 🕒 Another time in a private chat the next message if it is a time and nothing else;
    sets the offered reminder then. Whether the message was that."""
    job = services(context).reminders
    if job is None:
        return False
    replied = message.reply_to_message
    to_bot = replied is not None and _from(replied, context.bot.id)
    if (replied is not None and not to_bot) or (
        replied is None and message.chat.type != ChatType.PRIVATE
    ):
        return False
    if not to_bot:  # the next message: only a time alone can be one (read before any store)
        reading = timephrase.read(text)
        if reading is None or reading.text.strip():
            return False
    run = services(context).workers
    key = caller.actor.key
    under = _offer_under(replied) if replied is not None else None
    pointed = await run.run(caller.namespace, reminder_offers.asked, message.chat_id, key)
    offer_id = under or pointed
    if offer_id is None:
        return False
    zone = await run.call(lambda: chat_zones.chat_zone(job.store, message.chat_id, job.zone))
    parsed = when.parse_reminder(text, job.clock(), zone.zone, default_hour=job.config.default_hour)
    if parsed is None or parsed.text.strip():
        if pointed is None or not to_bot:  # not asked for; or the next message, no time in it
            if pointed is not None:  # the person moved on
                await run.run(caller.namespace, reminder_offers.done_asking, message.chat_id, key)
            return False
        phrase = escape(preview(text, 80))
        await reply_html(message, t(language, "offer_time_unclear", phrase=phrase))
        return True
    await run.run(caller.namespace, reminder_offers.done_asking, message.chat_id, key)
    try:
        found = await run_changing(
            Update(0, message=message),
            context,
            caller,
            reminder_offers.offered,
            message.chat_id,
            offer_id,
        )
    except NotAllowed:
        await reply_html(message, escape(t(language, "offer_not_yours_plain")))
        return True
    if found is None or found.state == DECLINED:
        await reply_html(message, escape(t(language, "offer_gone_reminder_plain")))
        return True
    taken = await _take(context, caller, found, parsed.due, language)
    if isinstance(taken, str):
        await reply_html(message, escape(t(language, taken)))
    else:
        await reply_html(message, *taken)
    return True


def _offer_under(message: Message) -> str | None:
    """The offer whose buttons ``message`` has (a reply to it gives its time), if any."""
    markup = message.reply_markup
    for row in markup.inline_keyboard if markup is not None else ():
        for button in row:
            if OFFER.carries(button.callback_data):
                return str(button.callback_data).split(":")[1]
    return None


def _from(message: Message, bot_id: int) -> bool:
    author = message.from_user
    return author is not None and author.id == bot_id
