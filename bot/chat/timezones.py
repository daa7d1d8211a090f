"""The door of a chat's time zone: ``/timezone``, a shared location, and their buttons.

``/timezone <words>`` reads the words with ``bot.core.places`` (a city in English or Chinese, a
country, an IANA name, an offset, an abbreviation): one zone is set; several are offered as
buttons (``tzs:<zone>``), and so are the near spellings of an unknown name: nothing is set
without the person's choice. ``/timezone`` alone shows the chat's zone and how to change it;
in a private chat with a "📍 Send my location" keyboard button, after which the next location
sent there sets the zone (``bot.core.chat_zones.location_asked``). In a group (where Telegram
has no such button) a location sent as a reply to that message, or ``/timezone`` sent as a
reply to a location, does. Any other location is remembered as before (``bot.chat.media``),
with a "🕒 Use for my time zone" button (``tzl:<latitude>:<longitude>``).

Only a group's administrators set its zone, whatever ``group_scope`` says: the zone is the
chat's, not a namespace's. The reply says what was set, with its offset and the local time,
and, when the chat has reminders in another zone (every topic's, every member's: the zone is
all of theirs), offers to move them to the same local time (``tzm:<zone>``,
``bot.core.zone_moves``) or to keep them at the same moment (``tzk``, an administrator's
choice). Move moves what the presser may change (the reminders' rule: an administrator the
group's, a member what they set); what is left for others keeps the buttons, for them.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from zoneinfo import ZoneInfo

from telegram import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    KeyboardButton,
    Message,
    ReplyKeyboardMarkup,
    ReplyKeyboardRemove,
    Update,
)
from telegram.constants import ChatType
from telegram.ext import ContextTypes

from bot.chat.access import caller_of, is_admin, replied_to
from bot.chat.presses import Press, pressed
from bot.chat.services import services
from bot.core import chat_zones, offsets, places, zone_moves
from bot.core.entry import split_command
from bot.core.policy import Caller
from bot.core.reminders import Reminder
from bot.jobs import reminder_memory
from bot.jobs.reminders import ReminderJob
from bot.view import callbacks, reminder_view
from bot.view.i18n import language_of, t
from bot.view.render import escape, preview
from bot.view.replies import edit_html, reply_html
from bot.view.times import local_time

STATUS_MARK = "🌐"  # how the /timezone message starts: a location replying to it sets the zone
SAID_PREVIEW = 60
MOVED_SHOWN = 5


def _job(context: ContextTypes.DEFAULT_TYPE) -> ReminderJob:
    job = services(context).reminders
    assert job is not None, "reminders are wired in build_application"
    return job


def _offset(zone: ZoneInfo, now: datetime) -> str:
    return offsets.offset_text(offsets.offset_at(zone, now))


async def _may_set(update: Update, context: ContextTypes.DEFAULT_TYPE, caller: Caller) -> bool:
    """Private chats: yes. Groups: their administrators (or the group itself) only."""
    chat = update.effective_chat
    if chat is None or chat.type == ChatType.PRIVATE:
        return chat is not None
    return caller.admin or await is_admin(context, chat.id, caller.actor)


def _options(zones: tuple[ZoneInfo, ...], now: datetime, language: str) -> InlineKeyboardMarkup:
    """A button per zone (after ``read_place``: the place table is loaded, cities are cheap)."""
    rows = [
        [
            InlineKeyboardButton(
                t(
                    language,
                    "button_zone_option_plain",
                    city=places.city_of(zone, language),
                    zone=offsets.zone_label(zone),
                    offset=_offset(zone, now),
                ),
                callback_data=callbacks.CHOOSE_ZONE.data(zone.key),
            )
        ]
        for zone in zones
    ]
    return InlineKeyboardMarkup(rows)


# -- /timezone ---------------------------------------------------------------------------------


async def timezone(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Show the chat's time zone, or set it: /timezone Berlin, 上海, UTC+8, Japan."""
    message, caller = update.effective_message, caller_of(update, context)
    if message is None or caller is None:
        return
    language = language_of(update.effective_user)
    _, argument = split_command(message.text or "")
    words = " ".join(argument.split())
    replied = replied_to(message)
    if not words and replied is not None and replied.location is not None:
        spot = replied.location
        await _from_location(update, context, message, caller, spot.latitude, spot.longitude)
        return
    if not words:
        await _show(update, context, message, language)
        return
    now = _job(context).clock()
    reading = await services(context).workers.call(lambda: places.read_place(words, now))
    shown = escape(preview(words, SAID_PREVIEW))
    if isinstance(reading, places.Place):
        await _set(update, context, message, caller, reading.zone, reading.said, reading.fixed)
    elif isinstance(reading, places.Choice):
        keyboard = _options(reading.options, now, language)
        await reply_html(message, t(language, "zone_choose", name=shown), keyboard)
    else:
        text = t(language, "zone_unknown", name=shown)
        if reading.suggestions:
            text += "\n\n" + t(language, "zone_did_you_mean")
            keyboard = _options(reading.suggestions, now, language)
            await reply_html(message, text, keyboard)
        else:
            await reply_html(message, text)


