"""The updates several bot replicas share, and the per-chat leases that order them.

``PgUpdateQueue`` implements ``memory.interface.UpdateQueue`` on two tables
(``memory.pg.schema``, migration 3): ``bot_updates`` holds every update a replica received,
one row per Telegram update id, so a second delivery (Telegram retrying, or a load balancer
sending it to another replica) is recognised by the primary key and never handled twice;
``bot_lanes`` holds the leases, one row per chat being handled.

Claiming a lane: the oldest waiting update whose chat no live lease holds gives the lane, and an
``INSERT ... ON CONFLICT DO UPDATE ... WHERE until <= now()`` takes it. That update is looked for
among the ``SCAN`` oldest waiting ones first, and only then lane by lane (one index probe per chat
with waiting updates, ``FREE_LANES``): a chat flooded while a replica handles it would otherwise
have every other replica's poll read its whole backlog (100,000 waiting: 150-190 ms a claim, 2 ms
now, and the answer is usually "none free"). Two replicas racing for one lane both try; the loser's
conditional update sees the winner's row once it commits and changes nothing, so it gets no lane
(and claims again). Times are the database's (``now()``), never a replica's clock, so replicas
whose clocks disagree still agree on when a lease ran out. Each claim has a new ``token`` (a
sequence), and ``advance``, ``renew`` and ``release`` act only under the token they were given: a
replica that stalled past its lease and wakes up cannot touch a lane another replica has claimed
since.

One round trip per step (issue 28: an update cost six transactions besides its handling). Each
step is one statement whose parts (data-modifying ``WITH`` queries) commit together: ``receive``
keeps the update and, for a replica with room, leases its lane if it is free and starts the
lane's oldest waiting update (the chat's first message in a while is handled by the replica that
received it, without a claim); ``claim`` leases the free lane and starts its first update;
``advance`` marks the update handled, then starts the next one and renews the lease, or deletes
the lease when none waits. ``send`` sends several advances and receives, each such a statement,
in one transaction and one round trip (``Database.batch``), the advances first: a replica under
load sends an update's advance with the next update it receives (``bot.chat.steps``), so that an
update costs one round trip of the queue's, not two. Only a receive waits for the disk (the
update is durable before its webhook answers 200); advances sent alone commit without waiting
(``synchronous_commit`` off): a crash of the server may lose its last fraction of a second of
advances, and those updates are handled again, as after a replica's kill (the log is replayed in
order, so what a later durable commit depends on is never lost while the commit stands). A
started update says whether others of its lane wait behind it (``Turn.more``), so that its
advance need not wait for a receive to ride on. A lease remembers the update it started last
(``started``), so that a clean stop (``release``) gives that try back. The parts of one
statement share its snapshot: an update that another replica finished while the statement ran is
seen as waiting, but starting it re-reads the row and skips it, and the turn then says that
nothing was started (the replica advances again). Likewise an update kept for a chat whose lease
is live, as its holder's advance finds none waiting in a snapshot taken just before: the receive
moves the lease's ``kept``, and the advance gives the lane back only if ``kept`` is still what
its snapshot read (its delete waits for the receive's lock and reads the row again), else it
says that nothing was started and the holder looks again. Without that the lane was given back
over the update, which waited for a poll (49 such races of 300 on a 2-core VM:
``tests/memory/test_pg_updates.py``).

An update is kept with the namespace it reads and changes (``namespace``, migration 5, named by
the receiving replica), and the statement that starts it (``STARTED``, in ``receive``,
``claim`` and ``advance`` alike) also reads that namespace's version (``Delivery.versions``;
never written: 0), in the snapshot that found the update first in its lane: every earlier
update of the chat was finished in that snapshot, so what they wrote is in that version. The
update's view of the store starts there (``memory.views``): a replica holding that version (it
handled the chat's last update, and nobody wrote since) reads without a round trip of its own.
A replica from before that names no namespace leaves it NULL, and its updates' reads ask.

A replica killed while handling an update leaves its lease to run out; the next claim hands
the lane, that update first, to another replica, with ``tries`` counting the handlings that
never finished (the bot sets an update aside after a few: ``bot.chat.lanes``). A handled
update keeps its row, body emptied, for ``forget``'s retention (a day by default in the
bot), to recognise a late second delivery; one set aside keeps its body for a person.

A replica's identity (``enter``, ``present``, ``leave``: a restarted replica takes its dead
predecessor's lanes back at once) is ``memory.pg.identity``'s.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from memory.pg.database import Database
from memory.pg.identity import ReplicaIdentity
from memory.queue import Advance, Delivery, Lane, Receive, Received, Sent, Turn

log = logging.getLogger(__name__)

SCAN = 256  # oldest waiting updates looked at before going lane by lane
FIRST = -(2**63)  # below every update id

OLDEST_FREE = f"""
SELECT o.lane FROM (
    SELECT lane, update_id FROM bot_updates WHERE state = 'waiting'
    ORDER BY update_id LIMIT {SCAN}
) o
WHERE NOT EXISTS (SELECT 1 FROM bot_lanes l WHERE l.lane = o.lane AND l.until > now())
ORDER BY o.update_id
LIMIT 1
"""

# Each chat with waiting updates once (a skip scan of bot_updates_lane), the free ones by their
# oldest waiting update.
FREE_LANES = """
WITH RECURSIVE lanes (lane) AS (
    (SELECT lane FROM bot_updates WHERE state = 'waiting' ORDER BY lane LIMIT 1)
    UNION ALL
    SELECT (
        SELECT u.lane FROM bot_updates u
        WHERE u.state = 'waiting' AND u.lane > lanes.lane
        ORDER BY u.lane LIMIT 1
    )
    FROM lanes WHERE lanes.lane IS NOT NULL
)
SELECT lanes.lane FROM lanes
WHERE lanes.lane IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM bot_lanes l WHERE l.lane = lanes.lane AND l.until > now())
ORDER BY (
    SELECT u.update_id FROM bot_updates u
    WHERE u.lane = lanes.lane AND u.state = 'waiting'
    ORDER BY u.update_id LIMIT 1
)
LIMIT 1
"""

# The free lane: the oldest waiting updates first, then lane by lane (only if they had none:
# ``coalesce`` evaluates its second part only when the first is null).
FREE = f"coalesce(({OLDEST_FREE}), ({FREE_LANES}))"

# A lease for ``owner`` on a lane no live lease holds (columns lane, token, owner, until,
# started; the conflict sees the row as committed last, waiting for a writer in flight).
TAKE_LEASE = """
INSERT INTO bot_lanes (lane, token, owner, until, started)
    {rows}
