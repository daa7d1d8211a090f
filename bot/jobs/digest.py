"""The digest: a scheduled report of each namespace's most used memories.

A job on the application's JobQueue (APScheduler underneath) fires on ``[digest] schedule``, a
crontab expression read in each chat's own zone (``bot.jobs.schedule``): ``0 9 * * mon`` is
Monday 09:00 in Berlin for a chat that chose Europe/Berlin with ``/timezone``, and in
``[digest] timezone`` for a chat that chose none. It sends every namespace that wants it the
report of ``bot.jobs.report``, through the application's bot, so that the rate limiter
(``bot.chat.pacing``) paces a run over many chats. Namespaces are done one after the other:
Telegram allows about 30 messages a second, so a run over 10,000 chats takes minutes, and the
bot keeps answering meanwhile (the store is read in a worker thread).

Per namespace, the document ``digest`` (``digest.json`` in the file store) holds the setting
(``/digest on|off``) and what was sent; it survives restarts. A namespace that never chose
(no document, or ``enabled: null``) follows ``[digest] default``, "off" unless configured:
chats opt in with ``/digest on``. The report goes to the private chat of ``users/<id>`` and
to the group of ``chats/<id>``
(``chat_id`` in the document overrides that); it is in the language of whoever last sent
``/digest on|off`` there, else Chinese if most memories are, else English.

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

Failures. Telegram answering 403 (the user blocked the bot, the bot left the group) switches
that namespace off (``off_reason: "blocked"``) and is logged; any other failure for one
namespace is logged and the run goes on with the others.

A report shows its times in the chat's own zone when it set one with ``/timezone``
(``bot.core.chat_zones.zone_of_chat``), else in ``[digest] timezone``. A group's report is
titled with the group's name (``title``, noted whenever ``/digest`` is used there), a private
chat's as "your" digest.

Reporting is not access: the report reads ``Namespace.memories`` and never searches, so no
``accessCount`` or ``accessedAt`` changes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import re
import secrets
import socket
import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from telegram import Bot
from telegram.error import Forbidden
from telegram.ext import Application, ContextTypes, Job

from bot.config import DigestConfig
from bot.core.chat_zones import chosen_zones, zone_of_chat, zones_in_use
from bot.core.lease import LEASE, Claim, Leases
from bot.jobs.report import build_report, guess_language, render_report
from bot.jobs.schedule import Schedule, Schedules, parse_timezone
from bot.jobs.tidy import digest_line
from bot.view.replies import send_html
from memory import Documents, Store, update_document
from memory.errors import DocumentConflict, MemoryInvalid, MemoryStoreError
from memory.model import Memory, format_time, parse_time

log = logging.getLogger(__name__)

SETTINGS = "digest"  # the document's key
SETTINGS_FILE = "digest.json"  # its file in the file store
JOB_NAME = "digest"
SWEEP_NAME = "digest-sweep"
SWEEP_SECONDS = 60.0  # how often left claims are looked for (a takeover needs LEASE more)
CLAIMS = "digest-claims"  # bot-wide markers of the claims in progress, one per namespace
_CHAT_NAMESPACE = re.compile(r"(?:users|chats)/(-?\d+)")
_BEFORE = timedelta(microseconds=1)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except MemoryInvalid:
        return None


def _claim_json(claim: Claim | None) -> dict[str, Any] | None:
    if claim is None:
        return None
    since = format_time(claim.since)
    return {"at": format_time(claim.at), "by": claim.by, "since": since, "tries": claim.tries}


def _claim_of(value: object) -> Claim | None:
    """A claim as ``_claim_json`` wrote it; None if ``value`` is not one (a hand edit)."""
    if not isinstance(value, dict):
        return None
    at, since = _time(value.get("at")), _time(value.get("since"))
    by, tries = value.get("by"), value.get("tries")
    if at is None or since is None or not isinstance(by, str):
        return None
    if not isinstance(tries, int) or isinstance(tries, bool) or tries < 1:
        return None
    return Claim(at, by, since, tries)


@dataclass(frozen=True)
class DigestSettings:
    """One namespace's ``digest.json``; a namespace without the file has these defaults."""

    enabled: bool | None = None  # None: never chosen, [digest] default applies
    chat_id: int | None = None  # None: the chat the namespace is named after
    language: str | None = None  # None: guessed from the memories ("zh" if mostly Chinese)
    last_period: str | None = None  # scheduled time (UTC) of the last period reported
    last_sent_at: str | None = None  # the time the last report sent was built for
    off_reason: str | None = None  # "user" (/digest off) or "blocked" (Telegram said 403)
    claim: Claim | None = None  # who is sending a report, since when (module docstring)
    delivered_at: str | None = None  # when Telegram took the last report (sender's clock)
    title: str | None = None  # a group's name, for the report's title

    @classmethod
    def from_dict(cls, data: object) -> DigestSettings:
        """Read the file's object; a value of the wrong type (a hand edit) takes its default."""
        if not isinstance(data, dict):
            return cls()
        values: dict[str, Any] = {}
        for spec in dataclasses.fields(cls):
            value = data.get(spec.name)
            if spec.name == "claim":
                values["claim"] = _claim_of(value)
                if value is not None and values["claim"] is None:
                    log.warning("ignored claim = %r in a %s: not a claim", value, SETTINGS_FILE)
                continue
            wanted = bool if spec.name == "enabled" else int if spec.name == "chat_id" else str
            if isinstance(value, wanted) and (wanted is bool or not isinstance(value, bool)):
                values[spec.name] = value
            elif value is not None:
                log.warning(
                    "ignored %s = %r in a %s: not a %s",
                    spec.name,
                    value,
                    SETTINGS_FILE,
                    wanted.__name__,
                )
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """The file's object: every key, ``null`` where unset."""
        values = {spec.name: getattr(self, spec.name) for spec in dataclasses.fields(self)}
        return {**values, "claim": _claim_json(self.claim)}

    @property
    def period(self) -> datetime | None:
        """``last_period`` as a time."""
        return _time(self.last_period)

    @property
    def sent_at(self) -> datetime | None:
        """``last_sent_at`` as a time."""
        return _time(self.last_sent_at)

    @property
    def sending(self) -> Claim | None:
        """The claim on ``last_period``, if its report is being sent (None: done, or free)."""
        claim, period = self.claim, self.period
        return claim if claim is not None and period is not None and claim.at == period else None


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
    markup: str
    period: datetime
    claim: Claim  # ours, on the document
    built: datetime  # the time the report is of
    before: str | None  # last_period before the claim, to give it back
    marker: str  # the version of our marker