async def _show(
    update: Update, context: ContextTypes.DEFAULT_TYPE, message: Message, language: str
) -> None:
    job, run = _job(context), services(context).workers.call
    chat_id, now = message.chat.id, job.clock()
    zone = await run(lambda: chat_zones.chat_zone(job.store, chat_id, job.zone))
    city = await run(lambda: places.city_of(zone.zone, language))  # the table may load now
    label = offsets.zone_label(zone.zone)
    parts = list(dict.fromkeys(p for p in (city, _offset(zone.zone, now)) if p != label))
    joined = t(language, "zone_joiner_plain").join(parts)
    text = t(
        language,
        "zone_now",
        zone=escape(label),
        details=t(language, "zone_details", parts=escape(joined)) if parts else "",
        default="" if zone.chosen else t(language, "zone_default_mark"),
        now=local_time(now, zone.zone, language, zone_shown=False),
    )
    text += "\n" + t(language, "zone_how")
    if not places.locations_available():  # without tzfpy: no location is offered
        await reply_html(message, text)
        return
    if message.chat.type != ChatType.PRIVATE:
        await reply_html(message, text + "\n" + t(language, "zone_how_group"))
        return
    await run(lambda: chat_zones.ask_location(job.store, chat_id, now))
    button = KeyboardButton(t(language, "button_zone_location_plain"), request_location=True)
    keyboard = ReplyKeyboardMarkup([[button]], one_time_keyboard=True, resize_keyboard=True)
    await reply_html(message, text + "\n" + t(language, "zone_how_private"), keyboard)


async def _set(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    zone: ZoneInfo,
    said: str,
    fixed: bool,
    *,
    press: Press | None = None,
) -> None:
    """Set ``zone`` for the chat of ``message`` (an administrator's, in a group) and say so;
    a button's ``press`` is answered by editing its message."""
    language = language_of(update.effective_user)
    if not await _may_set(update, context, caller):
        if press is not None:
            await press.refuse("zone_admins_only")
        else:
            await reply_html(message, t(language, "zone_admins_only"))
        return
    found, job = services(context), _job(context)
    chat_id, now = message.chat.id, job.clock()
    asked = await found.workers.call(lambda: chat_zones.set_chat_zone(job.store, chat_id, zone))
    if found.digest is not None:
        found.digest.zone_chosen(zone)
    if found.tidy is not None:
        found.tidy.zone_chosen(zone)
    waiting = await found.workers.call(lambda: zone_moves.movable(job.store, chat_id, zone))
    values = {
        "zone": escape(offsets.zone_label(zone)),
        "now": local_time(now, zone, language, zone_shown=False),
    }
    if fixed:
        text = t(language, "zone_set_fixed", **values)
        biggest = await found.workers.call(
            lambda: places.biggest_at(offsets.offset_at(zone, now), now)
        )
        if biggest is not None:
            city = escape(places.city_of(biggest, language))
            text += "\n" + t(language, "zone_fixed_note", city=city)
    else:
        said = escape(preview(said, SAID_PREVIEW))
        text = t(language, "zone_set", said=said, offset=_offset(zone, now), **values)
    offer, keyboard = _offer(waiting, zone, now, language)
    if press is not None:
        await press.answer()
        await edit_html(press.query, "\n\n".join(filter(None, [text, offer])), keyboard)
    elif asked:  # the "send my location" button goes away; the offer comes as its own message
        await reply_html(message, text, ReplyKeyboardRemove())
        if offer:
            await reply_html(message, offer, keyboard)
    else:
        await reply_html(message, "\n\n".join(filter(None, [text, offer])), keyboard)


