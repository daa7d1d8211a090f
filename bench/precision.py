"""Precision benchmark: does a reply show what answers, and nothing when nothing does?

The retrieval benchmark (``bench.retrieval``) asks whether the answer is among the ranking's
first five. A reply shows what ``memory.relevance.decide`` keeps of that ranking, so this
measures the decision, on the same sets (``../shared/bench/README.md``'s format) and on the
project's own notes (``bench/data/notes_en``, ``notes_zh``: a person's notes with questions they
answer and questions nothing answers, each half visible and half hidden):

- each question is asked in its own namespace: ``shown`` = its evidence is among what is
  shown; ``hit@5`` = the ranking has it in its first five (the most the decision can keep);
- and in another user's namespace of the same set (the next user; a set of one user borrows
  the first user of ``COMPANIONS``'s set in its language): nothing should be shown
  (``abstained``). A notes question that nothing answers is asked in its own namespace, and it
  too should get nothing.

Reported per set and search mode (``hybrid``: keywords and meaning, what the bot uses;
``keywords``: without an embedder): evidence shown / hit@5, abstained, the mean number shown
when something is, and hit@5 and rec@5 of the ranking (unchanged by the decision).

``--held-out`` also measures them fitted on one half of the questions (split by a hash of
their text), on the other half, and the other way round, the counts pooled (2-fold
cross-validation): the figures a calibration reaches on questions it was not fitted on.

``--fit`` fits ``memory.relevance.CALIBRATIONS`` instead (``bench.calibrate``), on the sets
given and the visible half of the notes, and prints them as Python to paste into
``memory/relevance.py``.

Usage::

    python -m bench.precision --data ../shared/bench/data [--sets ...] [--modes hybrid,keywords]
                              [--fit | --held-out] [--asked FILE] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.retrieval import CACHE_DIR, CachedEmbedder, _read_jsonl, _stored
from memory import open_store
from memory.embedding import Embedder, OfflineEmbedder
from memory.interface import MemoryNamespace
from memory.model import Hit
from memory.relevance import CALIBRATIONS, Calibration, decide

OWN_DATA = Path(__file__).resolve().parent / "data"
NOTES = ("notes_en", "notes_zh")
# A new user's namespace: its first note alone (``_one``), three notes (``_tiny``), and a
# dozen, as issue 24 tried it (``_dozen``).
FEW = {"one": 1, "tiny": 3, "dozen": 12}
COMPANIONS = {"en": "memorybank_en", "zh": "memorybank_zh"}
MODES = {"hybrid": "hybrid", "keywords": "default"}
DEPTH = 10
NOTES_ABSTAIN = 0.8
NOTES_SHOWN = 0.8
MAX_MEAN_SHOWN = 2.5
TARGET_SHOWN, TARGET_ABSTAIN = 0.8, 0.8


@dataclass(frozen=True)
class Question:
    user: str
    text: str
    evidence: frozenset[str]
    lang: str
    half: str  # "visible", "hidden", or "" (the shared sets)


@dataclass
class Asked:
    """One question asked: the hits in its own namespace and in another."""

    set_name: str
    question: Question
    own: list[Hit]
    own_names: list[str]
    other: list[Hit] | None


def load(folder: Path, name: str) -> tuple[dict[str, list[dict[str, Any]]], list[Question]]:
    """A set's users and questions; a question without evidence is one nothing answers."""
    users = {
        str(r["user"]): list(r["memories"]) for r in _read_jsonl(folder / f"{name}.users.jsonl")
    }
    questions = [
        Question(
            str(r["user"]),
            str(r["question"]),
            frozenset(str(e) for e in r.get("evidence_ids") or ()),
            str(r.get("lang") or ("zh" if name.endswith("_zh") else "en")),
            str(r.get("half", "")),
        )
        for r in _read_jsonl(folder / f"{name}.questions.jsonl")
    ]
    return users, questions


def _fill(namespace: MemoryNamespace, records: list[dict[str, Any]], embed: bool) -> list[str]:
    namespace.import_memories(
        (_stored(r, i, False) for i, r in enumerate(records, start=1)), skip_duplicates=False
    )
    if embed:
        while namespace.embed_step():
            pass
    return [str(r["id"]) for r in records]


