"""The buttons of a reminder: ✅ Done, the snoozes, 🗑 Cancel and ✏️ Change.

Each press is resolved in the presser's namespace (``bot.chat.presses``), or where the chat
keeps the reminder (``bot.core.reminders.locate``: a forum topic's reminder whose topic was
deleted rings in the general topic, and its buttons act on it there), and changes the
reminder through ``bot.core.reminders`` off the event loop; in a group only the member who set
it or an administrator may (administrator rights asked of Telegram only when they matter:
``bot.chat.reminding.as_allowed``). A second press of the same button is answered, never done
twice (``ReminderPressedAgain``). The job is told what changed (``ReminderJob.track``) and the
reminder's memory follows it (``bot.jobs.reminder_memory``). ⏰ under a memory, which makes it
a reminder, is ``bot.chat.reminding.press_from_memory``; the buttons' callback data is in
``bot.view.callbacks``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from telegram import Update
from telegram.ext import ContextTypes

from bot.chat.presses import Press, pressed
from bot.chat.reminding import as_allowed, reminder_job
from bot.chat.services import services
from bot.core import reminders
from bot.core.due import wall_time
from bot.core.policy import Caller
from bot.core.reminder_record import PENDING, Reminder
from bot.errors import ReminderNotAllowed, ReminderNotFound, ReminderPressedAgain
from bot.jobs import reminder_memory
from bot.view import reminder_view
from bot.view.i18n import t
from bot.view.render import escape, preview
from bot.view.replies import edit_html, reply_html
from bot.view.times import local_time


async def _press(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    work: Callable[[Caller, str, datetime], Reminder],
) -> tuple[Press, Reminder] | None:
    """Run ``work(caller, value, now)`` for a reminder button; None once the press is answered
    with why not (gone, not the presser's)."""
    press = await pressed(update, context)
    if press is None:
        return None
    job = reminder_job(context)
    now = job.clock()
    chat_id, reminder_id = press.message.chat.id, press.value.partition(":")[0]
    caller = await services(context).workers.call(
        lambda: reminders.locate(job.store, press.caller, chat_id, reminder_id)
    )
    try:
        reminder = await as_allowed(
            context, update, caller, lambda who: work(who, press.value, now)
        )
    except ReminderNotFound:
        await press.refuse("reminder_gone_plain")
        return None
    except ReminderNotAllowed:
        await press.refuse("reminder_not_yours_plain")
        return None
    except ReminderPressedAgain:
        await press.answer("reminder_pressed_again_plain")
        return None
    job.track(reminder)
    await services(context).workers.call(lambda: reminder_memory.follow(job.store, reminder))
    return press, reminder


async def press_done(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """✅ Done under a delivery: a one-off ends, a repeating one ends this occurrence."""
    store = reminder_job(context).store
    done = await _press(update, context, lambda who, rid, now: reminders.done(store, who, rid, now))
    if done is None:
        return
    press, reminder = done
    language = press.language
    await press.answer()
    text = escape(preview(reminder.text or "…", reminder_view.TEXT_PREVIEW))
    if reminder.state == PENDING and reminder.next_at is not None:
        next_at = escape(local_time(reminder.next_at, reminder.due.zone, language))
        shown = t(language, "reminder_done_once", text=text, when=next_at)
        await edit_html(press.query, shown)
    else:
        await edit_html(press.query, t(language, "reminder_done", text=text))


def _snooze_until(reminder: Reminder, what: str, now: datetime) -> datetime:
    if what == "t":  # tomorrow, at the same local time as the occurrence
        wall = (reminder.sent_at or now).astimezone(reminder.due.zone).timetz().replace(tzinfo=None)
        tomorrow = now.astimezone(reminder.due.zone) + timedelta(days=1)
        return wall_time(tomorrow, wall, reminder.due.zone)
    return now + timedelta(minutes=int(what))


async def press_snooze(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """⏰ 10 min / 1 hour / tomorrow under a delivery: send it again then (once per button)."""
    store = reminder_job(context).store
    assert update.callback_query is not None
    delivery = update.callback_query.message  # the same for a second press

    def snooze(who: Caller, value: str, now: datetime) -> Reminder:
        rid, _, what = value.partition(":")
        current = reminders.get(store, who.namespace, rid)
        press = None if delivery is None else f"{delivery.chat.id}:{delivery.message_id}:{what}"
        until = _snooze_until(current, what, now)
        return reminders.snooze(store, who, rid, until, now, press=press)

    done = await _press(update, context, snooze)
    if done is None:
        return
    press, reminder = done
    language = press.language
    await press.answer("reminder_snoozed_plain")
    at = reminder.snooze_at or reminder.due.at
    text = escape(preview(reminder.text or "…", reminder_view.TEXT_PREVIEW))
    shown = escape(local_time(at, reminder.due.zone, language))
    await edit_html(press.query, t(language, "reminder_snoozed", when=shown, text=text))


async def press_cancel(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """🗑 Cancel: the reminder ends (a repeating one: the whole series)."""
    store = reminder_job(context).store
    done = await _press(
        update, context, lambda who, rid, now: reminders.cancel(store, who, rid, now)
    )
    if done is None:
        return
    press, reminder = done
    await press.answer()
    text = escape(preview(reminder.text or "…", reminder_view.TEXT_PREVIEW))
    await reply_html(press.message, t(press.language, "reminder_cancelled", text=text))


async def press_change(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """✏️ Change: ask for the new time, as a reply to the prompt (read by ``from_free_text``)."""
    store = reminder_job(context).store

    def check(who: Caller, rid: str, now: datetime) -> Reminder:
        current = reminders.get(store, who.namespace, rid)
        if not reminders.may_change(who, current):
            raise ReminderNotAllowed(rid)
        return current

    done = await _press(update, context, check)
    if done is None:
        return
    press, reminder = done
    await press.answer()
    text = escape(preview(reminder.text or "…", 80))
    prompt = t(press.language, "reminder_change_prompt", id=reminder.id, text=text)
    await reply_html(press.message, prompt)
