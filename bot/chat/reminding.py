"""The reminder doors: /remind, /reminders, "remind me ..." and ⏰ under a memory (the buttons
of a reminder: ``bot.chat.reminder_buttons``; /timezone: ``bot.chat.timezones``).

Thin, as every door: each handler reads the update (who acts where: ``access.caller_of``),
makes its calls into ``bot.core.reminders`` off the event loop, tells the job
(``bot.jobs.reminders.ReminderJob.track``) what changed, and renders the answer with
``bot.view.reminder_view``. Times are read by ``bot.core.when`` in the chat's zone: a phrase
it cannot read gets examples, never a guess; a time already past is refused (or moved to its
next occurrence by the parser, and the reply says so).

A reminder is also a memory: setting one stores ``⏰ <local time> — <text>`` in the chat's
namespace (tags: the text's keywords and "reminder"/"提醒"), so /recall finds it with its
time. A memory that says what the person will do at a time is offered a reminder
(``bot.chat.offering``); the ⏰ button earlier versions put under such a memory (``rm:``) still
makes it a reminder at that time, read relative to when it was stored.

Button presses are resolved in the presser's namespace (``bot.chat.presses``); in a group
only the member who set a reminder or an administrator may change it (``bot.core.reminders``,
administrator rights asked of Telegram only when they matter).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar
from zoneinfo import ZoneInfo

from telegram import Message, Update
from telegram.ext import ContextTypes

from bot.chat.access import caller_of, replied_to, with_admin
from bot.chat.presses import pressed
from bot.chat.services import services
from bot.core import chat_zones, delivery, operations, reminders, when
from bot.core.entry import split_command
from bot.core.keywords import keywords
from bot.core.policy import Caller, source_of
from bot.core.reminder_record import Reminder
from bot.errors import ReminderNotAllowed, ReminderNotFound
from bot.jobs import reminder_memory
from bot.jobs.reminders import ReminderJob
from bot.view import reminder_view
from bot.view.i18n import language_of, t
from bot.view.render import escape, preview, to_plain
from bot.view.replies import reply_html
from bot.view.times import local_time
from memory.errors import MemoryInvalid, MemoryNotFound
from memory.interface import Store
from memory.model import Memory
from memory.timestamps import parse_time

_CHANGE_PROMPT = re.compile(rf"⏰#({reminders.ID_PATTERN})")
PHRASE_PREVIEW = 80
MEMORY_TAGS = {"en": "reminder", "zh": "提醒"}

T = TypeVar("T")


def reminder_job(context: ContextTypes.DEFAULT_TYPE) -> ReminderJob:
    job = services(context).reminders
    assert job is not None, "reminders are wired in build_application"
    return job


@dataclass(frozen=True)
class _Request:
    """What setting a reminder needs from the message that asks for it."""

    message: Message
    caller: Caller
    language: str
    phrase: str  # the time and the text, as typed
    source: str  # idempotency: the message (and which request of it)


def _zone(context: ContextTypes.DEFAULT_TYPE, chat_id: int) -> chat_zones.ChatZone:
    job = reminder_job(context)
    return chat_zones.chat_zone(job.store, chat_id, job.zone)


async def set_reminder(
    context: ContextTypes.DEFAULT_TYPE,
    request: _Request,
    replied: Message | None = None,
    *,
    unclear_to_model: bool = False,
) -> bool:
    """Read ``request.phrase`` as a reminder, set it, and answer with the confirmation.

    With ``unclear_to_model``, a phrase without a time is not answered (False: the language
    model reads it instead); otherwise it is always answered (True)."""
    job, message, language = reminder_job(context), request.message, request.language
    run = services(context).workers.call
    chat_id = message.chat.id
    zone = await run(lambda: _zone(context, chat_id))
    now = job.clock()
    phrase = request.phrase.strip()
    if not phrase:
        await reply_html(message, t(language, "usage_remind"))
        return True
    default_hour = job.config.default_hour
    parsed = when.parse_reminder(phrase, now, zone.zone, default_hour=default_hour)
    shown = escape(preview(phrase, PHRASE_PREVIEW))
    if parsed is None:
        if unclear_to_model:
            return False
        await reply_html(message, t(language, "reminder_unclear", phrase=shown))
        return True
    replied_text = (replied.text or replied.caption or "") if replied is not None else ""
    text = parsed.text.strip() or replied_text.strip()
    if not text and replied is None:
        await reply_html(message, t(language, "reminder_no_text", phrase=shown))
        return True
    due = parsed.due
    if due.at <= now:
        past = escape(local_time(due.at, due.zone, language))
        await reply_html(message, t(language, "reminder_past", when=past))
        return True
    caller = request.caller
    try:
        reminder = await run(
            lambda: reminders.create(
                job.store,
                caller,
                chat_id=chat_id,
                text=text,
                due=due,
                language=language,
                now=now,
                thread_id=message.message_thread_id if message.is_topic_message else None,
                message_id=replied.message_id if replied is not None else None,
                source=request.source,
            )
        )
    except MemoryInvalid as e:
        await reply_html(message, _invalid(language, e, text))
        return True
    job.track(reminder)
    store = services(context).store
    await run(lambda: remember_reminder(store, caller, reminder, request.source))
    first = not zone.chosen and await run(lambda: chat_zones.tell_default_once(job.store, chat_id))
    reply, keyboard = reminder_view.confirmation(
        reminder, language, moved=due.moved, date_only=due.date_only, default_zone=first
    )
    await reply_html(message, reply, keyboard)
    return True


def _invalid(language: str, error: MemoryInvalid, text: str) -> str:
    if error.field == "text":
        return t(language, "reminder_too_long", max=reminders.MAX_TEXT_CHARS, chars=len(text))
    if error.field == "count":
        return t(language, "reminder_too_many", max=reminders.MAX_PER_NAMESPACE)
    if error.field == "far":
        return t(language, "reminder_too_far")
    return t(language, "usage_remind")


def remember_reminder(store: Store, caller: Caller, reminder: Reminder, source: str) -> Memory:
    """Keep the reminder as a memory too (its time in the content), once per request."""
    tags = [*keywords(reminder.text, 4), MEMORY_TAGS.get(reminder.language, "reminder")]
    namespace = store.namespace(caller.namespace)
    memory = operations.add(
        namespace, reminder_view.memory_line(reminder), tags, "reminder", source=source
    )
    reminder_memory.link(store, reminder, memory)  # so that it follows the reminder
    return memory


async def _resume(context: ContextTypes.DEFAULT_TYPE, caller: Caller, message: Message) -> None:
    """Put back the chat's paused reminders (it writes to the bot again), and say so: all of
    them, whichever topic or member's namespace keeps them (``delivery.resume_chat``)."""
    job = reminder_job(context)
    chat_id, namespace, now = message.chat.id, caller.namespace, job.clock()
    resumed = await services(context).workers.call(
        lambda: delivery.resume_chat(job.store, namespace, chat_id, now)
    )
    if resumed:
        for reminder in resumed:
            job.track(reminder)
        language = language_of(message.from_user)
        await reply_html(message, t(language, "reminders_resumed", count=len(resumed)))


