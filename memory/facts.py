"""A short text read as a fact: what it is about, its value, whose it is, and whether it says
that it changed. ``memory.updates`` judges two memories by their readings (``judge``).

How a text is read (``read``, into a ``Reading``):

1. It is cut at its first *marker* into a subject (what the fact is about) and a value: a
   copula ("is", "are", ":", "是", "为", "叫"), else a verb of change or a "to" ("switched to",
   "改成", "换到", "推迟到"), else a preposition of place ("in", "at", "on", "在", "到"). "The wifi
   password at the cabin is pinecone42": subject "the wifi password at the cabin". A text
   without a marker ("I drive a grey Civic") has no subject of its own: what it shares with the
   other text names the thing.
2. Each part becomes terms: English words as search reads them (``memory.text.word_term``:
   folded, stemmed, no stop words), Chinese as single characters without function characters
   (的, 了, 我 …), so "我的手机号" and "我手机号" read alike; cue words and generic ones ("number",
   "号", "码") are left out. A term with a digit is a value wherever it stands ("I take the 7:45
   train").
3. Whose it is (*owners*): possessives ("Mia's", "the dog's"), kin ("dad", "我妈", "外婆"), a
   nickname ("小王的", "老张是"), or the speaker ("my", "I", "我"; only when no one else is
   named). "I live in" and "我住在" name the home, "I work at" and "上班" the job, as does "we
   moved to" / "我搬到" with no other subject: these *frames* are a term of the subject.

The word lists below are English and Chinese, side by side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memory.text import fold, word_term

SELF = "@self"  # the speaker, as an owner
HOME, WORK = "@home", "@work"  # frames

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
IS_CJK = re.compile(rf"[{_CJK}]")
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+(?:['’][^\W_{_CJK}]+)?")
DIGIT = re.compile(r"\d")

# -- the word lists -----------------------------------------------------------------------------

EN_CUE = (
    r"now|nowadays|currently|these days|from now on|no longer|anymore|any more|no more|instead"
    r"|actually|correction|new|newly|change[ds]?|changing|switch(?:ed|es)?|mov(?:e|ed|es|ing)"
    r"|relocat(?:e|ed|ing)|updated?|renamed|reset|replaced|swapped|upgraded|transferred"
    r"|raised|increased|decreased|lowered|reduced|went up|went down|pushed back|postponed"
    r"|rescheduled|bumped"
)
EN_ENDED = r"no longer|not\s+\w+(?:\s+\w+)?\s+any\s?more|no more"
ZH_CUE = (
    r"现在|目前|如今|已经|不再|以后|今后|往后|从此|从今天起|新(?!加坡|疆|西兰|闻|年|鲜)|其实"
    r"|改(?:成|为|到|在|用)?|换(?:成|到|为)?|变(?:成|为|了)|搬(?:到|去|家)?|挪(?:到|去)?"
    r"|调(?:到|成|为|走|整)|推迟(?:到)?|提前(?:到)?|延期(?:到)?|涨(?:价|到)?|降(?:到|价|为)"
    r"|加到|减到|升到|转(?:学|到|成|为|去)|续(?:保|约|费|签)|重置(?:成|为)?|更新(?:成|为)?|替换(?:成|为)?"
)
ZH_ENDED = r"不再|不[\u4e00-\u9fff]{1,6}了"

# Markers, strongest first: the first class found cuts the text, at its first place.
EN_MARKERS = (
    r"\b(?:is|are|was|were|am)\b|(?<!\d)[:=](?!\d)|->|→",
    r"\bto\b",
    r"\b(?:in|at|on|under|inside|behind)\b",
)
ZH_MARKERS = (
    r"是|为(?![了什])|叫|(?<!\d)[:：=](?!\d)",
    r"(?:改|换|变|调|搬|挪|推迟|提前|延期|涨|降|升|加|减|重置|设|更新)(?:成|为|到|在)",
    r"(?<![现正实存所])在|到",
)

EN_SELF = r"\b(?:i|me|my|mine|myself|we|us|our|ours|i['’]m|i['’]ve|we['’]re|we['’]ve)\b"
ZH_SELF = r"我|咱"
EN_KIN = (
    "mom mum mommy mummy mother dad daddy father parents sister brother wife husband son "
    "daughter kid kids child children baby grandma grandpa grandmother grandfather granny "
    "nana aunt uncle cousin niece nephew partner girlfriend boyfriend fiance fiancee"
).split()
ZH_KIN = (
    "爸爸 妈妈 父亲 母亲 老婆 老公 妻子 丈夫 媳妇 儿子 女儿 孩子 宝宝 哥哥 姐姐 "
    "弟弟 妹妹 爷爷 奶奶 外公 外婆 姥姥 姥爷 大姨 小姨 姨妈 舅舅 叔叔 婶婶 姑姑 "
    "伯伯 岳父 岳母 公公 婆婆 女朋友 男朋友 爸 妈 哥 姐 弟 妹"
).split()
_NOT_POSSESSIVE = frozenset("it that he she there here what who let".split())
_EN_POSSESSIVE = re.compile(r"\b([a-z][a-z-]*)['’]s\b|\b([a-z][a-z-]*s)['’](?!\w)")
_ZH_NAME = re.compile(  # 小王的, 老张是: a nickname, at the start of a clause
    rf"(?:^|(?<=[\s,，.。;；、!！]))([小老阿][{_CJK}])(?=[的是对在说家住跟和要会把给])"
)
# A name as an owner: a capitalised possessive ("Mia's", "James'"), not a day named after one.
_EN_NAMED = re.compile(
    r"\b([A-Z][a-z]+(?:-[A-Z][a-z]+)?)(?:['’]s\b|(?<=s)['’](?!\w))(?! (?:Day|Eve)\b)"
)
_NOT_NAMES = _NOT_POSSESSIVE | frozenset(
    "where when why how which this everyone everybody someone somebody nobody today tonight "
    "tomorrow yesterday".split()
)

EN_HOME = r"\b(?:live|lives|living|lived|reside|resides|residing)\b"
ZH_HOME = r"住在|住址|家住|居住|定居"
# "we moved to …", "我搬到…": the speaker moved, so where they live changed.
# "we moved to …", "grandma moved to …", "我搬到…", "我妈搬到…": the speaker or their kin moved,
# so where they live changed (a kin word is kept in ``EN_KIN`` / ``ZH_KIN`` below).
EN_MOVED = (
    r"^\s*(?:i|we|(?:my\s+)?(?:{kin}))(?:\s+(?:have|has|had|just|finally|already|recently|all))*"
    r"\s+(?:moved|move|relocated)\b"
)
ZH_MOVED = r"^\s*(?:我们|我|咱们|咱)?(?:{kin})?家?(?:已经|刚刚|刚|终于|上周|上个月|昨天|今年|也)?搬"
EN_WORK = r"\bwork(?:s|ing|ed)?\s+(?:at|for|in)\b|\bemployed\b|\bjoined\b"
ZH_WORK = r"上班|工作|入职|就职|任职"

# Left out of the terms: generic words that do not say which thing, and Chinese function
# characters (the Chinese cue words are taken out of the text before).
EN_LIGHT = frozenset(
    word_term(w) or w
    for w in "number num no current get got has have had be been do dr mr mrs ms also still "
    "one ones".split()
)
ZH_FUNCTION = frozenset(
    "的了是在我你他她它们也都就还又很吗呢吧啊呀哦个这那和与跟把被给让将从着过得地么咱里只已该每不"
)
ZH_LIGHT = frozenset("号码子")
# Of those, the generic names of an attribute: "the landlord's number" names one even so.
GENERIC = frozenset({"number", "num", "no", "号", "码"})

_I = re.IGNORECASE
_EN_CUE = re.compile(rf"\b(?:{EN_CUE})\b", _I)
_EN_ENDED = re.compile(rf"\b(?:{EN_ENDED})\b", _I)
_ZH_CUE = re.compile(ZH_CUE)
_ZH_ENDED = re.compile(ZH_ENDED)

_EN_SELF = re.compile(EN_SELF, _I)
_ZH_SELF = re.compile(ZH_SELF)
_EN_KIN = re.compile(rf"\b(?:{'|'.join(EN_KIN)})\b", _I)
_ZH_KIN = re.compile("|".join(sorted(ZH_KIN, key=len, reverse=True)))
_HOME = re.compile(f"{EN_HOME}|{ZH_HOME}", _I)
_MOVED = re.compile(
    EN_MOVED.format(kin="|".join(EN_KIN))
    + "|"
    + ZH_MOVED.format(kin="|".join(sorted(ZH_KIN, key=len, reverse=True))),
    _I,
)
_WORK = re.compile(f"{EN_WORK}|{ZH_WORK}", _I)
# A time, a date, an amount or a measure: a value wherever it stands ("the 7:45 train").
_MEASURE = re.compile(
    r"\d{1,2}[:.]\d{2}(?!\d)|[$€£¥]\s*\d[\d,.]*"
    r"|\d+(?:[.,]\d+)?\s*(?:am|pm|a\.m\.|p\.m\.|%|mg|kg|g|km|m|cm|mm|ml|l|lbs?|psi|degrees?"
    r"|cups?|hours?|h|min|minutes?|days?|weeks?|months?|years?|st|nd|rd|th)\b"
    r"|\d+(?:[.,]\d+)?\s*(?:元|块|毛|角|点(?:半|\d+分?)?|分|号|日|月|年|岁|楼|层|度|码|毫克|克|公斤|斤|米|公里|杯|天|周|小时|分钟|次)"
    r"|\d{4}-\d{1,2}-\d{1,2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?",
    re.IGNORECASE,
)
# Markers, strongest first; without any, a measure begins the value: one that ends the text
# ("楼上空调设定 | 26度" is about the upstairs air conditioner, as "the upstairs one is set to
# 26" would be), or one after an English word ("coffee now costs | $5 a cup": not what tea
# costs). A Chinese measure inside a text is left alone: "我每天吃5毫克的氨氯地平".
_MARKERS = (
    *(re.compile(f"{en}|{zh}", _I) for en, zh in zip(EN_MARKERS, ZH_MARKERS, strict=True)),
    re.compile(
        rf"(?=(?:每[天日周月年晚])?(?:{_MEASURE.pattern})[\s了啦吧呢.。!！]*$)"
        rf"|(?<=[a-z] )(?=(?:{_MEASURE.pattern}))",
        _I,
    ),
)
# A measure's kind, by its unit: two amounts of one kind can be two values of one thing.
_KINDS = (
    ("time", re.compile(r"[:.]|am|pm|a\.m\.|p\.m\.|点|时|分", re.IGNORECASE)),
    ("money", re.compile(r"[$€£¥元块毛角]")),
    ("order", re.compile(r"st|nd|rd|th|楼|层|号", re.IGNORECASE)),
)
_PATH = re.compile(r"[\\/@]|\b[a-z]:", re.IGNORECASE)  # a path, an address: data too
_CONTRACTION = re.compile(r"\b(it|that|he|she|there|what|we|they|you|i)['’](s|re|m)\b")
_PLACE_VALUE = re.compile(
    r"\s*(?:(?:in|at|on|under|inside|behind|near|by|to|into)\b|放在|放到|搬到|搬去|挪到|在|到)", _I
)


# -- reading ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reading:
    """A text as ``judge`` compares it (see the module docstring)."""

    subject: frozenset[str]  # what the fact is about (empty: the text has no subject of its own)
    values: frozenset[str]  # the value part's terms, and every term with a digit
    owners: frozenset[str]  # whose: possessors, kin, nicknames, or SELF
    cue: bool  # says it changed
    ended: bool  # says the old no longer holds
    kind: str  # of the value: "data", "place" or "word"
    bare: frozenset[str] = frozenset()  # numbers of a text without subject or cue ("item 01")
    generic: frozenset[str] = frozenset()  # generic attribute words of the subject ("number")
    path: bool = False  # the value is a path or an address ("D:\\projects", "a@b.c")

    @property
    def terms(self) -> frozenset[str]:
        """Every term of the text."""
        return self.subject | self.values


def _terms(text: str) -> list[str]:
    """The terms of a (folded) part of a text: English search terms, Chinese characters,
    without cue words, generic words and function characters."""
    text = _ZH_CUE.sub(" ", _EN_CUE.sub(" ", text))
    found: list[str] = []
    for token in _TOKEN.findall(text):
        if IS_CJK.match(token):
            if token not in ZH_FUNCTION and token not in ZH_LIGHT:
                found.append(token)
            continue
        term = word_term(token)
        if term is not None and term not in EN_LIGHT:
            found.append(term)
    return found


def owners_of(text: str, subject: str) -> frozenset[str]:
    """Whose the fact is (module docstring); ``text`` and its ``subject`` part folded."""
    found: set[str] = set()
    where = subject or text  # "at Anna's place" is where, not whose
    for match in _EN_POSSESSIVE.finditer(where):
        word = match[1] or match[2]
        if word not in _NOT_POSSESSIVE:
            found.add(word_term(word) or word)
    found.update(word_term(m[0].lower()) or m[0] for m in _EN_KIN.finditer(where))
    found.update(m[0] for m in _ZH_KIN.finditer(where))
    found.update(m[1] for m in _ZH_NAME.finditer(where))
    if not found and (_EN_SELF.search(where) or _ZH_SELF.search(where)):
        found.add(SELF)
    return frozenset(found)


def names_of(text: str) -> frozenset[str]:
    """The people (pets, shops) ``text`` names as owners: capitalised possessives ("Mia's")
    and Chinese nicknames ("老王的"), folded. Kin and the speaker are owners, not names: "Mom's"
    and "我妈的" say who as well as "my mother's" does, in other words."""
    found = {m[1].lower() for m in _EN_NAMED.finditer(text) if m[1].lower() not in _NOT_NAMES}
    found.difference_update(EN_KIN)
    found.update(m[1] for m in _ZH_NAME.finditer(fold(text)))
    return frozenset(found)


def _frame(text: str, head: str, terms: list[str], owners: frozenset[str]) -> list[str]:
    """The subject's ``terms`` with a frame (home, work) in place of the verb that names it:
    the home from the subject and its marker (``head``: "I live at", "我住在", "we moved to"),
    the job from anywhere in ``text`` ("我在腾讯上班")."""
    frames = []
    kin = {term for owner in owners for term in _terms(owner)}
    if _HOME.search(head) or (_MOVED.search(head) and not set(terms) - kin):  # "we moved to"
        frames.append(HOME)
    if _WORK.search(text):
        frames.append(WORK)
    if not frames:
        return terms
    return [*frames, *(t for t in terms if t not in _frame_words(text))]


def _frame_words(text: str) -> frozenset[str]:
    """The terms of the words that name a frame in ``text`` (left out of both parts)."""
    found = [m[0] for pattern in (_HOME, _WORK) for m in pattern.finditer(text)]
    return frozenset(_terms(" ".join(found)))


def _expand(match: re.Match[str]) -> str:
    """``it's`` -> ``it is``, ``we're`` -> ``we are``: the copula is then found as a word."""
    return f"{match[1]} {dict(s='is', re='are', m='am')[match[2]]}"


@lru_cache(maxsize=4096)
def read(text: str) -> Reading:
    """How ``judge`` reads ``text`` (module docstring)."""
    folded = _CONTRACTION.sub(_expand, fold(text))
    cue = bool(_EN_CUE.search(folded) or _ZH_CUE.search(folded))
    ended = bool(_EN_ENDED.search(folded) or _ZH_ENDED.search(folded))
    subject_text, head, marked, value_text = "", "", "", folded
    for marker in _MARKERS:
        match = marker.search(folded)
        if match is not None and match.start() > 0:
            subject_text, value_text = folded[: match.start()], folded[match.end() :]
            head, marked = folded[: match.end()], " " + match[0]
            break
    owners = owners_of(folded, subject_text)
    measures = " ".join(m[0] for m in _MEASURE.finditer(subject_text))  # values wherever
    subject_terms = _frame(folded, head, _terms(_MEASURE.sub(" ", subject_text)), owners)
    if not subject_terms:  # "I switched to locker 23": no subject of its own
        subject_text, value_text, measures = "", folded, ""
    framed = _frame_words(folded) if HOME in subject_terms or WORK in subject_terms else ()
    subject = {t for t in subject_terms if t not in framed or t in (HOME, WORK)}
    values = {t for t in _terms(value_text) if t not in framed} | set(_terms(measures))
    if cue:  # a number said to be new is a value ("I switched to locker 23")
        numbers = {t for t in subject if DIGIT.search(t)}
        subject, values = subject - numbers, values | numbers
    bare: frozenset[str] = frozenset()
    if not subject_text and not cue:  # no subject: a bare number may name the thing
        bare = frozenset(t for t in _terms(_MEASURE.sub(" ", value_text)) if DIGIT.search(t))
    bare_value = _ZH_CUE.sub(" ", _EN_CUE.sub(" ", value_text))
    if subject_text and (_PLACE_VALUE.match(bare_value) or _PLACE_VALUE.fullmatch(marked)):
        kind = "place"  # "is in the shed", "moved to Hamburg", "住在北京"
    elif any(DIGIT.search(t) for t in values):
        kind = "data"
    else:
        kind = "word"
    generic = frozenset(
        word_term(t) or t if not IS_CJK.match(t) else t
        for t in _TOKEN.findall(subject_text)
        if (t if IS_CJK.match(t) else word_term(t) or t) in GENERIC
    )
    path = bool(subject_text and _PATH.search(value_text))
    return Reading(
        frozenset(subject), frozenset(values), owners, cue, ended, kind, bare, generic, path
    )


def measures(text: str) -> frozenset[tuple[str, str]]:
    """The measures ``text`` names, each as (its kind, its amount): "$15 an hour" gives
    ("money", "$15"), "the 3rd floor" ("order", "3rd"), "8点半" ("time", "8点半"); a unit
    of no kind above is its own kind ("10 mg": "mg")."""
    found = set()
    for match in _MEASURE.finditer(fold(text)):
        amount = re.sub(r"\s+", "", match[0])
        unit = DIGIT.sub("", amount).strip(".,")
        kind = next((name for name, pattern in _KINDS if pattern.search(unit)), unit)
        found.add((kind, amount))
    return frozenset(found)


def lead(text: str, other: frozenset[str]) -> frozenset[str]:
    """The terms ``text`` begins with before its first term in ``other`` (numbers aside): in a
    text read without a subject, what it names before what the two share ("the cat | eats
    twice a day")."""
    found: set[str] = set()
    for term in _terms(fold(text)):
        if term in other:
            break
        if not DIGIT.search(term):
            found.add(term)
    return frozenset(found)
