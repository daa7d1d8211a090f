"""The iCalendar file of a chat's reminders, read back by real calendar libraries.

``icalendar`` parses what ``bot.core.calendar_export`` wrote and ``recurring-ical-events``
expands it, as a calendar application would; the occurrences over the next years must be
exactly the instants the bot sends (its own ``Due.next_after``, from each reminder's next
occurrence on), across both daylight saving changes in Berlin and New York, on wall times
that daylight saving skips or repeats, on the 31st of short months and on 29 February.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import icalendar
import pytest
import recurring_ical_events

from bot.core import calendar_export
from bot.core.due import Due, Repeat, wall_time
from bot.core.reminder_record import CANCELLED, PENDING, SENT, Reminder

BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")
SHANGHAI = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 1, 10, 12, 0, tzinfo=UTC)
YEARS = 3  # the window compared: from NOW, three years (a yearly 29 February needs them)


def series(
    first: date, wall: time, zone: ZoneInfo, repeat: Repeat | None, **fields: object
) -> Reminder:
    """A reminder first due at ``wall`` on ``first`` in ``zone``, its next occurrence the
    first one after NOW (as the bot keeps it once earlier ones were sent)."""
    due = Due(wall_time(first, wall, zone), zone, wall, repeat)
    series_at: datetime | None = due.at
    if repeat is not None:
        while series_at is not None and series_at <= NOW:
            series_at = due.next_after(series_at)
    reminder = Reminder(
        id=str(fields.pop("id", "r0000000")),
        namespace="users/42",
        chat_id=42,
        author="user:42",
        author_name="Alice",
        text=str(fields.pop("text", "report")),
        due=due,
        language="en",
        created_at=NOW - timedelta(days=400),
        series_at=series_at,
    )
    return replace(reminder, **fields)  # type: ignore[arg-type]


def sent_by_bot(reminder: Reminder, end: datetime) -> set[datetime]:
    """The instants the bot will send ``reminder`` at, from NOW until ``end``."""
    found: set[datetime] = set()
    if reminder.state not in (PENDING, "paused"):
        return found
    at = reminder.series_at
    while at is not None and at < end:
        if at >= NOW:
            found.add(at)
        at = reminder.due.next_after(at) if reminder.due.repeat is not None else None
    if reminder.snooze_at is not None and NOW <= reminder.snooze_at < end:
        found.add(reminder.snooze_at)
    return found


def expanded(ics: bytes, end: datetime) -> dict[str, set[datetime]]:
    """Each event's occurrences from NOW until ``end``, as a calendar application sees them."""
    calendar = icalendar.Calendar.from_ical(ics)
    found: dict[str, set[datetime]] = {}
    for occurrence in recurring_ical_events.of(calendar).between(NOW, end):
        start = occurrence.start
        assert isinstance(start, datetime) and start.tzinfo is not None
        found.setdefault(str(occurrence["UID"]), set()).add(start.astimezone(UTC))
    return found


