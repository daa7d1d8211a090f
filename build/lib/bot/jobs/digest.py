"""The digest: a scheduled report of each namespace's most used memories.

A job on the application's JobQueue (APScheduler underneath) fires on ``[digest] schedule``, a
crontab expression in ``[digest] timezone`` (``bot.jobs.schedule``), and sends every namespace that
wants it the report of ``bot.jobs.report``, through the application's bot, so that the rate limiter
(``AIORateLimiter``) paces a run over many chats. Namespaces are done one after the other:
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
(``Schedule.latest``) identifies the period; a namespace whose ``last_period`` is that time
has had its report, so a report is never sent twice for one period, however often the job
runs. The job runs at each scheduled time and once at start-up, which sends the reports a stop
missed, if the scheduled time is less than ``grace_hours`` ago (older ones are dropped: the
next period's report will come). The period is recorded before sending, and taken back if
sending fails, so a crash in the middle of a send loses that report rather than doubling it.
Recording is a compare-and-set on the document (``memory.update_document``) that claims the
period only if no one has: two processes or replicas running the job at once send each report
once, and a ``/digest off`` in between is never overwritten.

Failures. Telegram answering 403 (the user blocked the bot, the bot left the group) switches
that namespace off (``off_reason: "blocked"``) and is logged; any other failure for one
namespace is logged and the run goes on with the others.

Reporting is not access: the report reads ``Namespace.memories`` and never searches, so no
``accessCount`` or ``accessedAt`` changes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from telegram import Bot
from telegram.error import Forbidden
from telegram.ext import Application, ContextTypes

from bot.config import DigestConfig
from bot.jobs.report import build_report, render_report
from bot.jobs.schedule import Schedule, parse_timezone
from bot.view.replies import send_html
from memory import Documents, Store, update_document
from memory.errors import MemoryInvalid, MemoryStoreError
from memory.model import Memory, format_time, parse_time

log = logging.getLogger(__name__)

SETTINGS = "digest"  # the document's key
SETTINGS_FILE = "digest.json"  # its file in the file store
JOB_NAME = "digest"
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
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


@dataclass(frozen=True)
class DigestSettings:
    """One namespace's ``digest.json``; a namespace without the file has these defaults."""

    enabled: bool | None = None  # None: never chosen, [digest] default applies
    chat_id: int | None = None  # None: the chat the namespace is named after
    language: str | None = None  # None: guessed from the memories ("zh" if mostly Chinese)
    last_period: str | None = None  # scheduled time (UTC) of the last period reported
    last_sent_at: str | None = None  # when that report was built
    off_reason: str | None = None  # "user" (/digest off) or "blocked" (Telegram said 403)

    @classmethod
    def from_dict(cls, data: object) -> DigestSettings:
        """Read the file's object; a value of the wrong type (a hand edit) takes its default."""
        if not isinstance(data, dict):
            return cls()
        values: dict[str, Any] = {}
        for spec in dataclasses.fields(cls):
            value = data.get(spec.name)
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
        return dataclasses.asdict(self)

    @property
    def period(self) -> datetime | None:
        """``last_period`` as a time."""
        return _time(self.last_period)

    @property
    def sent_at(self) -> datetime | None:
        """``last_sent_at`` as a time."""
        return _time(self.last_sent_at)


@dataclass
class RunResult:
    """What one run did, by namespace name (for the log and the tests)."""

    period: datetime | None
    sent: list[str] = field(default_factory=list)
    switched_off: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Outgoing:
    chat_id: int
    markup: str
    before: DigestSettings  # the settings before the period was recorded, to take it back


def chat_of(name: str) -> int | None:
    """The chat a namespace's report goes to by default: ``users/42`` -> 42, ``chats/-100`` ->
    -100; None for other names."""
    match = _CHAT_NAMESPACE.fullmatch(name)
    return int(match.group(1)) if match else None


def guess_language(memories: Sequence[Memory]) -> str:
    """``zh`` if most memories contain Chinese characters, else ``en``."""
    chinese = sum(1 for memory in memories if _CJK.search(memory.content))
    return "zh" if chinese * 2 > len(memories) else "en"


