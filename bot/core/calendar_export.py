"""A chat's reminders as an iCalendar file (RFC 5545): ``/export ics`` and the ``/calendar`` feed.

One VEVENT per reminder, written with the ``icalendar`` package and read back in the tests by
``icalendar`` and ``recurring-ical-events``, whose expanded occurrences must be exactly the
instants the bot sends (``bot.core.when.Due.next_after``), across daylight saving too:

- **The zone.** ``DTSTART`` is the reminder's local wall time with its ``TZID`` (a VTIMEZONE
  for each zone is added, from the zone database). A repeating reminder starts at the wall time
  on its anchor's date, so that a calendar repeats the wall clock as the bot does: 09:00 in
  Berlin is 08:00 UTC in winter and 07:00 UTC in summer. A wall time that daylight saving
  skips is read with the offset before the gap, and one that happens twice as its first
  occurrence, by RFC 5545 (3.3.5) as by ``when.wall_time``. A one-off whose local time is
  ambiguous or skipped (an "in 2 hours" landing in the repeated hour) is written in UTC: its
  instant is what counts.
- **The rule.** Each repeat rule of ``when.Repeat`` is an RRULE: daily (every n days), weekdays
  (``FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR``), weekly (every n weeks on its days, weeks counted from
  Monday as the bot counts them: ``WKST=MO``), monthly (every n months on its day; a month
  without that day takes its last day, as the bot does: ``BYMONTHDAY=28,29,30,31;BYSETPOS=-1``
  for the 31st) and yearly (every n years on its month and day; 29 February is the 28th in other
  years, the same way). A snoozed extra occurrence is an RDATE.
- **Identity.** The UID is the reminder's id and a digest of its namespace: the same event in
  every export and every fetch of the feed, so that a calendar updates it rather than adding a
  copy. ``DTSTAMP`` and ``LAST-MODIFIED`` are its last change (a file without METHOD, where
  RFC 5545 makes DTSTAMP the last modification): an unchanged reminder exports byte for byte
  the same.
- **What is in it.** Reminders that can still fire (pending or paused) and one-offs already sent
  or done (a calendar that subscribed keeps them as past events until they are pruned, 30 days
  on); a cancelled one is left out, so a subscribed calendar drops it. Each has a VALARM at its
  time, so that the calendar rings when the bot does.

Nothing here knows Telegram: the door gives the words (the calendar's name, the summary of a
reminder without text) in the reader's language.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

from icalendar import Alarm, Calendar, Event, vRecur

from bot.core.due import Due, Repeat, wall_time
from bot.core.reminder_record import DONE, PAUSED, PENDING, SENT, Reminder

log = logging.getLogger(__name__)

PRODID = "-//Cogito Memory Bot//Reminders//EN"
UID_DOMAIN = "cogito-memory-bot"
SUMMARY_CHARS = 120  # a calendar shows one line: the first, cut here (the description has all)
REFRESH = timedelta(hours=1)  # how often a subscribed calendar is asked to fetch the feed again
ZONE_YEARS_AHEAD = 11  # VTIMEZONE transitions written this far past now (reminders: 5 years)
_DAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
SHOWN = (PENDING, PAUSED)  # and one-offs SENT or DONE (``included``)


def uid_of(reminder: Reminder) -> str:
    """The event's UID: stable across exports, unique across namespaces."""
    digest = hashlib.sha256(reminder.namespace.encode()).hexdigest()[:16]
    return f"{reminder.id}-{digest}@{UID_DOMAIN}"


def included(reminder: Reminder) -> bool:
    """Whether ``reminder`` is in the calendar (see the module docstring)."""
    if reminder.state in SHOWN:
        return True
    return reminder.state in (SENT, DONE) and reminder.due.repeat is None


def rule_of(repeat: Repeat, anchor: date) -> vRecur:
    """``repeat`` as an RRULE for a series whose first occurrence is on ``anchor``."""
    rule = vRecur()
    if repeat.frequency == "daily":
        rule["FREQ"] = "DAILY"
    elif repeat.frequency == "weekdays":
        rule["FREQ"] = "WEEKLY"
        rule["BYDAY"] = list(_DAYS[:5])
        return rule  # the bot reads no interval into "every weekday"
    elif repeat.frequency == "weekly":
        rule["FREQ"] = "WEEKLY"
        rule["BYDAY"] = [_DAYS[d] for d in sorted(repeat.weekdays or (anchor.weekday(),))]
        rule["WKST"] = "MO"
    elif repeat.frequency == "monthly":
        rule["FREQ"] = "MONTHLY"
        _month_day(rule, repeat.day or anchor.day)
    else:
        rule["FREQ"] = "YEARLY"
        rule["BYMONTH"] = [anchor.month]
        _month_day(rule, repeat.day or anchor.day)
    if repeat.interval > 1:
        rule["INTERVAL"] = repeat.interval
    return rule