# -- commands ----------------------------------------------------------------------------------


async def remind(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Set a reminder: /remind <when> <what>, or /remind <when> as a reply to a message."""
    message, caller = update.effective_message, caller_of(update, context)
    if message is None or caller is None:
        return
    language = language_of(update.effective_user)
    _, phrase = split_command(message.text or message.caption or "")
    await _resume(context, caller, message)
    replied = replied_to(message)
    request = _Request(message, caller, language, phrase, _source(message))
    await set_reminder(context, request, replied)


def _source(message: Message, part: str = "r") -> str:
    return f"{source_of(message.chat.id, message.message_id, None)}:{part}"


async def list_reminders(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """List the upcoming reminders, soonest first, with a cancel button each."""
    message, caller = update.effective_message, caller_of(update, context)
    if message is None or caller is None:
        return
    await _resume(context, caller, message)
    job = reminder_job(context)
    found = await services(context).workers.call(
        lambda: reminders.upcoming(job.store, caller.namespace)
    )
    for reminder in found:  # set by another process since the job's last rescan: due here too
        job.track(reminder)
    text, keyboard = reminder_view.listing(found, language_of(update.effective_user), job.clock())
    await reply_html(message, text, keyboard)


# -- free text ---------------------------------------------------------------------------------


async def from_free_text(
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    text: str,
    language: str,
    *,
    model: bool = False,
) -> bool:
    """Handle ``text`` if it is about reminders: a reply to a ✏️ Change prompt, or a request
    ("remind me ...", "提醒我 ..."); whether it was. With a ``model``, a request whose time
    the code cannot read is left to it (its ``scheduleReminder`` tool)."""
    replied = replied_to(message)
    prompt = _CHANGE_PROMPT.search((replied.text or "") if replied is not None else "")
    author = replied.from_user if replied is not None else None
    if prompt is not None and author is not None and author.id == context.bot.id:
        await _change_to(context, message, caller, language, prompt.group(1), text)
        return True
    if not when.asks_for_reminder(text):
        return False
    request = _Request(message, caller, language, text, _source(message))
    return await set_reminder(context, request, unclear_to_model=model)


async def _change_to(
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    language: str,
    reminder_id: str,
    phrase: str,
) -> None:
    job = reminder_job(context)
    zone = await services(context).workers.call(lambda: _zone(context, message.chat.id))
    now = job.clock()
    parsed = when.parse_reminder(phrase, now, zone.zone, default_hour=job.config.default_hour)
    shown = escape(preview(phrase, PHRASE_PREVIEW))
    if parsed is None:
        await reply_html(message, t(language, "reminder_unclear", phrase=shown))
        return
    due = parsed.due
    if due.at <= now:
        past = escape(local_time(due.at, due.zone, language))
        await reply_html(message, t(language, "reminder_past", when=past))
        return
    chat_id = message.chat.id
    where = await services(context).workers.call(
        lambda: reminders.locate(job.store, caller, chat_id, reminder_id)
    )
    try:
        changed = await as_allowed(
            context,
            Update(0, message=message),
            where,
            lambda who: reminders.reschedule(job.store, who, reminder_id, due, now),
        )
        await services(context).workers.call(lambda: reminder_memory.follow(job.store, changed))
    except ReminderNotFound:
        await reply_html(message, t(language, "reminder_gone_plain"))
        return
    except ReminderNotAllowed:
        await reply_html(message, t(language, "reminder_not_yours"))
        return
    except MemoryInvalid as e:
        await reply_html(message, _invalid(language, e, phrase))
        return
    job.track(changed)
    text, keyboard = reminder_view.confirmation(
        changed, language, moved=due.moved, date_only=due.date_only, title="reminder_changed"
    )
    await reply_html(message, text, keyboard)


async def as_allowed(
    context: ContextTypes.DEFAULT_TYPE,
    update: Update,
    caller: Caller,
    work: Callable[[Caller], T],
) -> T:
    """``work(caller)`` off the event loop; again with administrator rights (asked of Telegram
    only then) if the group rule refused the caller without them."""
    run = services(context).workers.call
    try:
        return await run(lambda: work(caller))
    except ReminderNotAllowed:
        admin = await with_admin(context, update, caller)
        if admin is caller:
            raise
        return await run(lambda: work(admin))


# -- a memory with a time in it ----------------------------------------------------------------


def _memory_time(memory: Memory, zone: ZoneInfo, default_hour: int) -> when.Parsed | None:
    """The time a memory's text names, read as of when it was stored; None if none (or past
    at that moment)."""
    stored = parse_time(memory.created_at)
    parsed = when.parse_reminder(memory.content, stored, zone, default_hour=default_hour)
    if parsed is None or parsed.due.at <= stored or not parsed.text.strip():
        return None
    return None if parsed.due.at > stored + when.MAX_AHEAD else parsed


async def press_from_memory(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """⏰ under a memory: a reminder at the time its text names (set and confirmed once,
    however often pressed)."""
    press = await pressed(update, context)
    if press is None:
        return
    caller, message, language = press.caller, press.message, press.language
    job, found = reminder_job(context), services(context)
    try:
        memory = await found.workers.run(caller.namespace, operations.find, press.value)
    except (MemoryInvalid, MemoryNotFound):  # deleted since
        await press.stale()
        return
    zone = await found.workers.call(lambda: _zone(context, message.chat.id))
    parsed = _memory_time(memory, zone.zone, job.config.default_hour)
    if parsed is None:
        await press.refuse("reminder_from_memory_none_plain")
        return
    now = job.clock()
    if parsed.due.at <= now:
        await press.refuse("reminder_from_memory_past_plain")
        return
    try:
        reminder, new = await found.workers.call(
            lambda: reminders.create_once(
                job.store,
                caller,
                chat_id=message.chat.id,
                text=parsed.text,
                due=parsed.due,
                language=language,
                now=now,
                memory_id=memory.id,
                source=f"memory:{memory.id}",
            )
        )
    except MemoryInvalid as e:
        alert = to_plain(_invalid(language, e, parsed.text))[:200]
        await press.query.answer(alert, show_alert=True)
        return
    if not new:  # pressed again (here or on another replica): set by the first press
        await press.answer("reminder_from_memory_set_plain")
        return
    job.track(reminder)
    await press.answer()
    text, keyboard = reminder_view.confirmation(reminder, language)
    await reply_html(message, text, keyboard)
