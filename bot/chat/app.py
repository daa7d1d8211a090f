"""The Telegram application: every handler wired in one place.

``build_application(config, store, llm)`` returns a python-telegram-bot ``Application`` ready
for ``run_polling``; ``python -m bot`` runs it against Telegram, the tests and the benchmark
against a fake Bot API on loopback (``telegram.base_url``), and ``python -m bot console``
against an in-process one (the ``request`` argument). Resources are opened before polling and
closed after it (``post_init`` / ``post_shutdown``): the store is closed, so that every
``memory.json`` is complete, and the language model's HTTP client too.

Updates are handled concurrently across chats and in order within a chat
(``bot.chat.updates.ChatOrderedUpdateProcessor``): a slow answer in one chat (the disk, a language
model) does not hold up the others. Every update is on disk (``bot.chat.inbox``) before Telegram is
told it arrived, until it has been handled: a crash loses none, and one Telegram delivers again
is handled once. Handler groups: -1 is the gatekeeper (allow list, chats the
bot does not serve); 0 holds the commands (``HANDLERS``), the buttons (``PRESSES``, by the
table of ``bot.view.callbacks``) and free text. Later features add theirs to
``register_handlers``. The JobQueue runs the scheduled digest (``bot.jobs.digest``), the
reminders (``bot.jobs.reminders``) and the nightly tidy (``bot.jobs.tidy``), registered here too:
at their times, and once at start-up to catch up what was missed while stopped.

Failures: expected ones (an unknown id) are answered by the handlers; everything else reaches the
one error handler (``bot.chat.failures.on_error``). Telegram's flood control is
``bot.chat.pacing``: with ``flood_control`` every message keeps within Telegram's limits (30 a
second overall, 20 a minute per group, about one a second per private chat), and a request Telegram
answered with 429 is always retried after the ``retry_after`` it asked for, holding up that chat
only. The reminders' job paces its sends by the same ``Pacer``.

No network is never fatal: ``post_init`` publishes the command menu until the Bot API answers
(``until_reachable``: one warning line per failed attempt, waits doubling from 1 s to 30 s;
only a token Telegram refuses stops it), as ``bot.chat.running.serving``, which runs the
application, calls ``getMe`` and ``setWebhook``.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import Awaitable, Callable, Collection, Coroutine
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from telegram import BotCommand, LinkPreviewOptions, Update
from telegram.constants import BotCommandLimit
from telegram.error import BadRequest, NetworkError, RetryAfter
from telegram.ext import (
    Application,
    ApplicationBuilder,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    Defaults,
    ExtBot,
    JobQueue,
    MessageHandler,
    TypeHandler,
    filters,
)
from telegram.request import BaseRequest

from bot.chat import (
    buttons,
    calendar_feed,
    choices,
    commands,
    confirmations,
    exports,
    imports,
    media,
    messages,
    noting,
    offer_answers,
    reminder_buttons,
    reminding,
    tidying,
    timezones,
    versions,
    welcome,
)
from bot.chat.access import gatekeeper, namespace_name
from bot.chat.failures import RETRIES_ON_429, on_error, set_aside_overdue, tell_admins_set_aside
from bot.chat.inbox import Inbox, InboxQueue, SyncingRequest
from bot.chat.lanes import SharedUpdates
from bot.chat.pacing import PacedLimiter
from bot.chat.services import KEY, Services
from bot.chat.updates import ChatOrderedUpdateProcessor
from bot.config import Config
from bot.core.pacing import Pacer
from bot.core.workers import Workers
from bot.jobs.digest import Digest
from bot.jobs.reminders import ReminderJob
from bot.jobs.tidy import TidyJob
from bot.schedule import parse_timezone
from bot.view import callbacks
from bot.view.callbacks import Callback
from bot.view.i18n import COMMANDS, t
from memory.interface import Store
from memory.text import query_words

if TYPE_CHECKING:
    from openai import AsyncOpenAI

log = logging.getLogger(__name__)

BotApplication = Application[
    ExtBot[int],  # PacedLimiter is a BaseRateLimiter[int]
    ContextTypes.DEFAULT_TYPE,
    dict[Any, Any],
    dict[Any, Any],
    dict[Any, Any],
    JobQueue[ContextTypes.DEFAULT_TYPE],
]

FIRST_RETRY_DELAY = 1.0  # seconds; doubled after each failed attempt to reach the Bot API
MAX_RETRY_DELAY = 30.0
CALENDAR_SERVER = "calendar_server"  # bot_data: the feed's own server ([calendar] listen)

_T = TypeVar("_T")

HANDLERS = {
    "start": welcome.start,
    "help": welcome.help_command,
    "remember": commands.remember,
    "recall": commands.recall,
    "forget": commands.forget,
    "stats": commands.stats,
    "list": commands.list_memories,
    "edit": commands.edit,
    "related": commands.related,
    "export": exports.export,
    "calendar": exports.calendar,
    "digest": commands.digest,
    "remind": reminding.remind,
    "reminders": reminding.list_reminders,
    "timezone": timezones.timezone,
    "undo": versions.undo_command,
    "history": versions.history_command,
    "tidy": tidying.tidy_command,
}


# Every button's press, by the callback data it carries (the table: bot.view.callbacks).
PRESSES: dict[
    Callback, Callable[[Update, ContextTypes.DEFAULT_TYPE], Coroutine[Any, Any, None]]
] = {
    callbacks.FORGET: buttons.ask_forget,
    callbacks.DELETE: buttons.confirm_forget,
    callbacks.KEEP: buttons.keep,
    callbacks.MENU: buttons.open_menu,
    callbacks.RELATED: commands.related_pressed,
    callbacks.HISTORY: versions.history_pressed,
    callbacks.LIST_PAGE: buttons.turn_page,
    callbacks.RECALL_PAGE: buttons.turn_recall_page,
    callbacks.KEEP_BOTH: choices.choose,
    callbacks.REPLACE: choices.choose,
    callbacks.CANCEL_ADD: choices.choose,
    callbacks.REMEMBER_THIS: noting.press_remember,
    callbacks.APPLY: confirmations.apply_changes,
    callbacks.DISCARD: confirmations.discard_changes,
    callbacks.UNDO: versions.undo_pressed,
    callbacks.RESTORE: versions.restore_pressed,
    callbacks.DONE: reminder_buttons.press_done,
    callbacks.SNOOZE: reminder_buttons.press_snooze,
    callbacks.CANCEL_REMINDER: reminder_buttons.press_cancel,
    callbacks.CHANGE_REMINDER: reminder_buttons.press_change,
    callbacks.FROM_MEMORY: reminding.press_from_memory,
    callbacks.OFFER: offer_answers.press_offer,
    callbacks.CHOOSE_ZONE: timezones.press_choose,
    callbacks.MOVE_REMINDERS: timezones.press_move,
    callbacks.KEEP_REMINDERS: timezones.press_keep,
    callbacks.LOCATION_ZONE: timezones.press_location,
    callbacks.IMPORT: imports.apply_import,
    callbacks.CANCEL_IMPORT: imports.cancel_import,
    callbacks.WELCOME: welcome.press_welcome,
    callbacks.TIDY_QUESTION: tidying.choose,
}


def build_application(
    config: Config,
    store: Store,
    llm: AsyncOpenAI | None,
    *,
    request: BaseRequest | None = None,
    jobs: bool = True,
    clock: Callable[[], datetime] | None = None,
    chats: Collection[int] | None = None,
) -> BotApplication:
    """The bot, wired: handlers, error handler, rate limiter, start-up and shutdown hooks, and
    (with ``jobs``) the scheduled digest and the reminders on the JobQueue. ``clock`` (UTC
    now) is the digest's and the reminders' time, for tests. ``chats`` limits what the jobs
    send to those chats (the console: its own), None to every chat; a job added here takes it
    too, so that a console never sends (and marks sent) another chat's messages."""
    telegram = config.telegram
    pacer = Pacer(limits=telegram.flood_control)  # every send of the bot, reminders too
    # Updates from Telegram go through the inbox (bot.chat.inbox), or the queue replicas
    # share when the store has one (bot.chat.lanes); the console's do not.
    shared = store.updates() if request is None else None
    updates: SharedUpdates | None = None
    if shared is not None:
        replicas = config.replicas
        updates = SharedUpdates(
            shared,
            identity=config.replica_identity,
            set_aside=tell_admins_set_aside,
            lease=replicas.lease_seconds,
            poll=replicas.poll_seconds,
            max_lanes=replicas.max_chats,
            deadline=telegram.handler_deadline_seconds,
            namespace_of=lambda update: namespace_name(update, config),
        )
    queue = InboxQueue(Inbox.of(store)) if request is None and shared is None else None
    processor = ChatOrderedUpdateProcessor(
        on_start=queue.start if queue is not None else None,
        on_done=queue.done if queue is not None else None,
        deadline=telegram.handler_deadline_seconds,
    )
    builder = (
        ApplicationBuilder()
        .token(telegram.token)
        .base_url(telegram.base_url)
        .base_file_url(telegram.file_url)
        .defaults(
            Defaults(
                allow_sending_without_reply=True,
                link_preview_options=LinkPreviewOptions(is_disabled=True),
            )
        )
        .rate_limiter(PacedLimiter(pacer, max_retries=RETRIES_ON_429))
        .concurrent_updates(processor)
        .post_init(post_init)
        .post_shutdown(post_shutdown)
    )
    if queue is not None:
        builder = builder.get_updates_request(SyncingRequest(queue.inbox))
    if request is not None:
        builder = builder.request(request).get_updates_request(request)
    if queue is not None:
        builder = builder.update_queue(queue)
    if updates is not None:
        builder = builder.update_queue(updates)
    application = builder.build()
    processor.on_overdue = lambda update: set_aside_overdue(application, update)
    digest = (
        Digest(config.digest, store, clock=clock, chats=chats)
        if clock is not None
        else Digest(config.digest, store, chats=chats)
    )
    reminders = (
        ReminderJob(config.reminders, store, clock=clock, chats=chats, pacer=pacer)
        if clock is not None
        else ReminderJob(config.reminders, store, chats=chats, pacer=pacer)
    )
    zone = parse_timezone(config.reminders.timezone)  # a chat's, until it chooses one
    tidy = (
        TidyJob(config.tidy, store, default_zone=zone, clock=clock, chats=chats)
        if clock is not None
        else TidyJob(config.tidy, store, default_zone=zone, chats=chats)
    )
    conversation = None
    if llm is not None:
        from bot.chat.conversation import make_conversation  # loads openai: only when configured

        conversation = make_conversation(config.llm, llm, store, reminders)
    transcriber = None
    if config.transcription.enabled:
        from bot.assistant.senses import Transcriber  # loads openai: only when configured

        transcriber = Transcriber(config.transcription)
    application.bot_data[KEY] = Services(
        config,
        store,
        Workers(store),
        llm,
        digest,
        conversation,
        reminders,
        transcriber,
        tidy,
    )
    calendar = config.calendar
    if request is None and calendar.enabled and calendar.listen:  # not the console's
        found = application.bot_data[KEY]
        server = calendar_feed.CalendarServer(calendar.listen, calendar.port, found)
        application.bot_data[CALENDAR_SERVER] = server
    register_handlers(application)
    if jobs:
        digest.register(application)
        reminders.register(application)
        tidy.register(application)
    return application


