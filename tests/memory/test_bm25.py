"""The default ranking (``Bm25Ranker``), driven as the store drives it: index, unindex, rank."""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import replace

import pytest

from memory import bm25, maxscore
from memory.bm25 import Bm25Ranker
from memory.model import Memory

DAY = "2024-01-15T10:30:00.000Z"


def memory(
    memory_id: int,
    content: str,
    tags: Iterable[str] = (),
    category: str = "general",
    created_at: str = DAY,
    access_count: int = 0,
) -> Memory:
    return Memory(
        memory_id,
        content,
        tuple(tags),
        category,
        created_at,
        created_at,
        access_count,
    )


def ranker_with(memories: Iterable[Memory]) -> tuple[Bm25Ranker, dict[int, Memory]]:
    ranker = Bm25Ranker()
    by_id = {}
    for m in memories:
        ranker.index(m)
        by_id[m.id] = m
    return ranker, by_id


def ids(ranked: list[tuple[int, float]]) -> list[int]:
    return [memory_id for memory_id, _ in ranked]


def test_article_walkthrough_ranks_memory_1_first_and_drops_memory_2() -> None:
    ranker, memories = ranker_with(
        [
            memory(1, "代码在 D:\\projects", ["代码", "路径", "项目"]),
            memory(2, "今天天气很好", ["天气"]),
            memory(3, "周五下午三点开会", ["项目", "会议"]),
        ]
    )
    ranked = ranker.rank("代码项目", memories, 10)
    assert ids(ranked) == [1, 3]
    assert ranked[0][1] > ranked[1][1] > 0


def test_a_question_finds_the_statement_in_other_word_forms() -> None:
    ranker, memories = ranker_with(
        [
            memory(1, "Caroline: I went to a LGBTQ support group yesterday, it was powerful."),
            memory(2, "Melanie: I painted a lake sunrise last year."),
            memory(3, "Caroline: my group of friends has been great."),
            memory(4, "Melanie: we go camping every summer."),
        ]
    )
    assert ids(ranker.rank("When did Caroline go to the support group?", memories, 2))[0] == 1
    assert ids(ranker.rank("What did Melanie paint?", memories, 1)) == [2]


def test_chinese_question_finds_memory_without_shared_segmentation() -> None:
    ranker, memories = ranker_with(
        [
            memory(1, "我在图书馆读了《百年孤独》"),
            memory(2, "今天跑步跑了五公里"),
            memory(3, "周末和朋友去公园看樱花"),
        ]
    )
    assert ids(ranker.rank("我在图书馆看过哪本小说？", memories, 1)) == [1]
    assert ids(ranker.rank("公园里看到了什么花", memories, 1)) == [3]


def test_case_width_and_accents_do_not_matter() -> None:
    ranker, memories = ranker_with([memory(1, "Meeting at the Café ＡＢＣ"), memory(2, "lunch")])
    assert ids(ranker.rank("cafe abc", memories, 10)) == [1]
    assert ids(ranker.rank("CAFÉ", memories, 10)) == [1]


def test_tags_and_category_are_searched_and_tags_weigh_more() -> None:
    ranker, memories = ranker_with(
        [
            memory(1, "standup at ten", tags=["work"]),
            memory(2, "buy milk", category="work"),
            memory(3, "the work on the kitchen is done, also milk and eggs and bread"),
        ]
    )
    found = ids(ranker.rank("work", memories, 10))
    assert found[0] == 1
    assert set(found) == {1, 2, 3}


def test_a_named_day_prefers_that_days_memories() -> None:
    ranker, memories = ranker_with(
        [
            memory(1, "I recommended a film to you", created_at="2023-05-03T12:00:00.000Z"),
            memory(2, "I recommended a film to you", created_at="2023-05-04T12:00:00.000Z"),
            memory(3, "I recommended a film to you", created_at="2023-05-05T12:00:00.000Z"),
        ]
    )
    assert ids(ranker.rank("Which film did I recommend on May 4th?", memories, 1)) == [2]
    assert ids(ranker.rank("我5月4日推荐了哪部film", memories, 1)) == [2]


def test_ties_go_to_the_more_used_then_the_newer_memory_read_at_search_time() -> None:
    older = memory(1, "dentist on friday", created_at="2024-01-01T00:00:00.000Z")
    newer = memory(2, "dentist on friday", created_at="2024-02-01T00:00:00.000Z")
    ranker, memories = ranker_with([older, newer])
    assert ids(ranker.rank("dentist", memories, 10)) == [2, 1]
    # accessCount comes from the mapping given to rank; no re-indexing needed.
    memories[1] = replace(older, access_count=3)
    assert ids(ranker.rank("dentist", memories, 10)) == [1, 2]


def test_scores_are_positive_best_first_and_limited() -> None:
    ranker, memories = ranker_with(
        memory(i, f"note {i} about apples " * (i % 3 + 1)) for i in range(1, 30)
    )
    ranked = ranker.rank("apples", memories, 5)
    assert len(ranked) == 5
    scores = [score for _, score in ranked]
    assert all(score > 0 for score in scores)
    assert scores == sorted(scores, reverse=True)


def test_nothing_matches_gives_nothing() -> None:
    ranker, memories = ranker_with([memory(1, "apples and pears")])
    assert ranker.rank("bicycle", memories, 10) == []
    assert ranker.rank("what did you do?", memories, 10) == []  # stop words only
    assert Bm25Ranker().rank("apples", {}, 10) == []


