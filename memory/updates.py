"""When a new memory gives a new value to what an older one says: updates, and look-alikes.

"The cabin wifi password is now pinecone43" changes "The wifi password at the cabin is
pinecone42"; "Leo's birthday is June 9" does not change "Mia's birthday is May 3", nor "我妈的
手机号…" "我爸的手机号…", nor the guest wifi the office wifi. ``judge(new, old)`` tells these
apart by rules, in English and Chinese, and says how sure it is:

- ``SURE``: the same thing, another value, and the new text says it changed (a *cue*: now, no
  longer, switched, moved, changed, new, actually, 现在, 换成, 改成, 搬到, 不再, 已经 …). The bot
  replaces the old memory and says so;
- ``ASK``: the same thing with another value but no cue ("健身卡每月45元" after "…40元"), or a
  cue but the two texts do not name the thing alike (one says whose, or a qualifier, that the
  other lacks: "钢琴课换到周四了" after "孩子的钢琴课在周二"). The bot asks: Replace / Keep both;
- None: not the same thing, or nothing changed.

How a text is read (``memory.facts.read``): cut at its first marker ("is", "是", "switched
to", "在"; without one, before a measure that ends it: "楼上空调 | 设定26度") into a subject
and a value, each made terms as search reads them, with whose the fact is (owners:
possessives, kin, nicknames, the speaker) and the frames of a home and a job.

Then for the new text N and the old O (``judge``):

- an owner of one that the other does not mention, while the other has an owner of its own
  (another person, or the speaker), makes them different things;
- a subject term of N that O lacks entirely, and one of O that N lacks, make them different
  things (office / guest, Mia / Leo); such a term on one side only (a qualifier the other does
  not give) makes them at most ``ASK``, and only with a cue;
- N must state a value O lacks, and O one N lacks (unless N has a cue: "Priya left, my new
  manager is Tom"); a text that only ends the old fact ("I no longer work at Acme") counts;
- what they share must name one thing: two words (a Chinese character counts half) or one
  with a number on both sides or a cue ("Tom is my brother" / "Tom is a doctor" are two facts
  about Tom); with one word and a cue, the values must be of one kind (both numbers, both
  places, both words), else ``ASK``.

Embeddings do not decide: a sentence model puts "我爸的手机号" and "我妈的手机号" at a cosine of
0.98. They widen the candidates instead: the bot also judges the memories closest in meaning
(``bot.core.adding``), which finds "I live at 12 Oak Street" for "we moved to Birch Lane".

``newest_first`` orders what a search shows: of two memories that say different values of one
thing (``judge``, or ``restates``: an amount said to have changed, "Dr. Kim moved to the 6th
floor" after "Dr. Kim's office is on the 3rd floor"), the newer comes first and the older is
marked (recall); ``whose_first`` puts after the
others what is about someone the question does not ask about.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

from memory.facts import (
    DIGIT,
    IS_CJK,
    SELF,
    ZH_FUNCTION,
    ZH_LIGHT,
    Reading,
    lead,
    measures,
    owners_of,
    read,
)
from memory.model import Memory
from memory.text import fold

Level = Literal["sure", "ask"]
SURE: Level = "sure"
ASK: Level = "ask"
NEWER_DEPTH = 20  # weaker matches looked through for a newer value of an answer
_ALIKE = ({"word"}, {"data"}, {"place"}, {"data", "place"})  # an address has numbers


def _weight(terms: frozenset[str]) -> float:
    """How much a set of terms says: a word one, a Chinese character half."""
    return sum(0.5 if IS_CJK.match(term) else 1.0 for term in terms)


def _owner_terms(owners: frozenset[str]) -> frozenset[str]:
    """The terms that name ``owners`` (a Chinese one by its characters)."""
    return frozenset(c for owner in owners for c in (owner if IS_CJK.match(owner) else [owner]))


def _covered(owner: str, terms: frozenset[str]) -> bool:
    """Whether ``terms`` mention ``owner`` (a Chinese one by all its characters)."""
    if IS_CJK.match(owner):
        return all(c in terms or c in ZH_FUNCTION or c in ZH_LIGHT for c in owner)
    return owner in terms


# -- judging ------------------------------------------------------------------------------------


def _whose(a: Reading, b: Reading) -> bool | None:
    """Whether ``a`` and ``b`` are of the same owner: True, or None when each names another
    (or one the speaker and the other someone else), False when one names someone the other
    does not mention."""
    own_a = {w for w in a.owners - {SELF} if not _covered(w, b.terms)}
    own_b = {w for w in b.owners - {SELF} if not _covered(w, a.terms)}
    if (own_a and (own_b or SELF in b.owners)) or (own_b and SELF in a.owners):
        return None
    return not (own_a or own_b)


def judge(new: str, old: str) -> Level | None:
    """Whether ``new`` gives another value to what ``old`` says: ``SURE``, ``ASK`` or None
    (the module docstring); ``ASK`` too when it ``restates`` an amount of ``old``."""
    verdict = _judge(new, old)
    if verdict is None and restates(new, old):
        return ASK
    return verdict


def _judge(new: str, old: str) -> Level | None:
    n, o = read(new), read(old)
    if n.bare:  # "item 02" after "item 01": a number that names another item
        n = replace(n, subject=n.subject | n.bare, values=n.values - n.bare)
    if o.bare and not n.cue:  # unless the new text says a value changed
        o = replace(o, subject=o.subject | o.bare, values=o.values - o.bare)
    every_n, every_o = n.terms, o.terms
    if every_n == every_o and not n.ended:
        return None  # the same words: a duplicate, not an update
    # Whose: another person's (or the speaker's against another's) is another thing.
    whose = _whose(n, o)
    if whose is None:
        return None
    unsure = not whose
    # What: a subject term each side lacks is another thing; on one side, a qualifier. Two
    # texts read without a subject are compared by what each begins with ("the cat eats twice
    # a day" / "the dog now eats once a day").
    extra_n, extra_o = n.subject - every_o, o.subject - every_n
    if not (n.subject or o.subject) and lead(new, every_o) and lead(old, every_n):
        return None
    if extra_n and extra_o:
        return None
    if extra_n or extra_o:
        if not n.cue:
            return None
        unsure = True
    shared = every_n & every_o
    if not shared:
        return None
    named = n.subject | o.subject
    thing = shared & named if named else shared
    if _weight(thing) < (1 if named else 2):
        return None  # one character, or one word neither text names as its subject
    if (extra_n or extra_o) and _weight(extra_n | extra_o) > _weight(thing):
        return None  # a qualifier heavier than what the two share: another thing
    if not (thing - _owner_terms(n.owners | o.owners)) and not (n.generic & o.generic):
        return None  # only whose it is: "Leo's school" is not what "Leo is allergic to" says
    data = (n.path or any(DIGIT.search(t) for t in n.values - every_o)) and (
        o.path or any(DIGIT.search(t) for t in o.values - every_n)
    )
    if not named and not (data or n.cue):
        return None  # "去超市买面包" / "去超市买牛奶": nothing says the shared words are one thing
    # The value: something new, and something of the old's that the new does not say.
    new_values, old_values = n.values - every_o, o.values - every_n
    if not new_values and not n.ended:
        return None
    if not old_values and not n.cue:
        return None
    weight = _weight(thing)
    if weight < 2 and not (data or n.cue):
        return None  # "Tom is my brother" / "Tom is a doctor": two facts about Tom
    if not n.cue or unsure:
        return ASK
    if weight <= 1 and not data and {n.kind, o.kind} not in _ALIKE:
        return ASK  # "the car is now in the garage" after "the car is a red Kia"
    return SURE


# -- what a search shows ------------------------------------------------------------------------


def _when(memory: Memory) -> str:
    """When a memory last said what it says (its content set: created, or updated)."""
    return max(memory.created_at, memory.updated_at or "")


def superseded(older: Memory, newer: Memory) -> bool:
    """Whether ``newer`` says another value of what ``older`` says (``judge``), and is newer."""
    if (_when(newer), newer.id) <= (_when(older), older.id):
        return False
    return judge(newer.content, older.content) is not None


def restates(new: str, old: str) -> bool:
    """Whether ``new`` says that an amount ``old`` gives has changed, where the rules cannot
    tell what the two are about: ``new`` says it changed (a cue), names what ``old`` names (a
    subject of either, besides the amount), is of no one else (``_whose``), does not qualify
    a subject they share another way ("the downstairs thermostat" / "the upstairs one"), and
    gives another amount of a kind ``old`` gives one of ("$18" / "$15", "6th" / "3rd",
    "8点半" / "8点"). "Hannah raised her rate, it's $18 an hour now" after "Our babysitter
    is Hannah, she charges $15 an hour"; "Dr. Kim moved to the 6th floor" after "Dr. Kim's
    office is on the 3rd floor"; "放暑假了，孩子改成8点半睡" after "孩子晚上8点睡觉". Never
    sure: ``judge`` asks (Replace / Keep both), and recall shows the newer first."""
    n, o = read(new), read(old)
    if not n.cue or n.ended or _whose(n, o) is not True:
        return False
    if n.subject & o.subject and n.subject - o.terms and o.subject - n.terms:
        return False
    amounts_n, amounts_o = measures(new), measures(old)
    kinds_o = {kind for kind, _ in amounts_o}
    if not any(kind in kinds_o for kind, _ in amounts_n - amounts_o):
        return False
    units = {term for _, amount in amounts_n | amounts_o for term in read(amount).terms}
    shared = frozenset(term for term in n.terms & o.terms if not DIGIT.search(term)) - units
    return bool(shared & (n.subject | o.subject)) and _weight(shared) >= 1


def whose_first(query: str, memories: Sequence[Memory]) -> list[Memory]:
    """``memories`` (what answers ``query``, best first) with those about someone else than
    the one ``query`` asks about after the others: "我爸的手机号是多少" is not answered first by
    "我妈的手机号…", "what's my shoe size?" by "Leo's shoe size is 31"."""
    folded = fold(query)
    asked = replace(read(query), owners=owners_of(folded, ""))  # a question's split says little
    if not asked.owners:
        return list(memories)
    others = [m for m in memories if _whose(asked, read(m.content)) is None]
    if not others:
        return list(memories)
    return [*(m for m in memories if m not in others), *others]


def newest_first(
    shown: Sequence[Memory], rest: Sequence[Memory] = ()
) -> tuple[list[Memory], list[Memory], frozenset[int]]:
    """``shown`` (what answers a question, best first) with every memory that says a newer
    value of the same thing before the one it supersedes, taken from ``rest`` (weaker matches)
    if it is there (among its first ``NEWER_DEPTH``: a newer value of what answers ranks high
    too); the ids of the memories so superseded (to be marked older)."""
    pool = [*shown, *rest[:NEWER_DEPTH]]
    terms = {m.id: read(m.content).terms for m in pool}
    newer: dict[int, list[Memory]] = {}
    for old in shown:
        found = [
            m for m in pool if m.id != old.id and terms[m.id] & terms[old.id] and superseded(old, m)
        ]
        if found:
            newer[old.id] = sorted(found, key=lambda m: (_when(m), m.id), reverse=True)
    if not newer:
        return list(shown), list(rest), frozenset()
    placed: list[Memory] = []
    seen: set[int] = set()
    for memory in shown:
        for version in (*newer.get(memory.id, ()), memory):
            if version.id not in seen:
                seen.add(version.id)
                placed.append(version)
    left = [m for m in rest if m.id not in seen]
    return placed, left, frozenset(newer)


__all__ = [
    "ASK",
    "SURE",
    "Level",
    "judge",
    "newest_first",
    "restates",
    "superseded",
    "whose_first",
]
