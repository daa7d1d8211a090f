"""Search by meaning fused with the keyword ranking (``search(..., ranker="hybrid")``).

The keyword ranking (``memory.bm25``) finds a memory that shares words with the question; on
MADial the right memory is linked to it by topic or feeling ("what do I need to buy?" and the
shopping list), which no lexical lever reached. So a dense embedding of the question
(``memory.embedding``) is compared with each memory's (``memory.vectors``) and the two are
fused. Figures: rec@5 on ``python -m bench.retrieval --rankers default,hybrid``, with the
offline model (multilingual-e5-small, 4-bit); none of the values below is fitted per set.

- Score fusion: ``W_KEYWORDS = 0.6`` x bm25 / (the best bm25) + ``W_MEANING = 0.4`` x the
  cosine min-max-normalised over the namespace's embedded memories. Both parts are in [0, 1],
  so the weights say how much each may move a memory. Reciprocal-rank fusion measured worse
  than score fusion on every set (it throws away how much better the best match is).
- Candidates: the keyword ranking's best ``DEPTH = 100`` and the ``DEPTH`` closest by cosine.
  A memory outside the keyword depth counts 0 for keywords: its bm25 is small next to the
  best's. Measured (rec@5 locomo_obs / locomo_turns / madial_en / madial_zh; MemoryBank
  0.927 / 0.923 in every row): 0.7 and depth 50 (the issue's starting point) 0.717 / 0.650 /
  0.567 / 0.603; 0.7, 100: 0.721 / 0.649 / 0.567 / 0.603; 0.65, 100: 0.723 / 0.651 / 0.554 /
  0.606; 0.6, 100: 0.721 / 0.652 / 0.561 / 0.609 (kept: the only one at or above every
  target); 0.75, 50: 0.715 / 0.644 / 0.559 / 0.597. The keyword ranking alone: 0.707 / 0.629
  / 0.509 / 0.553.
- The dense query of a dialogue (several ``Name: text`` lines, as MADial's questions and a
  pasted chat are) is its last turn, without the speaker's name: what is being asked now; the
  keyword side still reads the whole dialogue. (Embedding the whole dialogue measured lower.)
  A query is embedded from its first ``MAX_QUERY_CHARS`` characters.
- Dates: a cosine knows nothing of days. When the question names a date (``memory.text
  .date_terms``: "on May 2nd", "12月8日"), every memory of the keyword ranking's top ``limit``
  created on a day (or month) it names keeps at least the place it has there: the fused order
  is merged with those memories by deadline (earliest-deadline-first, which meets every
  deadline since a memory at keyword rank r needs one of the first r places), so the dense
  score reorders around them but never pushes them out.
- Cost: the candidates' scores are added as arrays, and only the ``2 x limit`` best (and
  whatever is within rounding of the last) get the tie-breaking sort key, a Python call each:
  0.98 -> 0.45 ms a search at 10,000 memories (depth 100 on both sides), the same ranking
  (tests/memory/test_vector_speed.py checks it against sorting every candidate).
- Without an embedder, with nothing embedded yet, or when the query cannot be embedded (an
  endpoint down), the result is exactly the keyword ranking's.

``rank`` is what both backends' ``search`` call: the chosen ranker's best, each hit with its
``Evidence`` (its keyword coverage and place, its cosine, the namespace's typical and best
cosine for the query), from which ``memory.relevance`` decides what answers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from memory.bm25 import Bm25Ranker, query_terms
from memory.model import Evidence, Memory
from memory.text import created_terms, date_terms

if TYPE_CHECKING:
    from memory.ranking import Ranker

W_KEYWORDS = 0.6
W_MEANING = 0.4
DEPTH = 100
MAX_QUERY_CHARS = 2000

# A line of a transcript: a speaker's name (no colon, at most 40 characters), a colon, text.
_TURN = re.compile(r"^\s*([^\s:：][^:：\n]{0,39})[:：]\s*(\S.*)$")


def is_dialogue(query: str) -> bool:
    """Whether ``query`` is a transcript (several ``Name: text`` lines, the last one a turn)."""
    lines = [line for line in query.splitlines() if line.strip()]
    turns = sum(1 for line in lines if _TURN.match(line))
    return len(lines) >= 2 and turns >= 2 and _TURN.match(lines[-1]) is not None


def dense_query(query: str) -> str:
    """What to embed for ``query``: the last turn of a dialogue, else the query itself."""
    lines = [line for line in query.splitlines() if line.strip()]
    turns = [match for match in map(_TURN.match, lines) if match is not None]
    if len(lines) >= 2 and len(turns) >= 2 and _TURN.match(lines[-1]):
        return turns[-1][2].strip()[:MAX_QUERY_CHARS]
    return query.strip()[:MAX_QUERY_CHARS]


Ranked = list[tuple[int, float, Evidence | None]]
Cosines = tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]


def rank(
    query: str,
    ranker: str,
    rankers: Mapping[str, Ranker],
    memories: Mapping[int, Memory],
    cosines: Cosines | None,
    limit: int,
) -> Ranked:
    """The best ``limit`` (id, score, evidence) of ``ranker`` for ``query``, best first.

    ``rankers`` are the namespace's: ``"seed"`` is the article's scorer (no evidence),
    ``"default"`` the keyword ranking (``memory.bm25``), and ``ranker="hybrid"`` the fused one
    over ``cosines`` (the embedded memories' ids, sorted, and their cosines with the query), or
    the keyword ranking alone without them.
    """
    keywords = rankers["default"]
    if ranker == "seed" or not isinstance(keywords, Bm25Ranker):
        return [(mid, score, None) for mid, score in rankers[ranker].rank(query, memories, limit)]
    asked = query_terms(query)  # analysed once, for the ranking and the coverage
    if ranker != "hybrid" or cosines is None or not len(cosines[0]):
        keyword, shares = keywords.rank_with_coverage(asked, memories, limit)
        return [
            (mid, score, Evidence(share, place))
            for place, ((mid, score), share) in enumerate(zip(keyword, shares, strict=True))
        ]
    keyword = keywords.rank(asked, memories, max(limit, DEPTH))
    pairs = fuse(query, keyword, cosines[0], cosines[1], memories, limit)
    places = {mid: place for place, (mid, _) in enumerate(keyword)}
    ids = [mid for mid, _ in pairs]
    shares = keywords.coverage(asked, ids)
    embedded, values = cosines
    typical, best, count = float(values.mean()), float(values.max()), len(values)
    wanted = np.asarray(ids, dtype=np.int64)
    where = np.minimum(np.searchsorted(embedded, wanted), len(embedded) - 1)
    found = (embedded[where] == wanted).tolist()
    near = values[where].tolist()
    return [
        (
            mid,
            score,
            Evidence(share, places.get(mid), near[i] if found[i] else None, typical, best, count),
        )
        for i, ((mid, score), share) in enumerate(zip(pairs, shares, strict=True))
    ]


def _order(memories: Mapping[int, Memory], pair: tuple[int, float]) -> tuple[float, int, str, int]:
    memory = memories[pair[0]]
    return (round(pair[1], 9), memory.access_count, memory.created_at, memory.id)


def fuse(
    query: str,
    keyword: list[tuple[int, float]],
    ids: npt.NDArray[np.int64],
    cosines: npt.NDArray[np.float32],
    memories: Mapping[int, Memory],
    limit: int,
) -> list[tuple[int, float]]:
    """The fused ``limit`` best (id, score), best first (see the module docstring).

    ``keyword`` is the keyword ranking's best (at least ``limit``), ``ids`` (sorted) and
    ``cosines`` the embedded memories' cosines with the query.
    """
    if not len(ids):
        return keyword[:limit]
    low, high = float(cosines.min()), float(cosines.max())
    # All equally close (one memory embedded so far): each is the closest.
    dense = (cosines - low) / (high - low) if high > low else np.ones_like(cosines)
    best = keyword[0][1] if keyword else 0.0
    scores: dict[int, float] = {}
    for memory_id, score in keyword:
        scores[memory_id] = W_KEYWORDS * score / best if best > 0 else 0.0
    closest = (
        np.argpartition(-dense, DEPTH)[:DEPTH] if len(dense) > DEPTH else np.arange(len(dense))
    )
    for memory_id in ids[closest].tolist():
        if memory_id in memories:
            scores.setdefault(memory_id, 0.0)
    wanted = np.fromiter(scores, dtype=np.int64, count=len(scores))
    where = np.minimum(np.searchsorted(ids, wanted), len(ids) - 1)
    meaning = np.where(ids[where] == wanted, dense[where].astype(np.float64), 0.0)
    base = np.fromiter(scores.values(), dtype=np.float64, count=len(scores))
    # Each score is the keyword part plus W_MEANING x dense, as Python floats would add them.
    total = base + W_MEANING * meaning
    positive = total > 0
    wanted, total = wanted[positive], total[positive]
    # Only the best few need the tie-breaking sort key (a Python call each): the ``2 x limit``
    # best are enough for ``_keep_dates``, and whatever is within rounding of the last of them.
    if len(total) > 2 * limit:
        cut = float(np.partition(total, -2 * limit)[-2 * limit]) - 1e-8
        keep = total >= cut
        top = list(zip(wanted[keep].tolist(), total[keep].tolist(), strict=True))
    else:
        top = list(zip(wanted.tolist(), total.tolist(), strict=True))
    ranked = sorted(top, key=lambda pair: _order(memories, pair), reverse=True)
    return _keep_dates(query, ranked, keyword[:limit], memories, limit, (wanted, total))


def _keep_dates(
    query: str,
    ranked: list[tuple[int, float]],
    keyword: list[tuple[int, float]],
    memories: Mapping[int, Memory],
    limit: int,
    scored: tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]],
) -> list[tuple[int, float]]:
    """``ranked`` with each dated keyword match at least as high as in ``keyword``.

    ``ranked`` holds at least the best ``2 x limit`` (enough: at most ``limit`` dated ones are
    placed out of its order); ``scored`` is every fused (id, score) > 0.
    """
    named = set(date_terms(query))
    if not named:
        return ranked[:limit]
    deadline = {
        memory_id: place
        for place, (memory_id, _) in enumerate(keyword)
        if named.intersection(created_terms(memories[memory_id].created_at))
    }
    if not deadline:
        return ranked[:limit]
    score_of = dict(zip(scored[0].tolist(), scored[1].tolist(), strict=True))
    pending = sorted(deadline, key=lambda memory_id: deadline[memory_id])
    stream = iter(ranked)
    placed: set[int] = set()
    out: list[tuple[int, float]] = []
    for place in range(limit):
        # The dated memory whose deadline is now, if any; else the best fused memory left;
        # once those are used up, the dated ones that remain.
        if not pending or deadline[pending[0]] > place:
            pair = next((p for p in stream if p[0] not in placed), None)
            if pair is not None:
                out.append(pair)
                placed.add(pair[0])
                if pair[0] in deadline:
                    pending.remove(pair[0])
                continue
            if not pending:
                break
        chosen = pending.pop(0)
        placed.add(chosen)
        out.append((chosen, score_of.get(chosen, 0.0)))
    return out
