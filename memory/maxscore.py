"""The best memories for a query over a term index (``memory.termindex``), found exactly
without scoring every memory: MaxScore (Turtle and Flood, 1995), for ``memory.bm25``.

The keyword ranking hands ``top`` the query's terms, strongest first, with their weights; the
impacts come from the index (BM25's saturated, length-normalized term frequencies). Terms are
walked strongest first until the rest cannot bring in a memory not yet seen; the memories seen
are then completed with the rest, best first, until none left can make the cut. The result,
scores and order of ties included, is exactly what scoring every memory would give.

Completing them is a walk of the rest terms' postings too (``_walk_rest``), on a copy of the
partial scores: in numpy a walk costs less than looking a few hundred memories up, measured
up to 100,000 memories. Only when that walk would pass the postings budget are the memories
looked up instead, by a binary search in the rest terms' sorted postings (``_complete``,
``_listed``; ``lookup``, from the memories' bags, serves the feedback round, whose many terms
meet few memories).

- ``POSTINGS_BUDGET = 200_000``, ``CANDIDATES_CAP = 1000``: should the strong terms alone walk
  more than 200,000 postings (only in namespaces of tens of thousands of memories), the walk
  stops there and completes the best 1,000 memories so far: a bound on the worst case, not an
  everyday path.
- Ties (scores within ``TIE``) are broken by ``sort_key``: the memory used more often
  (``accessCount``), then the newer one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import pairwise
from operator import itemgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from memory.indexfile import Floats, Slots
from memory.model import Memory
from memory.termindex import TermIndex

POSTINGS_BUDGET = 200_000
CANDIDATES_CAP = 1000
TIE = 1e-9


def sort_key(memories: Mapping[int, Memory]) -> Callable[[tuple[int, float]], tuple[Any, ...]]:
    """The sort key of a scored memory: score, then accessCount, then the newer one.

    Memories sorted by it are mostly tied at a few equal scores, so each distinct score is
    rounded once (``round`` to places is a decimal conversion, several dict look-ups' cost)."""
    rounded: dict[float, float] = {}

    def key(pair: tuple[int, float]) -> tuple[Any, ...]:
        memory, score = memories[pair[0]], pair[1]
        near = rounded.get(score)
        if near is None:
            near = rounded[score] = round(score, 9)
        return (near, memory.access_count, memory.created_at, memory.id)

    return key


def ordered(
    scores: dict[int, float], memories: Mapping[int, Memory], limit: int
) -> list[tuple[int, float]]:
    """The ``limit`` best of ``scores`` by ``sort_key``, best first.

    The key's first part is the score rounded to 9 places, and rounding keeps the order, so
    the key (a Python call each, and ``round`` to places is a decimal conversion, about half
    a microsecond) is needed only where two scores may round alike, which only scores within
    ``_near`` of each other can. The ``limit``-th best rounded score is the ``limit``-th best
    score rounded: every score at or above that one is in, and of those below only the few
    within a rounding step of it are rounded to find out. The rest are in the order of their
    scores, unless two neighbours there are that close; then the whole key orders them.
    """
    pairs = list(scores.items())
    if len(pairs) > limit:
        cut = sorted(scores.values())[-limit]
        rounded_cut = round(cut, 9)
        near = cut - _near(cut)
        pairs = [
            pair
            for pair in pairs
            if pair[1] >= cut or (pair[1] >= near and round(pair[1], 9) >= rounded_cut)
        ]
    by_score = sorted(pairs, key=itemgetter(1), reverse=True)
    if all(high - low > _near(high) for (_, high), (_, low) in pairwise(by_score)):
        return by_score[:limit]
    return sorted(pairs, key=sort_key(memories), reverse=True)[:limit]


def _near(score: float) -> float:
    """How close to ``score`` another must be to round to the same 9 places: within 1e-9
    (plus the float spacing, far smaller than this margin)."""
    return 1e-8 * (1.0 + abs(score))


def top(
    index: TermIndex,
    weighted: list[tuple[int, float]],
    memories: Mapping[int, Memory],
    limit: int,
) -> dict[int, float]:
    """The ``limit`` best memories for the ``weighted`` terms (term id, weight; strongest
    first), and any tied with the last, scored; only memories in ``memories`` count.

    MaxScore (Turtle and Flood, 1995): terms are taken strongest first and their postings
    walked in full, until the most that the remaining terms could add to a memory not yet
    seen falls below the ``limit``-th best score so far. From then on no unseen memory can
    make the cut; the memories seen so far are completed best first (the remaining terms
    walked too, or, past the postings budget, looked up), and the completion stops at the
    first memory whose partial score plus that most cannot reach the ``limit``-th best. The
    result is exactly what scoring every memory would give.

    Scores accumulate in an array over slots; ``seen`` lists the slots in the order they
    were first reached, which is the order ties are met in.
    """
    tids = [tid for tid, _ in weighted]
    highest = index.max_impact[tids].tolist() if tids else []
    lengths = index.df[tids].tolist() if tids else []
    bounds = [weight * most for (_, weight), most in zip(weighted, highest, strict=True)]
    remaining = sum(bounds)
    # Every weight and impact is > 0, so a memory has been reached iff its score is > 0.
    scores = np.zeros(index.slots, dtype=np.float64)
    walked: list[Slots] = []
    check_below = remaining
    visited = 0
    rest: list[tuple[int, float]] = []
    for position, (tid, weight) in enumerate(weighted):
        length = lengths[position]
        over_budget = visited + length > POSTINGS_BUDGET
        if visited > limit and (remaining < check_below or over_budget):
            reached = scores[scores > 0]
            if len(reached) > limit:
                # A full pass over the scores: done again only once ``remaining`` has shrunk.
                threshold = float(np.partition(reached, -limit)[-limit])
                if remaining < threshold or over_budget:
                    rest = weighted[position:]
                    break
                check_below = remaining * 0.75
        visited += length
        remaining -= bounds[position]
        slots, impacts = index.postings(tid)
        walked.append(slots)
        np.add.at(scores, slots, weight * impacts)  # unbuffered: a fancy += costs twice as much
    # The order the memories were first reached in: by the first term reaching them, then
    # by slot (a posting's order). Ties are met in this order.
    first = np.zeros(index.slots, dtype=np.int32)
    for position in range(len(walked) - 1, -1, -1):
        first[walked[position]] = position
    seen: Slots = np.flatnonzero(scores)
    values = scores[seen]
    if rest:
        if len(seen) > CANDIDATES_CAP:
            # Only past the postings budget can the cap change the result (see the docstring).
            kept = values >= np.partition(values, -CANDIDATES_CAP)[-CANDIDATES_CAP]
            seen, values = seen[kept], values[kept]
        order = np.lexsort((seen, first[seen], -values))[:CANDIDATES_CAP]
        if visited + sum(lengths[len(weighted) - len(rest) :]) <= POSTINGS_BUDGET:
            seen, values = _walk_rest(index, scores, seen[order], rest, remaining, limit)
        else:
            seen, values = _complete(index, seen[order], values[order], rest, remaining, limit)
        first = np.zeros(index.slots, dtype=np.int32)  # now in the order of ``seen``
        first[seen] = np.arange(len(seen))

    def met(mask: npt.NDArray[np.bool_] | slice) -> list[tuple[int, float]]:
        """The (id, score > 0) of the memories in ``mask``, in the order met, if in memories.

        By slot among memories first met by the same term: ``seen`` is in slot order, or
        (completed) each has a place of its own, so a stable sort of the places is enough."""
        chosen, scored = seen[mask], values[mask]
        order = np.argsort(first[chosen], kind="stable")
        pairs = zip(index.ids[chosen[order]].tolist(), scored[order].tolist(), strict=True)
        return [(m, s) for m, s in pairs if s > 0 and m in memories]

    if len(seen) <= limit:
        return dict(met(slice(None)))
    # The best ``limit``; among memories tied at the cut, those the tie-break prefers.
    cut = float(np.partition(values, -limit)[-limit])
    reaching = met(values >= cut - TIE)
    if len(reaching) > limit:
        high = cut + TIE
        above = [pair for pair in reaching if pair[1] > high]
        tied = [pair for pair in reaching if pair[1] <= high]
        # ``heapq.nlargest`` is documented to equal this; on a few dozen the C sort is faster.
        tied.sort(key=sort_key(memories), reverse=True)
        reaching = above + tied[: limit - len(above)]
    return dict(reaching)


def lookup(
    index: TermIndex, slots: Slots, terms: list[tuple[int, float]]
) -> tuple[Floats, Slots, Slots]:
    """For each of ``slots``, the weighted impacts of the ``terms`` (term id, weight) its
    memory has, added term by term in ``terms``' order (as a dict lookup per term would add
    them), found from the memories' side; and which it has: the (place in ``slots``, place in
    ``terms``) of each, as two arrays, ordered by the term's place."""
    score = np.zeros(len(slots), dtype=np.float64)
    if not len(slots) or not terms:
        return score, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    weights = np.array([weight for _, weight in terms], dtype=np.float64)
    counts = index.counts[slots]
    ends = np.cumsum(counts)  # ``ranges``, its ends kept to find each entry's row
    take = np.repeat(index.starts[slots] - (ends - counts), counts) + np.arange(int(ends[-1]))
    place = index.places([tid for tid, _ in terms], index.fwd_tids[take])
    hit = np.flatnonzero(place >= 0)
    position = place[hit]
    # The entries in their term's order (stably: a memory holds a term once), so that the
    # unbuffered ``add.at`` adds each memory's impacts one by one in ``terms``' order.
    by_term = np.argsort(position, kind="stable")
    entries, position = hit[by_term], position[by_term]
    row = np.searchsorted(ends, entries, side="right")
    tfs = index.fwd_tfs[take[entries]]
    np.add.at(score, row, weights[position] * (tfs / (tfs + index.norms[slots][row])))
    return score, row, position


def _complete(
    index: TermIndex,
    slots: Slots,
    partial: Floats,
    rest: list[tuple[int, float]],
    remaining: float,
    limit: int,
) -> tuple[Slots, Floats]:
    """Add the ``rest`` terms to the partially scored memories that can still make it.

    Looked up in growing batches, since the walk usually stops after a few dozen; in the
    terms' postings (``_listed``), which are few (the common terms left) and sorted. The
    memories come best partial score first, and the completion stops at the first of them,
    past the first ``limit``, whose partial score plus ``remaining`` cannot reach the
    ``limit``-th best complete score of those before it (``_stops``).
    """
    postings = [(*index.postings(tid), weight) for tid, weight in rest]
    completed: list[Floats] = []
    start, size = 0, 32
    while start < len(slots):
        completed.append(
            _listed(slots[start : start + size], partial[start : start + size], postings)
        )
        done = np.concatenate(completed) if len(completed) > 1 else completed[0]
        stop = _stops(partial, done, start, remaining, limit)
        if stop is not None:
            return slots[:stop], done[:stop]
        start, size = len(done), size * 4
    return slots, np.concatenate(completed) if completed else np.zeros(0, dtype=np.float64)


def _stops(partial: Floats, done: Floats, start: int, remaining: float, limit: int) -> int | None:
    """Where the completion stops among ``done[start:]`` (None: not there): the first memory
    i, past the first ``limit``, whose ``partial[i] + remaining`` is below the ``limit``-th
    best of ``done[:i]``, less ``TIE``.

    Partial scores fall and that ``limit``-th best only rises as i grows, so once a memory
    stops the completion every later one would: the batch's last memory says whether it
    stops in the batch, and a binary search where (the same comparisons as a heap of the
    ``limit`` best, memory by memory, in a few numpy calls)."""

    def stops(i: int) -> bool:
        best = float(np.partition(done[:i], i - limit)[i - limit])
        return float(partial[i]) + remaining < best - TIE

    low, high = max(start, limit), len(done) - 1
    if low > high or not stops(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if stops(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _walk_rest(
    index: TermIndex,
    scores: Floats,
    slots: Slots,
    rest: list[tuple[int, float]],
    remaining: float,
    limit: int,
) -> tuple[Slots, Floats]:
    """``_complete``'s answer when the ``rest`` terms' postings are short: walked in full
    on a copy of the partial ``scores`` (each memory's sum made in the same order), which
    at such sizes costs less than looking each memory up in them."""
    complete = scores.copy()
    for tid, weight in rest:
        listed, impacts = index.postings(tid)
        np.add.at(complete, listed, weight * impacts)
    done = complete[slots]
    stop = _stops(scores[slots], done, 0, remaining, limit)
    return (slots, done) if stop is None else (slots[:stop], done[:stop])


def _listed(slots: Slots, start: Floats, postings: list[tuple[Slots, Floats, float]]) -> Floats:
    """``start`` plus, for each of ``slots``, the weighted impact of each posting list (its
    slots, sorted, their impacts, the term's weight) that holds it, list by list: the sums
    ``lookup`` makes, found from the terms' side (a binary search a slot and term)."""
    score = start.copy()
    for listed, impacts, weight in postings:
        if not len(listed):
            continue
        where = np.searchsorted(listed, slots)
        np.minimum(where, len(listed) - 1, out=where)
        held = listed[where] == slots
        score[held] += weight * impacts[where[held]]
    return score
