"""The digest: a scheduled report of each namespace's most used memories.

A job on the application's JobQueue (APScheduler underneath) fires on ``[digest] schedule``, a
crontab expression read in each chat's own zone (``bot.schedule``): ``0 9 * * mon`` is
Monday 09:00 in Berlin for a chat that chose Europe/Berlin with ``/timezone``, and in
``[digest] timezone`` for a chat that chose none. It sends every namespace that wants it the
report of ``bot.view.digest_view``, through the application's bot, so that the rate limiter
(``bot.chat.pacing``) paces a run over many chats. Namespaces are done one after the other:
Telegram allows about 30 messages a second, so a run over 10,000 chats takes minutes, and the
bot keeps answering meanwhile (the store is read in a worker thread).

What each namespace wants (the document ``digest``: ``/digest on|off``, what was sent), its
chat's zone and schedule, and the report's text are ``bot.jobs.digest_plan``.

Periods and restarts. The scheduled time of the latest run at or before ``now``
(``Schedule.latest``) in the namespace's zone identifies its period; a namespace whose
``last_period`` is that time has had its report (or is being sent it), so a report is never
sent twice for one period, however often the job runs. The job runs at each scheduled time in
each zone in use (``Schedules``: the configured one and those chats chose, learnt from
``bot.core.chat_zones`` at each run, each sweep and each ``/timezone`` in this process) and
once at start-up, which sends the reports a stop missed, if the scheduled time is less than
``grace_hours`` ago (older ones are dropped: the next period's report will come). A run reads
the chats' zones once (one listing) and skips, without reading it, every namespace whose
chat's period is not due. A chat that moves its zone west by some hours right after its report
gets the next one at the new zone's time, which can be sooner than a whole period later.

Once, across replicas and crashes: before a report is sent, its period is claimed in the
namespace's document, and marked in a bot-wide one that a sweep lists to find the claims a
crashed replica left (``bot.jobs.digest_claims``). So a report is sent at least once unless the
bot is down past ``grace_hours``, and at most twice, only after a crash between sending and
recording.

Failures. Telegram answering 403 (the user blocked the bot, the bot left the group) switches
that namespace off (``off_reason: "blocked"``) and is logged, and so does a topic's report
refused for its topic (closed or deleted: ``off_reason: "topic"``; ``/digest on`` there, once
it is open again, turns it back on); any other failure for one namespace is logged and the run
goes on with the others.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import secrets
import socket
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from telegram import Bot
from telegram.error import BadRequest, Forbidden
from telegram.ext import Application, ContextTypes, Job

from bot.config import DigestConfig
from bot.core.chat_zones import chosen_zones, zones_in_use
from bot.core.lease import Claim, Leases
from bot.jobs.digest_claims import CLAIMS, finish, mark, take_back, unmark
from bot.jobs.digest_plan import (
    JUST_BEFORE,
    SETTINGS,
    DigestPlan,
    DigestSettings,
    chat_of,
    claim_of,
    topic_of,
    utc_now,
)
from bot.jobs.reminder_send import is_about_topic
from bot.schedule import Schedule, Schedules, Waking
from bot.view.replies import send_html
from memory import update_document
from memory.errors import MemoryStoreError
from memory.interface import Store
from memory.timestamps import format_time

log = logging.getLogger(__name__)

JOB_NAME = "digest"
SWEEP_NAME = "digest-sweep"
SWEEP_SECONDS = 60.0  # how often left claims are looked for (a takeover needs LEASE more)


@dataclass
class RunResult:
    """What one run did, by namespace name (for the log and the tests)."""

    period: datetime | None  # of [digest] timezone (a chat's zone may have its own)
    sent: list[str] = field(default_factory=list)
    switched_off: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Outgoing:
    chat_id: int
    thread_id: int | None  # the forum topic of a topic's namespace
    markup: str
    period: datetime
    claim: Claim  # ours, on the document
    built: datetime  # the time the report is of
    before: str | None  # last_period before the claim, to give it back
    marker: str  # the version of our marker


class Digest(DigestPlan):
    """The digest job, on the settings and schedules of ``DigestPlan``.

    ``clock`` (UTC now by default) is the job's notion of the current time; tests pass a
    controlled one, or call ``run`` with ``now``. ``owner`` names this process in its claims.
    ``chats`` limits the reports sent to those chats (the console's own); None: every chat.
    """

    def __init__(
        self,
        config: DigestConfig,
        store: Store,
        *,
        clock: Callable[[], datetime] = utc_now,
        owner: str | None = None,
        sweep_seconds: float = SWEEP_SECONDS,
        chats: Collection[int] | None = None,
    ) -> None:
        super().__init__(config, store, clock=clock)
        self.chats = frozenset(chats) if chats is not None else None  # None: every chat
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.sweep_seconds = sweep_seconds
        self._leases = Leases()  # claims (and markers) seen held, timed on this clock
        self._sweeping = asyncio.Lock()
        self._waking = Waking(self.timezone, self._schedule_in, "digest")  # ``trigger``
        self._job: Job[Any] | None = None
        self.grace = timedelta(hours=config.grace_hours)
        # One run at a time in this process (the scheduled one and the catch-up), so that a
        # run's namespaces are visited once; other processes are kept apart by the store.
        self._running = asyncio.Lock()

    # -- the zones the job wakes in ---------------------------------------------------------

    def zone_chosen(self, zone: ZoneInfo) -> None:
        """A chat chose ``zone`` (``/timezone``): the job wakes at its local times too."""
        self._learn({zone.key})

    def _learn(self, zones: set[str]) -> None:
        """Wake in ``zones`` too: the job is given its new times if any is new. On the event
        loop only (the trigger is the job's, and rescheduling is the scheduler's)."""
        if self._waking.learn(zones) and self._job is not None and not self._job.removed:
            self._job.job.reschedule(trigger=self.trigger())

    def trigger(self) -> Schedules:
        """When the job runs: the schedule in every zone in use."""
        return self._waking.trigger()

    # -- the job ----------------------------------------------------------------------------

    async def callback(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The JobQueue callback: one run, now."""
        await self.run(context.bot)

    async def run(self, bot: Bot, now: datetime | None = None) -> RunResult:
        """Send the current period's report to every namespace that wants it and lacks it,
        each namespace's period in its chat's zone."""
        now = now or self.clock()
        result = RunResult(self.schedule.latest(now))
        if not self.config.enabled:
            return result
        async with self._running:
            chosen = await asyncio.to_thread(chosen_zones, self.store)
            self._learn({zone.key for zone in chosen.values()})
            waking = set(self._waking.keys)
            due = await asyncio.to_thread(
                lambda: {k for k in waking if self._due(self._schedule_in(ZoneInfo(k)), now)}
            )
            if not due:
                return result
            names = await asyncio.to_thread(self.store.namespace_names)
            for name in names:
                chat = chat_of(name)
                if chat is not None and chosen.get(chat, self.timezone).key not in due:
                    continue  # its chat's period is not due: not even read
                outcome = await self._run_one(bot, name, None, now)
                if outcome is not None:
                    getattr(result, outcome).append(name)
        log.info(
            "digest for %s: %d sent, %d switched off, %d failed",
            ", ".join(sorted(due)),
            len(result.sent),
            len(result.switched_off),
            len(result.failed),
        )
        return result

    async def sweep(self, bot: Bot, now: datetime | None = None) -> RunResult:
        """Take over the reports whose claim was never completed (module docstring): those
        this process has seen claimed, unchanged, for ``LEASE``."""
        now = now or self.clock()
        result = RunResult(self.schedule.latest(now))
        if not self.config.enabled:
            return result
        async with self._sweeping:
            # A zone chosen through another replica: this one wakes at its times too.
            self._learn(await asyncio.to_thread(zones_in_use, self.store))
            left = await asyncio.to_thread(self._left_claims, now)
            for name, held in left:
                outcome = await self._run_one(bot, name, held.at, now, held)
                if outcome is not None:
                    getattr(result, outcome).append(name)
        if result.sent or result.switched_off or result.failed:
            log.info(
                "digest taken over: %d sent, %d switched off, %d failed",
                len(result.sent),
                len(result.switched_off),
                len(result.failed),
            )
        return result

    async def sweep_callback(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The JobQueue callback of the sweep."""
        await self.sweep(context.bot)

    def _left_claims(self, now: datetime) -> list[tuple[str, Claim]]:
        """The claims to take over now, by namespace; markers no longer needed are removed.
        Runs in a worker thread."""
        left = []
        for marker in self.store.bot_documents().list(f"{CLAIMS}/"):
            name = marker.key.removeprefix(f"{CLAIMS}/")
            try:
                held = self._look(name, marker.key, marker.value, marker.version, now)
            except MemoryStoreError as e:
                log.warning("the digest claim of %s could not be looked at: %s", name, e.message)
                continue
            if held is not None:
                left.append((name, held))
        return left

    def _look(
        self, name: str, key: str, value: object, version: str, now: datetime
    ) -> Claim | None:
        """What the marker ``key`` of namespace ``name`` asks for: the claim to take over, or
        None (watched, or done with and its marker removed)."""
        settings = self.settings(name)
        held = settings.sending if self.is_on(settings) else None
        if held is None:
            marked = claim_of(value)
            # The claimant may be between its marker and its claim: give it one lease.
            about_to = marked is not None and self._wants(settings, marked.at)
            if about_to and marked is not None and not self._leases.expired(key, marked, now):
                return None
            self._leases.forget(key)
            unmark(self.store, name, version)
            return None
        self._leases.forget(key)
        if now - held.at > self.grace:
            log.warning("digest for %s: the claim of %s is past the grace period", name, held.by)
            finish(self.store, name, held.at, only=held, marker=version)
            return None
        if not self._leases.expired(name, held, now):
            return None  # someone is sending it right now, or we have not watched it long
        self._leases.forget(name)
        if held.tries >= 2:
            # Taken over after a crash once already: recorded as done, never a third copy.
            log.warning("digest for %s: tried twice already (crashes), recorded as sent", name)
            finish(self.store, name, held.at, only=held, marker=version)
            return None
        return held

    def _due(self, schedule: Schedule, now: datetime) -> datetime | None:
        """The period of ``schedule`` to report now: its latest time, if within the grace."""
        period = schedule.latest(now)
        return period if period is not None and now - period <= self.grace else None

    async def _run_one(
        self,
        bot: Bot,
        name: str,
        period: datetime | None,
        now: datetime,
        held: Claim | None = None,
    ) -> str | None:
        """Send ``name`` its report of ``period`` (None: the one due in its chat's zone)."""
        outgoing = None
        try:
            outgoing = await asyncio.to_thread(self._prepare, name, period, now, held)
            if outgoing is None:
                return None
            await send_html(bot, outgoing.chat_id, outgoing.markup, thread_id=outgoing.thread_id)
        except Exception as e:
            # The chat refused the bot (403), or the forum topic is closed or gone: a report
            # nobody can read there, switched off. Any other failure of one namespace
            # (Telegram, its files, a bug) must not stop the others: tried again later.
            gone = isinstance(e, BadRequest) and is_about_topic(e) and topic_of(name) is not None
            if not isinstance(e, Forbidden) and not gone:
                log.exception("digest for %s failed", name)
                if outgoing is not None:
                    take_back(self.store, name, outgoing.claim, outgoing.before, outgoing.marker)
                return "failed"
            log.warning("digest for %s switched off: Telegram refused (%s)", name, e)
            try:
                reason = "topic" if gone else "blocked"
                self.update(name, enabled=False, off_reason=reason, claim=None)
                if outgoing is not None:
                    unmark(self.store, name, outgoing.marker)
            except MemoryStoreError as error:
                log.warning("could not switch off the digest of %s: %s", name, error.message)
            return "switched_off"
        delivered = self.clock()
        try:
            await asyncio.to_thread(
                finish,
                self.store,
                name,
                outgoing.period,
                built=outgoing.built,
                delivered=delivered,
                marker=outgoing.marker,
            )
        except Exception:
            # Sent but not recorded (the store failed): the claim stays, and after its lease
            # the report is sent once more (the documented at-most-one repeat).
            log.exception("digest for %s sent but not recorded", name)
        return "sent"

    def _prepare(
        self, name: str, wanted: datetime | None, now: datetime, held: Claim | None = None
    ) -> _Outgoing | None:
        """The report to send to ``name`` for period ``wanted`` (None: the one due now in its
        chat's zone), claimed; None if it needs none (off, not due, already sent or being sent,
        no memories, no chat). With ``held``: take that left claim over, if it is still there.
        Runs in a worker thread."""
        settings = self.settings(name)
        chat_id = settings.chat_id if settings.chat_id is not None else chat_of(name)
        if self.chats is not None and chat_id not in self.chats:
            return None  # another process's chat (the console serves its own only)
        zone = self.zone_of(name, settings)
        schedule = self._schedule_in(zone)
        period = wanted if wanted is not None else self._due(schedule, now)
        if period is None or not self._needs(settings, period, held):
            return None
        memories = self.store.namespace(name).memories()
        if chat_id is None or not memories:
            if held is not None:  # nothing to send any more: the claim is done with
                finish(self.store, name, period, only=held)
            return None
        since = settings.sent_at or schedule.latest(period - JUST_BEFORE)
        markup = self._render(
            memories,
            settings,
            since=since,
            now=now,
            language=settings.language,
            zone=zone,
            chat=chat_id,
            name=name,
        )
        ours = Claim(period, self.owner, now, 1 if held is None else held.tries + 1)
        # Marked before it is claimed: a claim never exists unmarked (the sweep's index).
        marker = mark(self.store, name, ours)
        before: list[str | None] = []  # last_period before the claim, if it was made

        def claim(value: Any) -> Any:
            before.clear()
            current = DigestSettings.from_dict(value)  # /digest off may have come in meanwhile
            if not self._needs(current, period, held):  # or another process sent it
                return value
            earlier = schedule.latest(period - JUST_BEFORE)
            before.append(
                current.last_period
                if held is None
                else (format_time(earlier) if earlier is not None else None)
            )
            return dataclasses.replace(
                current, last_period=format_time(period), claim=ours
            ).to_dict()

        update_document(self.store.documents(name), SETTINGS, claim)
        if not before:
            return None  # our marker stays until the sweep sees the claim done: it may be theirs
        # The topic only to the chat the name says: a chat_id set by hand is its main chat.
        topic = topic_of(name) if chat_id == chat_of(name) else None
        return _Outgoing(chat_id, topic, markup, period, ours, now, before[0], marker)

    def _needs(self, settings: DigestSettings, period: datetime, held: Claim | None) -> bool:
        """Whether ``period`` is to be claimed: unclaimed, or (``held``) that claim still held."""
        if held is None:
            return self._wants(settings, period)
        return self.is_on(settings) and settings.sending == held

    def _wants(self, settings: DigestSettings, period: datetime) -> bool:
        """Whether a namespace with ``settings`` still needs the report of ``period``."""
        last = settings.period
        return self.is_on(settings) and (last is None or last < period)

    # -- wiring -----------------------------------------------------------------------------

    def register(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Put the job on ``application``'s JobQueue: at every scheduled time, and once as soon
        as the application starts (the catch-up of a report missed while it was down)."""
        queue = application.job_queue
        if queue is None:
            raise RuntimeError("the JobQueue is missing: install python-telegram-bot[job-queue]")
        if not self.config.enabled:
            return
        grace = max(1, int(self.grace.total_seconds()))  # APScheduler wants whole seconds
        self._job = queue.run_custom(
            self.callback,
            job_kwargs={"trigger": self.trigger(), "misfire_grace_time": grace, "coalesce": True},
            name=JOB_NAME,
        )
        # No misfire limit: start-up (post_init, network) may take longer than APScheduler's
        # default second between this call and the scheduler's start.
        queue.run_once(
            self.callback,
            when=0,
            name=f"{JOB_NAME}-catch-up",
            job_kwargs={"misfire_grace_time": None},
        )
        # From start-up on: the first look starts the lease of a claim left by a crash.
        queue.run_repeating(
            self.sweep_callback,
            interval=self.sweep_seconds,
            first=0,
            name=SWEEP_NAME,
            job_kwargs={"misfire_grace_time": None, "coalesce": True},
        )


__all__ = ["JOB_NAME", "SWEEP_NAME", "Digest", "RunResult"]
