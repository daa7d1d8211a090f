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

- ``decide``: what a reply shows. The ranking decides the order; this decides how much of
  it answers. Each of the ranking's first ``LOOKED_AT`` matches gets a score from its
  ``Evidence`` (a linear score, fitted by logistic regression as the odds that the memory is
  the answer: see ``Calibration``); the best must reach the calibration's ``threshold``, or
  nothing is shown ("I found nothing about ..."); then every match within ``spread`` of the
  best and at least ``threshold - slack`` is shown, at most ``SHOWN``, in the ranking's
  order. So a clear match is shown alone, several close ones together, and a question
  nothing answers gets nothing. The rest are ``Answer.weaker`` (the doors' "More ▶").

Calibration. The scores' weights and thresholds are fitted per language of the question
(Chinese when at least ``CJK_SHARE`` of its letters are CJK, else English), per form (a
question, or a pasted dialogue whose last turn is what is embedded, ``memory.hybrid
.dense_query``) and per search mode (with meaning: cosines; keywords only), on the benchmark
sets of ``../shared/bench`` and the project's own notes (``bench/data``, the visible half):
``python -m bench.precision --fit`` prints ``CALIBRATIONS``, and without ``--fit`` measures
them (evidence shown, abstained, mean shown; README "Answers"). What separates an answer from
"nothing here" is mostly the meaning: the cosine's level (where other namespaces hold similar
text) and its gap to the namespace's typical cosine for the question (where they do not); the
keyword coverage helps, the fused score alone tells nothing (it is scaled to the best keyword
match, so the top is about 1.0 whatever was asked).

What counts as a use in the bot (``accessCount`` + 1, ``accessedAt`` now, by
``MemoryNamespace.touch``) is decided by the bot and documented in ``bot.core.operations``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memory.bm25 import memory_terms, query_terms
from memory.hybrid import is_dialogue
from memory.model import Hit, Memory
from memory.text import fold

_ALL_CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")

LOOKED_AT = 5  # the ranking's first matches that may be shown
SHOWN = 3  # shown at most: the answer, or two or three close ones
CJK_SHARE = 0.3  # a question this much CJK (of its letters) is read as Chinese
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


# -- what a reply shows ------------------------------------------------------------------------

_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)
MEANING_FEATURES = ("cosine", "gap", "coverage", "keyword_top", "place", "below_best")
KEYWORD_FEATURES = ("coverage", "keyword_top", "place", "relative")


@dataclass(frozen=True)
class Calibration:
    """A linear score of a hit's features (``weights`` in the order of ``features``, plus
    ``bias``: the log-odds that the hit is the answer) and the rule of what is shown."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float  # the best match must score this, or nothing is shown
    slack: float  # others may score down to threshold - slack,
    spread: float  # and at most this much below the best

    def score(self, values: dict[str, float]) -> float:
        """The score of one hit's feature ``values``."""
        return self.bias + sum(
            w * values[name] for name, w in zip(self.features, self.weights, strict=True)
        )


@dataclass(frozen=True)
class Answer:
    """What a reply shows (``shown``, in the ranking's order) and the weaker matches after."""

    shown: tuple[Hit, ...]
    weaker: tuple[Hit, ...]


def language(query: str) -> str:
    """``"zh"`` when at least ``CJK_SHARE`` of the query's letters are CJK, else ``"en"``."""
    letters = _LETTER.findall(query)
    if not letters:
        return "en"
    cjk = sum(1 for ch in letters if _ALL_CJK.fullmatch(ch))
    return "zh" if cjk >= CJK_SHARE * len(letters) else "en"


def kind(query: str, hits: Sequence[Hit]) -> tuple[str, str, str]:
    """(language, form, mode): which calibration applies to ``hits`` of ``query``."""
    meaning = any(hit.evidence is not None and hit.evidence.cosine is not None for hit in hits)
    form = "dialogue" if is_dialogue(query) else "question"
    return language(query), form, "meaning" if meaning else "keywords"


def features(hits: Sequence[Hit]) -> list[dict[str, float]]:
    """Each hit's features (``MEANING_FEATURES`` and ``KEYWORD_FEATURES``), in their order."""
    top = max((hit.score for hit in hits), default=0.0)
    rows = []
    for place, hit in enumerate(hits):
        evidence = hit.evidence
        coverage = evidence.coverage if evidence is not None else 0.0
        keyword_top = 1.0 if evidence is not None and evidence.keyword_rank == 0 else 0.0
        typical = evidence.typical if evidence is not None else None
        cosine = evidence.cosine if evidence is not None else None
        if cosine is None:
            cosine = typical if typical is not None else 0.0
        best = evidence.best if evidence is not None and evidence.best is not None else cosine
        rows.append(
            {
                "cosine": cosine,
                "gap": cosine - (typical if typical is not None else cosine),
                "coverage": coverage,
                "keyword_top": keyword_top,
                "place": float(place),
                "below_best": best - cosine,
                "relative": hit.score / top if top > 0 else 0.0,
                "log_score": math.log1p(max(hit.score, 0.0)),
            }
        )
    return rows


