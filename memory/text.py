"""Turning text into words for search: normalization, segmentation, stemming, dates.

Two consumers, two needs:

- ``query_words`` is what the seed-compatible scorer (``memory.ranking.SeedRanker``) scores one
  word at a time, as substrings of the lower-cased content: runs of CJK characters are cut by
  jieba, other runs are lower-cased word tokens (the article's walkthrough needs ``代码项目`` ->
  ``代码 | 项目``). It stays close to the article and does no other folding.
- ``terms`` and ``date_terms`` are what the default ranker (``memory.bm25``) indexes and
  queries: bags of terms in which things people would call "the same" collide.

How ``terms`` reads a text, and why (figures: rec@5 in ``python -m bench.retrieval``):

1. ``fold``: Unicode NFKC (full-width ``ＡＢＣ１２３`` -> ``ABC123``, ligatures), invisible
   characters removed (zero-width spaces and joiners, soft hyphens, emoji variation selectors
   and skin tones: pasted text carries them inside words), case folding
   (``Straße`` -> ``strasse``), then the accents of Latin, Greek and Cyrillic letters are dropped
   (``café`` -> ``cafe``): people type without them on phones. Only the combining diacritics
   block (U+0300..U+036F) is stripped, so Japanese voicing marks (``が`` is not ``か``) survive.
2. A run of CJK ideographs becomes its overlapping character bigrams and its single characters.
   Bigrams match whatever two characters a question and a memory share however a segmenter
   would cut them (``去过`` in a question, ``去`` ``过`` in a statement) and need no dictionary
   for names; single characters catch the rest of the overlap (``猫`` in ``小猫`` and ``猫咪``).
   Measured (rec@5 MADial / MemoryBank Chinese, plain BM25): jieba words 0.454 / 0.783, bigrams
   0.520 / 0.830, bigrams and characters 0.545 / 0.872; adding jieba's words on top lowered
   both (0.504 / 0.854; 0.499 / 0.905 with the full ranking), as it counts the same evidence
   twice, and segmenting costs more than the rest of the analysis. So no jieba here.
3. Other runs are split into words on anything that is not a letter or digit (``D:\\projects``
   -> ``d``, ``projects``). A possessive or contraction tail goes (``caroline's`` -> ``caroline``;
   ``don't`` is a stop word). English stop words are dropped: a question's ``what did you`` says
   nothing about which memory answers it. Common irregular forms map to their base
   (``went`` -> ``go``): questions ask "did she go", memories say "she went". Then the Snowball
   English stemmer (``painted``, ``painting`` -> ``paint``), cached because the pure-Python
   stemmer costs tens of microseconds a word. Other Latin-script languages pass through the
   English stemmer too; it only strips English suffixes, the same way on both sides. Measured
   with the full ranking (LoCoMo turns / observations / MADial English / MemoryBank English,
   0.629 / 0.707 / 0.509 / 0.927 with all three): without stemming 0.590 / 0.651 / 0.449 /
   0.903; without stop words 0.578 / 0.692 / 0.423 / 0.900; without the irregular forms
   0.617 / 0.700 / 0.512 / 0.945 (kept: the two large sets gain, the 55 questions lose one).
4. Each emoji is a term of its own (``🍕``): people tag and search with them.

``content_key`` is what "the same content" means for the store's duplicate check: the folded
words (letters, digits, emoji) joined by single spaces, so case, width, spacing and punctuation
make no difference (``Buy milk!`` and ``buy  milk`` are one memory).

Dates: ``created_terms`` turns a memory's ``createdAt`` into a day (``@05-04``) and a month
(``@2023-05``, ``@m05``) term, and ``date_terms`` finds the dates a question names ("on May 4th",
"October 13, 2023", "in June", "5月4日", "2023-05-04") as the same terms, so "what did I tell you
on May 4th?" finds what was said that day. Days are UTC days, as ``createdAt`` is stored; dates
without digits ("五月四日") and relative ones ("yesterday") are not recognized.
"""

from __future__ import annotations

