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
- The search walks the postings of the strongest terms and only looks up the rest (MaxScore,
  ``memory.maxscore``, with its bound on the worst case), which is exact.
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
- Ties (equal scores) go to the memory used more often (``accessCount``), then the newer one
  (``memory.maxscore.sort_key``). Neither ever lifts a memory above a better textual match or
  filters one out.

Indexing is lazy: the store calls ``index`` for every memory when a namespace opens, which only
records it; it is analyzed the first time a search needs it, and again only if its text, tags,
category or date changed. The inverted index (``memory.termindex``: term ids, and per term an
array of memories and one of impacts) is updated incrementally, so a search touches the
postings of the query's terms, never every memory, and walks them in numpy. An impact is
BM25's saturated, length-normalized term frequency; it depends on the average memory length,
which is refreshed (and every impact recomputed) when it drifts by more than
``AVERAGE_DRIFT = 5%``, so adding a memory does not rewrite the index, and scores stay within a
hair of exact BM25. The analysed memories are kept in ``memory.index`` beside ``memory.json``
(written at compaction, by ``persist``), so that the first search after opening a namespace
reads them instead of analysing every memory again; a memory changed since is analysed anew.
"""

from __future__ import annotations

import logging
import math
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

import memory.termindex as termindex_module
import memory.text as text_module
from memory.errors import MemorySaveFailed
from memory.indexfile import IndexCache, Slots, analysis_fingerprint, load
from memory.maxscore import lookup, ordered, top
from memory.model import Memory
from memory.termindex import TermIndex, fingerprint
from memory.text import created_terms, date_terms, frame_terms, terms

log = logging.getLogger(__name__)

K1 = 1.2
B = 0.75
K3 = 1.5
TAG_WEIGHT = 2.0
CATEGORY_WEIGHT = 1.0
DATE_WEIGHT = 2.0
MAX_QUERY_TERMS = 128
AVERAGE_DRIFT = 0.05
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
    if memory.date:  # the day the content speaks of ("next Tuesday"), resolved when stored
        add(created_terms(memory.date), DATE_WEIGHT)
    return bag


def query_terms(query: str) -> dict[str, float]:
    """A query's term frequencies: its words and the dates it names."""
    bag: dict[str, float] = {}
    for word in terms(query) + date_terms(query):
        bag[word] = bag.get(word, 0.0) + 1.0
    return bag


def _analysis() -> bytes | None:
    """The fingerprint of this analysis (``termindex.analysis_fingerprint``): what a cached
    index must have been made by."""
    return analysis_fingerprint(text_module, termindex_module, sys.modules[__name__])


@dataclass(frozen=True)
class _LookedUp:
    """What the feedback round looked up: the query's own live terms (term id, weight), the
    memories it scored again (ids), and which terms each holds (``maxscore.lookup``: its
    place among those memories, the term's place; the query's own terms come first)."""

    weights: list[tuple[int, float]]
    ids: list[int]
    rows: Slots
    places: Slots


def _shares(weight: dict[int, float], total: float, bags: list[set[int] | None]) -> list[float]:
    """The share of ``total`` each bag (its term ids; None: not indexed) holds of ``weight``."""
    return [
        min(1.0, sum(w for tid, w in weight.items() if tid in bag) / total)
        if bag is not None and total
        else 0.0
        for bag in bags
    ]