REMINDERS = [
    # Berlin: 02:30 does not exist on the last Sunday of March (moved to 03:30 CEST).
    series(date(2025, 12, 1), time(2, 30), BERLIN, Repeat("daily"), id="daily230"),
    series(date(2025, 12, 2), time(9, 0), BERLIN, Repeat("daily", 3), id="every3dy"),
    series(date(2026, 1, 12), time(7, 0), NEW_YORK, Repeat("weekdays"), id="weekdays"),
    # New York: 01:30 happens twice on the first Sunday of November (the first one counts).
    series(date(2026, 1, 11), time(1, 30), NEW_YORK, Repeat("weekly"), id="sunday13"),
    series(
        date(2025, 11, 3), time(9, 0), BERLIN, Repeat("weekly", 2, (0, 3)), id="fortnigh"
    ),  # every two weeks on Monday and Thursday, counted from the week of 3 November 2025
    series(date(2026, 1, 31), time(20, 0), SHANGHAI, Repeat("monthly", day=31), id="month31a"),
    series(date(2025, 12, 30), time(8, 15), NEW_YORK, Repeat("monthly", 2, day=30), id="bimonth0"),
    series(date(2026, 2, 15), time(18, 0), BERLIN, Repeat("monthly"), id="monthly5"),
    series(date(2028, 2, 29), time(9, 0), BERLIN, Repeat("yearly", day=29), id="leapyear"),
    series(date(2026, 12, 24), time(10, 0), SHANGHAI, Repeat("yearly"), id="xmas0000"),
    series(date(2026, 3, 29), time(2, 30), BERLIN, Repeat("yearly", 2), id="biennial"),
    series(date(2026, 4, 1), time(9, 0), ZoneInfo("Etc/GMT-8"), Repeat("daily"), id="fixedoff"),
    series(date(2026, 5, 1), time(0, 0), ZoneInfo("UTC"), Repeat("monthly", day=1), id="utcmonth"),
    series(date(2026, 7, 4), time(12, 0), NEW_YORK, None, id="oneoffny"),
    series(date(2026, 3, 29), time(2, 30), BERLIN, None, id="oneoffgp"),  # in the gap
]


def test_the_occurrences_a_calendar_expands_are_exactly_the_ones_the_bot_sends() -> None:
    # A one-off at the second 01:30 of 1 November 2026 in New York (06:30 UTC, EST), as
    # "in 2 hours" said at 04:30 UTC sets it: its local time alone would be the first 01:30.
    second = datetime(2026, 11, 1, 6, 30, tzinfo=UTC)
    repeated_hour = replace(
        series(date(2026, 11, 1), time(1, 30), NEW_YORK, None, id="repeated"),
        due=Due(second, NEW_YORK, time(1, 30)),
        series_at=second,
    )
    sent_then_snoozed = replace(
        series(date(2026, 1, 9), time(9, 0), BERLIN, None, id="snoozed0"),
        state=PENDING,
        series_at=None,
        snooze_at=datetime(2026, 1, 11, 8, 0, tzinfo=UTC),
    )
    weekly_snoozed = replace(
        REMINDERS[4], id="snoozed1", snooze_at=datetime(2026, 1, 20, 17, 45, tzinfo=UTC)
    )
    reminders = [*REMINDERS, repeated_hour, sent_then_snoozed, weekly_snoozed]
    end = NOW + timedelta(days=365 * YEARS)
    ics = calendar_export.calendar_of(
        reminders, namespace="users/42", name="Reminders", untitled="Reminder", now=NOW
    )
    found = expanded(ics, end)
    for reminder in reminders:
        expected = sent_by_bot(reminder, end)
        assert expected, reminder.id
        assert found.get(calendar_export.uid_of(reminder)) == expected, reminder.id
    # the DST cases really were in the window: Berlin's gap and New York's repeated hour
    gap = found[calendar_export.uid_of(REMINDERS[0])]
    assert datetime(2026, 3, 29, 1, 30, tzinfo=UTC) in gap  # 03:30 CEST, the bot's reading
    assert datetime(2026, 3, 30, 0, 30, tzinfo=UTC) in gap  # 02:30 CEST the day after
    sunday = found[calendar_export.uid_of(REMINDERS[3])]
    assert datetime(2026, 11, 1, 5, 30, tzinfo=UTC) in sunday  # the first 01:30 (EDT)
    assert datetime(2026, 11, 8, 6, 30, tzinfo=UTC) in sunday  # 01:30 EST a week on