def ask(data: Path, names: Sequence[str], mode: str, embedder: Embedder | None) -> Iterator[Asked]:
    """Every question of every set, asked in its own namespace and in another."""
    with tempfile.TemporaryDirectory(prefix="bench-precision-") as tmp:
        store = open_store(tmp, embedder=embedder if mode == "hybrid" else None)
        try:
            for name in names:
                folder = OWN_DATA if name in NOTES else data
                users, questions = load(folder, name)
                spaces: dict[str, tuple[MemoryNamespace, list[str]]] = {}
                for number, (user, records) in enumerate(users.items(), start=1):
                    namespace = store.namespace(f"{name}/{number}")
                    spaces[user] = (namespace, _fill(namespace, records, mode == "hybrid"))
                order = list(users)
                borrowed: dict[str, MemoryNamespace] = {}
                store.wait_for_embeddings()
                for question in questions:
                    own, own_names = spaces[question.user]
                    if len(order) > 1:
                        other: MemoryNamespace | None = spaces[
                            order[(order.index(question.user) + 1) % len(order)]
                        ][0]
                    elif (
                        question.lang in COMPANIONS
                        and COMPANIONS[question.lang] != name
                        and (data / f"{COMPANIONS[question.lang]}.users.jsonl").exists()
                    ):
                        companion = COMPANIONS[question.lang]
                        if companion not in borrowed:
                            their_users, _ = load(data, companion)
                            first = next(iter(their_users.values()))
                            borrowed[companion] = store.namespace(f"{companion}/borrowed")
                            _fill(borrowed[companion], first, mode == "hybrid")
                            store.wait_for_embeddings()
                        other = borrowed[companion]
                    else:
                        other = None
                    ranker = MODES[mode]
                    hits = own.search(question.text, DEPTH, ranker=ranker, touch=False)
                    elsewhere = (
                        other.search(question.text, DEPTH, ranker=ranker, touch=False)
                        if other is not None
                        else None
                    )
                    yield Asked(name, question, hits, own_names, elsewhere)
                if name in NOTES:
                    for label in FEW:
                        yield from _few(store, name, users, questions, mode, label)
        finally:
            store.close()


def _few(
    store: Any,
    name: str,
    users: dict[str, list[dict[str, Any]]],
    questions: list[Question],
    mode: str,
    label: str,
) -> Iterator[Asked]:
    """A new user's case: each answerable notes question asked in a namespace of its evidence
    and ``size - 1`` other notes, and one question nothing answers asked there too (the set
    ``<name>_<label>`` of ``FEW[label]`` notes)."""
    [records] = users.values()
    unanswerable = [q for q in questions if not q.evidence]
    answerable = [q for q in questions if q.evidence]
    size = FEW[label]
    for number, question in enumerate(answerable):
        index = next(i for i, r in enumerate(records) if str(r["id"]) in question.evidence)
        others = [r for i, r in enumerate(records) if i != index]
        if label == "tiny":  # two of the others, spread over the notes
            picked = [others[(number * 7 + k * 13) % len(others)] for k in range(size - 1)]
        else:  # the notes after it, in the order they were written
            picked = [others[(index + k) % len(others)] for k in range(size - 1)]
        namespace = store.namespace(f"{name}-{label}/{number}")
        names = _fill(namespace, [records[index], *picked], mode == "hybrid")
        store.wait_for_embeddings()
        ranker = MODES[mode]
        hits = namespace.search(question.text, DEPTH, ranker=ranker, touch=False)
        yield Asked(f"{name}_{label}", question, hits, names, None)
        nothing = unanswerable[number % len(unanswerable)]
        nothing = Question(
            nothing.user, nothing.text, nothing.evidence, nothing.lang, question.half
        )
        hits = namespace.search(nothing.text, DEPTH, ranker=ranker, touch=False)
        yield Asked(f"{name}_{label}", nothing, hits, names, None)


# -- measuring -------------------------------------------------------------------------------


@dataclass
class Tally:
    answerable: int = 0
    hit5: int = 0
    rec5: float = 0.0
    shown_evidence: int = 0
    shown_counts: list[int] = field(default_factory=list)
    negatives: int = 0
    abstained: int = 0

    def summary(self) -> dict[str, float]:
        answered = [n for n in self.shown_counts if n]
        return {
            "questions": self.answerable,
            "hit@5": round(self.hit5 / max(self.answerable, 1), 3),
            "rec@5": round(self.rec5 / max(self.answerable, 1), 3),
            "evidence_shown": round(self.shown_evidence / max(self.answerable, 1), 3),
            "shown/hit@5": round(self.shown_evidence / max(self.hit5, 1), 3),
            "mean_shown": round(sum(answered) / max(len(answered), 1), 2),
            "negatives": self.negatives,
            "abstained": round(self.abstained / max(self.negatives, 1), 3),
        }


def notes_of(set_name: str) -> str:
    """The set a new user's case (``notes_en_tiny``, ``notes_en_dozen``) was drawn from."""
    for label in FEW:
        set_name = set_name.removesuffix(f"_{label}")
    return set_name


def evidence_at(asked: Asked, hits: Sequence[Hit]) -> list[bool]:
    """Whether each of ``hits`` (of ``asked``'s own namespace) is its question's evidence."""
    return [asked.own_names[hit.memory.id - 1] in asked.question.evidence for hit in hits]


