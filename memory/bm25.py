"""The default ranking: BM25 over content, tags, category and date, with one feedback round.

People ask questions ("我的项目放在哪了？", "When did Caroline go to the support group?") in
other words than the ones they stored, so the article's whole-query substring rule almost never
fires. BM25 (Robertson and Zaragoza, "The Probabilistic Relevance Framework", 2009) scores each
memory by the query terms it shares, weighting rare terms up (idf), letting repeats of a term
saturate, and taking the memory's length into account. Terms come from ``memory.text``: folded
words, stemmed, without stop words; CJK character bigrams and characters; calendar dates.

Parameters, and why each has its value. None is tuned per benchmark set or per question: the
same values run on every set of ``python -m bench.retrieval``, whose figures are quoted here.

- ``K1 = 1.2``, ``B = 0.75``: the textbook BM25 values. Moving them (k1 0.9..2.0, b 0.4..1.0)
  changed rec@5 by about +-0.02, up on some sets and down on others: no reason to move.
- ``TAG_WEIGHT = 2.0``: tags are keywords chosen for the memory, so a term in a tag is stronger
  evidence than the same term in passing; two is the usual weight of a title-like field in BM25F.
  Fields are merged before saturation, as BM25F does, so one term in the content and a tag is
  one strong match, not two. (The benchmarks have no tags; this is not fitted to them.)
- ``CATEGORY_WEIGHT = 1.0``: a label too, but a coarse one shared by many; idf keeps it modest.
- ``DATE_WEIGHT = 2.0``: ``createdAt`` is indexed as the day and month it falls in (see
  ``memory.text.created_terms``), with the weight of a tag because it is metadata of the same
  kind; a question that names a date ("what did I say on May 4th?") then prefers that day's
  memories. Without dates, rec@5 falls on MemoryBank (English 0.927 -> 0.855, Chinese
  0.923 -> 0.890), whose questions often name a day, and on LoCoMo (turns 0.629 -> 0.575).
- Query terms count with their frequency in the query, saturated by BM25's ``K3 = 1.5``: a long
  query (a whole dialogue, as in MADial) repeats its topic words, which should count, but not
  linearly. (k3 0 or 1000 both measured lower on MADial.)
- ``MAX_QUERY_TERMS = 128``: a query is cut to its 128 strongest distinct terms (idf x query
  weight). Common terms change the order little but walk long posting lists; 128 keeps every
  term of all but the longest dialogues (64 measured lower on MADial Chinese).
- ``POSTINGS_BUDGET = 200_000``, ``CANDIDATES_CAP = 1000``: the search walks the postings of
  the strongest terms and only looks up the rest (MaxScore, see ``_top``), which is exact.
  Should the strong terms alone walk more than 200,000 postings (only in namespaces of tens of
  thousands of memories), it stops walking there and completes the best 1,000 memories so far:
  a bound on the worst case, not an everyday path.
- Pseudo-relevance feedback (RM3-style; Lavrenko and Croft 2001, Abdul-Jaleel et al. 2004):
  the ``FEEDBACK_DOCS = 3`` best memories of a first pass vote for their ``FEEDBACK_TERMS = 10``
  most distinctive terms (share of the memory x idf, weighted by the memory's score), which join
  the query at up to ``FEEDBACK_WEIGHT = 0.5`` of a query word, and the first pass's best
  ``FEEDBACK_DEPTH = 50`` are scored again with them. It only reorders: a memory that shares
  nothing with the question is never brought in (letting feedback bring memories in measured
  the same and returned unrelated ones). It supplies wording a question lacks and, since date
  terms vote too, favours memories from the same day as the best matches: what was said in one
  sitting tends to belong together. Measured: LoCoMo turns rec@5 0.596 -> 0.629, observations
  0.688 -> 0.707 (in development, dates kept out of the vote lost 0.03 of that on
  observations), MemoryBank English 0.864 -> 0.927, within +-0.015 elsewhere. Three and ten
  are the usual small RM3 settings; a depth of 20 lost 0.01-0.02 on LoCoMo, 100 gained 0.003
  there for half as much time again.
- Ties (equal scores) go to the memory used more often (``accessCount``), then the newer one.
  Neither ever lifts a memory above a better textual match or filters one out.

Indexing is lazy: the store calls ``index`` for every memory when a namespace opens, which only
records it; it is analyzed the first time a search needs it, and again only if its text, tags,
category or date changed. The inverted index (term -> {id: impact}) is updated incrementally, so
a search touches the postings of the query's terms, never every memory. An impact is BM25's
saturated, length-normalized term frequency; it depends on the average memory length, which
is refreshed (and every impact recomputed) when it drifts by more than ``AVERAGE_DRIFT = 5%``,
so adding a memory does not rewrite the index, and scores stay within a hair of exact BM25.
"""