def register_handlers(application: BotApplication) -> None:
    """Add every handler and the error handler."""
    new_messages = filters.UpdateType.MESSAGE  # an edited "/remember" must not store twice
    application.add_handler(TypeHandler(Update, gatekeeper), group=-1)
    media.register(application)  # before the commands: a forwarded "/start" is remembered
    for name, callback in HANDLERS.items():
        application.add_handler(CommandHandler(name, callback, filters=new_messages))
    for button, press in PRESSES.items():
        application.add_handler(CallbackQueryHandler(press, pattern=button.pattern))
    application.add_handler(CallbackQueryHandler(buttons.unknown_button))
    text = new_messages & filters.TEXT
    application.add_handler(MessageHandler(text & ~filters.COMMAND, messages.free_text))
    application.add_handler(MessageHandler(text & filters.COMMAND, commands.unknown_command))
    application.add_error_handler(on_error)


def bot_commands(language: str) -> list[BotCommand]:
    """The command menu in ``language``."""
    commands_ = [BotCommand(name, t(language, key)) for name, key in COMMANDS]
    assert len(commands_) <= BotCommandLimit.MAX_COMMAND_NUMBER
    return commands_


async def post_init(application: BotApplication) -> None:
    """Before polling: warm the tokenizer, publish the command menu (English and Chinese), and
    handle again what the inbox kept, telling the admins of any update it set aside."""
    # jieba loads its dictionary (about a second) on first use; do it now, not on a user's
    # first Chinese message.
    await asyncio.to_thread(query_words, "预热")
    bot = application.bot
    for language in ("en", "zh"):
        menu = bot_commands(language)
        code = None if language == "en" else language  # English: every other language's too
        await until_reachable(
            bot,
            "publish the command menu",
            lambda: bot.set_my_commands(menu, language_code=code),  # noqa: B023 (awaited now)
        )
    if isinstance(application.update_queue, InboxQueue):  # before polling: oldest first
        recovered = application.update_queue.recover()
        for pending in recovered.set_aside:  # told first: the replay may crash again
            await tell_admins_set_aside(application, pending)
        await application.update_queue.replay(application, recovered.again)
    if isinstance(application.update_queue, SharedUpdates):
        await application.update_queue.start(application)
    server = application.bot_data.get(CALENDAR_SERVER)
    if isinstance(server, calendar_feed.CalendarServer):
        await server.start()


