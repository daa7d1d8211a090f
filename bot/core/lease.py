"""Claims shared by replicas: who is sending an occurrence, and when a claim was left by a crash.

Something sent once by whichever process (or replica) is due first is claimed before it is sent:
a compare-and-set on its document writes a ``Claim`` (which occurrence, by whom, since when, the
how-many-th attempt). A claim still held after ``LEASE`` was left by a crash, and another process
takes it over. Reminders (``bot.core.delivery``) and the digest (``bot.jobs.digest``) claim this
way; what they claim, and what a takeover sends, is theirs. This module is only the claim and its
lease, so that both time a left claim by the same rule.

The lease is measured on the observer's clock (``Leases``): a claim is old once this process
has seen that same claim, unchanged, for ``LEASE``. Comparing this process's clock with the
claimant's ``since`` would make the lease as short as the clocks are apart: a replica whose
clock runs three minutes ahead would take over, and send again, a reminder another replica is
sending right now. So a replica started after a crash waits one ``LEASE`` from its first look.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

LEASE = timedelta(minutes=2)  # a claim older than this was left by a crash


@dataclass(frozen=True)
class Claim:
    """Who is sending which occurrence, since when, and the how-many-th attempt it is."""

    at: datetime
    by: str
    since: datetime
    tries: int = 1


class Leases:
    """The claims one process saw held, each with when it first saw it, by its own clock."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[Claim, datetime]] = {}

    def expired(self, key: str, held: Claim, now: datetime) -> bool:
        """Whether ``held`` (the claim on ``key``) was seen unchanged for ``LEASE`` by ``now``."""
        seen = self._seen.get(key)
        if seen is None or seen[0] != held or now < seen[1]:  # new to us, or our clock went back
            self._seen[key] = (held, now)
            return False
        return now - seen[1] >= LEASE

    def forget(self, key: str) -> None:
        """``key`` holds no claim any more (or this process took it)."""
        self._seen.pop(key, None)
