"""Reminder offers: does the bot offer one for what people say they will do, and only then?

    python -m bench.offers                    # the project's sets, bench/data/offers_*.jsonl
    python -m bench.offers --data DIR         # every offers_*.jsonl of another folder
    python -m bench.offers --misses           # and what the visible half got wrong

Each line of a set is one message, said at ``now`` (local ``YYYY-MM-DD HH:MM``) in ``zone``::

    {"id": "en-v-p01", "lang": "en", "half": "visible", "text": "I need to call the plumber
     tomorrow morning", "offer": true, "local": "2026-12-02 09:00", "repeat": null,
     "now": "2026-12-01 10:00", "zone": "Europe/Berlin"}
    {"id": "zh-v-n05", "lang": "zh", "half": "visible", "text": "车停在B2层 23号",
     "offer": false, "kind": "number", "now": "2026-12-01 10:00", "zone": "Asia/Shanghai"}

``offer`` says whether the message states an intention with a time; ``local`` is the time the
offer must show (and ``repeat`` its rule: ``yearly`` for a birthday, or null). Per language and
half it reports: offered (of the intentions; target >= 85%), offered wrongly (of the others;
<= 5%), and the offered time right (of the intentions offered: the local time and the rule;
>= 95%). The messages are read by ``bot.core.plans.plan_in``, the rules the bot uses without a
language model (the default hour is 09:00, as in ``config.example.toml``).

The hidden half is scored but never shown: ``--misses`` lists the visible half's misses only,
so that nobody tunes the rules on the phrases they are held out on. The exit status is 0 when
every language and half meets the three targets.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from bot.core.plans import plan_in

DATA = Path(__file__).parent / "data"
OFFERED_MIN, WRONG_MAX, TIME_MIN = 0.85, 0.05, 0.95
SHOWN_HALVES = ("visible", "")  # misses of the hidden half are never printed


@dataclass(frozen=True)
class Case:
    """One message of a set and what the bot should do with it."""

    id: str
    lang: str
    half: str
    text: str
    offer: bool
    local: str | None
    repeat: str | None
    now: datetime
    zone: ZoneInfo


@dataclass(frozen=True)
class Outcome:
    case: Case
    offered: bool
    time_right: bool
    got: str  # what the bot offered, or "-"


def read_cases(folder: Path) -> list[Case]:
    """Every case of ``folder``'s ``offers_*.jsonl`` files."""
    cases = []
    for path in sorted(folder.glob("offers_*.jsonl")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            zone = ZoneInfo(row["zone"])
            now = datetime.strptime(row["now"], "%Y-%m-%d %H:%M").replace(tzinfo=zone)
            cases.append(
                Case(
                    id=str(row.get("id", f"{path.stem}:{number}")),
                    lang=str(row.get("lang", path.stem.removeprefix("offers_"))),
                    half=str(row.get("half", "")),
                    text=row["text"],
                    offer=bool(row["offer"]),
                    local=row.get("local"),
                    repeat=row.get("repeat"),
                    now=now,
                    zone=zone,
                )
            )
    return cases


def judge(case: Case) -> Outcome:
    plan = plan_in(case.text, case.now, case.zone)
    if plan is None:
        return Outcome(case, False, False, "-")
    local = plan.due.local().strftime("%Y-%m-%d %H:%M")
    repeat = plan.due.repeat.frequency if plan.due.repeat is not None else None
    right = case.offer and local == case.local and repeat == case.repeat
    return Outcome(case, True, right, f"{local} {repeat or ''} {plan.text!r}".replace("  ", " "))


@dataclass(frozen=True)
class Figures:
    intentions: int
    offered: int
    time_right: int
    others: int
    wrong: int

    @property
    def offered_rate(self) -> float:
        return self.offered / self.intentions if self.intentions else 1.0

    @property
    def wrong_rate(self) -> float:
        return self.wrong / self.others if self.others else 0.0

    @property
    def time_rate(self) -> float:
        return self.time_right / self.offered if self.offered else 1.0

    @property
    def met(self) -> bool:
        return (
            self.offered_rate >= OFFERED_MIN
            and self.wrong_rate <= WRONG_MAX
            and self.time_rate >= TIME_MIN
        )


def figures(outcomes: list[Outcome]) -> Figures:
    mine = [o for o in outcomes if o.case.offer]
    others = [o for o in outcomes if not o.case.offer]
    offered = [o for o in mine if o.offered]
    return Figures(
        intentions=len(mine),
        offered=len(offered),
        time_right=sum(o.time_right for o in offered),
        others=len(others),
        wrong=sum(o.offered for o in others),
    )


def report(outcomes: list[Outcome], misses: bool) -> bool:
    groups: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        groups[(outcome.case.lang, outcome.case.half)].append(outcome)
    print(
        f"{'set':<14} {'offered (>= 85%)':>20} {'wrongly (<= 5%)':>18} {'time right (>= 95%)':>22}"
    )
    met = True
    for (lang, half), group in sorted(groups.items()):
        f = figures(group)
        met &= f.met
        name = f"{lang} {half or 'all'}"
        print(
            f"{name:<14} {f.offered:>4}/{f.intentions:<4} {f.offered_rate:6.1%}"
            f" {f.wrong:>5}/{f.others:<4} {f.wrong_rate:5.1%}"
            f" {f.time_right:>7}/{f.offered:<4} {f.time_rate:6.1%}"
            + ("" if f.met else "  (missed)")
        )
    if misses:
        for outcome in outcomes:
            case = outcome.case
            if case.half not in SHOWN_HALVES:
                continue
            if (case.offer and outcome.time_right) or (not case.offer and not outcome.offered):
                continue
            want = f"{case.local} {case.repeat or ''}".strip() if case.offer else "no offer"
            print(f"MISS {case.id} {case.text!r}\n     want {want}\n     got  {outcome.got}")
    return met


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder of offers_*.jsonl")
    parser.add_argument("--misses", action="store_true", help="list the visible half's misses")
    args = parser.parse_args(argv)
    cases = read_cases(args.data)
    if not cases:
        print(f"no offers_*.jsonl in {args.data}", file=sys.stderr)
        return 2
    return 0 if report([judge(c) for c in cases], args.misses) else 1


if __name__ == "__main__":
    sys.exit(main())