def _offer(
    waiting: list[Reminder], zone: ZoneInfo, now: datetime, language: str
) -> tuple[str, InlineKeyboardMarkup | None]:
    """The question of what the chat's reminders in other zones should do, with its buttons."""
    movable = [(r, moved) for r in waiting if (moved := zone_moves.moved(r, zone, now))]
    if not movable:
        return "", None
    first, after = movable[0]
    assert first.series_at is not None and after.series_at is not None
    values = {
        "count": len(movable),
        "zone": escape(offsets.zone_label(zone)),
        "text": escape(preview(first.text or "…", reminder_view.TEXT_PREVIEW)),
        "before": escape(local_time(first.series_at, first.due.zone, language)),
        "moved": escape(local_time(after.series_at, zone, language)),
        "kept": escape(local_time(first.series_at, zone, language)),
    }
    one = len(movable) == 1
    move = "button_zone_move_one_plain" if one else "button_zone_move_plain"
    keep = "button_zone_keep_one_plain" if one else "button_zone_keep_plain"
    move_button = callbacks.MOVE_REMINDERS.button(t(language, move, count=len(movable)), zone.key)
    keep_button = callbacks.KEEP_REMINDERS.button(t(language, keep))
    keyboard = InlineKeyboardMarkup([[move_button], [keep_button]])
    return t(language, "zone_moves_one" if one else "zone_moves", **values), keyboard


# -- locations ---------------------------------------------------------------------------------


async def _from_location(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    latitude: float,
    longitude: float,
) -> None:
    language = language_of(update.effective_user)
    run = services(context).workers.call
    try:
        zone = await run(lambda: places.zone_at(latitude, longitude))
    except places.LocationUnavailable:
        zone, key = None, "zone_no_locations"
    else:
        key = "zone_no_zone_there"
    if zone is None:
        await reply_html(message, t(language, key))
        return
    said = t(language, "zone_from_location_plain")
    await _set(update, context, message, caller, zone, said, False)


async def take_location(
    update: Update, context: ContextTypes.DEFAULT_TYPE, message: Message, caller: Caller
) -> bool:
    """Set the zone from ``message``'s location if it answers /timezone (module docstring);
    whether it did (False: it is remembered as any location)."""
    spot = message.location
    if spot is None or message.forward_origin is not None:  # someone else's place: a memory
        return False
    if message.chat.type == ChatType.PRIVATE:
        job, chat_id = _job(context), message.chat.id
        now = job.clock()
        asked = await services(context).workers.call(
            lambda: chat_zones.location_asked(job.store, chat_id, now)
        )
        if not asked:
            return False
    else:
        replied = replied_to(message)
        author = replied.from_user if replied is not None else None
        if author is None or author.id != context.bot.id:
            return False
        if not (replied is not None and (replied.text or "").startswith(STATUS_MARK)):
            return False
    await _from_location(update, context, message, caller, spot.latitude, spot.longitude)
    return True


