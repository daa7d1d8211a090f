"""Updates benchmark: does a new value replace the old one, and leave look-alikes alone?

The project's own data (``bench/data/updates_en.jsonl``, ``updates_zh.jsonl``): each line a
*case*, a few things a person tells the bot one after the other, then a question about one of
them. A step is a ``fact``, an ``update`` of an earlier step ("the cabin wifi password is now
pinecone43" after "…pinecone42", ``of``: that step), or a ``lookalike`` of one (a different
person, place or thing said the same way: "Leo's birthday is June 9" after "Mia's birthday is
May 3"). ``current`` is what the first answer must say; ``old`` what it must not say without
it. Each case belongs to the ``visible`` half or the ``hidden`` one; the hidden half was written
with the visible one, before the mechanism (``memory.updates``), and was not used to tune it.

Each language and half is one person's namespace: the cases' steps are told in turns (every
case's first step, then every second step ...), as ``/remember`` does (``bot.core.entry``, then
``bot.core.adding.remember`` with ``replace``: a sure update replaces). When the bot would ask
(Replace / Keep both), the person here keeps both, the least the bot can count on; the question
then finds two values, and recall must show the newer first (``memory.updates.newest_first``).
No language model: the rules, and the offline embedder's meaning (``--modes hybrid``, the
default) or keywords alone (``keywords``).

Measured per language and half:

- ``current first``: the first memory the question's answer shows says ``current``;
  ``old first``: it says an ``old`` value and not ``current`` (never, by the target);
- ``look-alikes replaced``: look-alike steps that replaced a memory; ``offered``: those that
  were asked about (the bot offered a replacement);
- updates ``sure / asked / missed``: update steps that replaced their old value, that asked,
  that did neither (``wrong``: replaced another memory); ``facts replaced``: plain facts that
  replaced anything.

Targets (issue 26): current first >= 90% (old first 0), look-alikes replaced <= 5%.

Usage::

    python -m bench.updates [--data bench/data] [--modes hybrid,keywords]
                            [--halves visible,hidden] [--json FILE] [--verbose]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import unicodedata
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bot.core import adding, operations
from bot.core.entry import parse_entry
from memory import open_store
from memory.embedding import Embedder, OfflineEmbedder
from memory.interface import MemoryNamespace

OWN_DATA = Path(__file__).resolve().parent / "data"
SETS = ("updates_en", "updates_zh")
HALVES = ("visible", "hidden")
TARGET_FIRST, TARGET_LOOKALIKES = 0.90, 0.05


@dataclass
class Result:
    """One language and half, in one mode."""

    dataset: str
    half: str
    mode: str
    questions: int = 0
    current_first: int = 0
    old_first: int = 0
    nothing: int = 0
    lookalikes: int = 0
    lookalikes_replaced: int = 0
    lookalikes_offered: int = 0
    updates: int = 0
    updates_sure: int = 0
    updates_asked: int = 0
    updates_missed: int = 0
    updates_wrong: int = 0
    facts: int = 0
    facts_replaced: int = 0
    misses: list[str] = field(default_factory=list)

    def share(self, count: int, of: int) -> float:
        """``count`` / ``of`` (0 when there is nothing to count)."""
        return count / of if of else 0.0


def _cases(data: Path, dataset: str, half: str) -> list[dict[str, Any]]:
    path = data / f"{dataset}.jsonl"
    with path.open(encoding="utf-8") as handle:
        return [c for line in handle if line.strip() and (c := json.loads(line))["half"] == half]


def _says(text: str, value: str) -> bool:
    """Whether ``text`` states ``value`` (width and case folded)."""
    return _folded(value) in _folded(text)


def _folded(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _turns(cases: list[dict[str, Any]]) -> Iterator[tuple[int, int]]:
    """(case, step) in the order a person says them: every case's first step, then second …"""
    longest = max(len(case["steps"]) for case in cases)
    for step in range(longest):
        for number, case in enumerate(cases):
            if step < len(case["steps"]):
                yield number, step


def _tell(ns: MemoryNamespace, text: str) -> tuple[str, int, int | None, set[int]]:
    """Store ``text`` as /remember does; the outcome (stored, replaced, asked, duplicate), the
    memory that holds it now, the one it replaced, and those it was asked about."""
    entry = parse_entry(text)
    done = adding.remember(ns, entry.content, entry.tags, entry.category, replace=True)
    if done.replaced is not None and done.memory is not None:
        return "replaced", done.memory.id, done.replaced.id, set()
    if done.near:  # the bot would ask; the person keeps both
        asked = {near.memory.id for near in done.near if near.reason == "update"}
        kept = adding.remember(ns, entry.content, entry.tags, entry.category, keep_both=True)
        assert kept.memory is not None
        return "asked", kept.memory.id, None, asked
    assert done.memory is not None
    return ("duplicate" if done.duplicate else "stored"), done.memory.id, None, set()


