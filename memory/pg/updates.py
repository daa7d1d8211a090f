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
sequence), and ``start``, ``renew`` and ``release`` act only under the token they were given: a
replica that stalled past its lease and wakes up cannot touch a lane another replica has claimed
since.

A replica killed while handling an update leaves its lease to run out; the next claim hands
the lane, that update first, to another replica, with ``tries`` counting the handlings that
never finished (the bot sets an update aside after a few: ``bot.chat.lanes``). A handled
update keeps its row, body emptied, for ``forget``'s retention (a day by default in the
bot), to recognise a late second delivery; one set aside keeps its body for a person.

A replica's identity. Waiting out a lease is how a dead replica's lanes move when nothing else
is known; but a replica that is restarted (by Docker, systemd, a person) knows who it was, and
its lanes need not wait. ``enter(identity)`` makes this process the replica ``identity`` (a
name stable across restarts: the bot derives it from the host and the port) for as long as it
holds a session-level advisory lock on that name, on a connection of its own
(``Database.session``): the server releases the lock when the session ends, at once when the
process dies (its kernel closes the connection), after ``KEEPALIVE_SECONDS`` when its host
vanished. So holding the lock proves that no earlier process of that identity lives, and
``enter`` gives up, in the same breath, the leases it left (the owner of a lease is
``identity#incarnation``, the incarnation a fresh number from the token sequence: a fencing
token, so that a lease of the new process is never mistaken for one of the old). Those lanes
are claimed at the next poll, the interrupted update first with its try counted, as after a
lease ran out. A live process holding the identity makes ``enter`` fail (``StoreInUse``): two
live replicas never share one, and a live replica's leases are never taken early. ``present``
says whether this process still holds it, taking it again after its connection was lost (the
server restarted); False if another process took it meanwhile, and then this one must stop
claiming. The lock needs a real session: a pooler in transaction mode (PgBouncer's) in front of
the database would break it.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from typing import Any

from memory.errors import MemoryInvalid, MemoryStoreError, StoreInUse
from memory.interface import Delivery, Lane
from memory.pg.database import Database

log = logging.getLogger(__name__)

SCAN = 256  # oldest waiting updates looked at before going lane by lane

OLDEST_FREE = """
SELECT o.lane FROM (
    SELECT lane, update_id FROM bot_updates WHERE state = 'waiting'
    ORDER BY update_id LIMIT %(scan)s
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

LEASE = """
INSERT INTO bot_lanes (lane, token, owner, until)
VALUES (%(lane)s, nextval('bot_lane_tokens'), %(owner)s, now() + make_interval(secs => %(lease)s))
ON CONFLICT (lane) DO UPDATE
    SET token = EXCLUDED.token, owner = EXCLUDED.owner, until = EXCLUDED.until
    WHERE bot_lanes.until <= now()
RETURNING lane, token
"""

WAITING = """
SELECT update_id, body, tries FROM bot_updates
WHERE lane = %s AND state = 'waiting' AND update_id > %s
ORDER BY update_id
LIMIT %s
"""

IDENTITY_LOCK = "cogito replica "  # + the identity: hashed into its advisory lock's key
INCARNATION = "#"  # between the identity and the incarnation in a lease's owner

TAKE = "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))"

# The leases of the identity's other incarnations: dead, since this session holds the lock.
GIVE_UP = """
DELETE FROM bot_lanes
WHERE left(owner, length(%(prefix)s)) = %(prefix)s AND owner <> %(owner)s
RETURNING lane
"""

# Who holds an identity's lock: the session, as pg_stat_activity shows it.
HOLDER = """
SELECT a.application_name, a.client_addr, a.backend_start
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND (l.classid::bigint << 32 | l.objid::bigint) = hashtextextended(%s, 0)
"""

RENEW = """
UPDATE bot_lanes SET until = now() + make_interval(secs => %s)
WHERE lane = %s AND token = %s AND until > now()
RETURNING 1
"""


class PgUpdateQueue:
    """The bot's shared updates in one PostgreSQL database."""

    def __init__(self, database: Database) -> None:
        self._db = database
        self._guard = threading.Lock()  # enter, present and leave run in worker threads
        self._identity: str | None = None
        self._owner = ""
        self._session: Any = None  # the connection holding the identity's lock

    def enter(self, identity: str) -> str:
        """Become the replica ``identity`` until ``leave``: the owner name to claim under
        (``identity#incarnation``). The leases of its earlier incarnations are given up (they
        are dead); ``StoreInUse`` if a live process is ``identity``."""
        if not identity or INCARNATION in identity:
            message = f"a replica identity is a name without {INCARNATION!r}, not {identity!r}"
            raise MemoryInvalid(message, field="identity")
        with self._guard:
            self._drop()
            with self._db.transaction(write=True) as connection:
                row = connection.execute("SELECT nextval('bot_lane_tokens')").fetchone()
            owner = f"{identity}{INCARNATION}{int(row[0])}"
            session = self._db.session(self._session_name(owner))
            try:
                with self._db.guarded(write=True):
                    if not self._take(session, identity, owner):
                        holder = self._holder(session, identity)
                        raise StoreInUse(
                            f"another live replica is {identity!r} ({holder}); two replicas "
                            "never share an identity: give each its own [replicas] identity"
                        )
            except BaseException:
                session.close()
                raise
            self._identity, self._owner, self._session = identity, owner, session
        return owner

    def present(self) -> bool:
        """Whether this process is still the replica it ``enter``ed as: its session checked,
        and the identity taken again if that session was lost; False if another process
        holds it now (or ``enter`` was never called)."""
        with self._guard:
            if self._identity is None:
                return False
            if self._session is not None:
                try:
                    with self._db.guarded(write=False):
                        self._session.execute("SELECT 1")
                    return True
                except MemoryStoreError as e:
                    log.warning("lost the session holding replica %r (%s)", self._owner, e.message)
                    self._drop_session()
            session = self._db.session(self._session_name(self._owner))
            try:
                with self._db.guarded(write=True):
                    taken = self._take(session, self._identity, self._owner)
            except BaseException:
                session.close()
                raise
            if not taken:
                session.close()
                return False
            log.info("replica %r holds its identity again", self._owner)
            self._session = session
            return True

    def leave(self) -> None:
        """Stop being the replica (its lock released; its lanes are the caller's to release)."""
        with self._guard:
            self._drop()

    def _take(self, session: Any, identity: str, owner: str) -> bool:
        """Lock ``identity`` on ``session`` and give up its other incarnations' leases."""
        if not session.execute(TAKE, (IDENTITY_LOCK + identity,)).fetchone()[0]:
            return False
        prefix = identity + INCARNATION
        freed = session.execute(GIVE_UP, {"prefix": prefix, "owner": owner}).fetchall()
        if freed:
            log.warning(
                "replica %s: %d lane(s) of its previous incarnation given up at once (it is "
                "dead: its lock was free)",
                owner,
                len(freed),
            )
        return True

    @staticmethod
    def _session_name(owner: str) -> str:
        """How ``pg_stat_activity`` (and a refused twin) names the session holding ``owner``."""
        return f"cogito {owner} pid {os.getpid()}"

    def _holder(self, session: Any, identity: str) -> str:
        """The session that holds ``identity``'s lock, in words (for the refusal)."""
        row = session.execute(HOLDER, (IDENTITY_LOCK + identity,)).fetchone()
        if row is None:
            return "its session just ended: try again"
        name, address, since = row
        where = f" from {address}" if address is not None else ""
        return f"{name or 'a session'}{where}, connected since {since:%Y-%m-%d %H:%M:%S %Z}"

    def _drop(self) -> None:
        self._identity, self._owner = None, ""
        self._drop_session()

    def _drop_session(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            session.close()  # the lock goes with the session (a broken one closes quietly)

    def receive(self, update: dict[str, Any], lane: str) -> bool:
        """Keep ``update`` in ``lane``, durably; False if its id was received before."""
        body = json.dumps(update, ensure_ascii=False, separators=(",", ":"))
        with self._db.transaction(write=True) as connection:
            row = connection.execute(
                "INSERT INTO bot_updates (update_id, lane, body) VALUES (%s, %s, %s)"
                " ON CONFLICT (update_id) DO NOTHING RETURNING 1",
                (int(update["update_id"]), lane, body),
            ).fetchone()
        return row is not None

    def claim(
        self, owner: str, lease: float, limit: int = 32
    ) -> tuple[Lane, list[Delivery]] | None:
        """Lease the free lane whose oldest waiting update is the oldest, with its first
        ``limit`` waiting updates; None if there is none (or another replica won it)."""
        with self._db.transaction(write=True) as connection:
            free = connection.execute(OLDEST_FREE, {"scan": SCAN}).fetchone()
            if free is None:
                free = connection.execute(FREE_LANES).fetchone()
            if free is None:
                return None
            row = connection.execute(
                LEASE, {"lane": free[0], "owner": owner, "lease": lease}
            ).fetchone()
            if row is None:
                return None
            lane = Lane(row[0], int(row[1]))
            rows = connection.execute(WAITING, (lane.key, -(2**63), limit)).fetchall()
        return lane, _deliveries(rows)

    def waiting(self, lane: Lane, after: int, limit: int = 32) -> list[Delivery]:
        """The lane's waiting updates after ``after``, in id order."""
        with self._db.transaction(write=False) as connection:
            rows = connection.execute(WAITING, (lane.key, after, limit)).fetchall()
        return _deliveries(rows)

    def start(self, lane: Lane, update_id: int, lease: float) -> bool:
        """Renew the lease and count a try of ``update_id``; False if the lease is lost (then
        nothing is counted)."""
        with self._db.transaction(write=True) as connection:
            if connection.execute(RENEW, (lease, lane.key, lane.token)).fetchone() is None:
                return False
            connection.execute(
                "UPDATE bot_updates SET tries = tries + 1"
                " WHERE update_id = %s AND state = 'waiting'",
                (update_id,),
            )
        return True

    def done(self, lane: Lane, update_id: int) -> None:
        """Mark ``update_id`` handled (even if the lease ran out meanwhile: it was handled)."""
        with self._db.transaction(write=True) as connection:
            connection.execute(
                "UPDATE bot_updates SET state = 'done', body = '', finished_at = now()"
                " WHERE update_id = %s AND state = 'waiting'",
                (update_id,),
            )

    def set_aside(self, update_id: int, reason: str) -> None:
        """Never hand ``update_id`` out again; keep it, with ``reason``, for a person."""
        with self._db.transaction(write=True) as connection:
            connection.execute(
                "UPDATE bot_updates SET state = 'aside', finished_at = now(), reason = %s"
                " WHERE update_id = %s AND state = 'waiting'",
                (reason, update_id),
            )

    def renew(self, lane: Lane, lease: float) -> bool:
        """Extend the lease by ``lease`` seconds from now; whether it is still ours."""
        with self._db.transaction(write=True, durable=False) as connection:
            return connection.execute(RENEW, (lease, lane.key, lane.token)).fetchone() is not None

    def release(self, lane: Lane, *, unstarted: int | None = None) -> None:
        """Give the lane back; ``unstarted``'s try (a clean stop cut it short) is not counted."""
        with self._db.transaction(write=True) as connection:
            if unstarted is not None:
                connection.execute(
                    "UPDATE bot_updates SET tries = greatest(tries - 1, 0)"
                    " WHERE update_id = %s AND state = 'waiting'",
                    (unstarted,),
                )
            connection.execute(
                "DELETE FROM bot_lanes WHERE lane = %s AND token = %s", (lane.key, lane.token)
            )

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
        with self._db.transaction(write=False) as connection:
            row = connection.execute(
                "SELECT count(*) FROM bot_updates WHERE state = 'waiting'"
            ).fetchone()
        return int(row[0])


def _deliveries(rows: list[Any]) -> list[Delivery]:
    return [Delivery(int(row[0]), json.loads(row[1]), int(row[2])) for row in rows]
