"""When a new memory says what one already stored says: duplicates and near-duplicates.

A duplicate has the same content after the folding search uses (``memory.text.content_key``:
case, width, spacing and punctuation make no difference). The store never keeps a second one:
``Namespace.add`` returns the memory already stored (``Added.duplicate``).

A near-duplicate is left for the person to judge (keep both, replace the old one, cancel),
so the measure only has to find what is worth asking about, in both languages, without asking
about every pair of short memories that share a common word. Both texts are read as the sets
of search terms of ``memory.text.terms`` (folded, stemmed, without stop words; a CJK run as its
character bigrams, without the single characters, which Chinese shares everywhere). A stored
memory is a near-duplicate of the new text when either:

- it holds most of the new text's terms, in the same order: at least ``MIN_SHARED`` of them,
  and all of them or, for a text of at least ``LONG_TEXT`` terms, ``MIN_CONTAINED`` (three
  quarters) of them (the longest common subsequence of the two term sequences, up to
  ``MAX_SEQUENCE`` terms; a set beyond). "buy milk" is in "buy milk and eggs"; a short text
  differing in one word of five ("今天天气很好", "今天天气很差") is not, nor are "session 1
  note 0" and "session 0 note 1", which share every word in another order. A number of the
  new text that the stored one lacks makes it another item ("item 1000-1" beside "item
  1000-0"), not the same words: then only the next rule can find it; or
- it states the same thing with another value (``memory.updates.judge``: the subject and
  the value of each text, whose it is, and whether the new text says it changed). Such a
  near-duplicate is an ``update``, ``sure`` when the new text says it changed ("the cabin wifi
  password is now pinecone43"): the bot then replaces the old memory instead of asking. "Mia's
  birthday" and "Leo's birthday", "Tom is my brother" and "Tom is a doctor" are not asked about.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memory.model import Memory
from memory.text import content_key, terms
from memory.updates import SURE, judge

MIN_SHARED = 2
MIN_CONTAINED = 0.75
LONG_TEXT = 6
MAX_SEQUENCE = 300  # terms compared in order (quadratic); longer texts are compared as sets
MAX_NEAR = 3  # near-duplicates reported (the best first)


@dataclass(frozen=True, slots=True)
class Near:
    """A stored memory that may say what a new text says, and why: ``same`` content,
    ``update`` of the same fact, or most of the words ``contained``."""

    memory: Memory
    reason: str
    share: float  # the share of the new text's terms the memory holds
    sure: bool = False  # an update the new text says is one (``memory.updates.SURE``)


def _terms(text: str) -> frozenset[str]:
    return frozenset(terms(text, characters=False))


def _common(new: list[str], old: list[str]) -> int:
    """The length of the longest common subsequence of two term sequences."""
    if len(new) > MAX_SEQUENCE or len(old) > MAX_SEQUENCE:
        return len(set(new) & set(old))
    previous = [0] * (len(old) + 1)
    for term in new:
        current = [0]
        for j, other in enumerate(old):
            current.append(previous[j] + 1 if term == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _contained(new: list[str], old: list[str]) -> float | None:
    """The share of ``new``'s terms that ``old`` holds in order, if it is "most" of them."""
    if len(set(new) & set(old)) < MIN_SHARED:
        return None
    if any(term.isdigit() and term not in old for term in new):
        return None  # another number: another item, or a new value (``_same_fact``)
    share = _common(new, old) / len(new)
    if share == 1.0 or (len(new) >= LONG_TEXT and share >= MIN_CONTAINED):
        return share
    return None


def near_duplicates(content: str, candidates: Iterable[Memory]) -> list[Near]:
    """The ``candidates`` that are near-duplicates of ``content``, the most similar first."""
    wanted, key = terms(content, characters=False), content_key(content)
    found: list[Near] = []
    for memory in candidates:
        if key and content_key(memory.content) == key:
            found.append(Near(memory, "same", 1.0))
            continue
        verdict = judge(content, memory.content)
        if verdict is not None:
            found.append(Near(memory, "update", 0.0, sure=verdict == SURE))
            continue
        share = _contained(wanted, terms(memory.content, characters=False)) if wanted else None
        if share is not None:
            found.append(Near(memory, "contained", share))
    rank = {"same": 0, "update": 1, "contained": 2}
    found.sort(key=lambda near: (rank[near.reason], not near.sure, -near.share))
    return found[:MAX_NEAR]
