"""``memory.relevance.decide`` on hits as a search returns them (their ``Evidence``)."""

from __future__ import annotations

from dataclasses import replace

from memory.model import Evidence, Hit, Memory
from memory.relevance import CALIBRATIONS, decide


def hit(memory_id: int, content: str, evidence: Evidence, score: float = 1.0) -> Hit:
    return Hit(Memory(memory_id, content), score, evidence)


def test_a_memory_not_embedded_yet_is_judged_by_its_keywords() -> None:
    """A note stored a moment ago has no vector while the others do: its cosine is unknown,
    not the namespace's typical one, so its keywords decide (before: "车停在哪了" right after
    "我的车停在B2层37号" found nothing)."""
    fresh = hit(1, "我的车停在B2层37号", Evidence(0.56, 0, None, 0.78, 0.82), 1.0)
    others = [
        hit(2, "小屋的WiFi密码是 pinecone42", Evidence(0.0, None, 0.80, 0.78, 0.82), 0.4),
        hit(3, "护照在书桌抽屉里", Evidence(0.0, None, 0.79, 0.78, 0.82), 0.3),
    ]
    assert [h.memory.id for h in decide("车停在哪了", [fresh, *others]).shown] == [1]


def test_hits_nothing_answers_are_all_weaker() -> None:
    weak = [
        hit(
            1, "the wifi password at the cabin is pinecone42", Evidence(0.0, None, 0.78, 0.77, 0.79)
        ),
        hit(2, "standup is at 10:00", Evidence(0.0, None, 0.77, 0.77, 0.79), 0.9),
    ]
    answer = decide("what is my blood type?", weak)
    assert answer.shown == () and [h.memory.id for h in answer.weaker] == [1, 2]


def searched(
    *rows: tuple[str, float, float, int | None], typical: float, best: float | None = None
) -> list[Hit]:
    """Hits as a search by meaning returns them, best first: (content, cosine, coverage,
    keyword rank) each, the namespace's typical and best cosine for the question."""
    best = max(cosine for _, cosine, _, _ in rows) if best is None else best
    return [
        hit(place + 1, content, Evidence(coverage, rank, cosine, typical, best), 1.0 - place / 10)
        for place, (content, cosine, coverage, rank) in enumerate(rows)
    ]


CLEAR_EN = searched(
    ("Emma's birthday is on the 14th of February", 0.879, 0.5, 0),
    ("The landlord's number is 555-0188", 0.756, 0.0, None),
    ("Dentist is Dr. Rivera, appointments on Tuesdays", 0.744, 0.0, None),
    typical=0.747,
)
CLEAR_ZH = searched(
    ("小屋的WiFi密码是 pinecone42", 0.933, 0.636, 0),
    ("护照在客厅柜子最上面的抽屉里", 0.851, 0.0, None),
    ("健身房工作日早上六点开门", 0.839, 0.0, None),
    typical=0.85,
)


def test_a_clear_match_is_shown_alone_in_both_languages() -> None:
    assert [h.memory.id for h in decide("when is Emma's birthday?", CLEAR_EN).shown] == [1]
    assert [h.memory.id for h in decide("小屋wifi密码多少", CLEAR_ZH).shown] == [1]


def test_two_equally_close_matches_are_shown_together() -> None:
    """The number shown follows the question: two notes about the passport, both as close."""
    hits = searched(
        ("My passport is in the top drawer of the hall cabinet", 0.85, 0.5, 0),
        ("My passport is in the blue folder", 0.851, 0.5, 1),
        ("I parked on level 4, spot 112 at the mall", 0.802, 0.0, None),
        typical=0.783,
    )
    assert [h.memory.id for h in decide("where did I put my passport?", hits).shown] == [1, 2]


def test_a_chinese_question_nothing_answers_gets_nothing() -> None:
    hits = searched(
        ("健身房工作日早上六点开门", 0.826, 0.0, None),
        ("妈妈的生日是2月14日", 0.82, 0.0, None),
        typical=0.834,
        best=0.84,
    )
    answer = decide("我的血型是什么", hits)
    assert answer.shown == () and [h.memory.id for h in answer.weaker] == [1]  # 2 shares 的 only


def test_a_margin_raises_the_bar_of_the_best_match() -> None:
    """A statement is searched with a margin (the bot's): only a clearer match than a
    question needs is shown, and a margin far above any evidence shows nothing."""
    assert decide("Emma's birthday is actually the 15th", CLEAR_EN, margin=3.0).shown
    assert decide("Emma's birthday is actually the 15th", CLEAR_EN, margin=50.0).shown == ()


def test_calibrations_can_be_given_in_place_of_the_fitted_ones() -> None:
    """What the benchmark's held-out measure does: the decision with other calibrations."""
    strict = {key: replace(value, threshold=99.0) for key, value in CALIBRATIONS.items()}
    assert decide("when is Emma's birthday?", CLEAR_EN).shown
    assert decide("when is Emma's birthday?", CLEAR_EN, calibrations=strict).shown == ()


def test_someone_elses_memory_is_never_the_answer() -> None:
    """A question about one person is not answered by the same fact about another, however
    close its meaning: the reply says it found nothing, the look-alike is among the weaker."""
    leo = searched(
        ("Mia's birthday is May 3", 0.93, 0.5, 0),
        ("The landlord's number is 555-0188", 0.75, 0.0, None),
        typical=0.747,
    )
    answer = decide("when is Leo's birthday?", leo)
    assert answer.shown == () and 1 in [h.memory.id for h in answer.weaker]
    assert [h.memory.id for h in decide("when is Mia's birthday?", leo).shown] == [1]
    li = searched(
        ("老王的电话是13812345678", 0.95, 0.5, 0),
        ("护照在客厅柜子最上面的抽屉里", 0.80, 0.0, None),
        typical=0.80,
    )
    assert decide("老李的电话", li).shown == ()
    assert [h.memory.id for h in decide("老王的电话是多少", li).shown] == [1]


def test_kin_and_names_the_question_mentions_are_not_someone_else() -> None:
    """ "Mom's" is kin, not a name; a hit that mentions the person asked about is theirs."""
    mom = searched(("Mom's birthday is March 8", 0.93, 0.5, 0), typical=0.747)
    assert [h.memory.id for h in decide("when is my mother's birthday?", mom).shown] == [1]
    both = searched(("Leo and Mia's party is at Anna's place", 0.93, 0.5, 0), typical=0.747)
    assert [h.memory.id for h in decide("where is Leo's party?", both).shown] == [1]