async def post_shutdown(application: BotApplication) -> None:
    """After polling: close the store (memory.json complete) and the model's client."""
    found: Services = application.bot_data[KEY]
    server = application.bot_data.get(CALENDAR_SERVER)
    if isinstance(server, calendar_feed.CalendarServer):
        await server.stop()  # first: no feed is read from a store being closed
    if isinstance(application.update_queue, SharedUpdates):
        await application.update_queue.stop()  # its lanes given back to the other replicas
    if found.reminders is not None:
        await found.reminders.stop()  # a delivery in progress is recorded first
    await asyncio.to_thread(found.workers.close)  # the calls in progress end first
    if isinstance(application.update_queue, InboxQueue):  # before the store it writes to
        application.update_queue.inbox.close()
    await asyncio.to_thread(found.store.close)
    if found.llm is not None:
        await found.llm.close()
    if found.transcriber is not None:
        await found.transcriber.close()


def _where(bot: ExtBot[Any]) -> str:
    """The Bot API's address as configured, without the token PTB appends."""
    return bot.base_url.removesuffix(bot.token)


async def until_reachable(bot: ExtBot[Any], what: str, call: Callable[[], Awaitable[_T]]) -> _T:
    """``await call()``, again and again while the Bot API cannot be reached.

    A network failure (no route, refused, timed out, a 5xx) and Telegram's 429 are waited out:
    one warning per failed attempt, waits doubling from ``FIRST_RETRY_DELAY`` to
    ``MAX_RETRY_DELAY`` (429: as long as Telegram asks). Anything else (a token refused, a
    request Telegram rejects) is raised at once: waiting would not change it.
    """
    delay = FIRST_RETRY_DELAY
    for attempt in itertools.count(1):
        try:
            return await call()
        except RetryAfter as e:
            asked = e.retry_after
            seconds = asked.total_seconds() if isinstance(asked, timedelta) else float(asked)
            wait, reason = max(seconds, delay), f"flood control: retry after {seconds:.0f} s"
        except NetworkError as e:
            if isinstance(e, BadRequest):
                raise
            wait, reason = delay, f"{type(e).__name__}: {e.message}"
        log.warning(
            "cannot reach the Bot API at %s to %s (attempt %d, %s); trying again in %.0f s",
            _where(bot),
            what,
            attempt,
            reason,
            wait,
        )
        await asyncio.sleep(wait)
        delay = min(delay * 2, MAX_RETRY_DELAY)
    raise AssertionError("itertools.count() ended")
