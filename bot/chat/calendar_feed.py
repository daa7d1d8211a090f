"""The ``/calendar`` feed over HTTP: ``GET /calendar/<token>.ics`` answers a chat's reminders.

Where it is served (``feed_base``):

- In webhook mode, on the webhook server (``bot.chat.webhook``), at the ``webhook_url``'s
  scheme and host, or at ``[calendar] public_url`` if set.
- With ``[calendar] listen`` set (polling mode, or to keep the feed off the webhook's port), on
  a small server of its own, ``CalendarServer``, on ``listen`` and ``port``; ``public_url``
  says where calendar applications reach it (a reverse proxy giving it https, usually).

Without either, ``/calendar`` says how to turn one on; ``/export ics`` works everywhere.

The answer is the same file as ``/export ics`` (``bot.core.calendar_export``, in the language
and under the title of whoever made the link), ``text/calendar``, with an ``ETag``: a calendar
polling an unchanged feed gets ``304 Not Modified``. A token that is unknown, revoked by
``/calendar reset`` or not even of the right shape gets the same ``404 Not Found`` as any path
the server does not have: nothing tells a guesser that the path exists. The store is read in a
worker thread; if it cannot be read, ``503``. Connections are gated as the webhook's are
(``bot.chat.connections``: how many may be open, how long a request may take), with a smaller
cap: calendars fetch a feed now and then.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from urllib.parse import urlsplit

from aiohttp import web

from bot.chat.connections import ConnectionLimits, Listening, listen, middleware
from bot.chat.services import Services
from bot.config import Config
from bot.core import calendar_export, calendar_feeds, reminders
from bot.view.i18n import t
from memory.errors import MemoryStoreError

log = logging.getLogger(__name__)

ROUTE = "/calendar/{name}"
MAX_OPEN = 64  # connections of the calendar's own server
STOP_TIMEOUT = 5.0  # seconds the requests in progress get to finish at a stop


def feed_base(config: Config) -> str | None:
    """Where the feed's URLs start (scheme, host, any path prefix); None: not served."""
    calendar = config.calendar
    if not calendar.enabled:
        return None
    if calendar.public_url:
        return calendar.public_url.rstrip("/")
    if calendar.listen or not config.telegram.webhook:
        return None  # a server of its own needs public_url (checked at start-up)
    parts = urlsplit(config.telegram.webhook_url)
    return f"{parts.scheme}://{parts.netloc}"


def feed_url(base: str, token: str) -> str:
    """The subscription URL of the feed ``token``."""
    return f"{base}/calendar/{token}.ics"


def calendar_name(language: str, title: str | None) -> str:
    """The calendar's name: "Reminders", or "Reminders · <group>"."""
    if title:
        return t(language, "calendar_name_titled_plain", title=title)
    return t(language, "calendar_name_plain")


def feed_file(services: Services, token: str, now: datetime) -> bytes | None:
    """The iCalendar file of the feed ``token`` (None: no such feed). Store work: off the
    event loop."""
    feed = calendar_feeds.find(services.store, token)
    if feed is None:
        return None
    return calendar_export.calendar_of(
        reminders.every(services.store, feed.namespace),
        namespace=feed.namespace,
        name=calendar_name(feed.language, feed.title),
        untitled=t(feed.language, "reminder_untitled_plain"),
        now=now,
        feed=True,
    )


def routes(services: Services) -> list[web.RouteDef]:
    """The feed's route, for whichever server serves it."""

    async def serve(request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        token = name.removesuffix(".ics") if name.endswith(".ics") else ""
        if not calendar_feeds.TOKEN.fullmatch(token):
            raise web.HTTPNotFound()  # the same answer as an unknown path: no hint
        now = datetime.now(UTC)
        try:
            body = await services.workers.call(lambda: feed_file(services, token, now))
        except MemoryStoreError as e:
            log.warning("could not read a calendar feed (%s); answered 503", e.message)
            return web.Response(status=503, text="Service Unavailable")
        if body is None:
            raise web.HTTPNotFound()
        tag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        headers = {"ETag": tag, "Cache-Control": "private, no-cache"}
        if tag in request.headers.get("If-None-Match", ""):
            return web.Response(status=304, headers=headers)
        return web.Response(
            body=body,
            content_type="text/calendar",
            charset="utf-8",
            headers={**headers, "Content-Disposition": 'inline; filename="reminders.ics"'},
        )

    return [web.get(ROUTE, serve)]


class ListenFailed(OSError):
    """The calendar's own server could not listen on its address (in use, not this
    machine's)."""


class CalendarServer:
    """The feed's own HTTP server (``[calendar] listen``); ``start()`` / ``stop()``."""

    def __init__(
        self, host: str, port: int, services: Services, *, limits: ConnectionLimits | None = None
    ) -> None:
        self.host = host
        self.port = port  # the port it listens on, once started
        self.limits = limits or ConnectionLimits(max_open=MAX_OPEN)
        self._routes: Sequence[web.RouteDef] = routes(services)
        self._listening: Listening | None = None

    async def start(self) -> None:
        """Listen (``ListenFailed`` if the address cannot be had)."""
        app = web.Application(middlewares=[middleware])
        app.add_routes(self._routes)
        try:
            self._listening = await listen(app, self.host, self.port, self.limits, STOP_TIMEOUT)
        except OSError as e:
            raise ListenFailed(e.errno, e.strerror or str(e)) from e
        self.port = self._listening.port
        log.info("calendar feed listening on %s:%d", self.host, self.port)

    async def stop(self) -> None:
        """Stop listening; the requests in progress finish first (up to ``STOP_TIMEOUT``)."""
        listening, self._listening = self._listening, None
        if listening is not None:
            await listening.close()
            log.info("calendar feed stopped")


__all__ = [
    "CalendarServer",
    "ListenFailed",
    "calendar_name",
    "feed_base",
    "feed_file",
    "feed_url",
    "routes",
]
