"""The nightly tidy: every namespace's memories tidied once a night, in its chat's time zone.

A job on the application's JobQueue fires at ``[tidy] schedule`` (a crontab expression,
``30 3 * * *``: 03:30) in each zone in use: the zone a chat chose with ``/timezone``
(``bot.core.chat_zones``), else ``[reminders] timezone``, as the digest does
(``bot.jobs.schedule.Schedules``); and once at start-up, which tidies a night a stop missed
if it is less than ``grace_hours`` ago, in the namespaces tidied before (one never tidied
missed nothing: its first tidy comes on its first night, not whenever the bot starts).

Each namespace whose chat's night has come, and which wants it (``/tidy off`` and ``/tidy
on``; a namespace that never chose follows ``[tidy] default``, "on"), is tidied by
``bot.core.tidying.tidy``, and the memories of its finished or cancelled reminders are ended
(``bot.jobs.reminder_memory.follow``: a done one marked ✅, a cancelled one removed) where
they still say otherwise. All of it is one change in the
memories' history, made by the bot (``by = "bot"``, door ``tidy``): one ``/undo`` in the chat
reverts it; in a group only an administrator may (``bot.core.policy``).

Then the chat is told what was done, with ↩ Undo, and asked about the values it could not
settle (``bot.chat.tidying`` answers the buttons); a night with nothing to do sends nothing.
``/tidy`` runs the same tidy at once, as the person who sent it.

Once, across replicas. Before a namespace is tidied, its night is claimed: a compare-and-set
on its document ``tidy`` that sets ``last_period`` to the night's scheduled time only if it is
earlier; the process whose write lands tidies, the others skip. A tidy interrupted by a crash
is not taken over: tidying is not a message someone waits for, and the next night tidies
whatever is left (at most once a night, never twice).

The document also keeps the setting, the language of whoever last sent ``/tidy`` there, and
what the last tidy did (``last``: counts and when), which the digest mentions (``digest_line``).
``chats`` limits the job to those chats (the console tidies its own).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from telegram import Bot, InlineKeyboardMarkup
from telegram.constants import ParseMode
from telegram.error import Forbidden
from telegram.ext import Application, ContextTypes, Job

from bot.config import TidyConfig
from bot.core import reminders, tidying
from bot.core.chat_zones import chosen_zones, zone_of_chat, zones_in_use
from bot.core.reminder_record import CANCELLED, DONE, SENT, Reminder
from bot.jobs import reminder_memory
from bot.jobs.digest_plan import guess_language
from bot.jobs.tidy_report import render
from bot.jobs.tidy_settings import SETTINGS, TidySettings
from bot.schedule import Schedule, Schedules, Waking
from bot.view.render import split_html
from memory import Store, update_document
from memory.errors import MemoryNotFound, MemoryStoreError
from memory.history import Author, acting, current_author
from memory.model import Memory
from memory.timestamps import format_time, parse_time

log = logging.getLogger(__name__)

JOB_NAME = "tidy"
BOT = "bot"  # who the nightly tidy acts as (``memory.history.Author.by``)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def chat_of(name: str) -> int | None:
    """The chat a namespace is told in: ``users/42`` -> 42, ``chats/-100`` -> -100."""
    kind, _, rest = name.partition("/")
    if kind in ("users", "chats") and rest.lstrip("-").isdigit():
        return int(rest)
    return None


@dataclass(frozen=True)
class Outcome:
    """One tidy of a namespace: what it did, the change that did it (None: nothing changed)."""

    name: str
    tidied: tidying.Tidied
    change: str | None


class TidyJob:
    """The nightly tidy (module docstring) and the settings behind ``/tidy``."""

    def __init__(
        self,
        config: TidyConfig,
        store: Store,
        *,
        default_zone: ZoneInfo,
        clock: Callable[[], datetime] = _utc_now,
        chats: Collection[int] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self.default_zone = default_zone
        self.chats = frozenset(chats) if chats is not None else None
        self.grace = timedelta(hours=config.grace_hours)
        self._schedules: dict[str, Schedule] = {}
        self._waking = Waking(default_zone, self._schedule_in, "tidy")
        self._job: Job[Any] | None = None
        self._running = asyncio.Lock()

    # -- settings ---------------------------------------------------------------------------

    def settings(self, name: str) -> TidySettings:
        """The settings of namespace ``name``."""
        found = self.store.documents(name).get(SETTINGS)
        return TidySettings.from_dict(found.value if found is not None else None)

    def _change(self, name: str, **changes: Any) -> TidySettings:
        def change(value: Any) -> dict[str, Any]:
            return dataclasses.replace(TidySettings.from_dict(value), **changes).to_dict()

        return TidySettings.from_dict(update_document(self.store.documents(name), SETTINGS, change))

    def switch(self, name: str, enabled: bool, *, language: str | None = None) -> TidySettings:
        """``/tidy on`` or ``off``."""
        changes: dict[str, Any] = {"enabled": enabled}
        if language is not None:
            changes["language"] = language
        return self._change(name, **changes)

    def note_language(self, name: str, language: str) -> None:
        """Keep the language of whoever sent ``/tidy`` (the nightly report's); written only
        when it changed."""
        if self.settings(name).language != language:
            self._change(name, language=language)

    def is_on(self, settings: TidySettings) -> bool:
        """Whether a namespace with ``settings`` is tidied every night."""
        chosen = settings.enabled
        on = chosen if chosen is not None else self.config.default == "on"
        return self.config.enabled and on

    def zone_of(self, name: str) -> ZoneInfo:
        """The zone of the namespace's chat: its own (``/timezone``), else the default."""
        chat = chat_of(name)
        found = zone_of_chat(self.store, chat) if chat is not None else None
        return found or self.default_zone

    def next_run(self, name: str) -> tuple[datetime | None, ZoneInfo]:
        """When namespace ``name`` is tidied next, and its chat's zone (``/tidy``)."""
        zone = self.zone_of(name)
        return self._schedule_in(zone).next_after(self.clock()), zone

    def _schedule_in(self, zone: ZoneInfo) -> Schedule:
        found = self._schedules.get(zone.key)
        if found is None:
            found = Schedule.parse(self.config.schedule, zone, now=self.clock())
            self._schedules[zone.key] = found
        return found

    # -- one tidy -----------------------------------------------------------------------------

    def tidy(self, name: str, *, now: datetime | None = None) -> Outcome:
        """Tidy namespace ``name`` now, as the author the caller set (``/tidy``: who sent it;
        the job: the bot), and record what it did. Runs in a worker thread."""
        now = now or self.clock()
        namespace = self.store.namespace(name)
        done = tidying.tidy(namespace, now=now, zone=self.zone_of(name))
        ended = tuple(self._end_reminders(name))
        done = dataclasses.replace(done, ended=ended)
        change = current_author().change if done.changed else None
        last = {**done.counts(), "at": format_time(now), "change": change}
        try:
            self._change(name, last=last)
        except MemoryStoreError as e:  # the tidy is done; only the digest's line misses it
            log.warning("what the tidy of %s did was not recorded: %s", name, e.message)
        return Outcome(name, done, change)

    def _end_reminders(self, name: str) -> list[Memory]:
        """End the memories of ``name``'s finished or cancelled reminders that still say
        otherwise (``reminder_memory.follow``); those memories as they were."""
        namespace = self.store.namespace(name)
        ended = []
        for reminder in reminders.every(self.store, name):
            if reminder.memory_id is None or not _over(reminder):
                continue
            try:
                before = namespace.get(reminder.memory_id)
            except MemoryNotFound:
                continue
            reminder_memory.follow(self.store, reminder)
            try:
                after = namespace.get(reminder.memory_id)
            except MemoryNotFound:
                after = None
            if after is None or after.content != before.content:
                ended.append(before)
        return ended

    def tidy_as_bot(self, name: str, now: datetime) -> Outcome:
        """The nightly tidy of ``name``: one change, made by the bot."""
        with acting(Author(BOT, "tidy", "", chat_of(name))):
            return self.tidy(name, now=now)

    # -- the job ------------------------------------------------------------------------------

    async def callback(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The JobQueue callback: one run, now."""
        await self.run(context.bot)

    async def catch_up(self, context: ContextTypes.DEFAULT_TYPE) -> None:
        """The JobQueue callback at start-up: the night a stop missed (module docstring)."""
        await self.run(context.bot, catch_up=True)

    async def run(
        self, bot: Bot, now: datetime | None = None, *, catch_up: bool = False
    ) -> list[Outcome]:
        """Tidy every namespace whose night has come and is not claimed yet (with
        ``catch_up``: only those tidied before); tell its chat."""
        now = now or self.clock()
        done: list[Outcome] = []
        if not self.config.enabled:
            return done
        async with self._running:
            self._learn(await asyncio.to_thread(zones_in_use, self.store))
            zones = await asyncio.to_thread(chosen_zones, self.store)
            names = await asyncio.to_thread(self.store.namespace_names)
            for name in names:
                chat = chat_of(name)
                if self.chats is not None and chat not in self.chats:
                    continue  # another process's chat (the console tidies its own)
                zone = zones.get(chat, self.default_zone) if chat is not None else None
                period = self._due(self._schedule_in(zone or self.default_zone), now)
                if period is None:
                    continue
                try:
                    outcome = await asyncio.to_thread(
                        self._claimed_tidy, name, period, now, catch_up
                    )
                except Exception:
                    # One namespace's failure (its files, a bug) must not stop the others.
                    log.exception("the tidy of %s failed", name)
                    continue
                if outcome is None:
                    continue
                done.append(outcome)
                if chat is not None:
                    await self._tell(bot, chat, outcome)
        if done:
            log.info("tidied %d namespaces", len(done))
        return done

    def _due(self, schedule: Schedule, now: datetime) -> datetime | None:
        period = schedule.latest(now)
        return period if period is not None and now - period <= self.grace else None

    def _claimed_tidy(
        self, name: str, period: datetime, now: datetime, catch_up: bool = False
    ) -> Outcome | None:
        """Claim ``period`` for ``name`` (module docstring) and tidy it; None if it is off or
        was claimed already (or, catching up, was never tidied)."""
        claimed: list[bool] = []

        def claim(value: Any) -> Any:
            claimed.clear()
            current = TidySettings.from_dict(value)
            last = parse_time(current.last_period) if current.last_period else None
            if not self.is_on(current) or (last is not None and last >= period):
                return value
            if catch_up and last is None:
                return value
            claimed.append(True)
            return dataclasses.replace(current, last_period=format_time(period)).to_dict()

        update_document(self.store.documents(name), SETTINGS, claim)
        if not claimed:
            return None
        return self.tidy_as_bot(name, now)

    async def _tell(self, bot: Bot, chat: int, outcome: Outcome) -> None:
        """Send the chat what the tidy did (nothing when it did nothing and asks nothing)."""
        tidied = outcome.tidied
        if not tidied.changed and not tidied.conflicts:
            return
        settings = await asyncio.to_thread(self.settings, outcome.name)
        language = settings.language
        if language is None:
            language = await asyncio.to_thread(self._language, outcome.name)
        text, keyboard = render(tidied, language, group=chat < 0, change=outcome.change)
        try:
            await send_with_keyboard(bot, chat, text, keyboard)
        except Forbidden as e:
            log.info("the tidy of %s was not told: Telegram refused (%s)", outcome.name, e)
        except Exception:
            # The tidy is done and recorded; telling the chat failed (the network, a bug).
            log.exception("the tidy of %s was done but not told", outcome.name)

    def _language(self, name: str) -> str:
        return guess_language(self.store.namespace(name).memories())

    # -- wiring ---------------------------------------------------------------------------------

    def zone_chosen(self, zone: ZoneInfo) -> None:
        """A chat chose ``zone`` (``/timezone``): the job wakes at its local night too."""
        self._learn({zone.key})

    def _learn(self, zones: set[str]) -> None:
        """Wake in ``zones`` too: the job is given its new times if any is new. On the event
        loop only (the trigger is the job's, and rescheduling is the scheduler's)."""
        if self._waking.learn(zones) and self._job is not None and not self._job.removed:
            self._job.job.reschedule(trigger=self.trigger())

    def trigger(self) -> Schedules:
        """When the job runs: the schedule in every zone in use."""
        return self._waking.trigger()

    def register(self, application: Application[Any, Any, Any, Any, Any, Any]) -> None:
        """Put the job on ``application``'s JobQueue: at every night, and once at start-up
        (a night missed while the bot was down, within ``grace_hours``)."""
        queue = application.job_queue
        if queue is None:
            raise RuntimeError("the JobQueue is missing: install python-telegram-bot[job-queue]")
        if not self.config.enabled:
            return
        grace = max(1, int(self.grace.total_seconds()))
        self._job = queue.run_custom(
            self.callback,
            job_kwargs={"trigger": self.trigger(), "misfire_grace_time": grace, "coalesce": True},
            name=JOB_NAME,
        )
        queue.run_once(
            self.catch_up,
            when=0,
            name=f"{JOB_NAME}-catch-up",
            job_kwargs={"misfire_grace_time": None},
        )


def _over(reminder: Reminder) -> bool:
    """Whether ``reminder`` is over: done, cancelled, or a one-off sent."""
    return reminder.state in (DONE, CANCELLED) or (
        reminder.state == SENT and reminder.next_at is None
    )


async def send_with_keyboard(
    bot: Bot, chat_id: int, markup: str, keyboard: InlineKeyboardMarkup | None
) -> None:
    """Send ``markup`` (HTML) to ``chat_id``, ``keyboard`` under its last part."""
    parts = split_html(markup)
    for number, part in enumerate(parts):
        last = number == len(parts) - 1
        await bot.send_message(
            chat_id, part, parse_mode=ParseMode.HTML, reply_markup=keyboard if last else None
        )


__all__ = ["BOT", "JOB_NAME", "Outcome", "TidyJob"]
