"""What reminders look like: the confirmation, the delivery, the list, and their buttons.

The time is always the resolved local time (``bot.view.times.local_time``, Chinese ``周三``)::

    ⏰ 2026-12-02 (Wed) 09:00 Asia/Shanghai — call mom
    🔁 every Monday

Its buttons carry the reminder's id only (eight characters; ``rd:``, ``rz:``, ``rc:``,
``re:`` in ``bot.view.callbacks``): ✅ Done and the snoozes under a delivery, 🗑 Cancel under
the confirmation and in /reminders, ✏️ Change. A press is resolved in the presser's namespace,
as every button (``bot.chat.presses``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from telegram import InlineKeyboardMarkup

from bot.core.due import Repeat
from bot.core.reminder_record import PAUSED, PAUSED_REFUSED, Reminder
from bot.view.callbacks import CANCEL_REMINDER, CHANGE_REMINDER, DONE, SNOOZE
from bot.view.i18n import t
from bot.view.render import escape, preview
from bot.view.times import local_time

LISTED = 20  # reminders shown by /reminders; the rest are counted
TEXT_PREVIEW = 200
BUTTON_PREVIEW = 28
SNOOZES = (("10", "button_snooze_10_plain"), ("60", "button_snooze_60_plain"))
PAUSED_WHY = {PAUSED_REFUSED: "reminder_paused_refused"}  # else: the chat refused the bot


def repeat_text(repeat: Repeat, language: str) -> str:
    """The rule in words: ``every Monday``, ``每个工作日（周一至周五）``."""
    n, kind = repeat.interval, repeat.frequency
    names = t(language, "weekday_names_plain").split()
    joiner = "、" if language == "zh" else ", "
    days = joiner.join(names[d] for d in sorted(repeat.weekdays) if 0 <= d < 7)
    day = repeat.day if repeat.day is not None else "—"
    if kind == "weekdays":
        return t(language, "repeat_weekdays")
    if kind == "weekly":
        if n == 1:
            return t(language, "repeat_weekly", days=days or "week")
        return t(language, "repeat_every_weeks", n=n, days=days)
    if kind == "monthly":
        if n == 1:
            return t(language, "repeat_monthly", day=day)
        return t(language, "repeat_every_months", n=n, day=day)
    if kind == "yearly":
        return t(language, "repeat_yearly") if n == 1 else t(language, "repeat_every_years", n=n)
    return t(language, "repeat_daily") if n == 1 else t(language, "repeat_every_days", n=n)


def _text(reminder: Reminder, limit: int = TEXT_PREVIEW) -> str:
    return escape(preview(reminder.text, limit)) if reminder.text.strip() else "…"


def reminder_line(
    reminder: Reminder, language: str, at: datetime | None = None, *, due: bool = False
) -> str:
    """``⏰ <when> — <text>`` (HTML), at its next occurrence unless ``at``; ``⌛`` if ``due``
    (its time has come)."""
    moment = at or reminder.upcoming_at or reminder.due.at
    when = escape(local_time(moment, reminder.due.zone, language))
    key = "reminder_line_due" if due else "reminder_line"
    return t(language, key, when=when, text=_text(reminder))


def is_due(reminder: Reminder, now: datetime | None) -> bool:
    """Whether the time of ``reminder``'s next occurrence has come by ``now``: it is being sent
    (or waits for its chat, paused), not upcoming."""
    at = reminder.upcoming_at
    return now is not None and at is not None and at <= now


def _details(reminder: Reminder, language: str, *, due: bool = False) -> list[str]:
    lines = [reminder_line(reminder, language, due=due)]
    if reminder.due.repeat is not None:
        rule = escape(repeat_text(reminder.due.repeat, language))
        lines.append(t(language, "reminder_repeat", rule=rule))
    return lines


def manage_keyboard(reminder: Reminder, language: str) -> InlineKeyboardMarkup:
    """🗑 Cancel and ✏️ Change."""
    return InlineKeyboardMarkup(
        [
            [
                CANCEL_REMINDER.button(t(language, "button_reminder_cancel_plain"), reminder.id),
                CHANGE_REMINDER.button(t(language, "button_reminder_change_plain"), reminder.id),
            ]
        ]
    )


def confirmation(
    reminder: Reminder,
    language: str,
    *,
    moved: bool = False,
    date_only: bool = False,
    default_zone: bool = False,
    title: str = "reminder_set_title",
) -> tuple[str, InlineKeyboardMarkup]:
    """The reply to a reminder set or changed: when, the rule, what changed, the buttons."""
    lines = [t(language, title), *_details(reminder, language)]
    if moved:
        lines.append(t(language, "reminder_moved"))
    if date_only:
        hour = f"{reminder.due.wall:%H:%M}"
        lines.append(t(language, "reminder_date_only", hour=hour))
    if default_zone:
        lines.append(t(language, "reminder_zone_default", zone=escape(reminder.due.zone.key)))
    return "\n".join(lines), manage_keyboard(reminder, language)


def mention(reminder: Reminder) -> str:
    """Who set it, as a Telegram mention (a person) or their name (a chat)."""
    name = escape(reminder.author_name or "…")
    kind, _, number = reminder.author.partition(":")
    if kind == "user" and number.isdigit():
        return f'<a href="tg://user?id={number}">{name}</a>'
    return name


def delivery(
    reminder: Reminder, at: datetime, *, late: bool, group: bool, repeat: bool = False
) -> tuple[str, InlineKeyboardMarkup]:
    """The message sent when ``reminder`` is due (occurrence ``at``), with its buttons;
    ``repeat``: a send before it may have arrived (cut off by a crash), and it says so."""
    language = reminder.language
    if reminder.text.strip():
        lines = [t(language, "reminder_delivery", text=_text(reminder, 3000))]
    else:
        lines = [t(language, "reminder_delivery_of")]
    if late:
        when = escape(local_time(at, reminder.due.zone, language))
        lines.append(t(language, "reminder_late", time=when))
    if group:
        lines.append(t(language, "reminder_for", mention=mention(reminder)))
    if repeat:
        lines.append(t(language, "reminder_maybe_repeat"))
    rid = reminder.id
    snoozes = [SNOOZE.button(t(language, key), rid, what) for what, key in SNOOZES]
    keyboard = InlineKeyboardMarkup(
        [
            [DONE.button(t(language, "button_done_plain"), rid), *snoozes],
            [
                SNOOZE.button(t(language, "button_snooze_tomorrow_plain"), rid, "t"),
                CANCEL_REMINDER.button(t(language, "button_reminder_cancel_plain"), rid),
            ],
        ]
    )
    return "\n".join(lines), keyboard


def summary(
    items: Sequence[tuple[Reminder, datetime]], language: str, *, repeat: bool = False
) -> str:
    """One message for the reminders that fell due too long ago to be sent one by one."""
    lines = [reminder_line(r, language, at) for r, at in items[:LISTED]]
    if len(items) > LISTED:
        lines.append(t(language, "reminders_more", count=len(items) - LISTED))
    if repeat:
        lines.append(t(language, "reminder_maybe_repeat"))
    return t(language, "reminder_summary", items="\n".join(lines))


def listing(
    reminders: Sequence[Reminder], language: str, now: datetime | None = None
) -> tuple[str, InlineKeyboardMarkup | None]:
    """/reminders: the upcoming ones, soonest first, a 🗑 button each. One whose time has come
    by ``now`` (being sent right now, or not yet: the job ticks every second, a failed send
    waits for its retry) is marked due, never listed as upcoming."""
    if not reminders:
        return t(language, "reminders_none"), None
    shown = reminders[:LISTED]
    any_due = any(is_due(reminder, now) for reminder in reminders)
    title = "reminders_title_due" if any_due else "reminders_title"
    lines = [t(language, title, count=len(reminders))]
    rows = []
    for index, reminder in enumerate(shown, start=1):
        due = is_due(reminder, now)
        lines.append(f"{index}. " + "\n   ".join(_details(reminder, language, due=due)))
        if reminder.state == PAUSED:
            why = PAUSED_WHY.get(reminder.pause_reason or "", "reminder_paused")
            lines.append("   " + t(language, why))
        elif due:
            lines.append("   " + t(language, "reminder_due_now"))
        label = t(
            language,
            "button_reminder_cancel_one_plain",
            index=index,
            preview=preview(reminder.text or "…", BUTTON_PREVIEW),
        )
        rows.append([CANCEL_REMINDER.button(label, reminder.id)])
    if len(reminders) > LISTED:
        lines.append(t(language, "reminders_more", count=len(reminders) - LISTED))
    return "\n".join(lines), InlineKeyboardMarkup(rows)


def memory_line(reminder: Reminder) -> str:
    """The memory a reminder is also kept as (plain text): its time and its text."""
    when = local_time(reminder.due.at, reminder.due.zone, reminder.language)
    return f"⏰ {when} — {reminder.text}"