from __future__ import annotations

import heapq
import math
import threading
from collections.abc import Callable, Mapping
from operator import itemgetter
from typing import Any

from memory.model import Memory
from memory.text import created_terms, date_terms, terms

K1 = 1.2
B = 0.75
K3 = 1.5
TAG_WEIGHT = 2.0
CATEGORY_WEIGHT = 1.0
DATE_WEIGHT = 2.0
MAX_QUERY_TERMS = 128
POSTINGS_BUDGET = 200_000
CANDIDATES_CAP = 1000
AVERAGE_DRIFT = 0.05
TIE = 1e-9
FEEDBACK_DOCS = 3
FEEDBACK_TERMS = 10
FEEDBACK_WEIGHT = 0.5
FEEDBACK_DEPTH = 50

_Source = tuple[str, tuple[str, ...], str, str]


def memory_terms(memory: Memory) -> dict[str, float]:
    """A memory's weighted term frequencies: content, tags, category and date merged."""
    bag: dict[str, float] = {}

    def add(words: list[str], weight: float) -> None:
        for word in words:
            bag[word] = bag.get(word, 0.0) + weight

    add(terms(memory.content), 1.0)
    for tag in memory.tags:
        add(terms(tag), TAG_WEIGHT)
    add(terms(memory.category), CATEGORY_WEIGHT)
    add(created_terms(memory.created_at), DATE_WEIGHT)
    return bag


def query_terms(query: str) -> dict[str, float]:
    """A query's term frequencies: its words and the dates it names."""
    bag: dict[str, float] = {}
    for word in terms(query) + date_terms(query):
        bag[word] = bag.get(word, 0.0) + 1.0
    return bag


def _order(memories: Mapping[int, Memory]) -> Callable[[tuple[int, float]], tuple[Any, ...]]:
    """The sort key of a scored memory: score, then accessCount, then the newer one."""

    def key(pair: tuple[int, float]) -> tuple[Any, ...]:
        memory = memories[pair[0]]
        return (round(pair[1], 9), memory.access_count, memory.created_at, memory.id)

    return key