ON CONFLICT (lane) DO UPDATE
    SET token = EXCLUDED.token, owner = EXCLUDED.owner, until = EXCLUDED.until,
        started = EXCLUDED.started
    WHERE bot_lanes.until <= now()
RETURNING lane, token, started
"""
UNTIL = "now() + make_interval(secs => %(lease)s)"

# Count a try of the update a lease started (one that is still waiting when its row is read).
START = """
UPDATE bot_updates u SET tries = u.tries + 1 FROM {lease} l
WHERE u.update_id = l.started AND u.state = 'waiting'
RETURNING u.update_id, u.body, u.tries - 1 AS tries, u.namespace, u.lane
"""
# The update a statement started (``s``): what ``_delivery`` reads, the version of its
# namespace in the statement's snapshot last (NULL: never written, or no namespace named).
# Whether other updates of its lane wait behind it (``Turn.more``), last.
STARTED = (
    "s.update_id, s.body, s.tries, s.namespace,"
    " (SELECT n.version FROM memory_namespaces n WHERE n.name = s.namespace),"
    " (SELECT w.update_id FROM bot_updates w"
    "  WHERE w.lane = s.lane AND w.state = 'waiting' AND w.update_id > s.update_id"
    "  ORDER BY w.lane, w.update_id LIMIT 1) IS NOT NULL"
)

# The lane's oldest waiting update (an index probe of ``bot_updates_lane``).
FIRST_IN_LANE = (
    "(SELECT u.update_id FROM bot_updates u WHERE u.lane = free.lane AND u.state = 'waiting'"
    " ORDER BY u.lane, u.update_id LIMIT 1)"
)
CLAIM_LEASE = TAKE_LEASE.format(
    rows=f"SELECT free.lane, nextval('bot_lane_tokens'), %(owner)s, {UNTIL}, {FIRST_IN_LANE}"
    " FROM free WHERE free.lane IS NOT NULL"
)
CLAIM = f"""
WITH free AS (SELECT {FREE} AS lane),
leased AS ({CLAIM_LEASE}),
started AS ({START.format(lease="leased")})
SELECT l.lane, l.token, {STARTED} FROM leased l LEFT JOIN started s ON true
"""

# Keep an update and, for ``owner``, lease its lane if free, starting its oldest waiting
# update: one before it, or itself (kept with its try counted: a statement cannot update a row
# it inserts). Not for an update received before (a second delivery starts nothing).
RECEIVE_LEASE = TAKE_LEASE.format(
    rows=f"SELECT %(lane)s, nextval('bot_lane_tokens'), %(owner)s, {UNTIL},"
    " coalesce((SELECT update_id FROM older), %(id)s) FROM fresh"
    " WHERE fresh.new AND %(owner)s <> ''"
)
RECEIVE = f"""
WITH fresh AS (
    SELECT NOT EXISTS (SELECT 1 FROM bot_updates WHERE update_id = %(id)s) AS new
),
older AS (
    SELECT update_id FROM bot_updates
    WHERE lane = %(lane)s AND state = 'waiting' AND update_id < %(id)s
    ORDER BY update_id LIMIT 1
),
leased AS ({RECEIVE_LEASE}),
kept AS (
    INSERT INTO bot_updates (update_id, lane, body, tries, namespace)
    VALUES (%(id)s, %(lane)s, %(body)s, (SELECT count(*) FROM leased WHERE started = %(id)s),
        %(namespace)s)
    ON CONFLICT (update_id) DO NOTHING
    RETURNING update_id, body, tries - 1 AS tries, namespace, lane
),
nudged AS (
    UPDATE bot_lanes SET kept = kept + 1
    WHERE lane = %(lane)s AND (SELECT new FROM fresh) AND NOT EXISTS (SELECT 1 FROM leased)
),
started AS ({START.format(lease="leased")})
SELECT (SELECT count(*) FROM kept), l.lane, l.token, {STARTED}, s.update_id <> %(id)s
FROM (SELECT 1) AS one
LEFT JOIN leased l ON true
LEFT JOIN (
    SELECT * FROM started
    UNION ALL
    SELECT * FROM kept WHERE NOT EXISTS (SELECT 1 FROM started)
) s ON s.update_id = l.started
"""

# Mark ``after`` handled; start the lane's next waiting update under the lease (renewed), or
# give the lane back when none waits, unless an update was kept for it meanwhile (``kept``
# moved since this statement's snapshot: the row is read again as the delete waits for it).
ADVANCE = f"""
WITH finished AS (
    UPDATE bot_updates SET state = 'done', body = '', finished_at = now()
    WHERE update_id = %(after)s AND state = 'waiting'
    RETURNING update_id
),
next AS (
    SELECT update_id FROM bot_updates
    WHERE lane = %(lane)s AND state = 'waiting' AND update_id > %(from)s
    ORDER BY update_id LIMIT 1
),
renewed AS (
    UPDATE bot_lanes SET until = {UNTIL}, started = next.update_id FROM next
    WHERE lane = %(lane)s AND token = %(token)s AND until > now()
    RETURNING started
),
mine AS (SELECT kept FROM bot_lanes WHERE lane = %(lane)s AND token = %(token)s),
released AS (
    DELETE FROM bot_lanes
    WHERE lane = %(lane)s AND token = %(token)s AND NOT EXISTS (SELECT 1 FROM next)
        AND kept = (SELECT kept FROM mine)
    RETURNING lane
),
started AS ({START.format(lease="renewed")})
SELECT (SELECT count(*) FROM next), (SELECT count(*) FROM renewed),
    (SELECT count(*) FROM released), (SELECT count(*) FROM mine), {STARTED}
