"""The libraries the issue names, on the same phrase set: do they read times better than ours?

    pip install jionlp==1.5.31 dateparser==1.5.0 parsedatetime==2.6   # a scratch venv
    python -m bench.reminder_libraries

Scores only the instant, and generously: Chinese phrases go to ``jionlp.ner.extract_time``
after full-width digits are made ASCII, English ones to ``dateparser.search.search_dates``
and to ``parsedatetime``; a day without a time is put at the default hour (09:00), and a
repeat counts as right when its first instant is. Neither the reminder's text nor the rule is
asked of them. A phrase that must be ``None`` is right when the library finds nothing.
Not imported by the bot: these libraries are not its dependencies (see ``bot.core.when``).
"""

from __future__ import annotations

import contextlib
import io
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from bench.reminder_phrases import PHRASES, Phrase
from bot.core.timephrase import normalise

Reader = Callable[[str, datetime], str | None]


def is_chinese(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


def jionlp_reader() -> Reader:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        import jionlp  # type: ignore[import-not-found]

    def read(text: str, now: datetime) -> str | None:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            try:
                found: list[dict[str, Any]] = jionlp.ner.extract_time(
                    normalise(text), time_base=now.timestamp(), with_parsing=True
                )
            except Exception:  # noqa: BLE001 - a library's failure is a miss, measured
                return None
        if not found:
            return None
        detail = found[0]["detail"]["time"]
        if isinstance(detail, dict):  # time_period: its first point
            detail = (detail.get("point") or {}).get("time")
            if not detail:
                return None
        start, end = detail[0], detail[1]
        if start.endswith("00:00:00") and end.endswith("23:59:59"):
            start = start[:11] + "09:00:00"
        return start[:16]

    return read


def dateparser_reader() -> Reader:
    from dateparser.search import search_dates  # type: ignore[import-not-found]

    def read(text: str, now: datetime) -> str | None:
        settings = {"RELATIVE_BASE": now, "PREFER_DATES_FROM": "future"}
        found = search_dates(text, languages=["en"], settings=settings)
        return found[0][1].strftime("%Y-%m-%d %H:%M") if found else None

    return read


def parsedatetime_reader() -> Reader:
    import parsedatetime  # type: ignore[import-not-found]

    calendar = parsedatetime.Calendar(version=parsedatetime.VERSION_CONTEXT_STYLE)

    def read(text: str, now: datetime) -> str | None:
        when, context = calendar.parseDT(text, sourceTime=now)
        if not context.hasDateOrTime:
            return None
        if not context.hasTime:
            when = when.replace(hour=9, minute=0)
        return str(when.strftime("%Y-%m-%d %H:%M"))

    return read


def score(name: str, reader: Reader, phrases: list[Phrase]) -> None:
    right = 0
    started = time.perf_counter()
    for p in phrases:
        now = datetime.strptime(p.now, "%Y-%m-%d %H:%M")
        right += reader(p.text, now) == p.expect
    took = (time.perf_counter() - started) / max(1, len(phrases)) * 1000
    share = right / len(phrases)
    print(f"{name:>15}: {right}/{len(phrases)} instants right ({share:.0%}), {took:.1f} ms each")


def main() -> None:
    chinese = [p for p in PHRASES if is_chinese(p.text)]
    english = [p for p in PHRASES if not is_chinese(p.text)]
    started = time.perf_counter()
    jio = jionlp_reader()
    print(f"jionlp import: {time.perf_counter() - started:.1f} s")
    score("jionlp (zh)", jio, chinese)
    score("dateparser (en)", dateparser_reader(), english)
    score("parsedatetime", parsedatetime_reader(), english)


if __name__ == "__main__":
    main()
