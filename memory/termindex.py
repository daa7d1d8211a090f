"""The search index behind ``memory.bm25``, in arrays (its file: ``memory.indexfile``).

Compact: a term is an int id in a per-index vocabulary; a memory is a *slot*, a small int
given in the order memories are indexed, with its id, length and text fingerprint in arrays;
its analysed bag (term ids and weighted frequencies, in the bag's own order) is a stretch of
two flat arrays (the forward index); each term's postings are an array of slots and one of
impacts (as ``bm25s`` lays them out). About 24 bytes a posting, where dicts of strings and
floats cost some 150. An impact is ``tf / (tf + norm[slot])``, made whenever a norm is (``add``,
``rebuild``) with the float operations of textbook BM25 in the same order, so the scores are
the same to the last bit as computing them one by one, and the same whether a search walks a
posting, looks a memory up in it, or recomputes the impact from the forward index
(``memory.maxscore``).

Order is part of the result (ties go, at some steps, to the memory met first), so it is kept:
slots only grow, a posting lists its slots in increasing order, and a memory indexed again
(changed) gets a new slot at the end, exactly as an insertion-ordered dict would place it. A
removed memory leaves a dead slot behind; its postings are skipped until ``compact``
rebuilds the postings and renumbers the slots, in the same order, without them.

The memories analysed can be kept between runs (``memory.indexfile``): a memory whose
``fingerprint`` (of what it was analysed from: content, tags, category and day) matches is
taken from there, any other is analysed.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from memory.indexfile import Dumpable, Floats, Ints, Slots, Stored, ranges
from memory.model import Memory

_MIN_DEAD = 10_000  # dead postings tolerated before ``compact`` (and a quarter of all)
_TRIM_POSTINGS = 500_000  # a rebuild of this many postings gives its freed pages back


def fingerprint(memory: Memory) -> bytes:
    """8 bytes that change whenever what ``memory`` is analysed from changes."""
    content, category = memory.content, memory.category
    key = f"{len(content)}:{content}{len(category)}:{category}{memory.created_at[:10]}"
    if memory.tags:
        key += "".join(f"{len(tag)}:{tag}" for tag in memory.tags)
    if memory.date:
        key += f"@{memory.date[:10]}"
    return hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()


def _grow(array: npt.NDArray[Any], needed: int) -> npt.NDArray[Any]:
    """``array`` if it has room for ``needed`` items, else a copy with room for twice that."""
    if len(array) >= needed:
        return array
    bigger = np.zeros(max(16, 2 * needed), dtype=array.dtype)
    bigger[: len(array)] = array
    return bigger


def _exact(array: npt.NDArray[Any], size: int) -> npt.NDArray[Any]:
    """The first ``size`` items of ``array``, without the room left by ``_grow``."""
    return array if len(array) == size else array[:size].copy()


def _taken(array: npt.NDArray[Any], index: Ints | slice) -> npt.NDArray[Any]:
    """A copy of ``array[index]`` (a slice is a view, to be copied; fancy indexing copies)."""
    return array[index].copy() if isinstance(index, slice) else array[index]


def stable_order(keys: npt.NDArray[np.integer[Any]]) -> Ints:
    """``argsort(keys, kind="stable")`` for non-negative ints, by 16-bit radix passes."""
    order: Ints = np.argsort((keys & 0xFFFF).astype(np.uint16), kind="stable")
    shift = 16
    while len(keys) and int(keys.max()) >> shift:
        digit = ((keys[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order


def give_back_freed() -> None:
    """Hand the heap pages freed by a large build back to the system.

    glibc keeps the pages of freed temporaries in its heap (it raises its mmap threshold
    after the first large free, so later temporaries come from the heap): at 100,000
    memories some 90 MiB stayed resident after the index was built. ``malloc_trim`` returns
    them; elsewhere (another C library, another system) this does nothing.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has none)
        return None
    return trim


