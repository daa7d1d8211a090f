"""Times as the article writes them: ISO-8601 UTC with milliseconds and ``Z``.

``2024-01-15T10:30:00.000Z``: fixed width, so stored times compare as text
(``memory.model.most_used`` relies on it). A memory's ``createdAt``, ``accessedAt`` and
``updatedAt`` are written in this form; whatever ISO-8601 a person or another program wrote
is read by ``parse_time`` (an offset, or none for UTC) and kept in it (``normalize_time``).
The bot writes and reads the times it stores the same way.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from memory.errors import MemoryInvalid


def now_iso() -> str:
    """The current time as the article writes it: ISO-8601 UTC with milliseconds and ``Z``.

    ``format_time``'s text (milliseconds cut, not rounded) from ``isoformat``, which formats in
    C: ``strftime`` goes through the ``time`` module, several times the cost, and every search
    asks for the time once (its touch)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def format_time(moment: datetime) -> str:
    """``moment`` as ``2024-01-15T10:30:00.000Z`` (naive datetimes are taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def format_time_ms(epoch_ms: int) -> str:
    """An epoch in milliseconds as the article's time string."""
    return format_time(datetime.fromtimestamp(epoch_ms / 1000, UTC))


_CANONICAL_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def normalize_time(text: str) -> str:
    """Any ISO-8601 time as the article's string (a string already in that form is kept)."""
    if _CANONICAL_TIME.fullmatch(text):
        return text
    return format_time(parse_time(text))


def parse_time(text: str) -> datetime:
    """Parse an ISO-8601 time (``Z`` or an offset; none means UTC) into an aware datetime."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
    except (ValueError, AttributeError, OverflowError) as e:
        raise MemoryInvalid(f"not an ISO-8601 time: {text!r}", field="time") from e
