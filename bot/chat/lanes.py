"""Updates shared by several replicas: received by any, handled once, in order per chat.

Behind a load balancer, Telegram's webhook reaches any replica. ``SharedUpdates.accept`` keeps
the update in the store's ``UpdateQueue`` (PostgreSQL: ``memory.pg.updates``) before the
webhook answers 200, so Telegram forgets it only once it is safe; a second delivery of the
same update id is dropped there. Every replica then claims lanes from the queue, a lane being
one chat's waiting updates leased to one replica, and handles them one after another through
``Application.process_update``; up to ``max_lanes`` chats at once per replica, as
``bot.chat.updates`` does within one process. So a chat's updates run in order whichever
replica received them, and two chats never wait for each other.

A lease lasts ``lease`` seconds and is renewed while its lane is handled (at every update, and
every third of a lease by a heartbeat, so a long model turn keeps it). A replica that is
killed stops renewing: once its leases run out, another replica claims those lanes and
handles the update that was in progress again, then the rest; no update is lost, and the
store makes the repeat harmless where it matters (``/remember`` stores a message once:
``Namespace.add``'s ``source``). The queue counts such unfinished tries per update; as in
``bot.chat.inbox``, one that was in progress during ``ALONE_AFTER`` crashes is handled alone on
its replica (the other lanes there wait), and one with ``MAX_TRIES`` is set aside and the
admins are told. A clean stop gives back its lanes and the try it cut short.

Replicas learn of new work by polling the queue every ``poll`` seconds (cheap: one indexed
query), and at once when they received the update themselves.

The database down. An update the queue cannot keep is not accepted, and Telegram keeps it: the
webhook answers 503 (``accept`` raises the store's error) and Telegram posts it again later;
by polling, ``put`` tries again until the queue takes it, and the next ``getUpdates``, which
would confirm it, waits meanwhile. Once the database answers, it is queued behind its chat's
earlier updates and handled in order. No update is handled outside the queue: without the
database a replica cannot know whether that chat's earlier updates wait there, or are being
handled by another replica, and an update handled at once would overtake them (issue 23: in
an outage of 8-10 s, up to 6 chats of 40 had memories stored out of order). For
``REFUSE_SECONDS`` after a refusal updates are refused without asking the database again
(each try waits up to the pool's timeout, holding a thread); then the queue is tried again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable
from typing import Any

from telegram import Update
from telegram.ext import Application

from bot.chat.inbox import ALONE_AFTER, MAX_TRIES, Pending
from bot.chat.updates import lane_key
from memory.errors import MemoryStoreError
from memory.interface import Delivery, Lane, UpdateQueue

log = logging.getLogger(__name__)

LEASE_SECONDS = 30.0
POLL_SECONDS = 0.25
MAX_LANES = 64  # chats handled at once by one replica
CLAIM_BATCH = 16  # waiting updates fetched with a lane
KEEP_HANDLED_SECONDS = 86_400.0  # a handled update's id is remembered this long
FORGET_EVERY_SECONDS = 600.0
FIRST_BACKOFF, MAX_BACKOFF = 0.5, 15.0  # waits while the database refuses
REFUSE_SECONDS = 5.0  # after the queue refused an update, the next ones are refused this long

# Told of an update set aside (the admins are: ``bot.chat.failures``).
SetAside = Callable[[Application[Any, Any, Any, Any, Any, Any], Pending], Awaitable[None]]


def lane_of(update: dict[str, Any]) -> str:
    """The lane of an update as Telegram sent it: the same as within one process
    (``bot.chat.updates.lane_key``: its chat, else its user, else the shared one)."""
    return lane_key(Update.de_json(update, None))


def replica_name() -> str:
    """This process among the replicas: host, pid and a random tag (a pid can come back)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


