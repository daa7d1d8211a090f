"""The automatic tags of /remember, judged against the tags a person would accept.

``python -m bench.tag_bench`` runs the notes of ``bench.tag_notes`` (English and Chinese, and
Chinese names, places and things, written with ``bot.core.chinese_words``, so not held out)
through two rules and prints, per language: precision (of the tags proposed, the fraction a
person would accept), how many notes got no tag at all, and the time per note:

- ``before``: the rule /remember used until issue 24, kept here as the baseline: the words of
  the content in order (jieba's words for Chinese), without the search's English stop words,
  a short Chinese stop list, single characters, numbers and pieces of paths, up to five;
- ``after``: ``bot.core.keywords.keywords``, the rule /remember uses now.

``--show`` prints every note with both rules' tags, the unacceptable ones marked.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Sequence

from bench.tag_notes import (
    CHINESE,
    ENGLISH,
    HELD_OUT_CHINESE,
    HELD_OUT_ENGLISH,
    NAMES_PLACES_THINGS,
    SPLIT_NAMES,
    Note,
)
from bot.core.keywords import keywords
from memory.model import MAX_TAG_CHARS
from memory.text import STOP_WORDS, query_words

_OLD_CHINESE_STOP_WORDS = frozenset(
    """
    我们 你们 他们 她们 它们 这个 那个 这些 那些 一个 一些 什么 怎么 怎样 为什么 哪里 哪儿
    可以 没有 因为 所以 但是 如果 还是 已经 就是 自己 记得 记住 一下 现在 时候 还有 或者
    http https www com
    """.split()
)
_OLD_NOT_A_TAG = re.compile(r"[:\\/'’]")


def before(text: str, limit: int = 5) -> list[str]:
    """The keywords rule of /remember before issue 24 (``bot.core.entry.keywords`` then)."""
    found: list[str] = []
    for word in query_words(text):
        if not 2 <= len(word) <= MAX_TAG_CHARS or word.isdigit() or _OLD_NOT_A_TAG.search(word):
            continue
        if word in STOP_WORDS or word in _OLD_CHINESE_STOP_WORDS:
            continue
        found.append(word)
        if len(found) == limit:
            break
    return found


def score(rule: Callable[[str], list[str]], notes: Sequence[Note]) -> tuple[int, int, int, float]:
    """(tags proposed, tags accepted, notes without a tag, milliseconds per note)."""
    proposed = accepted = untagged = 0
    started = time.perf_counter()
    results = [rule(n.text) for n in notes]
    elapsed = (time.perf_counter() - started) * 1000 / len(notes)
    for n, tags in zip(notes, results, strict=True):
        proposed += len(tags)
        accepted += sum(tag in n.accept for tag in tags)
        untagged += not tags
    return proposed, accepted, untagged, elapsed


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print every note's tags")
    args = parser.parse_args(argv)
    keywords("预热 warm up")  # jieba loads its dictionary once per process: not a note's cost
    before("预热 warm up")
    print("| set | notes | rule | tags | accepted | precision | untagged | ms / note |")
    print("|---|---|---|---|---|---|---|---|")
    sets = (
        ("English", ENGLISH),
        ("Chinese", CHINESE),
        ("English, held out", HELD_OUT_ENGLISH),
        ("Chinese, held out", HELD_OUT_CHINESE),
        ("Chinese, names and places", [*NAMES_PLACES_THINGS, *SPLIT_NAMES]),
    )
    for language, notes in sets:
        for name, rule in (("before", before), ("after", keywords)):
            proposed, accepted, untagged, ms = score(rule, notes)
            print(
                f"| {language} | {len(notes)} | {name} | {proposed} | {accepted} | "
                f"{accepted / max(proposed, 1):.1%} | {untagged} | {ms:.3f} |"
            )
    if args.show:
        for n in [note for _, notes in sets for note in notes]:
            marked = {
                name: " ".join(t if t in n.accept else f"✗{t}" for t in rule(n.text))
                for name, rule in (("before", before), ("after", keywords))
            }
            print(f"\n{n.text}\n  before: {marked['before']}\n  after:  {marked['after']}")


if __name__ == "__main__":
    main()