def _month_day(rule: vRecur, day: int) -> None:
    """``day`` of the month, or the month's last day when it is shorter (as the bot does)."""
    if day <= 28:
        rule["BYMONTHDAY"] = [day]
    else:  # the last of 28..day that the month has: min(day, the month's length)
        rule["BYMONTHDAY"] = list(range(28, day + 1))
        rule["BYSETPOS"] = [-1]


def _series_start(due: Due) -> datetime:
    """The first occurrence of a series as its local wall time in its zone (see the module
    docstring); the instant in UTC when no date of the zone gives it (a hand-edited one)."""
    local = due.local().date()
    for day in (local, local - timedelta(days=1)):
        if wall_time(day, due.wall, due.zone) == due.at:
            return datetime.combine(day, due.wall.replace(tzinfo=None, fold=0), tzinfo=due.zone)
    log.warning("a repeating reminder's first instant is not its wall time; written in UTC")
    return due.at.astimezone(UTC)


def _one_off_start(due: Due) -> datetime:
    """A one-off's instant in its zone, or in UTC when its local time would read otherwise."""
    local = due.local().replace(fold=0)
    if local.astimezone(UTC) == due.at and not _ambiguous(local):
        return local
    return due.at.astimezone(UTC)


def _ambiguous(local: datetime) -> bool:
    return local.utcoffset() != local.replace(fold=1).utcoffset()


def event_of(reminder: Reminder, *, untitled: str) -> Event:
    """One reminder as a VEVENT (``untitled``: the summary of one without text)."""
    due = reminder.due
    text = reminder.text.strip()
    first_line = text.splitlines()[0].strip() if text else ""
    summary = first_line if len(first_line) <= SUMMARY_CHARS else first_line[:SUMMARY_CHARS] + "…"
    changed = (reminder.changed_at or reminder.created_at).astimezone(UTC)
    start = _series_start(due) if due.repeat is not None else _one_off_start(due)
    event = Event.new(
        uid=uid_of(reminder),
        summary=summary or untitled,
        start=start,
        stamp=changed,
        created=reminder.created_at.astimezone(UTC),
        last_modified=changed,
    )
    if text and text != summary:
        event.add("description", text)
    if due.repeat is not None:
        event.add("rrule", rule_of(due.repeat, start.date()))
    if reminder.snooze_at is not None and reminder.state in SHOWN:
        event.add("rdate", [reminder.snooze_at.astimezone(UTC)])
    event.add("transp", "TRANSPARENT")  # a reminder takes no time: never "busy"
    event.add("class", "PRIVATE")
    alarm = Alarm()
    alarm.add("action", "DISPLAY")
    alarm.add("description", summary or untitled)
    alarm.add("trigger", timedelta(0))
    event.add_component(alarm)
    return event


def calendar_of(
    reminders: Iterable[Reminder],
    *,
    namespace: str,
    name: str,
    untitled: str,
    now: datetime,
    feed: bool = False,
) -> bytes:
    """The iCalendar file of ``namespace``'s ``reminders`` (those ``included``), oldest
    first, named ``name``.

    ``feed``: a subscription (``/calendar``), which asks the calendar to fetch it again every
    ``REFRESH``. ``now`` bounds the zones' transitions written (``ZONE_YEARS_AHEAD``).
    """
    shown = sorted(
        (r for r in reminders if included(r)), key=lambda r: (r.due.at, r.created_at, r.id)
    )
    digest = hashlib.sha256(namespace.encode()).hexdigest()[:16]
    calendar = Calendar.new(prodid=PRODID, name=name, uid=f"reminders-{digest}@{UID_DOMAIN}")
    calendar.add("calscale", "GREGORIAN")
    if feed:
        calendar.refresh_interval = REFRESH
        calendar.add("x-published-ttl", REFRESH)
    for reminder in shown:
        calendar.add_component(event_of(reminder, untitled=untitled))
    starts = [r.due.at.date() for r in shown] or [now.date()]
    first = min(starts) - timedelta(days=366)
    last = date(max(now.year, max(starts).year) + ZONE_YEARS_AHEAD, 1, 1)
    calendar.add_missing_timezones(first_date=first, last_date=last)
    return bytes(calendar.to_ical())


__all__ = ["calendar_of", "event_of", "included", "rule_of", "uid_of"]