FROM (SELECT 1) AS one LEFT JOIN started s ON true
"""

# Give a lane back, and the try of the update it started and did not finish.
RELEASE = """
WITH lease AS (
    DELETE FROM bot_lanes WHERE lane = %s AND token = %s RETURNING started
)
UPDATE bot_updates u SET tries = greatest(u.tries - 1, 0) FROM lease
WHERE u.update_id = lease.started AND u.state = 'waiting'
"""


class PgUpdateQueue:
    """The bot's shared updates in one PostgreSQL database."""

    def __init__(self, database: Database) -> None:
        self._db = database
        self._replica = ReplicaIdentity(database)

    def enter(self, identity: str) -> str:
        """Become the replica ``identity`` until ``leave`` (``ReplicaIdentity.enter``)."""
        return self._replica.enter(identity)

    def present(self) -> bool:
        """Whether this process is still the replica it ``enter``ed as (``ReplicaIdentity``)."""
        return self._replica.present()

    def leave(self) -> None:
        """Stop being the replica (its lanes are the caller's to release)."""
        self._replica.leave()

    def receive(
        self,
        update: dict[str, Any],
        lane: str,
        *,
        owner: str = "",
        lease: float = 0.0,
        namespace: str | None = None,
    ) -> Received:
        """Keep ``update`` in ``lane``, durably, unless its id was received before; with
        ``owner``, lease the lane if it is free and start its oldest waiting update."""
        (received,) = self.send([], [Receive(update, lane, owner, namespace)], lease).received
        return received

    def claim(self, owner: str, lease: float) -> Turn | None:
        """Lease the free lane whose oldest waiting update is the oldest, that update
        started; None if there is none (or another replica won it)."""
        row = self._db.run(CLAIM, {"owner": owner, "lease": lease}, write=True).one()
        if row is None:
            return None
        delivery, more = _delivery(row[2:])
        return Turn(Lane(row[0], int(row[1])), delivery, more=more)

    def advance(self, lane: Lane, after: int | None, lease: float) -> Turn:
        """``after`` handled (unless set aside), the lane's next waiting update started under
        a renewed lease; or the lane given back when none waits."""
        (turn,) = self.send([Advance(lane, after)], [], lease).turns
        return turn

    def send(self, advances: Sequence[Advance], receives: Sequence[Receive], lease: float) -> Sent:
        """The ``advances`` and ``receives`` in one transaction and one round trip
        (``UpdateQueue.send``), lane by lane in the order of their keys, a lane's receives
        before its advances (a chat's next update is kept, then started by the advance, its
        lease held): each statement locks rows of its own lane only, so two replicas'
        transactions lock in the same order and never wait for each other in a circle. Only
        receives wait for the disk: lost in a crash of the server, an advance's update is
        handled again (as after a replica's kill); a later durable commit makes it durable
        too."""
        steps: list[tuple[str, int, int, str, dict[str, Any]]] = [
            (step.lane.key, 1, n, ADVANCE, _advancing(step, lease))
            for n, step in enumerate(advances)
        ]
        steps += [
            (step.lane, 0, n, RECEIVE, _receiving(step, lease)) for n, step in enumerate(receives)
        ]
        if not steps:
            return Sent([], [])
        steps.sort(key=lambda step: step[:3])
        results = self._db.batch(
            [(sql, params) for *_, sql, params in steps], write=True, durable=bool(receives)
        )
        turns: list[Turn] = [Turn(Lane("", 0))] * len(advances)
        received: list[Received] = [Received(False)] * len(receives)
        for (_, kind, n, _, _), rows in zip(steps, results, strict=True):
            if kind == 0:
                received[n] = _received(rows.one())
            else:
                turns[n] = _advanced(advances[n].lane, rows.one())
        return Sent(turns, received)

    def set_aside(self, update_id: int, reason: str) -> None:
        """Never hand ``update_id`` out again; keep it, with ``reason``, for a person."""
        self._db.run(
            "UPDATE bot_updates SET state = 'aside', finished_at = now(), reason = %s"
            " WHERE update_id = %s AND state = 'waiting'",
            (reason, update_id),
            write=True,
        )

    def renew(self, lane: Lane, lease: float) -> bool:
        """Extend the lease by ``lease`` seconds from now; whether it is still ours."""
        renewed = self._db.run(
            "UPDATE bot_lanes SET until = now() + make_interval(secs => %s)"
            " WHERE lane = %s AND token = %s AND until > now() RETURNING 1",
            (lease, lane.key, lane.token),
            write=True,
            durable=False,
        )
        return bool(renewed.rows)

    def release(self, lane: Lane) -> None:
        """Give the lane back; the try of the update it started and did not finish (a clean
        stop cut it short) is not counted."""
        self._db.run(RELEASE, (lane.key, lane.token), write=True)

    def forget(self, older_than: float) -> int:
        """Delete the handled updates finished more than ``older_than`` seconds ago."""
        forgotten = self._db.run(
            "DELETE FROM bot_updates WHERE state = 'done'"
            " AND finished_at < now() - make_interval(secs => %s)",
            (older_than,),
            write=True,
            durable=False,
        )
        return forgotten.count

    def waiting_count(self) -> int:
        """How many updates are received and neither handled nor set aside."""
        row = self._db.run(
            "SELECT count(*) FROM bot_updates WHERE state = 'waiting'", write=False
        ).one()
        return int(row[0]) if row else 0