def decide(query: str, hits: Sequence[Hit], *, margin: float = 0.0) -> Answer:
    """What a reply to ``query`` shows of ``hits`` (a search's, best first; module docstring).

    ``margin`` raises the bar of the best match (in the score's log-odds): a message that asks
    nothing (a statement searched for what it touches) shows only a clear match. Hits without
    evidence (the seed ranker's) are shown as the ``matches`` they are, at most ``SHOWN``:
    there is nothing to judge them by."""
    found = matches(query, hits)
    if not found:
        return Answer((), ())
    if all(hit.evidence is None for hit in found):
        return Answer(tuple(found[:SHOWN]), tuple(found[SHOWN:]))
    language_, form, mode = kind(query, found)
    calibration = CALIBRATIONS[language_, form, mode]
    words = CALIBRATIONS[language_, form, "keywords"]
    head = found[:LOOKED_AT]
    # Each hit's margin over its own calibration's threshold: a hit without a vector yet (a
    # memory stored a moment ago, still being embedded) is judged by its keywords alone, not
    # as if its cosine were the namespace's typical one.
    margins = []
    for hit, values in zip(head, features(head), strict=True):
        judge = words if mode == "meaning" and not _embedded(hit) else calibration
        margins.append(judge.score(values) - judge.threshold)
    best = max(margins)
    if best < margin:
        return Answer((), tuple(found))
    floor = max(-calibration.slack, best - calibration.spread)
    chosen = sorted(range(len(head)), key=lambda i: -margins[i])
    keep = {i for i in chosen[:SHOWN] if margins[i] >= floor}
    shown = tuple(hit for i, hit in enumerate(head) if i in keep)
    weaker = tuple(hit for i, hit in enumerate(found) if i not in keep)
    return Answer(shown, weaker)


def _embedded(hit: Hit) -> bool:
    return hit.evidence is not None and hit.evidence.cosine is not None


# Fitted by ``python -m bench.precision --fit`` (see the module docstring); do not edit by hand.
CALIBRATIONS: dict[tuple[str, str, str], Calibration] = {
    ("en", "dialogue", "keywords"): Calibration(
        features=("coverage", "keyword_top", "place", "relative"),
        weights=(-0.1808, 0.351, -0.6331, -0.9329),
        bias=1.5652,
        threshold=0.964,
        slack=1.0,
        spread=1.0,
    ),
    ("en", "dialogue", "meaning"): Calibration(
        features=("cosine", "gap", "coverage", "keyword_top", "place", "below_best"),
        weights=(-36.3584, 76.0216, 4.5075, 0.7067, -0.1974, 9.8821),
        bias=25.7447,
        threshold=0.283,
        slack=0.5,
        spread=2.0,
    ),
    ("en", "question", "keywords"): Calibration(
        features=("coverage", "keyword_top", "place", "relative"),
        weights=(5.3434, 0.2555, 0.1838, 2.658),
        bias=-4.8748,
        threshold=0.189,
        slack=2.0,
        spread=3.0,
    ),
    ("en", "question", "meaning"): Calibration(
        features=("cosine", "gap", "coverage", "keyword_top", "place", "below_best"),
        weights=(13.0609, 24.6072, 4.7708, 1.0426, -0.1454, 9.1778),
        bias=-14.4126,
        threshold=0.286,
        slack=2.0,
        spread=3.0,
    ),
    ("zh", "dialogue", "keywords"): Calibration(
        features=("coverage", "keyword_top", "place", "relative"),
        weights=(-45.2709, 1.0032, -0.2726, 2.1771),
        bias=1.9832,
        threshold=0.104,
        slack=0.0,
        spread=3.0,
    ),
    ("zh", "dialogue", "meaning"): Calibration(
        features=("cosine", "gap", "coverage", "keyword_top", "place", "below_best"),
        weights=(-20.0917, 55.7631, -37.331, 1.2781, -0.3534, -8.8366),
        bias=19.4879,
        threshold=0.307,
        slack=0.5,
        spread=2.0,
    ),
    ("zh", "question", "keywords"): Calibration(
        features=("coverage", "keyword_top", "place", "relative"),
        weights=(10.3303, 1.2096, 0.0929, 0.7317),
        bias=-4.3482,
        threshold=1.193,
        slack=2.0,
        spread=3.0,
    ),
    ("zh", "question", "meaning"): Calibration(
        features=("cosine", "gap", "coverage", "keyword_top", "place", "below_best"),
        weights=(44.9965, 31.3628, 4.9258, 0.5682, -0.0272, -17.6011),
        bias=-42.1897,
        threshold=0.882,
        slack=1.0,
        spread=3.0,
    ),
}