def test_each_event_has_its_zone_rule_alarm_and_a_uid_stable_across_exports() -> None:
    ics = calendar_export.calendar_of(
        REMINDERS, namespace="users/42", name="Reminders", untitled="Reminder", now=NOW
    )
    again = calendar_export.calendar_of(
        list(reversed(REMINDERS)),
        namespace="users/42",
        name="Reminders",
        untitled="Reminder",
        now=NOW + timedelta(hours=5),
    )
    assert ics == again  # nothing changed: the same file, byte for byte
    calendar = icalendar.Calendar.from_ical(ics)
    assert {str(tz["TZID"]) for tz in calendar.walk("VTIMEZONE")} == {
        "Europe/Berlin",
        "America/New_York",
        "Asia/Shanghai",
        "Etc/GMT-8",
    }
    events = {str(e["UID"]).split("-")[0]: e for e in calendar.walk("VEVENT")}
    assert len(events) == len(REMINDERS)
    berlin = events["daily230"]
    assert berlin["DTSTART"].params["TZID"] == "Europe/Berlin"
    assert berlin["DTSTART"].to_ical() == b"20251201T023000"
    assert berlin["RRULE"].to_ical() == b"FREQ=DAILY"
    assert events["weekdays"]["RRULE"].to_ical() == b"FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR"
    assert events["fortnigh"]["RRULE"].to_ical() == b"FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,TH;WKST=MO"
    assert events["month31a"]["RRULE"].to_ical() == (
        b"FREQ=MONTHLY;BYMONTHDAY=28,29,30,31;BYSETPOS=-1"
    )
    assert events["xmas0000"]["RRULE"].to_ical() == b"FREQ=YEARLY;BYMONTHDAY=24;BYMONTH=12"
    assert "RRULE" not in events["oneoffny"]
    assert events["utcmonth"]["DTSTART"].to_ical() == b"20260501T000000Z"
    for event in events.values():
        [alarm] = event.walk("VALARM")
        assert alarm["ACTION"] == "DISPLAY" and alarm["TRIGGER"].dt == timedelta(0)
        assert event["SUMMARY"] == "report" and event["DTSTAMP"].dt.tzinfo is not None
    uid = calendar_export.uid_of(REMINDERS[0])
    assert uid.startswith("daily230-") and uid.endswith("@cogito-memory-bot")
    assert "users/42" not in uid  # a digest of the namespace, not its name


def test_cancelled_ones_are_left_out_sent_one_offs_stay_and_text_is_summarised() -> None:
    long_text = "call the bank about the mortgage " * 10 + "\nsecond line"
    reminders = [
        replace(REMINDERS[0], id="cancel00", state=CANCELLED),
        replace(REMINDERS[13], id="sentonce", state=SENT, series_at=None),
        replace(REMINDERS[14], id="longtext", text=long_text),
        replace(REMINDERS[13], id="untitled", text=""),
    ]
    ics = calendar_export.calendar_of(
        reminders, namespace="users/42", name="Reminders", untitled="Reminder", now=NOW
    )
    events = {
        str(e["UID"]).split("-")[0]: e for e in icalendar.Calendar.from_ical(ics).walk("VEVENT")
    }
    assert set(events) == {"sentonce", "longtext", "untitled"}
    summary = str(events["longtext"]["SUMMARY"])
    assert summary.endswith("…") and len(summary) == calendar_export.SUMMARY_CHARS + 1
    assert str(events["longtext"]["DESCRIPTION"]) == long_text.strip()
    assert events["untitled"]["SUMMARY"] == "Reminder"


@pytest.mark.parametrize("day", [29, 30, 31])
def test_a_monthly_rule_on_a_late_day_takes_the_last_day_of_short_months(day: int) -> None:
    reminder = series(date(2026, 1, day), time(9, 0), BERLIN, Repeat("monthly", day=day))
    end = NOW + timedelta(days=800)
    ics = calendar_export.calendar_of(
        [reminder], namespace="users/42", name="R", untitled="R", now=NOW
    )
    [occurrences] = expanded(ics, end).values()
    assert occurrences == sent_by_bot(reminder, end)
    assert datetime(2026, 2, 28, 8, 0, tzinfo=UTC) in occurrences
