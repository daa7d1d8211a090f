"""A replica's identity: one live process per name, proved by a lock the server keeps.

Waiting out a lease is how a dead replica's lanes move when nothing else is known
(``memory.pg.updates``); but a replica that is restarted (by Docker, systemd, a person) knows
who it was, and its lanes need not wait. ``enter(identity)`` makes this process the replica
``identity`` (a name stable across restarts: the bot derives it from the host and the port) for
as long as it holds a session-level advisory lock on that name, on a connection of its own
(``Database.session``): the server releases the lock when the session ends, at once when the
process dies (its kernel closes the connection), after ``KEEPALIVE_SECONDS`` when its host
vanished. So holding the lock proves that no earlier process of that identity lives, and
``enter`` gives up, in the same breath, the leases it left (the owner of a lease is
``identity#incarnation``, the incarnation a fresh number from the token sequence: a fencing
token, so that a lease of the new process is never mistaken for one of the old). Those lanes are
claimed at the next poll, the interrupted update first with its try counted, as after a lease
ran out. A live process holding the identity makes ``enter`` fail (``StoreInUse``): two live
replicas never share one, and a live replica's leases are never taken early. ``present`` says
whether this process still holds it, taking it again after its connection was lost (the server
restarted); False if another process took it meanwhile, and then this one must stop claiming.
The lock needs a real session: a pooler in transaction mode (PgBouncer's) in front of the
database would break it.
"""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

from memory.errors import MemoryInvalid, MemoryStoreError, StoreInUse
from memory.pg.database import Database

log = logging.getLogger(__name__)

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


class ReplicaIdentity:
    """Which replica this process is, on one database (``PgUpdateQueue``'s ``enter``,
    ``present`` and ``leave``; see the module docstring)."""

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
            (token,) = self._db.run("SELECT nextval('bot_lane_tokens')", write=True).rows[0]
            owner = f"{identity}{INCARNATION}{int(token)}"
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