class SharedUpdates(asyncio.Queue[object]):
    """This replica's share of the updates in ``queue``, and the Application's update queue.

    The webhook hands updates to ``accept``; polling (python-telegram-bot's ``Updater``) puts
    them in this queue, which accepts them the same way instead of queueing them (so they are
    in the database before the next ``getUpdates`` confirms them). ``start`` claims and
    handles lanes until ``stop``.
    """

    def __init__(
        self,
        queue: UpdateQueue,
        *,
        set_aside: SetAside | None = None,
        lease: float = LEASE_SECONDS,
        poll: float = POLL_SECONDS,
        max_lanes: int = MAX_LANES,
        owner: str | None = None,
    ) -> None:
        if lease <= 0 or poll <= 0 or max_lanes < 1:
            raise ValueError("lease and poll must be positive, max_lanes at least 1")
        super().__init__()
        self.application: Application[Any, Any, Any, Any, Any, Any] | None = None
        self.queue = queue
        self.owner = owner or replica_name()
        self.lease, self.poll, self.max_lanes = lease, poll, max_lanes
        self._set_aside = set_aside
        self._wake = asyncio.Event()
        self._lanes: set[asyncio.Task[None]] = set()
        self._runner: asyncio.Task[None] | None = None
        self._handling = 0  # updates being handled now on this replica
        self._alone = asyncio.Lock()  # held while one update is handled alone
        self._failing = False
        self._refusal = ""  # why the queue last refused an update
        self._refuse_until = 0.0  # loop time until which updates are refused without trying

    @property
    def running(self) -> bool:
        """Whether lanes are being claimed."""
        return self._runner is not None and not self._runner.done()

    async def accept(self, update: dict[str, Any]) -> None:
        """Keep ``update`` in the queue (durable on return) and wake this replica; the store's
        error if the database refuses it (then Telegram must send it again)."""
        lane = lane_of(update)
        loop = asyncio.get_running_loop()
        if loop.time() < self._refuse_until:
            raise MemoryStoreError(f"not tried again so soon: {self._refusal}")
        try:
            new = await asyncio.to_thread(self.queue.receive, update, lane)
        except MemoryStoreError as e:
            self._failed(e)
            self._refusal = e.message
            self._refuse_until = loop.time() + REFUSE_SECONDS
            raise
        self._recovered()
        if new:
            self._wake.set()
        else:
            log.info("update %s delivered again; already received", update["update_id"])

    async def put(self, item: object) -> None:
        """An update from polling: ``accept`` it, trying again while the database refuses
        (the next ``getUpdates`` waits, so Telegram keeps it); anything else (the
        Application's stop signal) is queued."""
        if not isinstance(item, Update):
            await super().put(item)
            return
        update = item.to_dict()
        while True:
            try:
                await self.accept(update)
                return
            except MemoryStoreError as e:
                wait = max(self._refuse_until - asyncio.get_running_loop().time(), 0.0)
                log.warning(
                    "update %s not kept (%s); polling waits, trying again in %.1f s",
                    item.update_id,
                    e.message,
                    wait,
                )
                await asyncio.sleep(wait)

    def start(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Claim lanes and handle their updates with ``application`` until ``stop``."""
        self.application = application
        if self._runner is None:
            self._runner = asyncio.create_task(self._run(), name="shared-updates")

    async def stop(self) -> None:
        """Stop claiming, cancel the lanes in progress and give them back (their try too)."""
        runner, self._runner = self._runner, None
        tasks = [*self._lanes, *([runner] if runner is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _run(self) -> None:
        forgot = asyncio.get_running_loop().time()
        backoff = FIRST_BACKOFF
        while True:
            self._wake.clear()
            try:
                await self._claim_all()
                if asyncio.get_running_loop().time() - forgot > FORGET_EVERY_SECONDS:
                    forgot = asyncio.get_running_loop().time()
                    await asyncio.to_thread(self.queue.forget, KEEP_HANDLED_SECONDS)
            except MemoryStoreError as e:
                self._failed(e)
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)
                continue
            self._recovered()
            backoff = FIRST_BACKOFF
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.poll)

    async def _claim_all(self) -> None:
        """Claim free lanes while this replica has room for them."""
        while len(self._lanes) < self.max_lanes:
            claimed = await asyncio.to_thread(self.queue.claim, self.owner, self.lease, CLAIM_BATCH)
            if claimed is None:
                return
            task = asyncio.create_task(self._serve(*claimed), name=f"lane {claimed[0].key}")
            self._lanes.add(task)
            task.add_done_callback(self._lane_ended)

    def _lane_ended(self, task: asyncio.Task[None]) -> None:
        self._lanes.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a lane failed", exc_info=task.exception())
        self._wake.set()  # room for another lane

    async def _serve(self, lane: Lane, deliveries: list[Delivery]) -> None:
        """Handle ``lane``'s updates in order until none waits, renewing its lease."""
        heartbeat = asyncio.create_task(self._heartbeat(lane))
        in_progress: int | None = None
        keep_lease = False  # the database refused: leave the lane to its lease
        try:
            while deliveries:
                for delivery in deliveries:
                    if delivery.tries >= MAX_TRIES:
                        await self._put_aside(delivery)
                        continue
                    in_progress = delivery.update_id
                    if not await asyncio.to_thread(
                        self.queue.start, lane, delivery.update_id, self.lease
                    ):
                        log.warning("lost the lease on lane %r; another replica has it", lane.key)
                        in_progress = None
                        keep_lease = True
                        return
                    await self._handle(delivery)
                    in_progress = None
                    await asyncio.to_thread(self.queue.done, lane, delivery.update_id)
                last = deliveries[-1].update_id
                deliveries = await asyncio.to_thread(self.queue.waiting, lane, last, CLAIM_BATCH)
        except MemoryStoreError as e:
            self._failed(e)
            keep_lease = True  # handled again by whoever claims the lane after its lease
        finally:
            heartbeat.cancel()
            if not keep_lease:
                with contextlib.suppress(MemoryStoreError):  # then the lease runs out instead
                    await asyncio.shield(
                        asyncio.to_thread(self.queue.release, lane, unstarted=in_progress)
                    )

    async def _handle(self, delivery: Delivery) -> None:
        """Run the update's handlers; one that crashed replicas before runs alone here."""
        application = self.application
        assert application is not None, "handling before start"
        update = Update.de_json(delivery.update, application.bot)
        if delivery.tries >= ALONE_AFTER:
            log.warning(
                "update %s was being handled during %d crashes; handling it alone",
                delivery.update_id,
                delivery.tries,
            )
            async with self._alone:
                while self._handling:
                    await asyncio.sleep(0.05)
                self._handling += 1
                try:
                    await application.process_update(update)
                finally:
                    self._handling -= 1
            return
        async with self._alone:  # not while an update is handled alone
            self._handling += 1
        try:
            await application.process_update(update)
        finally:
            self._handling -= 1

    async def _put_aside(self, delivery: Delivery) -> None:
        reason = f"in progress during {delivery.tries} crashes"
        await asyncio.to_thread(self.queue.set_aside, delivery.update_id, reason)
        log.error(
            "update %s was being handled during %d crashes; set aside",
            delivery.update_id,
            delivery.tries,
        )
        if self._set_aside is not None and self.application is not None:
            await self._set_aside(self.application, Pending(delivery.update, delivery.tries))

    async def _heartbeat(self, lane: Lane) -> None:
        while True:
            await asyncio.sleep(self.lease / 3)
            try:
                if not await asyncio.to_thread(self.queue.renew, lane, self.lease):
                    return  # lost: the lane's next ``start`` says so and stops
            except MemoryStoreError as e:
                self._failed(e)

    def _failed(self, error: MemoryStoreError) -> None:
        if not self._failing:
            log.warning("the shared update queue failed (%s); trying again", error.message)
        self._failing = True

    def _recovered(self) -> None:
        if self._failing:
            log.info("the shared update queue works again")
        self._failing = False
