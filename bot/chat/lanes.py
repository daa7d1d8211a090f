"""Updates shared by several replicas: received by any, handled once, in order per chat.

Behind a load balancer, Telegram's webhook reaches any replica. ``SharedUpdates.accept`` keeps
the update in the store's ``UpdateQueue`` (PostgreSQL: ``memory.pg.updates``) before the
webhook answers 200, so Telegram forgets it only once it is safe; a second delivery of the
same update id is dropped there. Every replica then claims lanes from the queue, a lane being
one chat's waiting updates leased to one replica, and handles them one after another through
``Application.process_update``; up to ``max_lanes`` chats at once per replica, as
``bot.chat.updates`` does within one process. So a chat's updates run in order whichever
replica received them, and two chats never wait for each other.

The replica that receives a chat's update claims the chat's lane in the same statement if no
replica holds it (room permitting) and handles it at once; after each update, an advance marks
it done and starts the chat's next, or gives the lane back when none waits. Receives and
advances go to the database together (``bot.chat.steps``): under load an update costs about one
round trip of the queue's besides its handler's, two when alone. Lanes that no receive claimed
(their holder gave them up, died, or had no room) are claimed by polling. An update is
kept with the namespace it reads and changes (``namespace_of``, the chat's policy: its lane is
its chat), and the statement that starts it also reads that namespace's version: its handlers'
view of the store starts there (``memory.views``), so a replica that holds that version (the
chat's last update was handled here, and no other process wrote since) reads without asking
the database, and its write is the handler's one round trip (``memory.pg.backend``).

A lease lasts ``lease`` seconds and is renewed while its lane is handled (at every update, and
by a heartbeat when no update renewed it for a third of a lease, so a long model turn keeps
it). A replica that is killed stops renewing: once its leases run out, another replica claims
those lanes and handles the update that was in progress again, then the rest; no update is
lost, and the store makes the repeat harmless where it matters (``/remember`` stores a message
once: ``Namespace.add``'s ``source``). The queue counts such unfinished tries per update; as in
``bot.chat.inbox``, one that was in progress during ``ALONE_AFTER`` crashes is handled alone on
its replica (the other lanes there wait), and one with ``MAX_TRIES`` is set aside and the
admins are told. A clean stop gives back its lanes and the try it cut short.

A handler that hangs does not hold its chat: past ``deadline`` (``[telegram]
handler_deadline_seconds``) its handling is cancelled, the update set aside (``set_aside`` in
the queue, the reason kept) and the admins told, and the lane goes on with the chat's next
update (``bot.chat.deadlines``). The heartbeat renews no lease for a handler past its deadline
(and its grace): if the lane cannot go on here, its lease runs out and another replica takes it.

A restarted replica does not wait for its own leases. A replica is ``identity`` (``[replicas]
identity``, or its host and port: stable across restarts), and ``start`` enters the queue as
that identity with a fresh incarnation (``UpdateQueue.enter``): holding the identity proves its
previous process dead, whose leases are given up then, so its chats move again as soon as it
is back rather than after ``lease`` seconds. A live process that is already that identity
makes ``start`` fail (``StoreInUse``, after ``ENTER_WAIT`` seconds for a dead one's session to
end). A replica checks every ``PRESENCE_EVERY`` seconds, before claiming, that it still is
itself (``present``); if another process took the identity meanwhile (a second replica
misconfigured with the same one, while this one's session was lost), it gives its lanes up and
claims none until the identity is free again. Replicas learn of work they did not receive by
polling the queue every ``poll`` seconds (cheap: one indexed query).

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
from collections.abc import Callable
from typing import Any, Protocol

from telegram import Update
from telegram.ext import Application

from bot.chat.deadlines import CANCEL_GRACE, reason, within
from bot.chat.inbox import ALONE_AFTER, MAX_TRIES, Pending
from bot.chat.steps import Steps
from bot.chat.updates import lane_key
from memory.errors import MemoryStoreError, StoreInUse
from memory.queue import Delivery, Lane, Receive, Turn, UpdateQueue
from memory.views import one_view

log = logging.getLogger(__name__)

LEASE_SECONDS = 30.0
POLL_SECONDS = 0.25
MAX_LANES = 64  # chats handled at once by one replica
KEEP_HANDLED_SECONDS = 86_400.0  # a handled update's id is remembered this long
FORGET_EVERY_SECONDS = 600.0
FIRST_BACKOFF, MAX_BACKOFF = 0.5, 15.0  # waits while the database refuses
REFUSE_SECONDS = 5.0  # after the queue refused an update, the next ones are refused this long
DEADLINE_SECONDS = 300.0  # [telegram] handler_deadline_seconds' default
ENTER_WAIT = 5.0  # seconds a start waits for its identity, held by a process that just died
PRESENCE_EVERY = 1.0  # seconds between checks that this process still is its replica


class SetAside(Protocol):
    """Told of an update set aside (the admins are: ``bot.chat.failures``); ``overdue``: the
    deadline it ran past, None after crashes."""

    async def __call__(
        self,
        application: Application[Any, Any, Any, Any, Any, Any],
        pending: Pending,
        *,
        overdue: float | None = None,
    ) -> None: ...


class SharedUpdates(asyncio.Queue[object]):
    """This replica's share of the updates in ``queue``, and the Application's update queue.

    The webhook hands updates to ``accept``; polling (python-telegram-bot's ``Updater``) puts
    them in this queue, which accepts them the same way instead of queueing them (so they are
    in the database before the next ``getUpdates`` confirms them). ``start`` enters the queue
    as the replica ``identity``, then claims and handles lanes until ``stop``.
    """

    def __init__(
        self,
        queue: UpdateQueue,
        *,
        identity: str,
        set_aside: SetAside | None = None,
        lease: float = LEASE_SECONDS,
        poll: float = POLL_SECONDS,
        max_lanes: int = MAX_LANES,
        deadline: float = DEADLINE_SECONDS,
        namespace_of: Callable[[Update], str | None] | None = None,
    ) -> None:
        if lease <= 0 or poll <= 0 or deadline <= 0 or max_lanes < 1:
            raise ValueError("lease, poll and deadline must be positive, max_lanes at least 1")
        super().__init__()
        self.application: Application[Any, Any, Any, Any, Any, Any] | None = None
        self.queue = queue
        self.identity = identity
        self.owner = ""  # identity#incarnation, once started
        self.lease, self.poll, self.max_lanes = lease, poll, max_lanes
        self.deadline = deadline
        self._namespace_of = namespace_of
        self._set_aside = set_aside
        self._wake = asyncio.Event()
        self._lanes: set[asyncio.Task[None]] = set()
        self._runner: asyncio.Task[None] | None = None
        self._present = False  # this process is the replica ``identity`` (last checked)
        self._checked = 0.0  # loop time of that check
        self._overdue_at: dict[Lane, float] = {}  # lane -> when its handler's deadline passes
        self._renewed_at: dict[Lane, float] = {}  # lane -> when its lease was last renewed
        self.handling = 0  # updates being handled now on this replica
        self._alone = asyncio.Lock()  # held while one update is handled alone
        self._failing = False
        self._refusal = ""  # why the queue last refused an update
        self._refuse_until = 0.0  # loop time until which updates are refused without trying
        self.steps = Steps(queue, lease, self._taken)

    @property
    def running(self) -> bool:
        """Whether lanes are being claimed."""
        return self._runner is not None and not self._runner.done()

    @property
    def present(self) -> bool:
        """Whether this process is its replica (False: another one took the identity)."""
        return self._present

    async def accept(self, update: dict[str, Any]) -> None:
        """Keep ``update`` in the queue (durable on return) and wake this replica; the store's
        error if the database refuses it (then Telegram must send it again)."""
        parsed = Update.de_json(update, None)
        namespace = self._namespace_of(parsed) if self._namespace_of is not None else None
        lane = lane_key(parsed)
        loop = asyncio.get_running_loop()
        if loop.time() < self._refuse_until:
            raise MemoryStoreError(f"not tried again so soon: {self._refusal}")
        # With room, the lane is claimed as the update is kept (if no replica holds it).
        owner = self.owner if self._has_room() else ""
        try:
            received = await self.steps.receive(Receive(update, lane, owner, namespace))
        except MemoryStoreError as e:
            self._failed(e)
            self._refusal = e.message
            self._refuse_until = loop.time() + REFUSE_SECONDS
            raise
        self._recovered()
        if not received.new:
            log.info("update %s delivered again; already received", update["update_id"])

    def _taken(self, turn: Turn, asked: float) -> bool:
        """A receive leased ``turn``'s lane (asked at ``asked``): handled here, unless this
        replica stopped (or was replaced) meanwhile (False: ``Steps`` gives it back)."""
        room = self._has_room()
        if room:
            self._serve_turn(turn, asked)
        return room

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

    async def start(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Be the replica ``identity`` (its previous process's lanes given up at once), then
        claim lanes and handle their updates with ``application`` until ``stop``.
        ``StoreInUse`` if a live process is that replica."""
        self.application = application
        if self._runner is not None:
            return
        loop = asyncio.get_running_loop()
        give_up_at = loop.time() + ENTER_WAIT
        while True:
            try:
                self.owner = await asyncio.to_thread(self.queue.enter, self.identity)
                break
            except StoreInUse:  # a process that just died may hold it a moment longer
                if loop.time() >= give_up_at:
                    raise
                await asyncio.sleep(0.25)
        log.info("handling the shared updates as replica %s", self.owner)
        self._present, self._checked = True, loop.time()
        self._runner = asyncio.create_task(self._run(), name="shared-updates")

    async def stop(self) -> None:
        """Stop claiming, cancel the lanes in progress and give them back (their try too),
        and stop being the replica."""
        runner, self._runner = self._runner, None
        tasks = [*self._lanes, *([runner] if runner is not None else [])]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.owner:
            await asyncio.to_thread(self.queue.leave)
            self.owner, self._present = "", False

    async def _run(self) -> None:
        forgot = asyncio.get_running_loop().time()
        backoff = FIRST_BACKOFF
        while True:
            self._wake.clear()
            try:
                if await self._still_present():
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

    async def _still_present(self) -> bool:
        """Whether this process is still its replica (checked every ``PRESENCE_EVERY``); if
        another took the identity, this one's lanes are given up."""
        now = asyncio.get_running_loop().time()
        if now - self._checked < PRESENCE_EVERY:
            return self._present
        present = await asyncio.to_thread(self.queue.present)
        self._checked = now
        if self._present and not present:
            log.error(
                "another process is replica %r now: two replicas must not share an identity "
                "([replicas] identity). This one gives up its lanes and handles nothing until "
                "the identity is free again",
                self.identity,
            )
            lanes = list(self._lanes)
            for task in lanes:
                task.cancel()
            await asyncio.gather(*lanes, return_exceptions=True)
        elif present and not self._present:
            log.info("this process is replica %s again", self.owner)
        self._present = present
        return present

    def _has_room(self) -> bool:
        """Whether this replica may take a lane now: running, itself, below ``max_lanes``."""
        return self.running and self._present and len(self._lanes) < self.max_lanes

    async def _claim_all(self) -> None:
        """Claim free lanes while this replica has room for them."""
        while len(self._lanes) < self.max_lanes:
            asked = asyncio.get_running_loop().time()
            turn = await asyncio.to_thread(self.queue.claim, self.owner, self.lease)
            if turn is None:
                return
            self._serve_turn(turn, asked)

    def _serve_turn(self, turn: Turn, renewed_at: float) -> None:
        """Handle the lane ``turn`` leased (its lease renewed at ``renewed_at`` or later)."""
        self._renewed_at[turn.lane] = renewed_at
        task = asyncio.create_task(self._serve(turn), name=f"lane {turn.lane.key}")
        self._lanes.add(task)
        task.add_done_callback(self._lane_ended)

    def _lane_ended(self, task: asyncio.Task[None]) -> None:
        full = len(self._lanes) >= self.max_lanes
        self._lanes.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a lane failed", exc_info=task.exception())
        if full:  # room again: lanes may wait that no replica had room for (else: the poll)
            self._wake.set()

    async def _serve(self, turn: Turn) -> None:
        """Handle ``turn``'s lane, update after update, until none waits (one ``advance``
        after each: done, and the next started under a renewed lease)."""
        lane, delivery, more = turn.lane, turn.delivery, turn.more
        heartbeat = asyncio.create_task(self._heartbeat(lane))
        keep_lease = False  # the database refused, or the lease is lost: no release
        released = False
        loop = asyncio.get_running_loop()
        try:
            after: int | None = None  # the update last handled (or set aside)
            while True:
                if delivery is None:
                    asked = loop.time()
                    turn = await self.steps.advance(lane, after, more=more)
                    if turn.lost:
                        log.warning("lost the lease on lane %r; another replica has it", lane.key)
                        keep_lease = True
                        return
                    if turn.released:
                        released = True
                        return
                    self._renewed_at[lane] = asked
                    delivery, more = turn.delivery, turn.more
                    if delivery is None:  # what it looked at was finished meanwhile
                        more = True  # (or one was kept for it): look again at once
                        continue
                if delivery.tries >= MAX_TRIES:
                    await self._put_aside(delivery)
                else:
                    self._overdue_at[lane] = loop.time() + self.deadline + CANCEL_GRACE
                    try:
                        in_time = await self._handle(delivery)
                    finally:
                        del self._overdue_at[lane]
                    if not in_time:
                        await self._put_aside(delivery, overdue=True)
                after, delivery = delivery.update_id, None
        except MemoryStoreError as e:
            self._failed(e)
            keep_lease = True  # handled again by whoever claims the lane after its lease
        finally:
            heartbeat.cancel()
            self._renewed_at.pop(lane, None)
            if not keep_lease and not released:
                # A clean stop: the lane back, and the try of the update it cut short.
                await asyncio.shield(self.steps.flush())  # its last update marked done
                with contextlib.suppress(MemoryStoreError):  # then the lease runs out instead
                    await asyncio.shield(asyncio.to_thread(self.queue.release, lane))

    async def _handle(self, delivery: Delivery) -> bool:
        """Run the update's handlers; False if they were cut short at the deadline. One that
        crashed replicas before runs alone here. The handlers share one view of the store
        (``memory.views``), starting at the versions the queue read as it started the update:
        a namespace held at that version reads without a round trip, another catches up at
        their first read only."""
        with one_view(delivery.versions):
            return await self._handle_in_view(delivery)

    async def _handle_in_view(self, delivery: Delivery) -> bool:
        application = self.application
        assert application is not None, "handling before start"
        update = Update.de_json(delivery.update, application.bot)
        what = f"update {delivery.update_id}"
        if delivery.tries >= ALONE_AFTER:
            log.warning(
                "update %s was being handled during %d crashes; handling it alone",
                delivery.update_id,
                delivery.tries,
            )
            async with self._alone:
                while self.handling:
                    await asyncio.sleep(0.05)
                self.handling += 1
                try:
                    return await within(application.process_update(update), self.deadline, what)
                finally:
                    self.handling -= 1
        async with self._alone:  # not while an update is handled alone
            self.handling += 1
        try:
            return await within(application.process_update(update), self.deadline, what)
        finally:
            self.handling -= 1

    async def _put_aside(self, delivery: Delivery, *, overdue: bool = False) -> None:
        """Set ``delivery`` aside (after crashes, or ``overdue``) and tell the admins."""
        why = reason(self.deadline) if overdue else f"in progress during {delivery.tries} crashes"
        await asyncio.to_thread(self.queue.set_aside, delivery.update_id, why)
        log.error("update %s set aside: %s", delivery.update_id, why)
        if self._set_aside is not None and self.application is not None:
            await self._set_aside(
                self.application,
                Pending(delivery.update, delivery.tries),
                overdue=self.deadline if overdue else None,
            )

    async def _heartbeat(self, lane: Lane) -> None:
        """Renew ``lane``'s lease when nothing else did for a third of a lease."""
        loop = asyncio.get_running_loop()
        while True:
            due = self._renewed_at.get(lane, loop.time()) + self.lease / 3
            if due > loop.time():
                await asyncio.sleep(due - loop.time())
                continue
            self._renewed_at[lane] = loop.time()
            if loop.time() > self._overdue_at.get(lane, float("inf")):
                # A handler past its deadline and grace: its lease is left to run out.
                log.error(
                    "lane %r: its handler runs past its deadline; lease not renewed", lane.key
                )
                continue
            try:
                if not await asyncio.to_thread(self.queue.renew, lane, self.lease):
                    return  # lost: the lane's next ``advance`` says so and stops
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