import functools
import re
import unicodedata
import warnings
from functools import lru_cache
from typing import Any

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A word is letters and digits of any script but the CJK ideographs, which form runs of their own
# (so ``Bart在圣诞节`` is ``bart`` then ``在圣诞节``).
_WORD = rf"[^\W_{_CJK}]+"
# Emoji: pictographs, symbols and dingbats, enclosed letters and regional indicators.
_EMOJI = "\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\u2300-\u23ff"
_RUN = re.compile(rf"[{_CJK}]+|{_WORD}(?:[.'’:\\/-]{_WORD})*|[{_EMOJI}]")
_IS_CJK = re.compile(rf"[{_CJK}]")
_TERM_RUN = re.compile(rf"[{_CJK}]+|{_WORD}(?:['’]{_WORD})?|[{_EMOJI}]")
_IS_EMOJI = re.compile(rf"[{_EMOJI}]")
_KEY_WORD = re.compile(rf"[^\W_]+|[{_EMOJI}]")
_ACCENTS = re.compile("[\u0300-\u036f]")
# Characters that change nothing a reader sees: zero-width space, non-joiner and joiner, word
# joiner, BOM, soft hyphen, variation selectors, emoji skin tones.
_INVISIBLE = dict.fromkeys(
    [*map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad\ufe0e\ufe0f"), *range(0x1F3FB, 0x1F400)]
)

# A standard English stop list (the function words of the usual IR lists) and contractions.
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not of off on once only or other ought our ours ourselves
    cannot
    out over own same she should so some such than that the their theirs them themselves then
    there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves
    aren't can't couldn't didn't doesn't don't hadn't hasn't haven't isn't mustn't shan't
    shouldn't wasn't weren't won't wouldn't i'm i've i'd i'll you're you've you'd you'll he's
    he'd he'll she's she'd she'll it's it'd it'll we're we've we'd we'll they're they've they'd
    they'll that's there's here's what's who's let's
    """.split()
)
_CONTRACTION_TAILS = frozenset({"s", "t", "d", "ll", "m", "re", "ve"})

# Irregular English forms -> base form (stemmers only strip regular suffixes). Each group is
# "base form1 form2 ..."; ambiguous forms that are common words themselves (``left``, ``lay``,
# ``saw``-the-tool aside) are kept only where the verb reading dominates in conversation.
_IRREGULAR_GROUPS = """
go went gone|see saw seen|take took taken|make made|get got gotten|give gave given|come came|
know knew known|think thought|tell told|find found|feel felt|keep kept|begin began begun|
bring brought|buy bought|build built|catch caught|choose chose chosen|draw drew drawn|
drink drank drunk|drive drove driven|eat ate eaten|fall fell fallen|fight fought|fly flew flown|
forget forgot forgotten|grow grew grown|hear heard|hide hid hidden|hold held|lead led|lose lost|
meet met|pay paid|ride rode ridden|ring rang rung|rise rose risen|run ran|say said|sell sold|
send sent|shake shook shaken|shoot shot|show shown|sing sang sung|sit sat|sleep slept|
speak spoke spoken|spend spent|stand stood|steal stole stolen|swim swam swum|teach taught|
tear tore torn|throw threw thrown|understand understood|wake woke woken|wear wore worn|win won|
write wrote written|break broke broken|blow blew blown|freeze froze frozen|hang hung|lend lent|
mean meant|sink sank sunk|slide slid|spin spun|stick stuck|strike struck|swear swore sworn|
sweep swept|swing swung|bend bent|dig dug|feed fed|forgive forgave forgiven|seek sought|
shine shone|weep wept|become became|arise arose arisen|awake awoke awoken|bite bit bitten|
child children|man men|woman women|foot feet|tooth teeth|mouse mice
"""
IRREGULAR = {
    form: group.split()[0]
    for group in _IRREGULAR_GROUPS.replace("\n", "").split("|")
    for form in group.split()[1:]
}

_MONTHS = (
    "january february march april may june july august september october november december"
).split()
_MONTH_NUMBER = {name: number for number, name in enumerate(_MONTHS, start=1)}
_MONTH_NUMBER.update({name[:3]: n for name, n in list(_MONTH_NUMBER.items()) if name != "may"})
_MONTH_NUMBER["sept"] = 9
_MONTH = "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))
_ORDINAL = r"(?:st|nd|rd|th)?"
_MONTH_DAY = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}}){_ORDINAL}\b(?:,?\s+(\d{{4}})\b)?", re.I)
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?({_MONTH})\b\.?(?:,?\s+(\d{{4}})\b)?", re.I
)
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(\d{{4}})\b", re.I)
# A month named alone counts only capitalized and spelled out: "may" is mostly a verb.
_MONTH_ALONE = re.compile(r"\b(" + "|".join(m.title() for m in _MONTHS if m != "may") + r")\b")
_ISO_DATE = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
_ZH_DATE = re.compile(r"(?:(\d{4})\s*年\s*)?(\d{1,2})\s*月\s*(\d{1,2})\s*[日号號]")
_ZH_MONTH = re.compile(r"(\d{4})\s*年\s*(\d{1,2})\s*月")
_ZH_MONTH_ALONE = re.compile(r"(?<![\d年])(\d{1,2})\s*月份?(?!\s*\d)")
_DIGIT = re.compile(r"\d")  # every pattern above but ``_MONTH_ALONE`` needs one


@lru_cache(maxsize=1)
def _jieba() -> Any:
    # Imported on first use: loading its dictionary takes about a second. jieba imports the
    # deprecated pkg_resources, whose warnings are not ours to act on.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import jieba

    jieba.setLogLevel(60)
    return jieba


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import snowballstemmer  # type: ignore[import-untyped]

    return snowballstemmer.stemmer("english")


def segment_cjk(run: str) -> list[str]:
    """Words of a run of CJK characters, as jieba cuts them (precise mode)."""
    return [w for w in _jieba().lcut(run) if w.strip()]


def query_words(query: str) -> list[str]:
    """The distinct words of a query, lower-cased, in order of first appearance."""
    words: dict[str, None] = {}
    for run in _RUN.findall(query.lower().translate(_INVISIBLE)):
        if _IS_CJK.match(run):
            for word in segment_cjk(run):
                words.setdefault(word, None)
        else:
            words.setdefault(run, None)
    return list(words)


def fold(text: str) -> str:
    """``text`` with width, case and accents folded: ``Ｃａｆé`` -> ``cafe``."""
    text = unicodedata.normalize("NFKC", text).translate(_INVISIBLE).casefold()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", _ACCENTS.sub("", decomposed))


@lru_cache(maxsize=65536)
def word_term(word: str) -> str | None:
    """The search term of one folded word, or None for a stop word (``went`` -> ``go``)."""
    word = word.replace("’", "'")
    if word in STOP_WORDS:
        return None
    head, _, tail = word.partition("'")
    if tail:
        if tail not in _CONTRACTION_TAILS:
            return word_term(head + tail)
        word = head
        if word in STOP_WORDS:
            return None
    stemmed: str = _stemmer().stemWord(IRREGULAR.get(word, word))
    return stemmed


def terms(text: str, *, characters: bool = True) -> list[str]:
    """The search terms of ``text`` in order, repeats kept (they are term frequencies).

    Without ``characters``, a CJK run of two or more characters gives its bigrams only.
    """
    out: list[str] = []
    for run in _TERM_RUN.findall(fold(text)):
        plain = run.isascii()  # a word: CJK characters and emoji never are (no regex asked)
        if not plain and _IS_CJK.match(run):
            out.extend(run[i : i + 2] for i in range(len(run) - 1))
            if characters or len(run) == 1:
                out.extend(run)
        elif not plain and _IS_EMOJI.match(run):
            out.append(run)
        else:
            term = word_term(run)
            if term is not None:
                out.append(term)
    return out


# Words that frame a question about memory itself ("do you remember what I said about the
# wifi", "我记得你说过wifi密码") rather than say what it is about: they count for the ranking
# but not in how much of a question a memory covers (``memory.bm25.Bm25Ranker.coverage``).
FRAME_WORDS = (
    "remember remembered recall recalled said say saying told tell telling mention mentioned "
    "know knew think thought saved wrote asked "
    "记得 记住 记下 记过 说过 说的 告诉 提过 提到 问过 存过 保存"
)


@functools.cache
def frame_terms() -> frozenset[str]:
    """The search terms of ``FRAME_WORDS`` (the bigrams of the Chinese ones, not their
    characters)."""
    return frozenset(terms(FRAME_WORDS, characters=False))


def content_key(text: str) -> str:
    """What two contents must share to be the same memory: ``Buy milk!`` -> ``buy milk``."""
    return " ".join(_KEY_WORD.findall(fold(text)))


def _day_month(out: list[str], month: int, day: int, year: str | None) -> None:
    if 1 <= month <= 12 and 1 <= day <= 31:
        out.append(f"@{month:02d}-{day:02d}")
        if year:
            out.append(f"@{int(year):04d}-{month:02d}")


def date_terms(text: str) -> list[str]:
    """Terms for the calendar dates ``text`` names, matching ``created_terms``.

    A day ("May 4th", "4 May 2023", "2023-05-04", "5月4日") gives its day term (and its month
    term when the year is given); failing that, a month and year ("July 2023", "2023年7月") gives
    the month term; failing that, a month alone ("in June", "6月") the month-of-any-year term.
    """
    text = unicodedata.normalize("NFKC", text)
    if not _DIGIT.search(text):  # most questions: every form but a month named alone has one
        return [f"@m{_MONTH_NUMBER[m[1].lower()]:02d}" for m in _MONTH_ALONE.finditer(text)]
    out: list[str] = []
    for match in _MONTH_DAY.finditer(text):
        _day_month(out, _MONTH_NUMBER[match[1].lower()], int(match[2]), match[3])
    for match in _DAY_MONTH.finditer(text):
        _day_month(out, _MONTH_NUMBER[match[2].lower()], int(match[1]), match[3])
    for match in _ISO_DATE.finditer(text):
        _day_month(out, int(match[2]), int(match[3]), match[1])
    for match in _ZH_DATE.finditer(text):
        _day_month(out, int(match[2]), int(match[3]), match[1])
    if out:
        return out
    for match in _MONTH_YEAR.finditer(text):
        out.append(f"@{int(match[2]):04d}-{_MONTH_NUMBER[match[1].lower()]:02d}")
    for match in _ZH_MONTH.finditer(text):
        if 1 <= int(match[2]) <= 12:
            out.append(f"@{int(match[1]):04d}-{int(match[2]):02d}")
    if out:
        return out
    months = [_MONTH_NUMBER[m[1].lower()] for m in _MONTH_ALONE.finditer(text)]
    months += [int(m[1]) for m in _ZH_MONTH_ALONE.finditer(text)]
    return [f"@m{month:02d}" for month in months if 1 <= month <= 12]


def created_terms(created_at: str) -> list[str]:
    """The day, month and month-of-year terms of an ISO time (``2023-05-04T...``)."""
    year, month, day = created_at[:4], created_at[5:7], created_at[8:10]
    if not (year.isdigit() and month.isdigit() and day.isdigit()):
        return []
    return [f"@{month}-{day}", f"@{year}-{month}", f"@m{month}"]
