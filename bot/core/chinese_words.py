"""The words of a Chinese run, for tags: jieba's dictionary words, and its guesses only when sure.

jieba (offline, its own dictionary of about 350,000 words) cuts a run of Chinese in two steps:
the words of its dictionary, then, for what the dictionary leaves in single characters, a
hidden Markov model that guesses new words. The guesses are what makes names work (小王, 普丽雅,
爱奇艺), and what makes tags that are no word at all: "公司年会定在1月18日晚上" is 公司 / 年 /
会定 / 在 to its part-of-speech tagger, whose guess 会定 straddles 年会 and 定在. So ``words``
trusts jieba as follows:

- **A dictionary word** is a word (``jieba.dt.FREQ``).
- **A guess** is a word only where jieba's two models agree: the part-of-speech tagger's
  (``jieba.posseg``, whose tags the keywords need) and the segmenter's (``jieba.cut``, the one
  search uses) both cut that very span (小王, 鞋码, 周会, 网课; for a person's name, both start
  it there: 朱莉 in 朱莉家, which the segmenter keeps whole), and no dictionary word runs
  across its edges (这周 across 周会 in 这周会下雨: "it will rain this week"). Otherwise (会定
  against 年会定, 买辅 against 辅食) the span is read as dictionary words alone, which for a
  guess are usually single characters: no tag, rather than a tag that is not a word.
- **Everyday words jieba's dictionary lacks** (``EVERYDAY``: 年会, 猫粮, 充电宝, 拿铁, ...; found by
  running a list of everyday nouns through it) are words where no dictionary word runs across
  their edges: 年会 in 公司年会定在, not in 今年会更好 (今年) nor in 明年会议 (明年, 会议).
- **A noun with a locative stuck to it** (车库里, 卡里, 书架上, 群里: jieba files some as rare
  words, 卡里 even as a name) is the noun and the locative, unless the whole is a common word
  of its own (心里, 手里, 公里, 路上: ``LOCATIVE_COMMON`` or more in jieba's counts).

Each word comes with jieba's part of speech (its dictionary's for a dictionary word, the
tagger's for an agreed guess, ``n`` for an everyday word); ``bot.core.keywords`` decides which
are tags. jieba's own state is never changed (search segments with it too).
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache
from typing import Any

# Everyday things people tag that jieba's dictionary does not have (each was checked against
# it); a word made of a noun and a suffix (快递柜, 燃气费, 礼品卡) is joined by the keywords
# already, and a secret (取件码) is never a tag.
EVERYDAY = frozenset(
    """
    年会 周会 早会 晨会 月会 组会 工牌 健康码 网课 网购 充电宝 充电线 报销单 疫苗本
    猫粮 狗粮 猫砂 辅食 年假 拼团 拿铁 生日宴 伴手礼 螺蛳粉 年卡 月卡 次卡
    """.split()
)
LOCATIVES = "里上"
NAME = "nr"  # jieba's part of speech of a person's name (nr, nrfg, nrt)
LOCATIVE_COMMON = 100  # jieba's count from which "<noun>里" is a word of its own (心里, 路上)
_EVERYDAY = re.compile("|".join(sorted(EVERYDAY, key=len, reverse=True)))


@lru_cache(maxsize=1)
def _jieba() -> tuple[Any, Any]:
    # jieba and its part-of-speech tagger, imported on first use, like memory.text's segmenter
    # (its dictionary is shared; the tagger's own tables add a second or so, once per process).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import jieba
        import jieba.posseg

    jieba.setLogLevel(60)
    jieba.dt.check_initialized()
    return jieba, jieba.posseg


def words(run: str) -> list[tuple[str, str]]:
    """The words of ``run`` (Chinese characters only) with their parts of speech, in order
    (module docstring)."""
    found: list[tuple[str, str]] = []
    start = 0
    for match in _everyday_in(run):
        found.extend(_checked(run[start : match.start()]))
        found.append((match.group(), "n"))
        start = match.end()
    found.extend(_checked(run[start:]))
    return found


def _everyday_in(run: str) -> list[re.Match[str]]:
    """The everyday words of ``run`` that no dictionary word crosses."""
    return [m for m in _EVERYDAY.finditer(run) if _uncrossed(run, m.start(), m.end())]


def _uncrossed(text: str, start: int, end: int) -> bool:
    """Whether no word of jieba's dictionary in ``text`` runs across the edges of
    ``text[start:end]`` (今年 across 年会 in 今年会更好, 这周 across 周会 in 这周会下雨)."""
    jieba, _ = _jieba()
    dag = jieba.dt.get_DAG(text)  # each position -> the last positions of its words
    return not any(
        first < edge <= last
        for first, lasts in dag.items()
        for last in lasts
        for edge in (start, end)
    )


def _checked(piece: str) -> list[tuple[str, str]]:
    """The words of ``piece``: jieba's tagger's, each guess checked (module docstring)."""
    if not piece:
        return []
    jieba, posseg = _jieba()
    agreed, starts, position = set(), set(), 0
    for word in jieba.cut(piece):
        agreed.add((position, position + len(word)))
        starts.add(position)
        position += len(word)
    out: list[tuple[str, str]] = []
    position = 0
    for word, flag in posseg.cut(piece):
        span = (position, position + len(word))
        position += len(word)
        guess = len(word) > 1 and not _known(word)
        # A name needs the models to agree where it starts only: 朱莉 / 家 against 朱莉家.
        same = span[0] in starts if flag.startswith(NAME) else span in agreed
        if guess and not (same and _uncrossed(piece, *span)):
            out.extend((w, f) for w, f in posseg.cut(word, HMM=False))
        else:
            out.extend(_without_locative(word, flag))
    return out


def _known(word: str) -> int:
    """How often jieba's dictionary counts ``word`` (0: not a word of it, a guess)."""
    jieba, _ = _jieba()
    return int(jieba.dt.FREQ.get(word) or 0)


def _without_locative(word: str, flag: str) -> list[tuple[str, str]]:
    """``word``, or its noun and its locative when that is what it is (车库里 -> 车库, 里)."""
    if len(word) < 2 or word[-1] not in LOCATIVES or _known(word) >= LOCATIVE_COMMON:
        return [(word, flag)]
    stem = word[:-1]
    _, posseg = _jieba()
    tag = posseg.dt.word_tag_tab.get(stem, "")
    if not _known(stem) or not tag.startswith("n"):
        return [(word, flag)]
    return [(stem, tag), (word[-1], "f")]
