"""How search reads text: the seed scorer's words, and the default ranker's terms and dates."""

from __future__ import annotations

import pytest

from memory.text import created_terms, date_terms, fold, query_words, terms


def test_query_words_split_chinese_with_jieba_as_the_walkthrough_needs() -> None:
    assert query_words("代码项目") == ["代码", "项目"]


def test_query_words_lower_case_dedupe_and_separate_scripts() -> None:
    assert query_words("Bart在圣诞节 BART") == ["bart", "在", "圣诞节"]


@pytest.mark.parametrize(
    ("text", "folded"),
    [
        ("ＡＢＣ１２３", "abc123"),  # full width
        ("Café Crème", "cafe creme"),  # accents
        ("Straße", "strasse"),  # case folding, not just lower()
        ("がぎ", "がぎ"),  # Japanese voicing marks are not accents
    ],
)
def test_fold(text: str, folded: str) -> None:
    assert fold(text) == folded


def test_word_forms_meet_on_one_term() -> None:
    assert terms("painted") == terms("painting") == terms("paints")
    assert terms("went") == terms("go") == terms("gone")
    assert terms("Caroline's") == terms("caroline")
    assert terms("ＰＡＩＮＴＩＮＧ") == terms("painting")


def test_stop_words_and_contractions_carry_no_terms() -> None:
    assert terms("What did you do? I don't know, it's THE one.") == terms("know one")


def test_chinese_becomes_bigrams_and_characters() -> None:
    assert terms("代码项目") == ["代码", "码项", "项目", "代", "码", "项", "目"]


def test_mixed_text_keeps_both_scripts() -> None:
    found = terms("代码在 D:\\projects")
    assert {"代码", "码在", "代", "d", "project"} <= set(found)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What did I tell you on May 4th?", ["@05-04"]),
        ("On 1 February, 2023 I went", ["@02-01", "@2023-02"]),
        ("What happened on October 13, 2023?", ["@10-13", "@2023-10"]),
        ("the 4th of July party", ["@07-04"]),
        ("我在5月4日说了什么", ["@05-04"]),
        ("４月２７号", ["@04-27"]),  # full-width digits
        ("2023-05-04 的笔记", ["@05-04", "@2023-05"]),
        ("What did Maria do in December 2023?", ["@2023-12"]),
        ("2023年7月", ["@2023-07"]),
        ("When did Melanie go camping in June?", ["@m06"]),
        ("我6月份去了哪里", ["@m06"]),
        ("I may go tomorrow", []),
        ("nothing dated here", []),
    ],
)
def test_date_terms(question: str, expected: list[str]) -> None:
    assert date_terms(question) == expected


def test_a_named_day_meets_the_created_day() -> None:
    created = set(created_terms("2023-05-04T09:30:00.000Z"))
    assert created == {"@05-04", "@2023-05", "@m05"}
    assert set(date_terms("on May 4th")) <= created
    assert set(date_terms("in May 2023")) <= created
    assert not set(date_terms("on May 5th")) & created


def test_created_terms_of_an_unreadable_time_are_empty() -> None:
    assert created_terms("") == []
