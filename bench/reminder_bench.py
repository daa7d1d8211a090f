"""How well ``bot.core.when.parse_reminder`` reads the phrase set of ``bench/reminder_phrases``.

    python -m bench.reminder_bench            # accuracy and the misses
    python -m bench.reminder_bench --verbose  # every phrase and what it became

A phrase is right when the instant (as local ``YYYY-MM-DD HH:MM`` in its zone), the reminder's
text and the repeat rule are all what the set says, or when it must be ``None`` and is.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo

from bench.reminder_phrases import PHRASES, Phrase
from bot.core.when import parse_reminder


@dataclass(frozen=True)
class Outcome:
    phrase: Phrase
    got: str  # what it became, in the set's terms
    right: bool


def judge(phrase: Phrase) -> Outcome:
    zone = ZoneInfo(phrase.zone)
    now = datetime.strptime(phrase.now, "%Y-%m-%d %H:%M").replace(tzinfo=zone)
    parsed = parse_reminder(phrase.text, now, zone)
    if parsed is None:
        return Outcome(phrase, "None", phrase.expect is None)
    local = parsed.due.local().strftime("%Y-%m-%d %H:%M")
    got = f"{local} {parsed.text!r} {parsed.due.repeat}"
    right = (
        phrase.expect == local and phrase.what == parsed.text and phrase.repeat == parsed.due.repeat
    )
    return Outcome(phrase, got, right)


def run(verbose: bool = False) -> float:
    outcomes = [judge(p) for p in PHRASES]
    misses = [o for o in outcomes if not o.right]
    for o in outcomes if verbose else misses:
        p = o.phrase
        mark = "ok  " if o.right else "MISS"
        want = "None" if p.expect is None else f"{p.expect} {p.what!r} {p.repeat}"
        print(f"{mark} [{p.zone}, now {p.now}] {p.text!r}\n       want {want}\n       got  {o.got}")
    accuracy = (len(outcomes) - len(misses)) / len(outcomes)
    print(f"{len(outcomes) - len(misses)}/{len(outcomes)} right: {accuracy:.1%}")
    return accuracy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verbose", action="store_true", help="print every phrase")
    args = parser.parse_args(argv)
    return 0 if run(args.verbose) >= 0.95 else 1


if __name__ == "__main__":
    sys.exit(main())
