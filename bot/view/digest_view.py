"""What the digest says: the most used memories, what is new, what has gone unused.

``build_report`` reads a namespace's memories as they are (``Namespace.memories``, never
``search``), so reporting is not access: no ``accessCount`` or ``accessedAt`` changes because a
memory appeared in a report. ``render_report`` turns the report into Telegram HTML in the
user's language, escaped like every other reply (``bot.view.render``), its times as every time
is written (``bot.view.times``); ``bot.jobs.digest`` sends it.

- Most used: the ``top`` memories with the highest ``accessCount`` (the article's
  ``mostAccessed``), ties broken by the most recently used, then the newer: one ordering,
  ``memory.model.most_used``, shared with ``/stats``; a memory never used is not "most used"
  and is left out.
- New: the memories created since the last scheduled report (the first report: since the
  schedule's previous run), newest first, the first ``top`` of them shown.
- Unused: how many memories nobody has recalled for ``stale_days`` days (``accessedAt``, which
  starts as ``createdAt``), with a hint to review them.

This module is pure: no Telegram calls, no store.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from bot.view.i18n import t
from bot.view.render import PREVIEW_CHARS, escape, preview
from bot.view.times import local_time
from memory.model import Memory, most_used
from memory.timestamps import parse_time


@dataclass(frozen=True)
class Report:
    """A namespace's digest, before rendering."""

    total: int
    most_used: tuple[Memory, ...]
    added: tuple[Memory, ...]  # newest first, at most ``top`` of them
    added_count: int
    stale_count: int
    stale_days: int
    since: datetime | None


def build_report(
    memories: Iterable[Memory],
    *,
    now: datetime,
    since: datetime | None,
    top: int,
    stale_days: int,
) -> Report:
    """The report on ``memories`` as of ``now``; "new" means created after ``since``."""
    everything = list(memories)
    used = most_used(everything, top)  # the order of /stats too
    added = [] if since is None else [m for m in everything if parse_time(m.created_at) > since]
    added.sort(key=lambda m: m.id, reverse=True)
    cutoff = now - timedelta(days=stale_days)
    stale = sum(1 for m in everything if parse_time(m.accessed_at) < cutoff)
    return Report(
        total=len(everything),
        most_used=tuple(used),
        added=tuple(added[:top]),
        added_count=len(added),
        stale_count=stale,
        stale_days=stale_days,
        since=since,
    )


def _line(memory: Memory) -> str:
    return f"{escape(preview(memory.content, PREVIEW_CHARS))} · 🆔 <code>{memory.id}</code>"


def render_report(
    report: Report, language: str, timezone: tzinfo, *, group: str | None = None, tidy: str = ""
) -> str:
    """The report as Telegram HTML in ``language``; times shown in ``timezone``. ``group``:
    the group's name ("" if not known) for a group's report, None for a private chat's;
    ``tidy``: what the last nightly tidy did (a line of HTML, ``bot.jobs.tidy_settings``)."""
    if group is None:
        title = t(language, "digest_title", total=report.total)
    elif group:
        title = t(language, "digest_title_group", total=report.total, group=escape(group))
    else:
        title = t(language, "digest_title_this_group", total=report.total)
    lines = [title, "", t(language, "digest_top")]
    for number, memory in enumerate(report.most_used, start=1):
        times = t(language, "stats_times", count=memory.access_count)
        lines.append(f"{number}. <i>({times})</i> {_line(memory)}")
    if not report.most_used:
        lines.append(t(language, "digest_top_none"))
    if report.since is not None:
        since = escape(local_time(report.since, timezone, language))
        lines.append("")
        if report.added_count:
            lines.append(t(language, "digest_added", since=since, count=report.added_count))
            lines.extend(f"• {_line(memory)}" for memory in report.added)
            more = report.added_count - len(report.added)
            if more:
                lines.append(t(language, "digest_added_more", count=more))
        else:
            lines.append(t(language, "digest_added_none", since=since))
    if report.stale_count:
        lines.append("")
        lines.append(t(language, "digest_stale", count=report.stale_count, days=report.stale_days))
    if tidy:
        lines += ["", tidy]
    lines.append("")
    lines.append(t(language, "digest_footer"))
    return "\n".join(lines)


def next_report_text(moment: datetime | None, timezone: tzinfo, language: str) -> str:
    """The next report as ``/digest`` shows it (HTML): ``2025-03-10 (Mon) 09:00
    Asia/Shanghai``, or that none is scheduled."""
    if moment is None:
        return t(language, "digest_never")
    return escape(local_time(moment, timezone, language))


__all__ = ["Report", "build_report", "next_report_text", "render_report"]
