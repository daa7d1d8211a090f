"""The one way the bot writes a time for people: ``2026-12-02 (Wed) 09:00 Asia/Shanghai``.

DESIGN.md has a reminder's confirmation state its resolved local time as ``YYYY-MM-DD HH:MM``
with the weekday and the time zone; every other time a person reads is written the same way by
``local_time``: a reminder's line, delivery and snooze, the list, the memory a reminder is kept
as, the digest's next report and its "added since", the clock of a zone in /timezone. The
format itself is ``bot.core.time_text`` (the model's tools write it too); here the weekday is
the reader's (``周三`` in Chinese). Plain text: HTML callers escape it.
"""

from __future__ import annotations

from datetime import datetime, tzinfo

from bot.core.time_text import time_text
from bot.view.i18n import t


def local_time(at: datetime, zone: tzinfo, language: str, *, zone_shown: bool = True) -> str:
    """``at`` in ``zone``: ``2026-12-02 (Wed) 09:00 Asia/Shanghai``, the zone left off when the
    reader sees it beside (``zone_shown=False``)."""
    weekdays = t(language, "weekdays_plain").split()
    return time_text(at, zone, weekdays, zone_shown=zone_shown)
