"""Running the application against the Bot API: connect, take updates in, and stop.

``serving(application, ...)`` does what python-telegram-bot's ``run_polling`` and
``run_webhook`` do, in the caller's event loop, so that ``python -m bot``, the console, the
tests and the benchmarks run the one application ``bot.chat.app.build_application`` wires: it
initialises, runs ``post_init``, takes updates by long polling or through the webhook server
(``bot.chat.webhook``), and on leaving stops in the reverse order, ``post_shutdown`` last.

No network is never fatal. At start-up, ``serving`` calls ``getMe`` (``initialize``) and
``setWebhook`` until the Bot API answers: one warning line per failed attempt, waits doubling
from 1 s to 30 s (``bot.chat.app.until_reachable``); only a token Telegram refuses stops it.
While polling, python-telegram-bot retries ``getUpdates`` forever with its own backoff, and
each failure is one warning line (``polling_failed``) rather than its default traceback.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from datetime import timedelta

from telegram import Update
from telegram.error import BadRequest, NetworkError, TelegramError

from bot.chat.app import BotApplication, until_reachable
from bot.chat.lanes import SharedUpdates
from bot.chat.webhook import WebhookServer

log = logging.getLogger(__name__)

ALLOWED_UPDATES = (
    Update.MESSAGE,
    Update.EDITED_MESSAGE,
    Update.CALLBACK_QUERY,
    Update.INLINE_QUERY,
)


def polling_failed(error: TelegramError) -> None:
    """A failed ``getUpdates``: python-telegram-bot polls again after a pause; log one line."""
    if isinstance(error, NetworkError) and not isinstance(error, BadRequest):
        log.warning("network trouble talking to Telegram (polling again): %s", error)
    else:
        log.error("polling Telegram failed (polling again): %s: %s", type(error).__name__, error)


@contextlib.asynccontextmanager
async def serving(
    application: BotApplication,
    *,
    poll_timeout: float | None = None,
    webhook: WebhookServer | None = None,
) -> AsyncIterator[BotApplication]:
    """Run ``application`` in the current event loop, as ``run_polling`` (or, with
    ``webhook``, ``run_webhook``) does.

    Initialise (``getMe``, retried while the Bot API is unreachable: ``until_reachable``),
    ``post_init``, then the updates' way in: long polling when ``poll_timeout`` gives
    getUpdates' timeout, or the ``webhook`` server (``bot.chat.webhook``), started before the
    Application and registered with ``setWebhook`` after it (retried too); neither for the
    console and in-process benchmarks, which feed updates themselves. Start; on leaving, also
    when cancelled while waiting for the network, the reverse, ``post_shutdown`` last (it
    closes the store, so memory.json is complete). The webhook is never deleted: other
    replicas may serve it still.
    """
    if poll_timeout is not None and webhook is not None:
        raise ValueError("updates come by polling or by webhook, not both")
    try:
        await until_reachable(application.bot, "connect", application.initialize)
        log.info("connected to the Bot API as @%s", application.bot.username)
        if application.post_init is not None:
            await application.post_init(application)
        if poll_timeout is not None and application.updater is not None:
            await application.updater.start_polling(
                timeout=timedelta(seconds=poll_timeout),
                allowed_updates=list(ALLOWED_UPDATES),
                bootstrap_retries=-1,  # deleteWebhook: retried, as getMe was
                error_callback=polling_failed,
            )
        if webhook is not None:
            await webhook.start()  # updates accepted now wait in the queue until start()
        await application.start()
        if webhook is not None:
            await until_reachable(
                application.bot, "set the webhook", lambda: set_webhook(application, webhook)
            )
            log.info("webhook set: Telegram posts updates to %s", webhook.settings.webhook_endpoint)
        yield application
    finally:
        if webhook is not None:
            await webhook.stop()  # first: no update is accepted that nobody would handle
        if application.updater is not None and application.updater.running:
            await application.updater.stop()
        if isinstance(application.update_queue, SharedUpdates):
            # Before the bot's connection closes: a lane still running would send its reply
            # into a closed client and then mark the update done, losing that reply.
            await application.update_queue.stop()
        if application.running:
            await application.stop()
        await application.shutdown()
        if application.post_shutdown is not None:
            await application.post_shutdown(application)


async def set_webhook(application: BotApplication, webhook: WebhookServer) -> bool:
    """``setWebhook`` as ``webhook`` serves it: its URL, its secret, the updates the bot
    handles, and the pending updates kept (a restart, or another replica, loses none)."""
    settings = webhook.settings
    return await application.bot.set_webhook(
        url=settings.webhook_endpoint,
        secret_token=settings.webhook_secret,
        allowed_updates=list(ALLOWED_UPDATES),
        max_connections=settings.max_connections,
        drop_pending_updates=False,
    )