def _receiving(step: Receive, lease: float) -> dict[str, Any]:
    update_id = step.update["update_id"]  # an integer of 64 bits (``Receive``)
    body = json.dumps(step.update, ensure_ascii=False, separators=(",", ":"))
    params = {"id": update_id, "lane": step.lane, "body": body, "owner": step.owner}
    return params | {"lease": lease, "namespace": step.namespace}


def _received(row: tuple[Any, ...] | None) -> Received:
    assert row is not None
    new, leased, token, *started, behind = row
    if leased is None:
        return Received(bool(new))
    delivery, more = _delivery(started)
    return Received(bool(new), Turn(Lane(leased, int(token)), delivery, more=more or bool(behind)))


def _advancing(step: Advance, lease: float) -> dict[str, Any]:
    after = step.after
    params = {"after": after, "from": FIRST if after is None else after, "lease": lease}
    return params | {"lane": step.lane.key, "token": step.lane.token}


def _advanced(lane: Lane, row: tuple[Any, ...] | None) -> Turn:
    assert row is not None
    waits, renewed, released, mine, *started = row
    if released:
        return Turn(lane, released=True)
    if not mine or (waits and not renewed):
        return Turn(lane, lost=True)
    if not waits:  # an update of the chat was kept as the lane was given back: look again
        return Turn(lane)
    delivery, more = _delivery(started)
    return Turn(lane, delivery, more=more)


def _delivery(row: list[Any] | tuple[Any, ...]) -> tuple[Delivery | None, bool]:
    """The update a statement started (``STARTED``: id, body, tries before this one, its
    namespace and that one's version, whether others wait behind it), if it did."""
    update_id, body, tries, namespace, version, more = row
    if update_id is None:
        return None, False
    versions = {} if namespace is None else {namespace: int(version or 0)}
    return Delivery(int(update_id), json.loads(body), int(tries), versions), bool(more)
