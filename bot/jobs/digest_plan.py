"""What each namespace wants of the digest, and when: its settings, its chat's schedule, and
the text of its report. ``bot.jobs.digest.Digest`` is the job on top, which sends the reports.

Per namespace, the document ``digest`` (``digest.json`` in the file store) holds the setting
(``/digest on|off``) and what was sent; it survives restarts. A namespace that never chose
(no document, or ``enabled: null``) follows ``[digest] default``, "off" unless configured:
chats opt in with ``/digest on``. The report goes to the private chat of ``users/<id>`` and
to the group of ``chats/<id>``, and a forum topic's namespace (``group_scope = "topic"``:
``chats/<id>/topics/<thread>``, ``bot.core.topics``) into that topic (``chat_id`` in the
document overrides that); it is in the
language of whoever last sent ``/digest on|off`` there, else Chinese if most memories are,
else English. The document also holds the claim of a report being sent
(``bot.jobs.digest_claims``).

A report shows its times in the chat's own zone when it set one with ``/timezone``
(``bot.core.chat_zones.zone_of_chat``), else in ``[digest] timezone``. A group's report is
titled with the group's name (``title``, noted whenever ``/digest`` is used there), a private
chat's as "your" digest.

Reporting is not access: the report reads ``Namespace.memories`` and never searches, so no
``accessCount`` or ``accessedAt`` changes.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from bot.config import DigestConfig
from bot.core.chat_zones import zone_of_chat
from bot.core.lease import Claim
from bot.core.topics import where
from bot.jobs.tidy_settings import digest_line
from bot.schedule import Schedule, parse_timezone
from bot.view.digest_view import build_report, render_report
from memory import Documents, Store, update_document
from memory.errors import MemoryInvalid
from memory.model import Memory
from memory.timestamps import format_time, parse_time

log = logging.getLogger(__name__)

SETTINGS = "digest"  # the document's key
SETTINGS_FILE = "digest.json"  # its file in the file store
JUST_BEFORE = timedelta(microseconds=1)  # a schedule's time before a time: ``latest(t - this)``
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def utc_now() -> datetime:
    """The digest's clock unless a test gives another: UTC now."""
    return datetime.now(UTC)


def _time(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_time(value)
    except MemoryInvalid:
        return None


def claim_json(claim: Claim | None) -> dict[str, Any] | None:
    if claim is None:
        return None
    since = format_time(claim.since)
    return {"at": format_time(claim.at), "by": claim.by, "since": since, "tries": claim.tries}


def claim_of(value: object) -> Claim | None:
    """A claim as ``claim_json`` wrote it; None if ``value`` is not one (a hand edit)."""
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
                values["claim"] = claim_of(value)
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
        return {**values, "claim": claim_json(self.claim)}

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


def chat_of(name: str) -> int | None:
    """The chat a namespace's report goes to by default: ``users/42`` -> 42, ``chats/-100`` ->
    -100, a forum topic's ``chats/-100/topics/5`` -> -100 (``bot.core.topics``); None for
    other names."""
    place = where(name)
    return place.chat_id if place is not None else None


def topic_of(name: str) -> int | None:
    """The forum topic a namespace's report goes to: ``chats/-100/topics/5`` -> 5, else None."""
    place = where(name)
    return place.thread_id if place is not None else None


def guess_language(memories: Sequence[Memory]) -> str:
    """``zh`` if most memories contain Chinese characters, else ``en``."""
    chinese = sum(1 for memory in memories if _CJK.search(memory.content))
    return "zh" if chinese * 2 > len(memories) else "en"


class DigestPlan:
    """The settings behind ``/digest``, each namespace's schedule in its chat's zone, and its
    report; ``clock`` (UTC now by default) is the current time, a test's controlled one."""

    def __init__(
        self, config: DigestConfig, store: Store, *, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self.config = config
        self.store = store
        self.clock = clock
        self.timezone = parse_timezone(config.timezone)
        self.schedule = Schedule.parse(config.schedule, self.timezone, now=clock())
        self._schedules: dict[str, Schedule] = {self.timezone.key: self.schedule}
        self._schedules_lock = threading.Lock()

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
        since = settings.sent_at or self._schedule_in(zone).latest(now - JUST_BEFORE)
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
        what the last tidy of namespace ``name`` did (``bot.jobs.tidy_settings``)."""
        report = build_report(
            memories, now=now, since=since, top=self.config.top, stale_days=self.config.stale_days
        )
        group = (title or settings.title or "") if chat is not None and chat < 0 else None
        language = language or guess_language(memories)
        tidy = digest_line(self.store, name, language, zone) if name is not None else ""
        return render_report(report, language, zone, group=group, tidy=tidy)
