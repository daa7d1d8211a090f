"""Telegram's webhook delivery: ``setWebhook`` and the updates POSTed to the bot as Telegram does.

Once the bot has called ``setWebhook``, every pending update (``FakeBotAPI.updates``, where
``push`` puts them) is POSTed to its URL: the update as JSON, with the header
``X-Telegram-Bot-Api-Secret-Token`` when a secret was set. At most ``max_connections``
deliveries are in flight, and the updates of one chat go strictly one after another: the next
only once the previous got a 2xx. A failed delivery (connection refused or reset, a timeout, any
other status) is tried again after a short wait, doubling from ``RETRY_FIRST`` to ``RETRY_MAX``,
until it succeeds or the webhook is deleted. Every attempt is recorded in ``deliveries``
(``Delivery``: the update id, the status or the error) so that a test can count redeliveries;
``lose_answers(n)`` makes the next ``n`` 2xx answers count as lost on the way back (the bot
handled the request, Telegram never heard: it delivers again).

``getWebhookInfo`` tells the URL, the pending count and the last error; ``getUpdates`` while a
webhook is set is Telegram's 409 Conflict; ``deleteWebhook`` stops the deliveries (the pending
updates stay for ``getUpdates``, unless ``drop_pending_updates``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from typing import Any

import aiohttp

from .telegram_protocol import ApiError, bad_request

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
RETRY_FIRST = 0.05  # seconds before the first redelivery; doubled after each failure
RETRY_MAX = 1.0
DELIVERY_TIMEOUT = 10.0  # seconds the bot has to answer one POST
CONFLICT = ApiError(
    409,
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first",
)


@dataclass(frozen=True)
class Delivery:
    """One attempt to POST an update to the webhook: its HTTP status, or the error."""

    update_id: int
    status: int | None
    error: str = ""
    lost: bool = False  # answered 2xx, counted as lost on the way back (``lose_answers``)

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300 and not self.lost


def chat_of(update: dict[str, Any]) -> object:
    """The lane of an update: its chat (or, without one, its sender)."""
    for key in ("message", "edited_message", "channel_post", "edited_channel_post"):
        if isinstance(update.get(key), dict):
            return ("chat", update[key].get("chat", {}).get("id"))
    query = update.get("callback_query")
    if isinstance(query, dict) and isinstance(query.get("message"), dict):
        return ("chat", query["message"].get("chat", {}).get("id"))
    for value in update.values():
        if isinstance(value, dict) and isinstance(value.get("from"), dict):
            return ("user", value["from"].get("id"))
    return None


class TelegramWebhook:
    """The webhook's state and deliveries; mixed into ``FakeBotAPI`` (``updates``, ``_closing``)."""

    updates: list[dict[str, Any]]
    _closing: bool

    def _init_webhook(self) -> None:
        self.webhook_url = ""
        self.webhook_secret = ""
        self.webhook_max_connections = 40
        self.webhook_allowed_updates: list[str] | None = None
        self.deliveries: list[Delivery] = []
        self.delivery_timeout = DELIVERY_TIMEOUT
        self._last_error: tuple[int, str] | None = None
        self._lose = 0
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self._webhook_changed = asyncio.Event()
        self._deliverer: asyncio.Task[None] | None = None
        self._session: aiohttp.ClientSession | None = None

    def lose_answers(self, times: int = 1) -> None:
        """Count the next ``times`` 2xx answers as lost on the way back: delivered again."""
        self._lose += times

    def delivered(self, update_id: int) -> list[Delivery]:
        """Every attempt to deliver the update ``update_id``, oldest first."""
        return [d for d in self.deliveries if d.update_id == update_id]

    async def wait_delivered(self, update_id: int, timeout: float = 10.0) -> list[Delivery]:
        """Until ``update_id`` was delivered (a 2xx); every attempt. ``timeout`` only keeps a
        broken test from hanging."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not any(d.ok for d in self.delivered(update_id)):
            if loop.time() > deadline:
                raise AssertionError(f"update {update_id} never delivered: {self.deliveries}")
            self._webhook_changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._webhook_changed.wait(), 0.1)
        return self.delivered(update_id)

    def _wake_webhook(self) -> None:
        self._webhook_changed.set()

    def _start_webhook(self) -> None:
        """Deliver to ``webhook_url`` (if set and not delivering yet)."""
        if self.webhook_url and self._deliverer is None:
            self._session = aiohttp.ClientSession()
            self._deliverer = asyncio.create_task(self._deliver_all())

    async def _stop_webhook(self) -> None:
        """Stop delivering (the pending updates stay); called by deleteWebhook and close."""
        deliverer, self._deliverer = self._deliverer, None
        tasks = [*self._in_flight.values(), *([deliverer] if deliverer else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._in_flight.clear()
        if self._session is not None:
            await self._session.close()
            self._session = None

    # -- Bot API methods ---------------------------------------------------------------------

    async def _api_setWebhook(self, params: dict[str, Any], files: Any) -> Any:
        url = str(params.get("url") or "")
        if url and not url.startswith(("https://", "http://127.0.0.1", "http://localhost")):
            raise bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        secret = str(params.get("secret_token") or "")
        max_connections = int(params.get("max_connections") or 40)
        if not 1 <= max_connections <= 100:
            raise bad_request("bad webhook: max_connections must be between 1 and 100")
        allowed = params.get("allowed_updates")
        allowed = list(allowed) if allowed is not None else None
        same = (url, secret, max_connections) == (
            self.webhook_url,
            self.webhook_secret,
            self.webhook_max_connections,
        )
        if not same or params.get("drop_pending_updates"):  # the same again changes nothing
            await self._stop_webhook()
        if params.get("drop_pending_updates"):
            self.updates.clear()
        self.webhook_url, self.webhook_secret = url, secret
        self.webhook_max_connections = max_connections
        self.webhook_allowed_updates = allowed
        self._start_webhook()
        return True

    async def _api_deleteWebhook(self, params: dict[str, Any], files: Any) -> Any:
        await self._stop_webhook()
        self.webhook_url = ""
        if params.get("drop_pending_updates"):
            self.updates.clear()
        return True

    async def _api_getWebhookInfo(self, params: dict[str, Any], files: Any) -> Any:
        info: dict[str, Any] = {
            "url": self.webhook_url,
            "has_custom_certificate": False,
            "pending_update_count": len(self.updates),
        }
        if self.webhook_url:
            info["max_connections"] = self.webhook_max_connections
            if self.webhook_allowed_updates is not None:
                info["allowed_updates"] = self.webhook_allowed_updates
        if self._last_error is not None:
            info["last_error_date"], info["last_error_message"] = self._last_error
        return info

    def _check_polling(self) -> None:
        """``getUpdates`` is refused while a webhook is set."""
        if self.webhook_url:
            raise CONFLICT

    # -- delivering --------------------------------------------------------------------------

    async def _deliver_all(self) -> None:
        """Start a delivery for each chat's oldest pending update, within max_connections."""
        while not self._closing:
            busy: set[object] = set()
            for update in list(self.updates):
                lane = chat_of(update)
                if lane in busy:
                    continue  # an earlier update of this chat is not delivered yet
                busy.add(lane)
                update_id = int(update["update_id"])
                if update_id in self._in_flight:
                    continue
                if len(self._in_flight) >= self.webhook_max_connections:
                    break
                self._in_flight[update_id] = asyncio.create_task(self._deliver(update))
            self._webhook_changed.clear()
            with contextlib.suppress(TimeoutError):  # also notices updates changed directly
                await asyncio.wait_for(self._webhook_changed.wait(), 0.2)

    async def _deliver(self, update: dict[str, Any]) -> None:
        """POST ``update`` until the bot answers 2xx; then it is no longer pending."""
        update_id = int(update["update_id"])
        wait = RETRY_FIRST
        try:
            while True:
                delivery = await self._post(update)
                self.deliveries.append(delivery)
                self._wake_webhook()
                if delivery.ok:
                    self.updates = [u for u in self.updates if u["update_id"] != update_id]
                    return
                reason = delivery.error or f"Wrong response from the webhook: {delivery.status}"
                self._last_error = (int(time.time()), reason)
                await asyncio.sleep(wait)
                wait = min(wait * 2, RETRY_MAX)
        finally:
            self._in_flight.pop(update_id, None)
            self._wake_webhook()

    async def _post(self, update: dict[str, Any]) -> Delivery:
        update_id = int(update["update_id"])
        assert self._session is not None
        headers = {SECRET_HEADER: self.webhook_secret} if self.webhook_secret else {}
        timeout = aiohttp.ClientTimeout(total=self.delivery_timeout)
        try:
            async with self._session.post(
                self.webhook_url, json=update, headers=headers, timeout=timeout
            ) as response:
                await response.read()
                status = response.status
        except (aiohttp.ClientError, TimeoutError) as e:
            return Delivery(update_id, None, f"{type(e).__name__}: {e}")
        if 200 <= status < 300 and self._lose:
            self._lose -= 1
            return Delivery(update_id, status, "the answer was lost", lost=True)
        return Delivery(update_id, status)
