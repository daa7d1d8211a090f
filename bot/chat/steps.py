"""A replica's steps in the shared update queue, sent together (issue 28).

An update costs the queue two steps (``memory.queue.UpdateQueue``): its receive, kept before
the webhook answers 200, and its advance once handled (done, and the chat's next update
started or its lane given back). Sent one by one, each is a round trip to the database.
``Steps`` sends them together instead, each send one transaction (``UpdateQueue.send``):

- a receive goes at once, unless a send is in flight: then it waits for that one and goes with
  whatever came meanwhile (one round trip for many, as a database commits a group);
- an advance whose lane has more updates waiting (``Turn.more``) goes with the next send too;
  one whose lane has none waits up to ``linger`` seconds for a receive to ride on. Under load
  one comes within that time and the update's advance costs nothing more; alone, it goes by
  itself. The lane stays this replica's meanwhile: the chat's next update, received here, is
  kept in the send that carries the advance, which then starts it under the lease it holds;
  received by another replica it waits for the advance, which starts it here.

So under load an update costs about one round trip of the queue's, two when alone.

A send that fails fails each of its receives with the store's error (refused, Telegram sends
the update again). Its advances are sent again, every ``RETRY_SECONDS``, for up to a third of a
lease: their updates were handled, and marking one done twice changes nothing, so a connection
lost for a moment (a flaky network, the server restarted) holds the chats up for that moment,
not for their leases and a second handling of each. Past that, or for an error not the store's,
the advance fails: its lane stops, and its lease runs out. (If a lost send had in fact been
committed, the update its advance started is started again: one try more counted.) A receive
that leases a lane hands it to ``taken`` as the send returns, whether or not its caller still
waits (a webhook request cut off), and gives it back if ``taken`` cannot handle it (the replica
stopped): a leased lane is never left with nobody to handle it. An advance is sent even if its
caller stopped waiting, for its update was handled. ``flush`` sends what waits at once and
waits for it (a clean stop).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from memory.errors import MemoryStoreError
from memory.queue import Advance, Lane, Receive, Received, Turn, UpdateQueue

log = logging.getLogger(__name__)

LINGER = 0.01  # seconds an advance with nothing behind it waits for a receive to ride on
RETRY_SECONDS = 0.5  # between sends of advances the database refused


class Steps:
    """The receives and advances of one replica, sent to ``queue`` together."""

    def __init__(
        self,
        queue: UpdateQueue,
        lease: float,
        taken: Callable[[Turn, float], bool],
        *,
        linger: float = LINGER,
    ) -> None:
        self._queue, self._lease, self._taken = queue, lease, taken
        self.linger = linger  # seconds
        self._advances: list[tuple[Advance, asyncio.Future[Turn], float]] = []  # + give up at
        self._receives: list[tuple[Receive, asyncio.Future[Received], float]] = []
        self._sending: asyncio.Task[None] | None = None
        self._due: asyncio.TimerHandle | None = None  # when lingering advances go alone
        self._now = False  # what waits goes with the next send, receives or not
        self._giving_back: set[asyncio.Task[None]] = set()

    @property
    def pending(self) -> int:
        """How many steps wait to be sent (not counting those in flight)."""
        return len(self._advances) + len(self._receives)

    async def receive(self, step: Receive) -> Received:
        """Keep the update (durable on return); a lane it leased goes to ``taken``."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Received] = loop.create_future()
        self._receives.append((step, future, loop.time()))
        self._kick()
        return await future

    async def advance(self, lane: Lane, after: int | None, *, more: bool) -> Turn:
        """``after`` handled in ``lane``: the lane's next turn. ``more``: updates wait behind
        it, so the advance goes with the next send rather than lingering for a receive."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Turn] = loop.create_future()
        self._advances.append((Advance(lane, after), future, loop.time() + self._lease / 3))
        self._now = self._now or more
        self._kick()
        return await future

    async def flush(self) -> None:
        """Send what waits, now, and wait until nothing is in flight."""
        while self._sending is not None or self._advances or self._receives:
            self._now = True
            self._kick()
            if self._sending is not None:
                await asyncio.shield(self._sending)

    def _kick(self) -> None:
        """Send what waits if nothing is in flight and something should go now; else make
        sure lingering advances go by themselves in time."""
        if self._sending is not None:
            return  # it kicks again as it returns
        if not (self._receives or (self._now and self._advances)):
            if self._advances and self._due is None:
                self._due = asyncio.get_running_loop().call_later(self.linger, self._expired)
            return
        if self._due is not None:
            self._due.cancel()
            self._due = None
        advances, self._advances = self._advances, []
        receives, self._receives = self._receives, []
        self._now = False
        self._sending = asyncio.create_task(self._send(advances, receives), name="queue steps")

    def _again(
        self, advances: list[tuple[Advance, asyncio.Future[Turn], float]], error: Exception
    ) -> None:
        """Send ``advances`` again in ``RETRY_SECONDS``, but for those past their time, which
        fail with ``error`` (all of them, for an error not the store's)."""
        loop = asyncio.get_running_loop()
        due = loop.time() + RETRY_SECONDS
        retry = isinstance(error, MemoryStoreError)
        again: list[tuple[Advance, asyncio.Future[Turn], float]] = []
        failed: list[asyncio.Future[Turn]] = []
        for step in advances:
            if retry and due < step[2]:
                again.append(step)
            else:
                failed.append(step[1])
        _fail(failed, error)
        if not again:
            return
        log.warning("the update queue refused %d advances (%s); trying again", len(again), error)
        self._advances[:0] = again
        if self._due is not None:
            self._due.cancel()
        self._due = loop.call_later(RETRY_SECONDS, self._expired)

    def _give_back(self, lane: Lane) -> None:
        task = asyncio.create_task(self._release(lane), name=f"give back {lane.key}")
        self._giving_back.add(task)
        task.add_done_callback(self._giving_back.discard)

    async def _release(self, lane: Lane) -> None:
        with contextlib.suppress(MemoryStoreError):  # then its lease runs out instead
            await asyncio.to_thread(self._queue.release, lane)

    def _expired(self) -> None:
        self._due = None
        self._now = True
        self._kick()

    async def _send(
        self,
        advances: list[tuple[Advance, asyncio.Future[Turn], float]],
        receives: list[tuple[Receive, asyncio.Future[Received], float]],
    ) -> None:
        try:
            sent = await asyncio.to_thread(
                self._queue.send, [a for a, *_ in advances], [r for r, *_ in receives], self._lease
            )
        except Exception as e:  # every step's caller is told, whatever it was
            if not isinstance(e, MemoryStoreError):
                log.exception("the update queue failed its steps")
            _fail([f for _, f, _ in receives], e)
            self._again(advances, e)
        else:
            for (_, waiter, _), turn in zip(advances, sent.turns, strict=True):
                _settle(waiter, turn)
            for (_, caller, asked), received in zip(receives, sent.received, strict=True):
                if received.turn is not None and not self._taken(received.turn, asked):
                    self._give_back(received.turn.lane)
                _settle(caller, received)
        finally:
            self._sending = None
            self._kick()


def _settle(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():  # its caller stopped waiting
        future.set_result(value)


def _fail(futures: list[asyncio.Future[Any]], error: Exception) -> None:
    for future in futures:
        if not future.done():
            future.set_exception(error)
