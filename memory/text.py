"""Turning text into words for search.

Chinese has no spaces, so runs of CJK characters are segmented with jieba; other scripts are
split into lower-cased word tokens. ``query_words`` is what the seed-compatible scorer scores,
one word at a time (the article's walkthrough needs ``代码项目`` -> ``代码 | 项目``).
"""

from __future__ import annotations

import re
import warnings
from functools import lru_cache

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_RUN = re.compile(rf"[{_CJK}]+|[^\W_]+(?:[.'’:\\/-][^\W_]+)*", re.UNICODE)
_IS_CJK = re.compile(rf"[{_CJK}]")


@lru_cache(maxsize=1)
def _jieba() -> object:
    # Imported on first use: loading its dictionary takes about a second. jieba imports the
    # deprecated pkg_resources, whose warnings are not ours to act on.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import jieba

    jieba.setLogLevel(60)
    return jieba


def segment_cjk(run: str) -> list[str]:
    """Words of a run of CJK characters, as jieba cuts them (precise mode)."""
    jieba = _jieba()
    return [w for w in jieba.lcut(run) if w.strip()]  # type: ignore[attr-defined]


def query_words(query: str) -> list[str]:
    """The distinct words of a query, lower-cased, in order of first appearance."""
    words: dict[str, None] = {}
    for run in _RUN.findall(query.lower()):
        if _IS_CJK.match(run):
            for word in segment_cjk(run):
                words.setdefault(word, None)
        else:
            words.setdefault(run, None)
    return list(words)
