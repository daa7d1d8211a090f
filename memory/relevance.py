"""Which search hits are matches, and which of them are answers (what counts as a use).

The default ranking (``memory.bm25``) scores every memory that shares a term with the query,
however weak. A CJK character is a term, so ``你是谁`` finds ``小王的生日是3月5日`` through 是
alone, and ``我的电脑是什么牌子`` finds ``我的车停在B2层`` through 我, 的 and 我的. That is right
for a ranking (the benchmark figures are the ranking's, and this module changes none of them),
but such a hit is neither a match a person would accept nor a use of the memory. Two rules,
applied by the doors that show or count hits, never by ``search`` itself:

- ``matches``: a hit whose shared terms with the query are all stop terms shares nothing that
  means anything, and is dropped. English stop words never become terms (``memory.text``); for
  CJK, ``STOP_CHARACTERS`` are the function characters of questions and statements (的 是 了
  我 你 什么 ...), and a bigram is a stop term when both its characters are. A hit that shares
  no term at all (a ranking that finds by meaning rather than by words) is kept: there is
  nothing to judge it by here, and ``answers`` still applies the floor to it.
- ``quotes``: the memories a text (the model's answer) quotes: it names the memory's id, or
  holds ``QUOTE_CHARS`` characters of its content in a row (the whole content if shorter),
  or ``QUOTE_CJK_CHARS`` CJK characters in a row, case, width and spaces folded. One shared
  word ("rotates") is not a quote; a path, a number with its unit, a name and its date are.
- ``answers``: of the matches, those scoring at least ``USE_FLOOR`` of the best match. These
  are what the model receives as the answer to a question, and what may count as used; a hit
  far below the best is a neighbour, not the answer.

What counts as a use in the bot (``accessCount`` + 1, ``accessedAt`` now, by
``MemoryNamespace.touch``) is decided by the bot and documented in ``bot.core.operations``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from memory.bm25 import memory_terms, query_terms
from memory.model import Hit, Memory
from memory.text import fold

_ALL_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")

USE_FLOOR = 0.2  # an answer scores at least this share of the best match
QUOTE_CHARS = 12  # a quote: this many characters of a memory in a row (spaces folded),
QUOTE_CJK_CHARS = 6  # or this many CJK characters in a row
MIN_QUOTED = 4  # a memory shorter than this is quoted only by its id

STOP_CHARACTERS = frozenset(
    "的地得了着过是在有和与及或也都就还又再才很太更最没不别"
    "我你您他她它们咱这那哪谁啥什么怎样吗呢吧啊呀哦嗯嘛呗哈"
    "个些点一把被给对从向到为以而之其且但并要会能可想该让请帮告诉说问记知道"
)


def is_stop_term(term: str) -> bool:
    """Whether a search term says nothing about which memory is meant (``的``, ``什么``)."""
    return 0 < len(term) <= 2 and all(ch in STOP_CHARACTERS for ch in term)


def shares_meaning(query: str | dict[str, float], hit: Hit) -> bool:
    """Whether ``hit`` shares a term with ``query`` other than stop terms, or none at all."""
    wanted = query_terms(query) if isinstance(query, str) else query
    shared = wanted.keys() & memory_terms(hit.memory).keys()
    return not shared or any(not is_stop_term(term) for term in shared)


def matches(query: str, hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` without those that share only stop terms with ``query``, in their order."""
    wanted = query_terms(query)
    return [hit for hit in hits if shares_meaning(wanted, hit)]


def answers(query: str, hits: Sequence[Hit], *, floor: float = USE_FLOOR) -> list[Hit]:
    """The ``matches`` scoring at least ``floor`` of the best of them, in their order."""
    found = matches(query, hits)
    if not found:
        return []
    best = max(hit.score for hit in found)
    return [hit for hit in found if hit.score >= best * floor]


def _flat(text: str) -> str:
    return " ".join(fold(text).split())


def _runs(text: str, size: int, cjk: bool) -> set[str]:
    runs = (text[i : i + size] for i in range(len(text) - size + 1))
    return {run for run in runs if not cjk or _ALL_CJK.fullmatch(run)}


def quotes(text: str, memories: Iterable[Memory]) -> dict[int, Memory]:
    """The memories ``text`` quotes (their id, or a run of their content), by id."""
    flat = _flat(text)
    numbers = set(re.findall(r"\d+", text))
    seen: dict[tuple[int, bool], set[str]] = {}  # the text's runs, by length and kind

    def runs(of: str, size: int, cjk: bool) -> set[str]:
        if (size, cjk) not in seen:
            seen[size, cjk] = _runs(flat, size, cjk)
        return seen[size, cjk] & _runs(of, size, cjk)

    found: dict[int, Memory] = {}
    for memory in memories:
        content = _flat(memory.content)
        named = str(memory.id) in numbers
        if named or (
            len(content) >= MIN_QUOTED
            and (
                runs(content, min(QUOTE_CHARS, len(content)), False)
                or runs(content, QUOTE_CJK_CHARS, True)
            )
        ):
            found[memory.id] = memory
    return found