def measure(
    all_asked: Sequence[Asked],
    calibrations: dict[tuple[str, str, str], Calibration] | None = None,
    tallies: dict[str, Tally] | None = None,
) -> dict[str, Tally]:
    """The tallies by set (the notes by half too) of ``decide`` on what was asked, with
    ``calibrations`` (default ``CALIBRATIONS``), added to ``tallies`` if given."""
    tallies = {} if tallies is None else tallies
    judge = CALIBRATIONS if calibrations is None else calibrations
    for asked in all_asked:
        keys = [asked.set_name]
        if asked.question.half:
            keys.append(f"{asked.set_name}:{asked.question.half}")
        question = asked.question
        answer = decide(question.text, asked.own, calibrations=judge)
        outcomes: list[tuple[str, Any]] = []
        if question.evidence:
            ranked = evidence_at(asked, asked.own[:5])
            found = sum(ranked)
            shown = any(evidence_at(asked, answer.shown))
            outcomes.append(("answerable", (any(ranked), found / len(question.evidence), shown)))
            outcomes.append(("count", len(answer.shown)))
        else:
            outcomes.append(("negative", not answer.shown))
        if asked.other is not None:
            elsewhere = decide(question.text, asked.other, calibrations=judge)
            outcomes.append(("negative", not elsewhere.shown))
        for key in keys:
            tally = tallies.setdefault(key, Tally())
            for what, value in outcomes:
                if what == "answerable":
                    tally.answerable += 1
                    tally.hit5 += value[0]
                    tally.rec5 += value[1]
                    tally.shown_evidence += value[2]
                elif what == "count":
                    tally.shown_counts.append(value)
                else:
                    tally.negatives += 1
                    tally.abstained += value
    return tallies


def format_report(mode: str, tallies: dict[str, Tally]) -> str:
    lines = [
        f"== {mode}",
        f"{'set':22} {'n':>5} {'hit@5':>6} {'rec@5':>6} {'shown/hit@5':>11} "
        f"{'mean shown':>10} {'abstained':>9} {'neg':>5}",
    ]
    for key, tally in tallies.items():
        s = tally.summary()
        lines.append(
            f"{key:22} {s['questions']:>5} {s['hit@5']:>6.3f} {s['rec@5']:>6.3f} "
            f"{s['shown/hit@5']:>11.3f} {s['mean_shown']:>10.2f} {s['abstained']:>9.3f} "
            f"{s['negatives']:>5}"
        )
    return "\n".join(lines)


def _asked(
    args: argparse.Namespace, names: list[str], mode: str, embedder: Embedder | None
) -> list[Asked]:
    kept = args.asked.with_name(f"{args.asked.name}.{mode}") if args.asked else None
    if kept is not None and kept.exists():
        with kept.open("rb") as handle:
            cached: list[Asked] = pickle.load(handle)  # a file this command wrote
        return [a for a in cached if notes_of(a.set_name) in names]
    asked = list(ask(args.data, names, mode, embedder))
    if kept is not None:
        with kept.open("wb") as handle:
            pickle.dump(asked, handle)
    return asked


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.precision", description=__doc__)
    parser.add_argument("--data", type=Path, required=True, help="folder of the shared sets")
    parser.add_argument("--sets", help="comma-separated (default: all, and the notes)")
    parser.add_argument("--modes", default="hybrid,keywords")
    parser.add_argument("--fit", action="store_true", help="fit and print CALIBRATIONS")
    parser.add_argument(
        "--held-out",
        action="store_true",
        help="also measure fitted on one half of the questions, on the other (2-fold)",
    )
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--asked",
        type=Path,
        help="keep what was asked in this file (pickle) and reuse it: refits in seconds",
    )
    args = parser.parse_args(argv)
    from bench.calibrate import fit, held_out  # it builds on this module's Asked and measure

    shared = sorted(
        p.name.removesuffix(".users.jsonl").removesuffix(".users.jsonl.gz")
        for p in args.data.iterdir()
        if ".users.jsonl" in p.name
    )
    names = args.sets.split(",") if args.sets else [*shared, *NOTES]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    embedder: CachedEmbedder | None = None
    if "hybrid" in modes:
        embedder = CachedEmbedder(OfflineEmbedder(), CACHE_DIR)
    started = time.perf_counter()
    results: dict[str, Any] = {}
    fitted: dict[tuple[str, str, str], Calibration] = {}
    try:
        for mode in modes:
            asked = _asked(args, names, mode, embedder)
            if args.fit:
                fitted.update(fit(asked, mode))
                continue
            tallies = measure(asked)
            results[mode] = {key: tally.summary() for key, tally in tallies.items()}
            print(format_report(mode, tallies), flush=True)
            if args.held_out:
                tallies = held_out(asked, mode)
                results[f"{mode} held out"] = {k: t.summary() for k, t in tallies.items()}
                print(format_report(f"{mode}, held out (2-fold)", tallies), flush=True)
    finally:
        if embedder is not None:
            embedder.save()
    if args.fit:
        print("CALIBRATIONS: dict[tuple[str, str, str], Calibration] = {")
        for key, value in sorted(fitted.items()):
            print(f"    {key!r}: {value!r},")
        print("}")
        missing = set(CALIBRATIONS) - set(fitted)
        if missing:
            print(f"# not fitted here (kept as they are): {sorted(missing)}", file=sys.stderr)
    print(f"{len(names)} sets in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
