"""Webhook mode: Telegram posts each update to the bot's own web server (aiohttp).

``WebhookServer(settings, accept=..., health=...)`` listens on ``telegram.listen`` and
``telegram.port`` and answers these routes:

- ``POST`` on ``telegram.webhook_path``: one update, as Telegram posts it. Its header
  ``X-Telegram-Bot-Api-Secret-Token`` must be the configured (or derived) secret, compared in
  constant time, checked before the body is read; else 403 (logged at most once a minute, never
  the header's value). A body over 1 MiB is 413; one that is not a JSON object with an integer
  ``update_id`` is 400 (logged). Then ``accept(update)``: it returns once the update is durable,
  and only then does Telegram get its 200, after which it never posts that update again. If
  ``accept`` raises, the answer is 500 (503 for the store's error: it cannot keep updates now)
  and Telegram posts it again later; if it raises ``UpdateRefused`` (an update that can never
  be handled), 400.
- ``GET /healthz/live``: 200 ``{"ok": true}`` whenever the event loop answers: the process
  serves. Route updates by this one: during a database outage a replica still takes its
  requests (and answers 503 to an update it cannot keep, so Telegram posts it again), and a
  file-store bot still answers ``/help`` and says that nothing can be saved now; a balancer
  that dropped every replica for the outage would answer nobody, and take them back only at
  its next check after it.
- ``GET /healthz/ready``: ``health()`` is None when the bot can take updates and store them,
  else a short reason: 200 ``{"ok": true}`` or 503 ``{"ok": false, "reason": ...}``, for
  monitoring and alerts. A check slower than ``HEALTH_TIMEOUT`` is a 503 too. ``GET /healthz``
  is the same check, as before the two were split (existing probes keep working).

Anything else is 404 (405 for another method on a known path). The answer to an update has no
body: Telegram would read a JSON body as a Bot API call to make. A refusal (403, 400, 408, 413)
closes the connection once answered (what is left of the body is read and dropped for 2 s at
most, so that the client gets the answer): a refused client keeps no connection. How many
connections may be open, how long a request's headers may take, and the ``Server`` header
(``cogito``) are ``bot.chat.connections``'s; the body is read under its ``read_timeout`` too
(408 past it, however slowly the bytes trickle).

The two callables are the seam between HTTP and what keeps the updates. One process on the file
store uses ``inbox_accept`` (the inbox, ``bot.chat.inbox``: a second delivery of an update id is
dropped there, the update is fsynced before the 200, then queued for the Application, whose
``ChatOrderedUpdateProcessor`` handles a chat's updates in order; after a crash ``post_init``
handles again what was accepted and not handled) and ``bot_health`` (the Application running,
the store's ``ping``). Replicas sharing PostgreSQL plug in their own.

The server starts after ``post_init`` (the inbox is open, so a second delivery is recognised) and
stops before the Application does (``bot.chat.app.serving``): no update is accepted that nobody
would queue. Stopping never deletes the webhook: other replicas may still be serving it.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import time
import typing
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from aiohttp import web
from telegram import Update
from telegram.ext import Application

from bot.chat import calendar_feed
from bot.chat.connections import (
    AcceptErrors,
    ConnectionLimits,
    Gate,
    Listening,
    listen,
    middleware,
)
from bot.chat.inbox import InboxQueue
from bot.chat.lanes import SharedUpdates
from bot.chat.services import KEY, Services
from bot.config import HEALTH_PATH, LIVE_PATH, READY_PATH
from bot.errors import UpdateRefused
from memory.errors import MemoryStoreError

if TYPE_CHECKING:
    from bot.config import TelegramConfig

AnyApplication = Application[Any, Any, Any, Any, Any, Any]

log = logging.getLogger(__name__)

Accept = Callable[[dict[str, Any]], Awaitable[None]]
Health = Callable[[], Awaitable[str | None]]

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
MAX_BODY = 1024 * 1024  # bytes; Telegram's updates are a few kilobytes
MAX_UPDATE_ID = 2**63 - 1  # what a database's BIGINT holds
HEALTH_TIMEOUT = 5.0  # seconds; a load balancer's probe gives up soon after
REFUSALS_LOGGED_EVERY = 60.0  # seconds between log lines about requests without the secret
STOP_TIMEOUT = 10.0  # seconds the requests in progress get to finish at a stop


class WebhookServer:
    """The HTTP server Telegram posts updates to; ``start()`` / ``stop()``, or ``async with``.

    ``limits`` (default: from the process's file descriptor limit) bound its connections.
    """

    def __init__(
        self,
        settings: TelegramConfig,
        *,
        accept: Accept,
        health: Health,
        limits: ConnectionLimits | None = None,
        routes: Sequence[web.RouteDef] = (),
    ) -> None:
        self.settings = settings
        self.routes = routes  # more to serve (the calendar feed: bot.chat.calendar_feed)
        self.port = settings.port  # the port it listens on, once started
        self.limits = limits or ConnectionLimits()
        self._accept = accept
        self._health = health
        self._secret = settings.webhook_secret.encode()
        self._listening: Listening | None = None
        self._gate: Gate | None = None
        self._accept_errors: AcceptErrors | None = None
        self._refused = 0  # requests without the right secret since the last log line
        self._refusal_logged: float | None = None
        self._last_reason: str | None = None  # of the last health check (logged on change)

    async def start(self) -> None:
        """Listen (``OSError`` if the address cannot be had: in use, not this machine's)."""
        app = web.Application(client_max_size=MAX_BODY, middlewares=[middleware])
        app.router.add_post(self.settings.webhook_path, self._update)
        app.router.add_get(LIVE_PATH, self._live)
        app.router.add_get(READY_PATH, self._healthz)
        app.router.add_get(HEALTH_PATH, self._healthz)  # /healthz/ready's old name
        app.add_routes(self.routes)
        self._listening = listening = await listen(
            app, self.settings.listen, self.settings.port, self.limits, STOP_TIMEOUT
        )
        self._gate, self._accept_errors = listening.gate, AcceptErrors(listening.gate)
        self._accept_errors.install()
        self.port = listening.port
        log.info(
            "webhook server listening on %s:%d (updates on %s, health on %s and %s; "
            "at most %d connections open)",
            self.settings.listen,
            self.port,
            self.settings.webhook_path,
            LIVE_PATH,
            READY_PATH,
            self.limits.max_open,
        )

    async def stop(self) -> None:
        """Stop listening; the requests in progress finish first (up to ``STOP_TIMEOUT``)."""
        listening, self._listening = self._listening, None
        if listening is not None:
            await listening.close()
            log.info("webhook server stopped")
        if self._gate is not None:
            self._gate.pressure.flush()
        if self._accept_errors is not None:
            self._accept_errors.uninstall()
        self._gate = self._accept_errors = None

    async def __aenter__(self) -> WebhookServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _update(self, request: web.Request) -> web.Response:
        header = request.headers.get(SECRET_HEADER)
        if header is None or not hmac.compare_digest(
            header.encode("utf-8", "surrogateescape"), self._secret
        ):
            self._refuse(request, "missing" if header is None else "wrong")
            return closing(web.Response(status=403, text="Forbidden"))
        if (request.content_length or 0) > MAX_BODY:
            return self._too_large(request)
        try:
            async with asyncio.timeout(self.limits.read_timeout):
                body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            return self._too_large(request)
        except TimeoutError:
            log.warning(
                "refused a webhook request from %s: its body took longer than %.0f s",
                request.remote,
                self.limits.read_timeout,
            )
            return closing(web.Response(status=408, text="Request Timeout"))
        try:
            update = json.loads(body)
        except (ValueError, RecursionError) as e:  # not UTF-8, not JSON, or nested past reason
            return self._bad_request(request, f"the body is not JSON ({type(e).__name__})")
        update_id = update.get("update_id") if isinstance(update, dict) else None
        if type(update_id) is not int or not 0 <= update_id <= MAX_UPDATE_ID:
            return self._bad_request(request, "the body is not an update (no integer update_id)")
        try:
            await self._accept(update)
        except UpdateRefused as e:
            return self._bad_request(request, f"update {update_id}: {e.message}")
        except MemoryStoreError as e:  # the store cannot keep it now: Telegram posts it again
            log.warning("could not keep update %s (%s); answered 503", update_id, e.message)
            return web.Response(status=503, text="Service Unavailable")
        except Exception:  # whatever keeping it failed on, Telegram posts it again after a 500
            log.exception("could not accept update %s; answered 500 (posted again)", update_id)
            return web.Response(status=500, text="Internal Server Error")
        return web.Response()

    async def _live(self, request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def _healthz(self, request: web.Request) -> web.Response:
        try:
            reason = await asyncio.wait_for(self._health(), HEALTH_TIMEOUT)
        except TimeoutError:
            reason = f"the health check took longer than {HEALTH_TIMEOUT:.0f} s"
        except Exception as e:  # a failing check is an answer too: not ready, and why
            log.exception("the health check failed")
            reason = f"the health check failed ({type(e).__name__})"
        if reason != self._last_reason:
            if reason is None:
                log.info("healthy again")
            else:
                log.warning("not healthy: %s", reason)
            self._last_reason = reason
        if reason is None:
            return web.json_response({"ok": True})
        return web.json_response({"ok": False, "reason": reason}, status=503)

    def _refuse(self, request: web.Request, how: str) -> None:
        """Log a request without the right secret, at most once a minute (never the value)."""
        self._refused += 1
        now = time.monotonic()
        if self._refusal_logged is None or now - self._refusal_logged >= REFUSALS_LOGGED_EVERY:
            log.warning(
                "refused %d webhook request(s) with a %s secret token (the last from %s); "
                "Telegram sends the one setWebhook was given",
                self._refused,
                how,
                request.remote,
            )
            self._refused, self._refusal_logged = 0, now

    def _too_large(self, request: web.Request) -> web.Response:
        log.warning("refused a webhook request over %d bytes from %s", MAX_BODY, request.remote)
        return closing(web.Response(status=413, text="Request Entity Too Large"))

    def _bad_request(self, request: web.Request, problem: str) -> web.Response:
        log.warning("refused a webhook request from %s: %s", request.remote, problem)
        return closing(web.Response(status=400, text="Bad Request"))


def closing(response: web.Response) -> web.Response:
    """``response``, after which the connection closes (nothing more of the request is read)."""
    response.force_close()
    return response


def inbox_accept(application: AnyApplication) -> Accept:
    """``accept`` for one process: the update fsynced in the inbox, then queued for the
    Application (``InboxQueue.put_durably``); a second delivery of its id is dropped there."""

    async def accept(data: dict[str, Any]) -> None:
        try:
            update = Update.de_json(data, application.bot)
        except Exception as e:  # foreign input python-telegram-bot cannot read, however wrong
            message = f"not an update python-telegram-bot can read ({type(e).__name__}: {e})"
            raise UpdateRefused(message, int(data["update_id"])) from e
        queue = application.update_queue
        if isinstance(queue, InboxQueue):
            await queue.put_durably(update, data)
        elif isinstance(queue, SharedUpdates):  # replicas: into the database, as received
            await queue.accept(data)
        else:
            await queue.put(update)

    return accept


def bot_health(application: AnyApplication) -> Health:
    """``health`` for one process: the Application running, its replica its own (replicas), and
    its store's ``ping()``.

    The ping runs in a thread (store work never runs on the event loop), one at a time: checks
    that arrive while one is running wait for it, so a store that hangs holds one thread, not
    one per probe.
    """
    store = typing.cast(Services, application.bot_data[KEY]).store
    running: asyncio.Future[None] | None = None
    last_error: str | None = None

    async def health() -> str | None:
        nonlocal running, last_error
        if not application.running:
            return "the bot is not running"
        queue = application.update_queue
        if isinstance(queue, SharedUpdates) and not queue.running:
            return "the bot is not handling the shared updates"
        if isinstance(queue, SharedUpdates) and not queue.present:
            return f"another process is replica {queue.identity} (set [replicas] identity)"
        if running is None or running.done():
            running = asyncio.ensure_future(asyncio.to_thread(store.ping))
            running.add_done_callback(lambda done: done.cancelled() or done.exception())
        try:
            await asyncio.shield(running)
        except MemoryStoreError as e:
            if e.message != last_error:
                log.warning("the store cannot be reached: %s", e.message)
            last_error = e.message
            return f"the store cannot be reached ({e.code})"
        last_error = None
        return None

    return health


def inbox_server(application: AnyApplication) -> WebhookServer:
    """The webhook server of one process on the file store (``inbox_accept``, ``bot_health``),
    as ``[telegram]`` of the application's config says; with the calendar feed too, unless
    ``[calendar]`` gives it a server of its own (``bot.chat.calendar_feed``)."""
    found = typing.cast(Services, application.bot_data[KEY])
    calendar = found.config.calendar
    routes = calendar_feed.routes(found) if calendar.enabled and not calendar.listen else []
    return WebhookServer(
        found.config.telegram,
        accept=inbox_accept(application),
        health=bot_health(application),
        routes=routes,
    )
