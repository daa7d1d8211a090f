"""How a time is written, everywhere: ``2026-12-02 (Wed) 09:00 Asia/Shanghai``.

DESIGN.md has a reminder's confirmation state its resolved local time as ``YYYY-MM-DD HH:MM``
with the weekday and the time zone. That one format is made here, plainly, so that every part
writes it the same way: the view (``bot.view.times.local_time``, with the reader's weekday
names) and the model's tools (``bot.assistant.reminder_desk``: the time the model is told, so
that it repeats the code's time as the confirmation shows it). The zone is its label
(``bot.core.offsets.zone_label``: a fixed offset as ``UTC+08:00``, never the inverted
``Etc/GMT-8``). Plain text: HTML callers escape it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo

from bot.core.offsets import zone_label

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def time_text(
    at: datetime,
    zone: tzinfo,
    weekdays: Sequence[str] = WEEKDAYS,
    *,
    zone_shown: bool = True,
) -> str:
    """``at`` in ``zone``: ``2026-12-02 (Wed) 09:00 Asia/Shanghai``, the weekday one of
    ``weekdays`` (Monday first), the zone left off when the reader sees it beside
    (``zone_shown=False``)."""
    local = at.astimezone(zone)
    shown = f"{local:%Y-%m-%d} ({weekdays[local.weekday()]}) {local:%H:%M}"
    return f"{shown} {zone_label(zone)}" if zone_shown else shown
