"""The digest's claims: each report sent once, across replicas and crashes.

Once, across replicas and crashes. Before a report is sent, its period is claimed: a
compare-and-set on the document (``memory.update_document``) that sets ``last_period`` and
``claim = {at, by, since, tries}`` (the period, this process, its clock, the how-many-th
attempt) only if no one has claimed that period, so two processes or replicas running the job
at once send each report once, and a ``/digest off`` in between is never overwritten. After
the send, one more compare-and-set clears the claim and records ``last_sent_at`` (the time the
report was built for: the next report's "added since") and ``delivered_at`` (when Telegram
took it, by the sender's clock). A send that failed gives the period back, to be tried by a
later run (a restart). A claim still there was left by a replica that died while sending: it
is taken over, as a reminder's is (``bot.core.lease``), once this process has seen that
same claim unchanged for ``LEASE`` on its own clock (``Leases``), so replicas whose clocks
disagree never take over a report being sent right now. The taker sends it with ``tries`` 2;
a claim taken over once already is recorded as done, never sent a third time. So a report is
sent at least once unless the bot is down past ``grace_hours``, and at most twice, only after
a crash between sending and recording.

Finding the left claims must not read every namespace: each claim is first marked in a
bot-wide document ``digest-claims/<namespace>`` (``Store.bot_documents()``), written before the
claim and removed after it is completed or given back (compare-and-set on the marker's
version, so a marker written meanwhile by another attempt stays). A sweep job, every
``SWEEP_SECONDS`` and at start-up, lists that prefix only, and per marker reads that
namespace: a live claim is watched (and taken over after the lease); a completed, given back
or switched-off one has its marker removed; an unclaimed namespace whose marker says a claim
was about to be made keeps it for one lease (the claimant may be between its two writes).
At rest, between runs, there are no markers and the sweep reads nothing else.

These are the claim's records (``mark``, ``finish``, ``unmark``, ``take_back``), each a
compare-and-set that leaves alone what another attempt wrote since; when to claim, watch and
take over is ``bot.jobs.digest.Digest``'s.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import datetime
from typing import Any

from bot.core.lease import Claim
from bot.jobs.digest_plan import SETTINGS, DigestSettings, claim_json
from memory import Store, update_document
from memory.errors import DocumentConflict, MemoryStoreError
from memory.timestamps import format_time

log = logging.getLogger(__name__)

CLAIMS = "digest-claims"  # bot-wide markers of the claims in progress, one per namespace


def mark(store: Store, name: str, claim: Claim) -> str:
    """Mark ``claim`` on namespace ``name`` in the bot-wide markers, before the claim itself
    is made (a claim never exists unmarked: the sweep's index); the marker's version."""
    value = {"namespace": name, **(claim_json(claim) or {})}
    return store.bot_documents().put(f"{CLAIMS}/{name}", value).version


def finish(
    store: Store,
    name: str,
    period: datetime,
    *,
    only: Claim | None = None,
    built: datetime | None = None,
    delivered: datetime | None = None,
    marker: str | None = None,
) -> None:
    """The report of ``period`` was sent (``built``: the time it is of), or is not to be
    sent any more: clear the claim (``only`` that one), then our marker."""

    def record(value: Any) -> Any:
        current = DigestSettings.from_dict(value)
        held = current.sending
        if held is None or held.at != period or (only is not None and held != only):
            return value  # completed by another, or changed meanwhile
        changes: dict[str, Any] = {"claim": None}
        if built is not None:
            changes["last_sent_at"] = format_time(built)
        if delivered is not None:
            changes["delivered_at"] = format_time(delivered)
        return dataclasses.replace(current, **changes).to_dict()

    update_document(store.documents(name), SETTINGS, record)
    if marker is not None:
        unmark(store, name, marker)


def unmark(store: Store, name: str, version: str) -> None:
    """Remove the marker of ``name`` if it is still at ``version``."""
    try:
        store.bot_documents().delete(f"{CLAIMS}/{name}", version=version)
    except DocumentConflict:
        # Another attempt marked it since: that marker is its own, cleared by it or a sweep.
        log.debug("the digest marker of %s changed meanwhile: left in place", name)


def take_back(store: Store, name: str, claim: Claim, before: str | None, marker: str) -> None:
    """Sending failed: give the period of ``claim`` back to ``name`` (its ``last_period``
    ``before`` the claim), if our claim is still there."""

    def restore(value: Any) -> Any:
        current = DigestSettings.from_dict(value)
        if current.sending != claim:
            return value
        return dataclasses.replace(current, last_period=before, claim=None).to_dict()

    try:
        update_document(store.documents(name), SETTINGS, restore)
        unmark(store, name, marker)
    except MemoryStoreError as e:
        log.warning("could not take back the digest period of %s: %s", name, e.message)