class Bm25Ranker:
    """BM25 over a compact inverted index, kept up to date incrementally (see the docstring).

    With ``cache``, the analysed memories are read from it when the index is first built and
    written to it by ``persist`` (``memory.termindex``).
    """

    name = "default"

    def __init__(self, cache: IndexCache | None = None) -> None:
        # A search updates the index (lazily), so even concurrent searches are serialized.
        self._lock = threading.Lock()
        self._cache = cache
        self._pending: dict[int, Memory] = {}
        self._index = TermIndex(K1, B)
        self._total_length = 0.0
        # ``_average`` is the average length the norms (and so the impacts) were computed with;
        # they are all recomputed when the true average drifts from it by more than
        # ``AVERAGE_DRIFT``. The largest impact of each term (for MaxScore) may stay too high
        # after removals, which keeps it an upper bound; a recomputation makes it exact again.
        self._average = 0.0
        self._saved = False  # the file holds exactly what the index holds
        # Each df's idf while there are ``_idf_count`` memories (``_idfs``).
        self._idf_count = 0
        self._idf_of: dict[int, float] = {}

    def index(self, memory: Memory) -> None:
        """Record ``memory`` for indexing at the next search (replacing an older version)."""
        with self._lock:
            self._pending[memory.id] = memory

    def unindex(self, memory_id: int) -> None:
        """Forget the memory with this id (no error if it is not indexed)."""
        with self._lock:
            self._pending.pop(memory_id, None)
            self._remove(memory_id)

    def persist(self) -> None:
        """Write the analysed index to its cache (if it has one and it changed)."""
        if self._cache is None:
            return
        analysis = _analysis()
        with self._lock:
            self._flush()
            if self._saved:
                return
            copied = self._index.copy()
            self._saved = True  # as of this copy: a change meanwhile sets it back
        # Without the lock from here: searches go on while the file is made and written.
        data = copied.dump(analysis) if analysis is not None else None
        if data is None:
            with self._lock:
                self._saved = False
            return
        try:
            self._cache.write(data)
        except MemorySaveFailed as e:
            # Only a cache (its entries are checked against the memories when it is loaded):
            # the next open analyses the memories again.
            log.warning("search index not saved: %s", e.message)
            with self._lock:
                self._saved = False

    def rank(
        self, query: str | dict[str, float], memories: Mapping[int, Memory], limit: int
    ) -> list[tuple[int, float]]:
        """The best ``limit`` ids for ``query`` with their scores, best first, scores > 0.

        ``query`` is the text, or its ``query_terms`` (a caller that asks ``coverage`` too
        analyses the text once)."""
        wanted = query_terms(query) if isinstance(query, str) else query
        with self._lock:
            found, _ = self._ranked(wanted, memories, limit)
        return found

    def rank_with_coverage(
        self, query: str | dict[str, float], memories: Mapping[int, Memory], limit: int
    ) -> tuple[list[tuple[int, float]], list[float]]:
        """``rank``, and the ``coverage`` of each memory it found.

        The feedback round looks up which terms each of its memories holds, the query's own
        among them, and the best ``limit`` are among those memories: their coverage is read
        from there rather than from their bags, gathered again (a tenth of a short search at
        1,000 memories)."""
        wanted = query_terms(query) if isinstance(query, str) else query
        with self._lock:
            found, looked = self._ranked(wanted, memories, limit)
            ids = [memory_id for memory_id, _ in found]
            if looked is not None:
                return found, self._looked_up_shares(wanted, looked, ids)
        return found, self.coverage(wanted, ids)

    def coverage(self, query: str | dict[str, float], ids: list[int]) -> list[float]:
        """For each memory of ``ids``, the share of ``query``'s weight (idf x saturated query
        frequency, the query's own terms) that its terms hold, 0..1; 0.0 if it is not indexed.
        A query term that no memory holds counts as the mean of those some memory holds; the
        words that frame a question about memory (``memory.text.FRAME_WORDS``) do not count."""
        asked = query_terms(query) if isinstance(query, str) else query
        with self._lock:
            self._flush()
            weight, total = self._covering(asked, self._known(asked))
            slot_of = self._index.slot_of
            slots = [slot_of.get(memory_id) for memory_id in ids]
            bags = self._index.bags([slot for slot in slots if slot is not None])
            return _shares(weight, total, [None if s is None else bags[s] for s in slots])

    def _ranked(
        self, wanted: dict[str, float], memories: Mapping[int, Memory], limit: int
    ) -> tuple[list[tuple[int, float]], _LookedUp | None]:
        """``rank``'s answer, and what its feedback round looked up (None: there was none).
        Holding the lock."""
        self._flush()
        if not len(self._index) or limit <= 0:
            return [], None
        asked = self._ids(wanted)
        weights = self._weights(asked)
        weighted = sorted(weights, key=lambda pair: -pair[1])[:MAX_QUERY_TERMS]
        scores = top(self._index, weighted, memories, max(limit, FEEDBACK_DEPTH))
        if not scores or not FEEDBACK_DOCS:
            return ordered(scores, memories, limit), None
        slot_of = self._index.slot_of
        slots = np.array([slot_of[m] for m in scores], dtype=np.int64)
        # The memories scored again with the feedback terms; the query's own (live) terms
        # come first in ``_expand``'s order, as in ``weights``.
        rescored, rows, places = lookup(
            self._index, slots, self._weights(self._expand(asked, scores))
        )
        looked = _LookedUp(weights, list(scores), rows, places)
        return ordered(dict(zip(scores, rescored.tolist(), strict=True)), memories, limit), looked

    def _covering(
        self, asked: dict[str, float], weights: list[tuple[int, float]]
    ) -> tuple[dict[int, float], float]:
        """The weight of each of the query's own live terms in a coverage (``weights``, the
        query's, without the words that frame it), and the total a memory could hold."""
        framing = frame_terms()
        terms = self._index.terms
        weight = {tid: w for tid, w in weights if terms[tid] not in framing}
        # A term no memory holds counts as much as the query's held terms do on average:
        # "blood type" asked of notes that mention blood but no type is half answered,
        # not wholly, and a word that merely frames the question ("do you remember what
        # I said about the wifi") weighs no more in a namespace of three memories than
        # in one of thousands (the idf of a word absent from a tiny namespace says little).
        held = list(weight.values())
        typical = sum(held) / len(held) if held else 0.0
        unseen = 0.0
        for _ in range(sum(term not in framing for term in asked) - len(weight)):
            unseen += typical
        return weight, sum(weight.values()) + unseen

    def _looked_up_shares(
        self, asked: dict[str, float], looked: _LookedUp, ids: list[int]
    ) -> list[float]:
        """``coverage`` of ``ids`` (among the memories the feedback round looked up), from
        which of the query's own terms each was found to hold: their weights gathered in the
        query's order, so each sum is the one ``coverage`` makes."""
        weight, total = self._covering(asked, looked.weights)
        if not total:
            return [0.0] * len(ids)
        weight_at = [weight.get(tid) for tid, _ in looked.weights]  # None: frames the question
        held: dict[int, list[float]] = {memory_id: [] for memory_id in ids}
        memory_at = looked.ids
        own = int(np.searchsorted(looked.places, len(weight_at)))  # the query's own terms
        rows, places = looked.rows[:own].tolist(), looked.places[:own].tolist()
        for row, place in zip(rows, places, strict=True):
            w = weight_at[place]
            found = held.get(memory_at[row])
            if found is not None and w is not None:
                found.append(w)
        return [min(1.0, sum(held[memory_id]) / total) for memory_id in ids]

    def _idfs(self, dfs: list[int]) -> list[float]:
        """BM25's idf of terms held by ``dfs`` memories each (``math.log``, as numpy's log
        may round differently). Kept by df until the number of memories changes: a search
        asks for some sixty, of a few distinct dfs, and a dict look-up is a fifth of the
        arithmetic."""
        count = len(self._index)
        if count != self._idf_count:
            self._idf_count, self._idf_of = count, {}
        known = self._idf_of
        for df in dfs:
            if df not in known:
                known[df] = math.log(1.0 + (count - df + 0.5) / (df + 0.5))
        return [known[df] for df in dfs]

    def _ids(self, wanted: dict[str, float]) -> dict[int, float]:
        """The terms of ``wanted`` the index knows, as term id -> query frequency, in order."""
        vocab = self._index.vocab
        found = ((vocab.get(term), qtf) for term, qtf in wanted.items())
        return {tid: qtf for tid, qtf in found if tid is not None}

    def _weights(self, asked: dict[int, float]) -> list[tuple[int, float]]:
        """The terms of ``asked`` (term id -> query frequency) some memory holds, as (term id,
        weight), in ``asked``'s order. A weight is idf x saturated query frequency x (k1 + 1).
        """
        tids = list(asked)
        live = self._index.df[tids].tolist() if tids else []
        idfs = self._idfs(live)
        return [
            (tid, idf * qtf * (K3 + 1.0) / (K3 + qtf) * (K1 + 1.0))
            for (tid, qtf), df, idf in zip(asked.items(), live, idfs, strict=True)
            if df
        ]

    def _known(self, wanted: dict[str, float]) -> list[tuple[int, float]]:
        """The indexed terms of ``wanted`` as (term id, weight), in ``wanted``'s order."""
        return self._weights(self._ids(wanted))

    def _expand(self, asked: dict[int, float], scores: dict[int, float]) -> dict[int, float]:
        """``asked`` (term id -> query frequency) plus the feedback terms of the
        best-scoring memories.

        In term ids rather than terms, which is the same: a feedback term comes from a
        memory's bag, so it is indexed, and the query's own terms that are not would be
        dropped by ``_weights`` anyway."""
        index = self._index
        # ``sorted(...)[:n]`` is what ``heapq.nlargest`` is documented to equal, ties kept in
        # order; on a few dozen items the C sort is about twice as fast.
        best = sorted(scores.items(), key=itemgetter(1), reverse=True)[:FEEDBACK_DOCS]
        top_score = best[0][1]
        votes: dict[int, float] = {}
        for memory_id, score in best:
            slot = index.slot_of[memory_id]
            share = score / top_score / (float(index.lengths[slot]) or 1.0)
            for tid, tf in zip(*index.bag(slot), strict=True):
                votes[tid] = votes.get(tid, 0.0) + share * tf
        tids = list(votes)
        idfs = self._idfs(index.df[tids].tolist())
        strongest = sorted(
            ((tid, vote * idf) for (tid, vote), idf in zip(votes.items(), idfs, strict=True)),
            key=itemgetter(1),
            reverse=True,
        )[:FEEDBACK_TERMS]
        if not strongest or strongest[0][1] <= 0:
            return asked
        expanded = dict(asked)
        for tid, strength in strongest:
            expanded[tid] = expanded.get(tid, 0.0) + FEEDBACK_WEIGHT * strength / strongest[0][1]
        return expanded

    def _flush(self) -> None:
        """Analyze the memories recorded since the last search; refresh a drifted average."""
        pending, self._pending = self._pending, {}
        if not len(self._index) and pending:
            self._build(pending)
            return
        index = self._index
        for memory_id, memory in pending.items():
            print_ = fingerprint(memory)
            slot = index.slot_of.get(memory_id)
            if slot is not None and index.prints[slot] == np.frombuffer(print_, np.uint64)[0]:
                continue
            self._remove(memory_id)
            bag = memory_terms(memory)
            length = sum(bag.values())
            index.add(
                memory_id, print_, index.intern(bag), list(bag.values()), length, self._average
            )
            self._total_length += length
            self._saved = False
        # Removals (``unindex``) move the average too, so this is checked on every search.
        average = self._total_length / len(index) if len(index) else 0.0
        if abs(average - self._average) > AVERAGE_DRIFT * self._average:
            self._average = average
            index.compact()
            index.set_average(average)
        elif index.needs_compaction():
            index.compact()

    def _build(self, memories: dict[int, Memory]) -> None:
        """Index an empty ranker in one pass, with the average length known beforehand."""
        data = self._cache.read() if self._cache is not None else None
        analysis = _analysis() if data is not None else None
        stored = load(data, analysis) if data is not None and analysis is not None else None
        listed = list(memories.values())
        ids = np.fromiter(memories, dtype=np.int64, count=len(listed))
        prints = np.frombuffer(b"".join(map(fingerprint, listed)), dtype=np.uint64).copy()
        self._index = TermIndex(K1, B)
        lengths = self._index.build(ids, prints, stored, lambda i: memory_terms(listed[i]))
        reused_all = stored is not None and len(stored.ids) == len(ids) == self._index.reused
        del stored, data  # the file's bytes, before the postings are laid out
        self._average = sum(lengths) / len(lengths)
        for length in lengths:
            self._total_length += length
        self._index.set_average(self._average)
        self._saved = reused_all

    def _remove(self, memory_id: int) -> None:
        length = self._index.remove(memory_id)
        if length is not None:
            self._total_length -= length
            self._saved = False
