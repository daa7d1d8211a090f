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
  it answers, in two questions about the ranking's first ``LOOKED_AT`` matches (see
  ``Calibration``). Does anything here answer? Each match's ``evidence`` is a linear score
  of how well it matches (cosine, its gap to the namespace's typical cosine, keyword
  coverage, how far it stands above the other matches), scaled as the log-odds that it is
  the answer; the best must reach the calibration's ``threshold``, or nothing is shown ("I
  found nothing about ..."). Which of them answers? Each match's ``closeness`` is a second
  linear score (cosine, coverage, its place and score in the ranking, its length), fitted as
  which of a question's matches is its evidence; the matches within ``spread`` of the
  closest are shown, at most ``SHOWN``, in the ranking's order. So the number shown adapts
  to the question: one when the closest stands out, two or three when they are close, none
  when nothing answers. The rest are ``Answer.weaker`` (the doors' "More ▶"). A match
  without a vector yet (stored a moment ago) is judged by the keywords-only calibration.

Calibration. The weights, thresholds and spreads are fitted per language of the question
(Chinese when at least ``CJK_SHARE`` of its letters are CJK, else English), per form (a
question, or a pasted dialogue whose last turn is what is embedded, ``memory.hybrid
.dense_query``) and per search mode (with meaning: cosines; keywords only), on the benchmark
sets of ``../shared/bench`` and the project's own notes (``bench/data``, the visible half):
``python -m bench.precision --fit`` prints ``CALIBRATIONS`` (how: ``bench.calibrate``),
without ``--fit`` measures them (evidence shown / hit@5, abstained, mean shown;
docs/benchmarks.md), and with ``--held-out`` measures them fitted on half of the questions, on
the other half.
What separates an answer from "nothing here" is mostly the meaning: the cosine's gap to the
namespace's typical cosine (English questions), its level and how far the best stands above
the next (Chinese questions); the keyword coverage helps. The fused score alone tells
nothing (it is scaled to the best keyword match, so the top is about 1.0 whatever was
asked). For pasted dialogues the fit learns a negative weight on coverage: the benchmark's
stand-in namespace (another set's long conversations) shares more of a dialogue's words than
its own one does, a trait of the benchmark more than of people's notes.

What counts as a use in the bot (``accessCount`` + 1, ``accessedAt`` now, by
``MemoryNamespace.touch``) is decided by the bot and documented in ``bot.core.operations``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from memory.bm25 import memory_terms, query_terms
from memory.facts import names_of
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
EVIDENCE_FEATURES = {
    "meaning": ("cosine", "gap", "coverage", "gap_coverage", "standout"),
    "keywords": ("coverage", "keyword_top", "relative"),
}
CLOSENESS_FEATURES = {
    "meaning": ("cosine", "coverage", "keyword_top", "place", "relative", "length"),
    "keywords": ("coverage", "keyword_top", "place", "relative", "length"),
}


@dataclass(frozen=True)
class Calibration:
    """How the hits of one kind of search are judged (module docstring).

    ``evidence`` (a linear score of the features ``EVIDENCE_FEATURES`` names, ``weights`` and
    ``bias``) is the log-odds that a hit answers the question, whatever the others are: the
    best hit's must reach ``threshold``, or nothing is shown. ``closeness`` (a linear score of
    ``CLOSENESS_FEATURES``, ``nearness``, no bias: only differences count) says which of the
    hits is the answer: those within ``spread`` of the closest are shown."""

    evidence: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float
    threshold: float
    closeness: tuple[str, ...]
    nearness: tuple[float, ...]
    spread: float

    def odds(self, values: dict[str, float]) -> float:
        """The log-odds that the hit of feature ``values`` answers."""
        return self.bias + sum(
            w * values[name] for name, w in zip(self.evidence, self.weights, strict=True)
        )

    def near(self, values: dict[str, float]) -> float:
        """How likely the hit of feature ``values`` is the answer, next to the others."""
        return sum(w * values[name] for name, w in zip(self.closeness, self.nearness, strict=True))


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
    meaning = any(_gauged(hit) for hit in hits)
    form = "dialogue" if is_dialogue(query) else "question"
    return language(query), form, "meaning" if meaning else "keywords"


def features(hits: Sequence[Hit]) -> list[dict[str, float]]:
    """Each hit's features (every name of ``EVIDENCE_FEATURES`` and ``CLOSENESS_FEATURES``),
    in their order: ``hits`` are the first matches of one search, best first."""
    top = max((hit.score for hit in hits), default=0.0)
    cosines = [_cosine(hit) for hit in hits]
    rows = []
    for place, hit in enumerate(hits):
        evidence = hit.evidence
        coverage = evidence.coverage if evidence is not None else 0.0
        cosine = cosines[place]
        typical = evidence.typical if evidence is not None else None
        typical = cosine if typical is None else typical
        gap = cosine - typical
        others = cosines[:place] + cosines[place + 1 :]
        rows.append(
            {
                "cosine": cosine,
                "gap": gap,
                "coverage": coverage,
                "gap_coverage": gap * coverage,
                "keyword_top": 1.0 if evidence is not None and evidence.keyword_rank == 0 else 0.0,
                "place": float(place),
                "relative": hit.score / top if top > 0 else 0.0,
                "length": math.log1p(len(hit.memory.content)),
                # How far it stands above the closest of the others (above the namespace's
                # typical cosine when it is alone): a clear match stands out.
                "standout": cosine - max(others, default=typical),
            }
        )
    return rows


def decide(
    query: str,
    hits: Sequence[Hit],
    *,
    margin: float = 0.0,
    calibrations: Mapping[tuple[str, str, str], Calibration] | None = None,
) -> Answer:
    """What a reply to ``query`` shows of ``hits`` (a search's, best first; module docstring).

    ``margin`` raises the bar of the best hit's evidence (in log-odds): a message that asks
    nothing (a statement searched for what it touches) shows only a clear match. Hits without
    evidence (the seed ranker's) are shown as the ``matches`` they are, at most ``SHOWN``:
    there is nothing to judge them by. ``calibrations`` replace ``CALIBRATIONS`` (the
    benchmark's held-out measure)."""
    found = matches(query, hits)
    elsewhere = someone_elses(query, found)
    if elsewhere:  # never the answer, whatever their score: after the rest, as "More"
        others = {id(hit) for hit in elsewhere}
        rest = [hit for hit in found if id(hit) not in others]
        answer = decide(query, rest, margin=margin, calibrations=calibrations)
        return Answer(answer.shown, (*answer.weaker, *elsewhere))
    if not found:
        return Answer((), ())
    if all(hit.evidence is None for hit in found):
        return Answer(tuple(found[:SHOWN]), tuple(found[SHOWN:]))
    language_, form, mode = kind(query, found)
    judged = CALIBRATIONS if calibrations is None else calibrations
    calibration = judged[language_, form, mode]
    words = judged[language_, form, "keywords"]
    head = found[:LOOKED_AT]
    # A hit without a vector yet (a memory stored a moment ago, still being embedded) is
    # judged by its keywords alone, not as if its cosine were the namespace's typical one. In
    # a namespace of one vector the typical cosine is that memory's own, so the gap says
    # nothing: its keywords or its meaning may show it (a new user's first note, asked about
    # at once, was "nothing found" in English).
    judges = [words if mode == "meaning" and not _gauged(hit) else calibration for hit in head]
    rows = features(head)
    odds = [judge.odds(v) - judge.threshold for judge, v in zip(judges, rows, strict=True)]
    meaning = judged[language_, form, "meaning"]
    for i, hit in enumerate(head):
        if _alone(hit):
            odds[i] = max(odds[i], meaning.odds(rows[i]) - meaning.threshold)
    near = [judge.near(v) for judge, v in zip(judges, rows, strict=True)]
    # Closeness compares the hits one calibration judges (its scale is its own): each group
    # whose best evidence passes offers the hits within its spread of its closest.
    behind: dict[int, float] = {}
    for judge in {id(judge): judge for judge in judges}.values():
        group = [i for i, other in enumerate(judges) if other is judge]
        if max(odds[i] for i in group) < margin:
            continue
        closest = max(near[i] for i in group)
        behind.update({i: closest - near[i] for i in group if near[i] >= closest - judge.spread})
    if not behind:
        return Answer((), tuple(found))
    keep = set(sorted(behind, key=lambda i: (behind[i], i))[:SHOWN])
    shown = tuple(hit for i, hit in enumerate(head) if i in keep)
    weaker = tuple(hit for i, hit in enumerate(found) if i not in keep)
    return Answer(shown, weaker)


def someone_elses(query: str, hits: Sequence[Hit]) -> list[Hit]:
    """Of ``hits``, those about someone other than the one ``query`` names: "老李的电话" is
    not answered by "老王的电话是…", nor "Leo's birthday?" by "Mia's birthday is May 3". A
    hit is someone else's when both name an owner (``memory.facts.names_of``), and neither
    text mentions a name the other gives ("Who is Tim and John's coach?" is Tim's too).
    LoCoMo's adversarial questions ask this way on purpose ("What happened to Caroline's
    son?" of Melanie's son): they are answered by nothing."""
    asked = names_of(query)
    if not asked:
        return []
    question = fold(query)
    return [
        hit
        for hit in hits
        if (named := names_of(hit.memory.content))
        and not any(name in question for name in named)
        and not any(name in fold(hit.memory.content) for name in asked)
    ]


def _cosine(hit: Hit) -> float:
    """A hit's cosine; the namespace's typical one without a vector, 0.0 without meaning."""
    evidence = hit.evidence
    if evidence is None:
        return 0.0
    if evidence.cosine is not None:
        return evidence.cosine
    return evidence.typical if evidence.typical is not None else 0.0


def _alone(hit: Hit) -> bool:
    """Whether ``hit`` has the only vector of its namespace."""
    evidence = hit.evidence
    return evidence is not None and evidence.cosine is not None and evidence.embedded == 1


def _gauged(hit: Hit) -> bool:
    """Whether ``hit``'s cosine can be read against a typical level: it has a vector, and
    so has at least one other memory of the namespace."""
    evidence = hit.evidence
    if evidence is None or evidence.cosine is None:
        return False
    return evidence.embedded is None or evidence.embedded > 1


# Fitted by ``python -m bench.precision --fit`` (``bench.calibrate``); do not edit by hand.
CALIBRATIONS: dict[tuple[str, str, str], Calibration] = {
    ("en", "dialogue", "keywords"): Calibration(
        evidence=("coverage", "keyword_top", "relative"),
        weights=(-76.2317, -0.0, 0.0),
        bias=4.0382,
        threshold=-0.259,
        closeness=("coverage", "keyword_top", "place", "relative", "length"),
        nearness=(30.8646, 0.0945, -0.3549, -1.1329, 0.0948),
        spread=1.25,
    ),
    ("en", "dialogue", "meaning"): Calibration(
        evidence=("cosine", "gap", "coverage", "gap_coverage", "standout"),
        weights=(-22.1806, 58.864, -8.7609, 68.3057, -14.2407),
        bias=15.7709,
        threshold=0.097,
        closeness=("cosine", "coverage", "keyword_top", "place", "relative", "length"),
        nearness=(28.0519, 16.6176, -0.1345, 0.1224, 2.2389, -0.7086),
        spread=1.25,
    ),
    ("en", "question", "keywords"): Calibration(
        evidence=("coverage", "keyword_top", "relative"),
        weights=(5.9092, -0.2187, 2.5625),
        bias=-4.7753,
        threshold=-0.245,
        closeness=("coverage", "keyword_top", "place", "relative", "length"),
        nearness=(3.1103, 0.0431, 0.0236, 2.6372, 1.1855),
        spread=2.0,
    ),
    ("en", "question", "meaning"): Calibration(
        evidence=("cosine", "gap", "coverage", "gap_coverage", "standout"),
        weights=(0.0, 18.2459, 2.3495, 50.2228, 19.3613),
        bias=-3.0046,
        threshold=-0.275,
        closeness=("cosine", "coverage", "keyword_top", "place", "relative", "length"),
        nearness=(14.6705, 1.9504, -0.1237, -0.0494, 3.5932, 1.3443),
        spread=2.25,
    ),
    ("zh", "dialogue", "keywords"): Calibration(
        evidence=("coverage", "keyword_top", "relative"),
        weights=(-27.294, 0.0, 0.0),
        bias=2.13,
        threshold=0.027,
        closeness=("coverage", "keyword_top", "place", "relative", "length"),
        nearness=(12.3397, 0.1752, 0.0194, 2.1539, -1.4053),
        spread=1.0,
    ),
    ("zh", "dialogue", "meaning"): Calibration(
        evidence=("cosine", "gap", "coverage", "gap_coverage", "standout"),
        weights=(-2.3555, 28.1886, -29.6376, 65.035, -11.3081),
        bias=3.4263,
        threshold=0.307,
        closeness=("cosine", "coverage", "keyword_top", "place", "relative", "length"),
        nearness=(30.4011, 11.7646, 0.0115, 0.119, 3.3375, -0.3764),
        spread=1.25,
    ),
    ("zh", "question", "keywords"): Calibration(
        evidence=("coverage", "keyword_top", "relative"),
        weights=(7.8856, 0.0, 4.1161),
        bias=-5.6643,
        threshold=1.268,
        closeness=("coverage", "keyword_top", "place", "relative", "length"),
        nearness=(4.5165, 0.1945, 0.0709, 2.6483, 1.6243),
        spread=2.0,
    ),
    ("zh", "question", "meaning"): Calibration(
        evidence=("cosine", "gap", "coverage", "gap_coverage", "standout"),
        weights=(56.0537, 0.0, 4.3942, 61.1962, 21.1285),
        bias=-51.3666,
        threshold=0.725,
        closeness=("cosine", "coverage", "keyword_top", "place", "relative", "length"),
        nearness=(54.8208, 1.8926, -0.0402, -0.1583, 1.304, 1.2564),
        spread=2.0,
    ),
}