class Digest:
    """The digest job and the per-namespace settings behind ``/digest``.

    ``clock`` (UTC now by default) is the job's notion of the current time; tests pass a
    controlled one, or call ``run`` with ``now``.
    """

    def __init__(
        self,
        config: DigestConfig,
        store: Store,
        *,
        clock: Callable[[], datetime] = _utc_now,
    ) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self.timezone = parse_timezone(config.timezone)
        self.schedule = Schedule.parse(config.schedule, self.timezone, now=clock())
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

    def switch(self, name: str, enabled: bool, *, language: str | None = None) -> DigestSettings:
        """``/digest on`` or ``off``. Turning it on starts with the next scheduled report (a
        period already past is not sent late)."""
        changes: dict[str, Any] = {"enabled": enabled, "off_reason": None if enabled else "user"}
        if language is not None:
            changes["language"] = language
        if enabled:
            current = self.schedule.latest(self.clock())
            if current is not None:
                changes["last_period"] = format_time(current)
        return self.update(name, **changes)

    def is_on(self, settings: DigestSettings) -> bool:
        """Whether a namespace with ``settings`` gets the scheduled report."""
        chosen = settings.enabled
        return self.config.enabled and (
            chosen if chosen is not None else self.config.default == "on"
        )

    def next_run(self, now: datetime | None = None) -> datetime | None:
        """When the job runs next, in the schedule's time zone."""
        return self.schedule.next_after(now or self.clock())

    @staticmethod
    def _load(documents: Documents) -> DigestSettings:
        found = documents.get(SETTINGS)
        return DigestSettings.from_dict(found.value if found is not None else None)

    # -- the report -------------------------------------------------------------------------

    def report(
        self, name: str, *, language: str | None = None, now: datetime | None = None
    ) -> str | None:
        """The report of namespace ``name`` as HTML right now (``/digest now``); None if it has
        no memories. Nothing is recorded: the scheduled report still comes."""
        now = now or self.clock()
        settings = self.settings(name)
        memories = self.store.namespace(name).memories()
        if not memories:
            return None
        since = settings.sent_at or self.schedule.latest(now - _BEFORE)
        return self._render(memories, since=since, now=now, language=language or settings.language)

    def _render(
        self, memories: list[Memory], *, since: datetime | None, now: datetime, language: str | None
    ) -> str:
        report = build_report(
            memories, now=now, since=since, top=self.config.top, stale_days=self.config.stale_days
        )
        return render_report(report, language or guess_language(memories), self.timezone)

    # -- the job ----------------------------------------------------------------------------

    async def callback(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The JobQueue callback: one run, now."""
        await self.run(context.bot)

    async def run(self, bot: Bot, now: datetime | None = None) -> RunResult:
        """Send the current period's report to every namespace that wants it and lacks it."""
        now = now or self.clock()
        period = self.schedule.latest(now)
        result = RunResult(period)
        if not self.config.enabled or period is None or now - period > self.grace:
            return result
        async with self._running:
            names = await asyncio.to_thread(self.store.namespace_names)
            for name in names:
                outcome = await self._run_one(bot, name, period, now)
                if outcome is not None:
                    getattr(result, outcome).append(name)
        log.info(
            "digest for %s: %d sent, %d switched off, %d failed",
            format_time(period),
            len(result.sent),
            len(result.switched_off),
            len(result.failed),
        )
        return result

    async def _run_one(self, bot: Bot, name: str, period: datetime, now: datetime) -> str | None:
        outgoing = None
        try:
            outgoing = await asyncio.to_thread(self._prepare, name, period, now)
            if outgoing is None:
                return None
            await send_html(bot, outgoing.chat_id, outgoing.markup)
        except Forbidden as e:
            log.warning("digest for %s switched off: Telegram refused (%s)", name, e.message)
            try:
                self.update(name, enabled=False, off_reason="blocked")
            except MemoryStoreError as error:
                log.warning("could not switch off the digest of %s: %s", name, error.message)
            return "switched_off"
        except Exception:
            # One namespace's failure (Telegram, its files, a bug) must not stop the others.
            log.exception("digest for %s failed", name)
            if outgoing is not None:
                self._take_back(name, period, outgoing.before)
            return "failed"
        return "sent"

    def _prepare(self, name: str, period: datetime, now: datetime) -> _Outgoing | None:
        """The report to send to ``name`` for ``period``, recorded as sent; None if it needs
        none (off, already sent, no memories, no chat). Runs in a worker thread."""
        settings = self.settings(name)
        chat_id = settings.chat_id if settings.chat_id is not None else chat_of(name)
        if not self._wants(settings, period) or chat_id is None:
            return None
        memories = self.store.namespace(name).memories()
        if not memories:
            return None
        since = settings.sent_at or self.schedule.latest(period - _BEFORE)
        markup = self._render(memories, since=since, now=now, language=settings.language)
        claimed: list[DigestSettings] = []  # the settings the claim was made on, if it was

        def claim(value: Any) -> Any:
            claimed.clear()
            before = DigestSettings.from_dict(value)  # /digest off may have come in meanwhile
            if not self._wants(before, period):  # or another process sent it
                return value
            claimed.append(before)
            return dataclasses.replace(
                before, last_period=format_time(period), last_sent_at=format_time(now)
            ).to_dict()

        update_document(self.store.documents(name), SETTINGS, claim)
        return _Outgoing(chat_id, markup, claimed[0]) if claimed else None

    def _wants(self, settings: DigestSettings, period: datetime) -> bool:
        """Whether a namespace with ``settings`` still needs the report of ``period``."""
        last = settings.period
        return self.is_on(settings) and (last is None or last < period)

    def _take_back(self, name: str, period: datetime, before: DigestSettings) -> None:
        """Forget that ``period`` was sent to ``name`` (sending failed), unless that changed."""

        def restore(value: Any) -> Any:
            current = DigestSettings.from_dict(value)
            if current.period != period:
                return value
            return dataclasses.replace(
                current, last_period=before.last_period, last_sent_at=before.last_sent_at
            ).to_dict()

        try:
            update_document(self.store.documents(name), SETTINGS, restore)
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
        queue.run_custom(
            self.callback,
            job_kwargs={"trigger": self.schedule, "misfire_grace_time": grace, "coalesce": True},
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


__all__ = [
    "JOB_NAME",
    "SETTINGS_FILE",
    "Digest",
    "DigestSettings",
    "RunResult",
    "chat_of",
    "guess_language",
]
