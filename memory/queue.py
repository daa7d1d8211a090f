"""The updates several replicas share (issue 17): ``UpdateQueue`` and the values it passes.

Only a store that several processes can reach implements it (``memory.pg.updates``);
``Store.updates()`` (``memory.interface``) is None for the files, whose one process keeps its
updates in the ``inbox`` log instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class Lane:
    """One chat's updates, leased to one replica: ``key`` names the chat (``""``: updates of
    no chat), ``token`` this lease (a new one at every claim, so a lease that expired and was
    claimed again is never mistaken for the new one)."""

    key: str
    token: int


@dataclass(frozen=True)
class Delivery:
    """An update waiting in a lane: its id, the update as Telegram sent it, how many times a
    replica started handling it without finishing (a crash, a lost lease), and the version
    of each namespace it reads (the one its receiver named: ``UpdateQueue.receive``) as the
    statement that started it read them: its view of the store starts there
    (``memory.views``), so a replica holding that version reads without asking again."""

    update_id: int
    update: dict[str, Any]
    tries: int
    versions: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """A lane's next turn, as a claim or an ``UpdateQueue.advance`` found it: ``delivery``,
    the update started now (its try counted, the lease renewed), to handle; or None, and then
    ``released`` (none waits: the lane was given back), ``lost`` (the lease is another
    replica's now: nothing was started), or neither (the lane is this replica's but what it
    looked at was finished meanwhile, or an update was kept for it as it would have been given
    back: advance again). ``more``: other updates of the lane waited behind ``delivery`` as it
    was started (the next ``advance`` has one to start)."""

    lane: Lane
    delivery: Delivery | None = None
    released: bool = False
    lost: bool = False
    more: bool = False


@dataclass(frozen=True)
class Received:
    """What ``UpdateQueue.receive`` did: kept the update (``new``; False: its id came
    before, and nothing was done), and claimed its lane if asked and free (``turn``)."""

    new: bool
    turn: Turn | None = None


@dataclass(frozen=True)
class Receive:
    """An update to keep: ``UpdateQueue.receive``'s arguments, for ``UpdateQueue.send``."""

    update: dict[str, Any]
    lane: str
    owner: str = ""
    namespace: str | None = None

    def __post_init__(self) -> None:
        update_id = self.update.get("update_id")
        if type(update_id) is not int or not -(2**63) <= update_id < 2**63:
            raise ValueError(f"an update's id must be a 64-bit integer, not {update_id!r}")


@dataclass(frozen=True)
class Advance:
    """``after`` handled in ``lane``: ``UpdateQueue.advance``'s arguments, for ``send``."""

    lane: Lane
    after: int | None


@dataclass(frozen=True)
class Sent:
    """What ``UpdateQueue.send`` did: a turn for each advance, a ``Received`` for each
    receive, in the order given."""

    turns: list[Turn]
    received: list[Received]


class UpdateQueue(Protocol):
    """The updates received by any replica, each handled once, in order within a chat.

    ``receive`` keeps an update durably, once per update id, and can claim its chat's lane at
    once. A replica claims a lane (the chat whose oldest waiting update is the oldest, among
    chats no live lease holds) with its first update started, and handles the lane's updates in
    id order: ``advance`` after each marks it done and starts the next (it counts a try and
    renews the lease; the lane is lost once the lease is no longer this replica's, which must
    then stop), or gives the lane back when none waits. Each of these is one round trip, and
    ``send`` does several advances and receives in one: a replica under load sends an update's
    advance with the next receive (``bot.chat.steps``), so that an update costs about one round
    trip of the queue's. ``release`` gives a lane back before its end (a clean stop). A replica
    that dies holds its lanes until their leases run out; another replica then claims them and
    handles the unfinished update again. A replica that ``enter``s under a stable identity has
    its lanes back at once when it is restarted: its new incarnation gives up the dead one's
    leases. Failures are ``MemoryLoadFailed`` and ``MemorySaveFailed``.
    """

    def enter(self, identity: str) -> str:
        """Become the replica ``identity`` until ``leave``: the owner name to ``claim`` under,
        new at every call (a fencing token). The leases an earlier process of ``identity``
        left are given up at once, for it is dead; ``StoreInUse`` if a live process is
        ``identity``: two never share one."""
        ...

    def present(self) -> bool:
        """Whether this process is still the replica it ``enter``ed as (taking the identity
        again if the database lost its session); False if another process is it now."""
        ...

    def leave(self) -> None:
        """Stop being the replica (a clean stop, its lanes released first)."""
        ...

    def receive(
        self,
        update: dict[str, Any],
        lane: str,
        *,
        owner: str = "",
        lease: float = 0.0,
        namespace: str | None = None,
    ) -> Received:
        """Keep ``update`` (durable on return) in ``lane``, unless its id came before; with
        ``owner``, also lease the lane to ``owner`` for ``lease`` seconds if no live lease
        holds it, its oldest waiting update started (this one, or one before it).
        ``namespace``: the one the update reads and changes, kept with it, whose version the
        statement starting it reads too (``Delivery.versions``)."""
        ...

    def claim(self, owner: str, lease: float) -> Turn | None:
        """Lease the next free lane for ``lease`` seconds, its oldest waiting update started;
        None when every lane with waiting updates is leased."""
        ...

    def advance(self, lane: Lane, after: int | None, lease: float) -> Turn:
        """``after`` was handled: mark it done (unless it was set aside), and start the lane's
        next waiting update, renewing the lease; or give the lane back if none waits.
        ``after`` None: nothing was handled since the claim."""
        ...

    def send(self, advances: Sequence[Advance], receives: Sequence[Receive], lease: float) -> Sent:
        """The ``advances`` and ``receives`` in one transaction (durable if it receives
        anything) and one round trip: each as ``advance`` and ``receive`` would do it alone,
        seeing the ones before it; those of one lane in the order given, its receives first (the
        advance then starts the next update under the lease it holds)."""
        ...

    def set_aside(self, update_id: int, reason: str) -> None:
        """Stop handing out ``update_id`` (poison), keeping it for a person to look at."""
        ...

    def renew(self, lane: Lane, lease: float) -> bool:
        """Extend the lease; whether it is still ours."""
        ...

    def release(self, lane: Lane) -> None:
        """Give the lane back before its end (a clean stop, not a crash): the update it
        started and did not finish gets its try back."""
        ...

    def forget(self, older_than: float) -> int:
        """Drop handled updates older than ``older_than`` seconds; how many."""
        ...

    def waiting_count(self) -> int:
        """How many updates wait (received, neither handled nor set aside)."""
        ...