class TermIndex:
    """Memories' analysed bags and the postings of their terms (see the module docstring)."""

    def __init__(self, k1: float, b: float) -> None:
        self.k1, self.b = k1, b  # BM25's parameters, for the norms
        self.vocab: dict[str, int] = {}
        self.terms: list[str] = []
        self.slot_of: dict[int, int] = {}  # memory id -> its live slot
        self.slots = 0
        self.ids: Ints = np.zeros(0, dtype=np.int64)
        self.prints: npt.NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)
        self.lengths: Floats = np.zeros(0, dtype=np.float64)
        self.norms: Floats = np.zeros(0, dtype=np.float64)  # k1 * (1 - b + b * length / avg)
        self.alive: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)
        self.starts: Ints = np.zeros(0, dtype=np.int64)
        self.counts: Ints = np.zeros(0, dtype=np.int64)
        self.forward = 0
        self.fwd_tids: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)
        self.fwd_tfs: Floats = np.zeros(0, dtype=np.float64)
        self.df: Ints = np.zeros(0, dtype=np.int64)  # live postings of each term
        self.max_impact: Floats = np.zeros(0, dtype=np.float64)
        self._post_slots: list[Slots] = []
        self._post_impacts: list[Floats] = []
        self._post_len: list[int] = []
        self._place: npt.NDArray[np.int32] = np.zeros(0, dtype=np.int32)  # for ``places``
        self.dead = 0  # postings of dead slots, still in the posting arrays
        self.reused = 0  # memories ``build`` took from a file

    def __len__(self) -> int:
        return len(self.slot_of)

    # -- reading -------------------------------------------------------------------------

    def postings(self, tid: int) -> tuple[Slots, Floats]:
        """The live slots of ``tid`` in increasing order, with their impacts."""
        n = self._post_len[tid]
        slots, impacts = self._post_slots[tid][:n], self._post_impacts[tid][:n]
        if self.dead:
            keep = self.alive[slots]
            slots, impacts = slots[keep], impacts[keep]
        return slots, impacts

    def bags(self, slots: list[int]) -> dict[int, set[int]]:
        """The term ids of each of ``slots``' bags, gathered at once (a search's few hits)."""
        if not slots:
            return {}
        rows = np.array(slots, dtype=np.int64)
        counts = self.counts[rows]
        tids = self.fwd_tids[ranges(self.starts[rows], counts)].tolist()
        ends = np.cumsum(counts).tolist()
        return {
            slot: set(tids[end - count : end])
            for slot, end, count in zip(slots, ends, counts.tolist(), strict=True)
        }

    def bag(self, slot: int) -> tuple[list[int], list[float]]:
        """A slot's term ids and frequencies, in the order its bag had them."""
        start = int(self.starts[slot])
        end = start + int(self.counts[slot])
        return self.fwd_tids[start:end].tolist(), self.fwd_tfs[start:end].tolist()

    def places(self, tids: list[int], among: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
        """For each term id of ``among``, its place in ``tids`` (distinct), or -1: one gather
        in an array over the vocabulary (-1 but for ``tids`` meanwhile), where a binary search
        in ``tids`` costs several."""
        if len(self._place) < len(self.terms):
            self._place = np.full(max(16, 2 * len(self.terms)), -1, dtype=np.int32)
        place = self._place
        place[tids] = np.arange(len(tids), dtype=np.int32)
        try:
            return place[among]
        finally:
            place[tids] = -1

    # -- changing ------------------------------------------------------------------------

    def intern(self, bag: dict[str, float]) -> list[int]:
        """The term ids of ``bag``'s terms, new terms added to the vocabulary."""
        vocab, out = self.vocab, []
        for term in bag:
            tid = vocab.get(term)
            if tid is None:
                tid = vocab[term] = len(self.terms)
                self.terms.append(term)
            out.append(tid)
        return out

    def _grow_terms(self) -> None:
        count = len(self.terms)
        if len(self.df) < count:
            self.df = _grow(self.df, count)
            self.max_impact = _grow(self.max_impact, count)
        while len(self._post_len) < count:
            self._post_slots.append(np.zeros(4, dtype=np.int32))
            self._post_impacts.append(np.zeros(4, dtype=np.float64))
            self._post_len.append(0)

    def _new_slot(self, memory_id: int, print_: bytes, length: float, count: int) -> int:
        slot = self.slots
        self.slots += 1
        self.ids = _grow(self.ids, self.slots)
        self.prints = _grow(self.prints, self.slots)
        self.lengths = _grow(self.lengths, self.slots)
        self.norms = _grow(self.norms, self.slots)
        self.alive = _grow(self.alive, self.slots)
        self.starts = _grow(self.starts, self.slots)
        self.counts = _grow(self.counts, self.slots)
        self.ids[slot] = memory_id
        self.prints[slot] = np.frombuffer(print_, dtype=np.uint64)[0]
        self.lengths[slot] = length
        self.alive[slot] = True
        self.starts[slot] = self.forward
        self.counts[slot] = count
        self.slot_of[memory_id] = slot
        return slot

    def add(
        self,
        memory_id: int,
        print_: bytes,
        tids: list[int],
        tfs: list[float],
        length: float,
        average: float,
    ) -> None:
        """Index one memory's bag at a new slot, its impacts taken at ``average``."""
        self._grow_terms()
        slot = self._new_slot(memory_id, print_, length, len(tids))
        k1, b = self.k1, self.b
        norm = k1 * (1.0 - b + b * length / (average or length or 1.0))
        self.norms[slot] = norm
        end = self.forward + len(tids)
        self.fwd_tids = _grow(self.fwd_tids, end)
        self.fwd_tfs = _grow(self.fwd_tfs, end)
        self.fwd_tids[self.forward : end] = tids
        self.fwd_tfs[self.forward : end] = tfs
        self.forward = end
        for tid, tf in zip(tids, tfs, strict=True):
            impact = tf / (tf + norm)
            if self.df[tid] == 0 or impact > self.max_impact[tid]:
                self.max_impact[tid] = impact
            self.df[tid] += 1
            n = self._post_len[tid]
            if n == len(self._post_slots[tid]):
                self._post_slots[tid] = _grow(self._post_slots[tid], n + 1)
                self._post_impacts[tid] = _grow(self._post_impacts[tid], n + 1)
            self._post_slots[tid][n] = slot
            self._post_impacts[tid][n] = impact
            self._post_len[tid] = n + 1

    def remove(self, memory_id: int) -> float | None:
        """Forget a memory; its length, or None if it was not indexed."""
        slot = self.slot_of.pop(memory_id, None)
        if slot is None:
            return None
        self.alive[slot] = False
        tids, _ = self.bag(slot)
        self.df[tids] -= 1
        self.dead += len(tids)
        return float(self.lengths[slot])

    def build(
        self,
        ids: Ints,
        prints: npt.NDArray[np.uint64],
        stored: Stored | None,
        analyse: Callable[[int], dict[str, float]],
    ) -> list[float]:
        """Index the memories ``ids`` (fingerprints ``prints``) in this empty index, in order.

        A memory whose id and fingerprint are in ``stored`` takes its bag from there; any
        other is ``analyse``d (``analyse(i)`` gives the bag of memory i). Returns the
        memories' lengths. Norms, impacts and postings are made by ``set_average``, which the
        caller calls next.
        """
        count = len(ids)
        rows = np.full(count, -1, dtype=np.int64)
        if stored is not None and len(stored.ids):
            self.terms = stored.terms
            self.vocab = {term: tid for tid, term in enumerate(self.terms)}
            order = np.argsort(stored.ids, kind="stable")
            found = np.minimum(np.searchsorted(stored.ids, ids, sorter=order), len(order) - 1)
            candidate = order[found]
            hit = (stored.ids[candidate] == ids) & (stored.prints[candidate] == prints)
            rows[hit] = candidate[hit]
        self.reused = int((rows >= 0).sum())
        if stored is not None and self.reused == count == len(stored.ids):
            if not (rows == np.arange(count)).all():
                stored = stored.reordered(rows)
            lengths, counts = stored.lengths, stored.counts
            tids, tfs = stored.tids.astype(np.int32), stored.tfs.astype(np.float64)
        else:
            lengths, counts, tids, tfs = self._gather(rows, stored, analyse)
        self.ids, self.prints, self.lengths, self.counts = ids, prints, lengths, counts
        self.fwd_tids, self.fwd_tfs = tids, tfs
        self.starts, self.forward = np.cumsum(counts) - counts, len(tids)
        self.slots = count
        self.alive = np.ones(count, dtype=np.bool_)
        self.norms = np.zeros(count, dtype=np.float64)
        return lengths.tolist()  # type: ignore[no-any-return]

    def _gather(
        self, rows: Ints, stored: Stored | None, analyse: Callable[[int], dict[str, float]]
    ) -> tuple[Floats, Ints, npt.NDArray[np.int32], Floats]:
        """Lengths, counts and forward arrays of memories from ``stored`` rows or analysed."""
        count = len(rows)
        lengths = np.zeros(count, dtype=np.float64)
        counts = np.zeros(count, dtype=np.int64)
        starts = np.zeros(count, dtype=np.int64)
        new_tids: list[int] = []
        new_tfs: list[float] = []
        base = len(stored.tids) if stored is not None else 0
        for i in np.flatnonzero(rows < 0).tolist():
            bag = analyse(i)
            starts[i] = base + len(new_tids)
            counts[i] = len(bag)
            lengths[i] = sum(bag.values())
            new_tids += self.intern(bag)
            new_tfs += bag.values()
        all_tids = np.array(new_tids, dtype=np.int32)
        all_tfs = np.array(new_tfs, dtype=np.float64)
        if stored is not None:
            old = rows >= 0
            starts[old] = stored.starts[rows[old]]
            counts[old] = stored.counts[rows[old]]
            lengths[old] = stored.lengths[rows[old]]
            all_tids = np.concatenate([stored.tids.astype(np.int32), all_tids])
            all_tfs = np.concatenate([stored.tfs.astype(np.float64), all_tfs])
        take = ranges(starts, counts)
        return lengths, counts, all_tids[take], all_tfs[take]

    def set_average(self, average: float) -> None:
        """Recompute every norm, impact and largest impact of a term for ``average``."""
        self.rebuild(average)

    def compact(self) -> None:
        """Drop the postings and slots of removed memories, keeping every order."""
        self.rebuild(None)

    def rebuild(self, average: float | None) -> None:
        """Lay the live slots out anew, renumbered in order, and group their postings.

        With ``average``, norms, impacts and each term's largest impact are computed for it;
        without, the norms stay and the largest impacts too (then still upper bounds).
        """
        if not self.alive[: self.slots].all():
            live = np.flatnonzero(self.alive[: self.slots])
            take = ranges(self.starts[live], self.counts[live])
            self.fwd_tids, self.fwd_tfs = self.fwd_tids[take], self.fwd_tfs[take]
            self.ids, self.prints = self.ids[live], self.prints[live]
            self.lengths, self.counts, self.norms = (
                self.lengths[live],
                self.counts[live],
                self.norms[live],
            )
            self.slots = len(live)
        count = self.slots
        self.forward = int(self.counts[:count].sum())
        # Exact sizes again (growing left room at the ends).
        self.ids, self.prints = _exact(self.ids, count), _exact(self.prints, count)
        self.lengths, self.norms = _exact(self.lengths, count), _exact(self.norms, count)
        self.counts = _exact(self.counts, count)
        self.fwd_tids = _exact(self.fwd_tids, self.forward)
        self.fwd_tfs = _exact(self.fwd_tfs, self.forward)
        tids, tfs = self.fwd_tids, self.fwd_tfs
        if average is not None:
            k1, b, length = self.k1, self.b, self.lengths
            divisor = average or np.where(length, length, 1.0)
            self.norms = k1 * (1.0 - b + b * length / divisor)
        self.alive = np.ones(count, dtype=np.bool_)
        self.starts = np.cumsum(self.counts) - self.counts
        self.slot_of = dict(zip(self.ids.tolist(), range(count), strict=True))
        self.dead = 0
        entry_slots = np.repeat(np.arange(count, dtype=np.int32), self.counts)
        impacts = self.norms[entry_slots]
        impacts += tfs
        np.divide(tfs, impacts, out=impacts)  # tf / (tf + norm), one array
        vocabulary = len(self.terms)
        self.df = np.bincount(tids, minlength=vocabulary).astype(np.int64)
        if average is not None:
            self.max_impact = np.zeros(vocabulary, dtype=np.float64)
            np.maximum.at(self.max_impact, tids, impacts)
        order = stable_order(tids)
        entry_slots, impacts = entry_slots[order], impacts[order]
        del order
        ends = np.cumsum(self.df).tolist()
        begins = [0, *ends[:-1]]
        self._post_slots = [entry_slots[a:b] for a, b in zip(begins, ends, strict=True)]
        self._post_impacts = [impacts[a:b] for a, b in zip(begins, ends, strict=True)]
        self._post_len = self.df.tolist()
        if self.forward >= _TRIM_POSTINGS:
            give_back_freed()

    def needs_compaction(self) -> bool:
        return self.dead > max(_MIN_DEAD, (self.forward - self.dead) // 4)

    # -- the file ------------------------------------------------------------------------

    def copy(self) -> Dumpable:
        """What the index file is made of, copied (fast: whole arrays), so that the file's
        bytes can be made by ``Dumpable.dump`` while the index changes."""
        # Fancy indexing copies; with no dead slot every posting is live and in order, and
        # slices (views, then copied) are several times faster than the gather.
        rows: Ints | slice
        postings: Ints | slice
        if self.alive[: self.slots].all():
            rows, postings = slice(0, self.slots), slice(0, self.forward)
        else:
            rows = np.flatnonzero(self.alive[: self.slots])
            postings = ranges(self.starts[rows], self.counts[rows])
        return Dumpable(
            self.terms,  # not copied: only ever appended to, or replaced whole by ``build``
            _taken(self.ids, rows),
            _taken(self.prints, rows),
            _taken(self.lengths, rows),
            _taken(self.counts, rows),
            _taken(self.fwd_tids, postings),
            _taken(self.fwd_tfs, postings),
        )