def run_half(
    data: Path, dataset: str, half: str, mode: str, embedder: Embedder | None, *, verbose: bool
) -> Result:
    """Tell one half's cases to a fresh namespace, then ask their questions."""
    cases = _cases(data, dataset, half)
    result = Result(dataset, half, mode)
    with tempfile.TemporaryDirectory() as folder, open_store(folder, embedder=embedder) as store:
        ns = store.namespace("users/1")
        held: dict[tuple[int, int], int] = {}  # (case, step) -> the memory holding it
        for number, step in _turns(cases):
            said = cases[number]["steps"][step]
            outcome, memory_id, replaced, asked = _tell(ns, said["say"])
            if embedder is not None:
                ns.wait_for_embeddings(timeout=60)
            held[number, step] = memory_id
            kind = said["kind"]
            target = held.get((number, said["of"])) if "of" in said else None
            if kind == "update":
                result.updates += 1
                if outcome == "replaced" and replaced == target:
                    result.updates_sure += 1
                elif outcome == "replaced":
                    result.updates_wrong += 1
                elif target in asked:
                    result.updates_asked += 1
                else:
                    result.updates_missed += 1
            elif kind == "lookalike":
                result.lookalikes += 1
                result.lookalikes_replaced += outcome == "replaced"
                result.lookalikes_offered += outcome == "asked" and bool(asked)
            else:
                result.facts += 1
                result.facts_replaced += outcome == "replaced"
            wrong = (outcome == "replaced") != (kind == "update") or (
                kind == "lookalike" and outcome == "asked"
            )
            if verbose and wrong:
                print(f"  {dataset} {half}: {kind} {outcome}: {said['say']}", file=sys.stderr)
        for case in cases:
            result.questions += 1
            found = operations.recall_page(ns, case["question"], use=False)
            first = found.memories[0].content if found.memories else ""
            if not first:
                result.nothing += 1
            elif _says(first, case["current"]):
                result.current_first += 1
                continue
            elif any(_says(first, old) for old in case["old"]):
                result.old_first += 1
            result.misses.append(f"{case['case']}: {case['question']} -> {first or '(nothing)'}")
    return result


def report(results: list[Result]) -> str:
    """The results as a Markdown table."""
    lines = [
        "| set | half | mode | questions | current first | old first | look-alikes replaced "
        "| offered | updates sure / asked / missed / wrong | facts replaced |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.dataset} | {r.half} | {r.mode} | {r.questions} "
            f"| {r.share(r.current_first, r.questions):.3f} "
            f"| {r.share(r.old_first, r.questions):.3f} "
            f"| {r.share(r.lookalikes_replaced, r.lookalikes):.3f} ({r.lookalikes}) "
            f"| {r.share(r.lookalikes_offered, r.lookalikes):.3f} "
            f"| {r.updates_sure} / {r.updates_asked} / {r.updates_missed} / {r.updates_wrong} "
            f"({r.updates}) | {r.facts_replaced} ({r.facts}) |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its table (and each question missed)."""
    parser = argparse.ArgumentParser(prog="python -m bench.updates", description=__doc__)
    parser.add_argument("--data", type=Path, default=OWN_DATA)
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--modes", default="hybrid,keywords")
    parser.add_argument("--halves", default=",".join(HALVES))
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--verbose", action="store_true", help="every step that went wrong")
    args = parser.parse_args(argv)
    results = []
    for mode in args.modes.split(","):
        embedder = OfflineEmbedder() if mode == "hybrid" else None
        for dataset in args.sets.split(","):
            for half in args.halves.split(","):
                results.append(
                    run_half(args.data, dataset, half, mode, embedder, verbose=args.verbose)
                )
    print(report(results))
    for r in results:
        for miss in r.misses:
            print(f"missed ({r.mode}): {miss}")
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], ensure_ascii=False, indent=2))
    met = all(
        r.share(r.current_first, r.questions) >= TARGET_FIRST
        and r.old_first == 0
        and r.share(r.lookalikes_replaced, r.lookalikes) <= TARGET_LOOKALIKES
        for r in results
    )
    print("targets met" if met else "targets missed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