def chat_of(name: str) -> int | None:
    """The chat a namespace's report goes to by default: ``users/42`` -> 42, ``chats/-100`` ->
    -100; None for other names."""
    match = _CHAT_NAMESPACE.fullmatch(name)
    return int(match.group(1)) if match else None


class Digest:
    """The digest job and the per-namespace settings behind ``/digest``.

    ``clock`` (UTC now by default) is the job's notion of the current time; tests pass a
    controlled one, or call ``run`` with ``now``. ``owner`` names this process in its claims.
    ``chats`` limits the reports sent to those chats (the console's own); None: every chat.
    """

    def __init__(
        self,
        config: DigestConfig,
        store: Store,
        *,
        clock: Callable[[], datetime] = _utc_now,
        owner: str | None = None,
        sweep_seconds: float = SWEEP_SECONDS,
        chats: Collection[int] | None = None,
    ) -> None:
        self.config = config
        self.chats = frozenset(chats) if chats is not None else None  # None: every chat
        self.store = store
        self.clock = clock
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"
        self.sweep_seconds = sweep_seconds
        self._leases = Leases()  # claims (and markers) seen held, timed on this clock
        self._sweeping = asyncio.Lock()
        self.timezone = parse_timezone(config.timezone)
        self.schedule = Schedule.parse(config.schedule, self.timezone, now=clock())
        self._schedules: dict[str, Schedule] = {self.timezone.key: self.schedule}
        self._schedules_lock = threading.Lock()
        self._waking = {self.timezone.key}  # the zones the job wakes in (``trigger``)
        self._job: Job[Any] | None = None
        self.grace = timedelta(hours=config.grace_hours)
        # One run at a time in this process (the scheduled one and the catch-up), so that a
        # run's namespaces are visited once; other processes are kept apart by the store.
        self._running = asyncio.Lock()

    # -- settings ---------------------------------------------------------------------------

    def settings(self, name: str) -> DigestSettings:
        """The settings of namespace ``name`` (the defaults if it has none)."""
        return self._load(self.store.documents(name))

    def update(self, name: str, **changes: Any) -> DigestSettings:
        """Change some settings of namespace ``name`` and save them; returns the new ones."""

        def change(value: Any) -> dict[str, Any]:
            return dataclasses.replace(DigestSettings.from_dict(value), **changes).to_dict()

        return DigestSettings.from_dict(
            update_document(self.store.documents(name), SETTINGS, change)
        )

    def switch(
        self,
        name: str,
        enabled: bool,
        *,
        language: str | None = None,
        title: str | None = None,
    ) -> DigestSettings:
        """``/digest on`` or ``off`` (``title``: the group's name). Turning it on starts with
        the next scheduled report (a period already past is not sent late)."""
        changes: dict[str, Any] = {"enabled": enabled, "off_reason": None if enabled else "user"}
        if language is not None:
            changes["language"] = language
        if title is not None:
            changes["title"] = title
        if enabled:
            current = self.schedule_of(name).latest(self.clock())
            if current is not None:
                changes["last_period"] = format_time(current)
        return self.update(name, **changes)

    def note_title(self, name: str, title: str) -> None:
        """Keep a group's name for its report's title (written only when it changed)."""
        if self.settings(name).title != title:
            self.update(name, title=title)

    def is_on(self, settings: DigestSettings) -> bool:
        """Whether a namespace with ``settings`` gets the scheduled report."""
        chosen = settings.enabled
        return self.config.enabled and (
            chosen if chosen is not None else self.config.default == "on"
        )

    def next_run(self, now: datetime | None = None) -> datetime | None:
        """When the job runs next in ``[digest] timezone``, in that zone."""
        return self.schedule.next_after(now or self.clock())

    def next_report(self, name: str) -> tuple[datetime | None, ZoneInfo]:
        """When namespace ``name`` gets its next report, and its chat's zone (``/digest``)."""
        zone = self.zone_of(name)
        return self._schedule_in(zone).next_after(self.clock()), zone

    def zone_of(self, name: str, settings: DigestSettings | None = None) -> ZoneInfo:
        """The zone of the chat the namespace's report goes to: the chat's own (``/timezone``),
        else ``[digest] timezone``."""
        chat = chat_of(name)
        if chat is None:
            chat = (settings or self.settings(name)).chat_id
        return (zone_of_chat(self.store, chat) if chat is not None else None) or self.timezone

    def schedule_of(self, name: str) -> Schedule:
        """The schedule in the zone of namespace ``name``'s chat."""
        return self._schedule_in(self.zone_of(name))

    def _schedule_in(self, zone: ZoneInfo) -> Schedule:
        """The schedule in ``zone`` (made once; any thread)."""
        with self._schedules_lock:
            found = self._schedules.get(zone.key)
            if found is None:  # checked at start-up in [digest] timezone: it fires in any zone
                found = Schedule.parse(self.config.schedule, zone, now=self.clock())
                self._schedules[zone.key] = found
            return found

    def zone_chosen(self, zone: ZoneInfo) -> None:
        """A chat chose ``zone`` (``/timezone``): the job wakes at its local times too."""
        self._learn({zone.key})

    def _learn(self, zones: set[str]) -> None:
        """Wake in ``zones`` too: the job is given its new times if any is new. On the event
        loop only (``_waking`` is the trigger's, and rescheduling is the scheduler's)."""
        new = set()
        for key in zones - self._waking:
            try:
                self._schedule_in(ZoneInfo(key))
            except (ValueError, KeyError, OSError):
                log.warning("the digest ignores the unknown time zone %r", key)
                continue
            new.add(key)
        self._waking |= new
        if new and self._job is not None and not self._job.removed:
            self._job.job.reschedule(trigger=self.trigger())

    def trigger(self) -> Schedules:
        """When the job runs: the schedule in every zone in use."""
        return Schedules([self._schedule_in(ZoneInfo(key)) for key in sorted(self._waking)])

    @staticmethod
    def _load(documents: Documents) -> DigestSettings:
        found = documents.get(SETTINGS)
        return DigestSettings.from_dict(found.value if found is not None else None)

    # -- the report -------------------------------------------------------------------------

    def report(
        self,
        name: str,
        *,
        language: str | None = None,
        now: datetime | None = None,
        title: str | None = None,
    ) -> str | None:
        """The report of namespace ``name`` as HTML right now (``/digest now``); None if it has
        no memories. Nothing is recorded: the scheduled report still comes. ``title``: the
        group's name as Telegram gives it now."""
        now = now or self.clock()
        settings = self.settings(name)
        memories = self.store.namespace(name).memories()
        if not memories:
            return None
        zone = self.zone_of(name, settings)
        since = settings.sent_at or self._schedule_in(zone).latest(now - _BEFORE)
        return self._render(
            memories,
            settings,
            since=since,
            now=now,
            language=language or settings.language,
            zone=zone,
            chat=settings.chat_id if settings.chat_id is not None else chat_of(name),
            title=title,
            name=name,
        )

    def _render(
        self,
        memories: list[Memory],
        settings: DigestSettings,
        *,
        since: datetime | None,
        now: datetime,
        language: str | None,
        zone: ZoneInfo,
        chat: int | None,
        title: str | None = None,
        name: str | None = None,
    ) -> str:
        """The report, its times in the chat's zone, titled as a group's or as "your", with
        what the last tidy of namespace ``name`` did (``bot.jobs.tidy``)."""
        report = build_report(
            memories, now=now, since=since, top=self.config.top, stale_days=self.config.stale_days
        )
        group = (title or settings.title or "") if chat is not None and chat < 0 else None
        language = language or guess_language(memories)
        tidy = digest_line(self.store, name, language, zone) if name is not None else ""
        return render_report(report, language, zone, group=group, tidy=tidy)

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
            waking = set(self._waking)
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
            marked = _claim_of(value)
            # The claimant may be between its marker and its claim: give it one lease.
            about_to = marked is not None and self._wants(settings, marked.at)
            if about_to and marked is not None and not self._leases.expired(key, marked, now):
                return None
            self._leases.forget(key)
            self._unmark(name, version)
            return None
        self._leases.forget(key)
        if now - held.at > self.grace:
            log.warning("digest for %s: the claim of %s is past the grace period", name, held.by)
            self._finish(name, held.at, only=held, marker=version)
            return None
        if not self._leases.expired(name, held, now):
            return None  # someone is sending it right now, or we have not watched it long
        self._leases.forget(name)
        if held.tries >= 2:
            # Taken over after a crash once already: recorded as done, never a third copy.
            log.warning("digest for %s: tried twice already (crashes), recorded as sent", name)
            self._finish(name, held.at, only=held, marker=version)
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
            await send_html(bot, outgoing.chat_id, outgoing.markup)
        except Forbidden as e:
            log.warning("digest for %s switched off: Telegram refused (%s)", name, e.message)
            try:
                self.update(name, enabled=False, off_reason="blocked", claim=None)
                if outgoing is not None:
                    self._unmark(name, outgoing.marker)
            except MemoryStoreError as error:
                log.warning("could not switch off the digest of %s: %s", name, error.message)
            return "switched_off"
        except Exception:
            # One namespace's failure (Telegram, its files, a bug) must not stop the others.
            log.exception("digest for %s failed", name)
            if outgoing is not None:
                self._take_back(name, outgoing)
            return "failed"
        delivered = self.clock()
        try:
            await asyncio.to_thread(
                self._finish,
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
                self._finish(name, period, only=held)
            return None
        since = settings.sent_at or schedule.latest(period - _BEFORE)
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
        marker = self.store.bot_documents().put(
            f"{CLAIMS}/{name}", {"namespace": name, **(_claim_json(ours) or {})}
        )
        before: list[str | None] = []  # last_period before the claim, if it was made

        def claim(value: Any) -> Any:
            before.clear()
            current = DigestSettings.from_dict(value)  # /digest off may have come in meanwhile
            if not self._needs(current, period, held):  # or another process sent it
                return value
            earlier = schedule.latest(period - _BEFORE)
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
        return _Outgoing(chat_id, markup, period, ours, now, before[0], marker.version)

    def _needs(self, settings: DigestSettings, period: datetime, held: Claim | None) -> bool:
        """Whether ``period`` is to be claimed: unclaimed, or (``held``) that claim still held."""
        if held is None:
            return self._wants(settings, period)
        return self.is_on(settings) and settings.sending == held

    def _wants(self, settings: DigestSettings, period: datetime) -> bool:
        """Whether a namespace with ``settings`` still needs the report of ``period``."""
        last = settings.period
        return self.is_on(settings) and (last is None or last < period)

    def _finish(
        self,
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

        update_document(self.store.documents(name), SETTINGS, record)
        if marker is not None:
            self._unmark(name, marker)

    def _unmark(self, name: str, version: str) -> None:
        """Remove the marker of ``name`` if it is still at ``version``."""
        try:
            self.store.bot_documents().delete(f"{CLAIMS}/{name}", version=version)
        except DocumentConflict:
            # Another attempt marked it since: that marker is its own, cleared by it or a sweep.
            log.debug("the digest marker of %s changed meanwhile: left in place", name)

    def _take_back(self, name: str, outgoing: _Outgoing) -> None:
        """Sending failed: give ``period`` back to ``name``, if our claim is still there."""

        def restore(value: Any) -> Any:
            current = DigestSettings.from_dict(value)
            if current.sending != outgoing.claim:
                return value
            return dataclasses.replace(current, last_period=outgoing.before, claim=None).to_dict()

        try:
            update_document(self.store.documents(name), SETTINGS, restore)
            self._unmark(name, outgoing.marker)
        except MemoryStoreError as e:
            log.warning("could not take back the digest period of %s: %s", name, e.message)

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


__all__ = [
    "CLAIMS",
    "JOB_NAME",
    "LEASE",
    "SETTINGS_FILE",
    "SWEEP_NAME",
    "Digest",
    "DigestSettings",
    "RunResult",
    "chat_of",
    "guess_language",
]