def test_unindex_and_reindex_change_what_is_found() -> None:
    ranker, memories = ranker_with([memory(1, "keys are in the drawer"), memory(2, "car is blue")])
    assert ids(ranker.rank("keys", memories, 10)) == [1]
    updated = replace(memories[1], content="keys are on the hook")
    ranker.index(updated)
    memories[1] = updated
    assert ids(ranker.rank("drawer", memories, 10)) == []
    assert ids(ranker.rank("hook", memories, 10)) == [1]
    ranker.unindex(1)
    del memories[1]
    assert ids(ranker.rank("keys", memories, 10)) == []
    ranker.unindex(99)  # not indexed: no error
    assert ids(ranker.rank("car", memories, 10)) == [2]


def test_only_memories_in_the_given_mapping_are_returned() -> None:
    ranker, memories = ranker_with([memory(1, "green tea"), memory(2, "green tea with milk")])
    del memories[1]
    assert ids(ranker.rank("green tea", memories, 10)) == [2]


def test_a_whole_dialogue_as_the_query_still_finds_the_rare_word() -> None:
    chatter = "User: that is really nice, I am so happy today, thanks a lot!\n" * 200
    ranker, memories = ranker_with(
        [
            memory(1, "Bart won a kite contest"),
            *(memory(i, f"Bart was happy {i}") for i in range(2, 50)),
        ]
    )
    assert ids(ranker.rank(chatter + "Bart: remember my kite?", memories, 1)) == [1]


def zipf_corpus(rng: random.Random, count: int) -> tuple[Bm25Ranker, dict[int, Memory], list[str]]:
    """Memories of a Zipf-like vocabulary, where a few words are everywhere, as in real text."""
    vocabulary = [f"w{i}" for i in range(300)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    ranker, memories = ranker_with(
        memory(i, " ".join(rng.choices(vocabulary, weights, k=rng.randint(3, 25))))
        for i in range(1, count + 1)
    )
    queries = [" ".join(rng.choices(vocabulary, weights, k=rng.randint(1, 12))) for _ in range(40)]
    return ranker, memories, queries


def test_a_smaller_limit_gives_the_head_of_a_larger_one() -> None:
    ranker, memories, queries = zipf_corpus(random.Random(3), 1500)
    for query in queries:
        longest = ids(ranker.rank(query, memories, 50))
        for limit in (1, 3, 10):
            assert ids(ranker.rank(query, memories, limit)) == longest[:limit], query


def test_pruning_skips_nothing_that_would_rank(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first pass skips postings it can prove cannot reach the top ``limit``. With feedback
    # off (it reorders the first pass's best ``FEEDBACK_DEPTH``), the search with a small limit
    # must return exactly the head of the unpruned ranking.
    monkeypatch.setattr(bm25, "FEEDBACK_DOCS", 0)
    monkeypatch.setattr(bm25, "FEEDBACK_DEPTH", 0)
    ranker, memories, queries = zipf_corpus(random.Random(7), 1500)
    for query in queries:
        full = ranker.rank(query, memories, 1500)
        for limit in (1, 3, 10):
            assert ids(ranker.rank(query, memories, limit)) == ids(full)[:limit], query


def test_looking_memories_up_past_the_postings_budget_ranks_as_walking_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The terms left when the first pass stops are walked in full within the postings budget,
    # and past it only looked up for the memories that can still make the cut: both exact.
    # (Fewer memories than ``CANDIDATES_CAP``, which binds only past the budget.)
    monkeypatch.setattr(bm25, "FEEDBACK_DOCS", 0)
    ranker, memories, queries = zipf_corpus(random.Random(5), 900)
    walked = {query: ranker.rank(query, memories, 10) for query in queries}
    monkeypatch.setattr(maxscore, "POSTINGS_BUDGET", 300)
    for query in queries:
        assert ranker.rank(query, memories, 10) == walked[query], query


def test_a_ranking_with_coverage_is_the_ranking_and_the_coverage_of_its_hits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ``rank_with_coverage`` reads which query terms each hit holds from the feedback round's
    # look-up: it must say what ``coverage`` says of the same hits, with words that frame the
    # question, words no memory holds, and without a feedback round (nothing looked up).
    ranker, memories, queries = zipf_corpus(random.Random(11), 800)
    for i in range(5):
        said = memory(5000 + i, f"I remember what she said about w{i} and w{i + 7}")
        ranker.index(said)
        memories[said.id] = said
    asked = queries + [f"do you remember what I said about {q} and zzz" for q in queries[:10]]
    for feedback in (bm25.FEEDBACK_DOCS, 0):
        monkeypatch.setattr(bm25, "FEEDBACK_DOCS", feedback)
        for query in asked:
            for limit in (1, 3, 10):
                found, shares = ranker.rank_with_coverage(query, memories, limit)
                assert found == ranker.rank(query, memories, limit), query
                assert shares == ranker.coverage(query, ids(found)), query


def test_after_many_removals_the_index_scores_like_a_fresh_one() -> None:
    short = [memory(i, f"tea note {i}") for i in range(1, 21)]
    long = [memory(100 + i, f"tea and a long story number {i} " * 10) for i in range(1, 41)]
    ranker, memories = ranker_with(short + long)
    assert ranker.rank("tea story", memories, 5)
    for m in long:
        ranker.unindex(m.id)
        del memories[m.id]
    fresh, _ = ranker_with(short)
    found = ranker.rank("tea note 7", memories, 5)
    expected = fresh.rank("tea note 7", memories, 5)
    assert ids(found) == ids(expected)
    assert [score for _, score in found] == pytest.approx([score for _, score in expected])
