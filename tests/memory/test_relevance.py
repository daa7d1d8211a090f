"""``memory.relevance.decide`` on hits as a search returns them (their ``Evidence``)."""

from __future__ import annotations

from memory.model import Evidence, Hit, Memory
from memory.relevance import decide


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