class Bm25Ranker:
    """BM25 with an incrementally maintained inverted index (see the module docstring)."""

    name = "default"

    def __init__(self) -> None:
        # A search updates the index (lazily), so even concurrent searches are serialized.
        self._lock = threading.Lock()
        self._pending: dict[int, Memory] = {}
        self._sources: dict[int, _Source] = {}
        self._docs: dict[int, dict[str, float]] = {}
        self._lengths: dict[int, float] = {}
        self._total_length = 0.0
        # term -> {id: impact}: a posting holds BM25's saturated, length-normalized frequency
        # tf / (tf + k1 * (1 - b + b * length / average)), so a search only multiplies and adds.
        # ``_average`` is the average length the impacts were computed with; they are all
        # recomputed when the true average drifts from it by more than ``AVERAGE_DRIFT``.
        self._postings: dict[str, dict[int, float]] = {}
        self._average = 0.0
        # The largest impact of each term, for MaxScore. Removals may leave it too high, which
        # keeps it an upper bound; a recomputation makes it exact again.
        self._max_impact: dict[str, float] = {}

    def index(self, memory: Memory) -> None:
        """Record ``memory`` for indexing at the next search (replacing an older version)."""
        with self._lock:
            self._pending[memory.id] = memory

    def unindex(self, memory_id: int) -> None:
        """Forget the memory with this id (no error if it is not indexed)."""
        with self._lock:
            self._pending.pop(memory_id, None)
            self._remove(memory_id)

    def rank(
        self, query: str, memories: Mapping[int, Memory], limit: int
    ) -> list[tuple[int, float]]:
        """The best ``limit`` ids for ``query`` with their scores, best first, scores > 0."""
        wanted = query_terms(query)
        with self._lock:
            self._flush()
            if not self._docs or limit <= 0:
                return []
            scores = self._top(wanted, memories, max(limit, FEEDBACK_DEPTH))
            if scores and FEEDBACK_DOCS:
                scores = self._rescore(self._expand(wanted, scores), scores)
        return sorted(scores.items(), key=_order(memories), reverse=True)[:limit]

    def _weight(self, term: str, qtf: float) -> float:
        """A query term's weight: idf x saturated query frequency x (k1 + 1)."""
        return self._idf(term) * qtf * (K3 + 1.0) / (K3 + qtf) * (K1 + 1.0)

    def _idf(self, term: str) -> float:
        count = len(self._docs)
        df = len(self._postings[term])
        return math.log(1.0 + (count - df + 0.5) / (df + 0.5))

    def _top(
        self, wanted: dict[str, float], memories: Mapping[int, Memory], limit: int
    ) -> dict[int, float]:
        """The ``limit`` best memories for ``wanted`` (and any tied with the last), scored.

        MaxScore (Turtle and Flood, 1995): terms are taken strongest first and their postings
        walked in full, until the most that the remaining terms could add to a memory not yet
        seen falls below the ``limit``-th best score so far. From then on no unseen memory can
        make the cut; the memories seen so far are completed best first, looking the remaining
        (common, long) postings up instead of walking them, and the completion stops as soon
        as a memory's partial score plus that most cannot reach the ``limit``-th best. The
        result is exactly what scoring every memory would give.
        """
        weighted = sorted(
            (
                (term, self._weight(term, qtf))
                for term, qtf in wanted.items()
                if term in self._postings
            ),
            key=lambda pair: -pair[1],
        )[:MAX_QUERY_TERMS]
        bounds = [weight * self._max_impact[term] for term, weight in weighted]
        remaining = sum(bounds)
        scores: dict[int, float] = {}
        get = scores.get
        check_below = remaining
        visited = 0
        rest: list[tuple[str, float]] = []
        for position, (term, weight) in enumerate(weighted):
            postings = self._postings[term]
            over_budget = visited + len(postings) > POSTINGS_BUDGET
            if len(scores) > limit and (remaining < check_below or over_budget):
                # A full pass over the scores: done again only once ``remaining`` has shrunk.
                threshold = heapq.nlargest(limit, scores.values())[-1]
                if remaining < threshold or over_budget:
                    rest = weighted[position:]
                    break
                check_below = remaining * 0.75
            visited += len(postings)
            remaining -= bounds[position]
            for memory_id, impact in postings.items():
                scores[memory_id] = get(memory_id, 0.0) + weight * impact
        if rest:
            ranked = self._complete(list(scores.items()), rest, remaining, limit)
            scores = dict(ranked)
        if len(scores) <= limit:
            return {m: s for m, s in scores.items() if s > 0 and m in memories}
        # The best ``limit``; among memories tied at the cut, those the tie-break prefers.
        cut = heapq.nlargest(limit, scores.values())[-1]
        above = [(m, s) for m, s in scores.items() if s > cut + TIE and m in memories]
        tied = [(m, s) for m, s in scores.items() if cut - TIE <= s <= cut + TIE and m in memories]
        if len(above) + len(tied) > limit:
            tied = heapq.nlargest(limit - len(above), tied, key=_order(memories))
        return {m: s for m, s in above + tied if s > 0}

    def _rescore(self, wanted: dict[str, float], scores: dict[int, float]) -> dict[int, float]:
        """The scores of the memories in ``scores`` for ``wanted``, by looking them up."""
        weighted = [
            (self._postings[term], self._weight(term, qtf))
            for term, qtf in wanted.items()
            if term in self._postings
        ]
        rescored: dict[int, float] = {}
        for memory_id in scores:
            score = 0.0
            for postings, weight in weighted:
                impact = postings.get(memory_id)
                if impact is not None:
                    score += weight * impact
            rescored[memory_id] = score
        return rescored

    def _complete(
        self,
        partial: list[tuple[int, float]],
        rest: list[tuple[str, float]],
        remaining: float,
        limit: int,
    ) -> list[tuple[int, float]]:
        """Add the ``rest`` terms to the partially scored memories that can still make it."""
        partial.sort(key=itemgetter(1), reverse=True)
        if len(partial) > CANDIDATES_CAP:
            # Only past the postings budget can a cap change the result (see the docstring).
            del partial[CANDIDATES_CAP:]
        rest_postings = [(self._postings[term], weight) for term, weight in rest]
        best: list[float] = []  # a min-heap of the ``limit`` best complete scores
        done: list[tuple[int, float]] = []
        for memory_id, score in partial:
            if len(best) == limit and score + remaining < best[0] - TIE:
                break
            for postings, weight in rest_postings:
                impact = postings.get(memory_id)
                if impact is not None:
                    score += weight * impact
            done.append((memory_id, score))
            if len(best) < limit:
                heapq.heappush(best, score)
            elif score > best[0]:
                heapq.heapreplace(best, score)
        return done

    def _expand(self, wanted: dict[str, float], scores: dict[int, float]) -> dict[str, float]:
        """``wanted`` plus the feedback terms of the best-scoring memories."""
        best = heapq.nlargest(FEEDBACK_DOCS, scores.items(), key=lambda pair: pair[1])
        top_score = best[0][1]
        votes: dict[str, float] = {}
        for memory_id, score in best:
            share = score / top_score / (self._lengths[memory_id] or 1.0)
            for term, tf in self._docs[memory_id].items():
                votes[term] = votes.get(term, 0.0) + share * tf
        strongest = heapq.nlargest(
            FEEDBACK_TERMS,
            ((term, vote * self._idf(term)) for term, vote in votes.items()),
            key=lambda pair: pair[1],
        )
        if not strongest or strongest[0][1] <= 0:
            return wanted
        expanded = dict(wanted)
        for term, strength in strongest:
            expanded[term] = expanded.get(term, 0.0) + FEEDBACK_WEIGHT * strength / strongest[0][1]
        return expanded

    def _flush(self) -> None:
        """Analyze the memories recorded since the last search; refresh a drifted average."""
        pending, self._pending = self._pending, {}
        if not self._docs and pending:
            self._build(pending)
            return
        for memory_id, memory in pending.items():
            source = (memory.content, memory.tags, memory.category, memory.created_at[:10])
            if self._sources.get(memory_id) == source:
                continue
            self._remove(memory_id)
            self._add(memory_id, memory_terms(memory))
            self._sources[memory_id] = source
        # Removals (``unindex``) move the average too, so this is checked on every search.
        average = self._total_length / len(self._docs) if self._docs else 0.0
        if abs(average - self._average) > AVERAGE_DRIFT * self._average:
            self._average = average
            self._recompute_impacts()

    def _build(self, memories: dict[int, Memory]) -> None:
        """Index an empty ranker in one pass, with the average length known beforehand."""
        bags = {memory_id: memory_terms(memory) for memory_id, memory in memories.items()}
        total = sum(sum(bag.values()) for bag in bags.values())
        self._average = total / len(bags)
        for memory_id, bag in bags.items():
            self._add(memory_id, bag)
            memory = memories[memory_id]
            self._sources[memory_id] = (
                memory.content,
                memory.tags,
                memory.category,
                memory.created_at[:10],
            )

    def _impact(self, tf: float, length: float) -> float:
        return tf / (tf + K1 * (1.0 - B + B * length / (self._average or length or 1.0)))

    def _recompute_impacts(self) -> None:
        self._max_impact.clear()
        for term, postings in self._postings.items():
            for memory_id in postings:
                postings[memory_id] = self._impact(
                    self._docs[memory_id][term], self._lengths[memory_id]
                )
            self._max_impact[term] = max(postings.values())

    def _add(self, memory_id: int, bag: dict[str, float]) -> None:
        self._docs[memory_id] = bag
        length = sum(bag.values())
        self._lengths[memory_id] = length
        self._total_length += length
        postings = self._postings
        max_impact = self._max_impact
        for term, tf in bag.items():
            impact = self._impact(tf, length)
            posting = postings.get(term)
            if posting is None:
                postings[term] = {memory_id: impact}
                max_impact[term] = impact
            else:
                posting[memory_id] = impact
                if impact > max_impact[term]:
                    max_impact[term] = impact

    def _remove(self, memory_id: int) -> None:
        self._sources.pop(memory_id, None)
        bag = self._docs.pop(memory_id, None)
        if bag is None:
            return
        self._total_length -= self._lengths.pop(memory_id)
        for term in bag:
            posting = self._postings[term]
            del posting[memory_id]
            if not posting:
                del self._postings[term]
                del self._max_impact[term]
