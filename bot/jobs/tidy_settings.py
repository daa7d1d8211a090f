"""The nightly tidy's document per namespace, and the line the digest says of the last tidy.

The document ``tidy`` (``tidy.json`` in the file store) keeps the setting (``/tidy on|off``),
the language of whoever last sent ``/tidy`` there, the night last claimed (``bot.jobs.tidy``)
and what the last tidy did (``last``: how many merged, marked past, ended, replaced, asked, and
when). The digest reads it (``digest_line``) without importing the job.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from bot.view.i18n import t
from memory.errors import MemoryInvalid
from memory.interface import Store
from memory.timestamps import parse_time

SETTINGS = "tidy"


@dataclass(frozen=True)
class TidySettings:
    """One namespace's document ``tidy``; a namespace without it has these defaults."""

    enabled: bool | None = None  # None: never chosen, [tidy] default applies
    language: str | None = None  # of whoever last sent /tidy here
    last_period: str | None = None  # the scheduled time (UTC) of the last night claimed
    last: dict[str, Any] | None = None  # what the last tidy did: counts, "at", "change"

    @classmethod
    def from_dict(cls, data: object) -> TidySettings:
        """Read the document; a value of the wrong type (a hand edit) takes its default."""
        if not isinstance(data, dict):
            return cls()
        enabled, language = data.get("enabled"), data.get("language")
        period, last = data.get("last_period"), data.get("last")
        return cls(
            enabled if isinstance(enabled, bool) else None,
            language if language in ("en", "zh") else None,
            period if isinstance(period, str) else None,
            last if isinstance(last, dict) else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """The document's value."""
        return dataclasses.asdict(self)


def digest_line(store: Store, name: str, language: str, zone: ZoneInfo) -> str:
    """What the digest says of the last tidy ("🧹 Last tidy (…): 2 merged, …"); "" if none."""
    found = store.documents(name).get(SETTINGS)
    last = TidySettings.from_dict(found.value if found is not None else None).last
    if not last or not isinstance(last.get("at"), str):
        return ""
    try:
        when = parse_time(last["at"]).astimezone(zone).strftime("%Y-%m-%d %H:%M")
    except MemoryInvalid:  # a hand edit: the digest goes without the line
        return ""
    parts = [
        t(language, f"digest_tidy_{key}", count=count)
        for key in ("merged", "past", "ended", "resolved", "questions")
        if isinstance(count := last.get(key), int) and count > 0
    ]
    what = (t(language, "digest_tidy_joiner_plain") if parts else "").join(parts)
    return t(language, "digest_tidy", when=when, what=what or t(language, "digest_tidy_nothing"))


__all__ = ["SETTINGS", "TidySettings", "digest_line"]