def location_button(message: Message, language: str) -> InlineKeyboardMarkup | None:
    """The "🕒 Use for my time zone" button under a remembered location (None: not one)."""
    spot = message.location
    if spot is None or not places.locations_available():
        return None
    label = t(language, "button_zone_use_location_plain")
    where = (f"{spot.latitude:.5f}", f"{spot.longitude:.5f}")
    return InlineKeyboardMarkup([[callbacks.LOCATION_ZONE.button(label, *where)]])


# -- buttons -----------------------------------------------------------------------------------


async def press_choose(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A zone chosen among those a name could mean: set it."""
    press = await pressed(update, context)
    if press is None:
        return
    run = services(context).workers.call
    zone = await run(lambda: places.zone_named(press.value))
    if zone is None:
        await press.stale()
        return
    said = await run(lambda: places.city_of(zone, press.language))
    fixed = offsets.is_fixed(zone)
    await _set(update, context, press.message, press.caller, zone, said, fixed, press=press)


async def press_location(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """🕒 Use for my time zone, under a remembered location: the answer is a new message, the
    memory's stays as it is."""
    press = await pressed(update, context)
    if press is None:
        return
    await press.answer()
    latitude, _, longitude = press.value.partition(":")
    where = float(latitude), float(longitude)
    await _from_location(update, context, press.message, press.caller, *where)


async def press_move(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Move the chat's reminders the presser may change to the same local time in its (new)
    zone; the buttons stay for the others' (module docstring)."""
    press = await pressed(update, context)
    if press is None:
        return
    job, run = _job(context), services(context).workers.call
    chat_id, now = press.message.chat.id, job.clock()
    current = await run(lambda: chat_zones.chat_zone(job.store, chat_id, job.zone))
    if not current.chosen or current.zone.key != press.value:
        await press.refuse("zone_changed_since")
        return
    zone = current.zone
    # An administrator (who may set the zone) moves the group's reminders, every topic's.
    admin = await _may_set(update, context, press.caller)
    caller = dataclasses.replace(press.caller, admin=press.caller.admin or admin)
    done = await run(lambda: zone_moves.move_to(job.store, caller, chat_id, zone, now))
    for reminder in done.moved:
        job.track(reminder)
    await run(lambda: reminder_memory.follow_all(job.store, done.moved))
    await press.answer()
    left = [r for r in done.others if zone_moves.moved(r, zone, now) is not None]
    keyboard = _offer(left, zone, now, press.language)[1] if left else None
    await edit_html(press.query, _moved_text(done, zone, press.language), keyboard)


def _moved_text(done: zone_moves.Moved, zone: ZoneInfo, language: str) -> str:
    label = escape(offsets.zone_label(zone))
    if not done.moved and not done.passed and not done.busy:
        if done.others:
            return t(language, "zone_moved_others", count=len(done.others))
        return t(language, "zone_moved_none")
    lines = [t(language, "zone_moved", count=len(done.moved), zone=label)] if done.moved else []
    for reminder in done.moved[:MOVED_SHOWN]:
        at = reminder.next_at or reminder.series_at
        when = local_time(at, zone, language) if at is not None else "—"
        text = preview(reminder.text or "…", reminder_view.TEXT_PREVIEW)
        lines.append(t(language, "reminder_line", when=escape(when), text=escape(text)))
    if len(done.moved) > MOVED_SHOWN:
        lines.append(t(language, "zone_moved_more", count=len(done.moved) - MOVED_SHOWN))
    if done.passed:
        lines.append(t(language, "zone_moved_passed", count=len(done.passed), zone=label))
    if done.busy:
        lines.append(t(language, "zone_moved_busy", count=len(done.busy)))
    if done.others:
        lines.append(t(language, "zone_moved_others", count=len(done.others)))
    return "\n".join(lines)


async def press_keep(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Keep the chat's reminders at the moments they were set for: nothing changes."""
    press = await pressed(update, context)
    if press is None:
        return
    if not await _may_set(update, context, press.caller):
        await press.refuse("zone_admins_only")
        return
    await press.answer()
    await edit_html(press.query, t(press.language, "zone_kept"))
