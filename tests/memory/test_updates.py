"""memory.updates: a new value for the same thing, told apart from look-alikes, both languages."""

from __future__ import annotations

import pytest

from memory.duplicates import near_duplicates
from memory.model import Memory
from memory.updates import ASK, SURE, judge, newest_first, restates, whose_first

# (old, new, verdict): phrases of people, not of the benchmark's data.
TABLE = [
    # A cue says it changed: replaced.
    (
        "The wifi password at the cabin is pinecone42",
        "the cabin wifi password is now pinecone43",
        SURE,
    ),
    ("My gym locker number is 117", "I switched to locker 23 at the gym", SURE),
    ("I live in Munich, Leopoldstrasse 12", "we moved to Hamburg last month", SURE),
    ("I work at Initech as a tester", "I no longer work at Initech, I joined Hooli", SURE),
    ("Choir practice is on Mondays at 7pm", "Choir practice moved to Wednesday", SURE),
    ("The garden hose is in the shed", "I moved the garden hose to the garage", SURE),
    ("my code is in D:\\projects", "my code is now in E:\\work", SURE),
    ("我住在北京朝阳区", "我已经搬到上海浦东了", SURE),
    ("门禁密码是4821", "门禁密码现在是9034", SURE),
    ("会议室在三楼", "会议室搬到五楼了", SURE),
    ("我在腾讯上班", "我不在腾讯了，现在在阿里巴巴工作", SURE),
    ("小王的生日是5月3日", "小王的生日改成5月4日了", SURE),
    # The same thing, another value, no cue (or not quite the same words): asked.
    ("The wifi password is hunter2", "the wifi password is correcthorse", ASK),
    ("my code is in D:\\projects", "my code is in E:\\work", ASK),
    ("My gym membership costs $40 a month", "My gym membership costs $45 a month", ASK),
    ("小王的生日是5月3日", "小王的生日是6月1日", ASK),
    ("孩子的钢琴课在周二下午五点", "钢琴课换到周四了", ASK),
    ("The car is a red Kia", "The car is now in the garage", ASK),
    # Look-alikes: another person, place or thing; or two facts about one.
    ("Mia's birthday is May 3", "Leo's birthday is June 9", None),
    ("The office wifi password is abc123", "The guest wifi password is now xyz789", None),
    ("My shoe size is 42", "Leo's shoe size is 31", None),
    ("Dad's car is a silver Toyota", "My car is now a red Kia", None),
    ("Mia's school is Oakwood", "Leo's new school is Pine Hill", None),
    ("Leo is allergic to peanuts", "Leo's new school is Pine Hill", None),
    ("Tom is my brother", "Tom is a doctor", None),
    ("I like tea", "I like coffee", None),
    ("我爸的手机号是13800001111", "我妈的手机号是13900002222", None),
    ("我的车牌号是京A12345", "老婆的车牌号现在是京B67890", None),
    ("公司WiFi密码是abc12345", "家里WiFi密码改成home8888了", None),
    ("妈妈喜欢百合花", "奶奶喜欢菊花", None),
    ("去超市买牛奶", "去超市买面包", None),
    # A measure that ends a text is its value: what comes before it names the thing.
    ("前院喷头设定20分钟", "后院喷头设定30分钟", None),
    ("左边鱼缸设定25度", "右边鱼缸设定27度", None),
    ("Tea costs $3 a cup", "Coffee now costs $5 a cup", None),
    ("The hamster eats twice a day", "The rabbit now eats once a day", None),
    ("Grandpa lives in Dundee", "Grandpa moved to Perth", SURE),
    ("外公住在苏州", "外公搬到无锡了", SURE),
    ("外公住在苏州", "舅舅搬到无锡了", None),
    ("大女儿在实验中学上学", "大女儿转学到育英中学了", SURE),
    ("I take 10 mg of vitamin D", "I now take 20 mg of vitamin D", SURE),
    ("房租每月3200元", "房租涨到3400元了", SURE),
    ("item 1000-0 belongs to user 1000", "item 1000-1 belongs to user 1000", None),
    ("item 01", "item 02", None),
    # Nothing new.
    ("Standup is at 10:00 in room 4B", "Standup is at 10:00", None),
]


@pytest.mark.parametrize(("old", "new", "verdict"), TABLE)
def test_judge(old: str, new: str, verdict: str | None) -> None:
    assert judge(new, old) == verdict


def _memory(memory_id: int, content: str, at: str) -> Memory:
    return Memory(memory_id, content, created_at=at, accessed_at=at)


def test_a_sure_update_is_a_sure_near_duplicate_and_a_look_alike_is_none() -> None:
    old = _memory(1, "The wifi password at the cabin is pinecone42", "2026-11-01T09:00:00.000Z")
    office = _memory(2, "The office wifi password is Tr0ub4dor", "2026-11-02T09:00:00.000Z")
    [near] = near_duplicates("the cabin wifi password is now pinecone43", [old, office])
    assert (near.memory.id, near.reason, near.sure) == (1, "update", True)
    [asked] = near_duplicates("The cabin wifi password is pinecone43", [old, office])
    assert (asked.memory.id, asked.reason, asked.sure) == (1, "update", False)


def test_newest_first_puts_the_newer_value_first_and_marks_the_older() -> None:
    old = _memory(1, "健身卡每月40元", "2026-11-01T09:00:00.000Z")
    new = _memory(2, "健身卡每月45元", "2026-11-05T09:00:00.000Z")
    other = _memory(3, "健身房储物柜是117号", "2026-11-06T09:00:00.000Z")
    shown, rest, older = newest_first([old, other], [new])
    assert [m.id for m in shown] == [2, 1, 3] and rest == [] and older == {1}
    # Already in order, nothing to pull: the older is still marked.
    shown, _, older = newest_first([new, old])
    assert [m.id for m in shown] == [2, 1] and older == {1}
    # An edit makes a memory newer: its updatedAt counts.
    edited = Memory(
        1, "健身卡每月40元", created_at=old.created_at, updated_at="2026-11-09T00:00:00.000Z"
    )
    shown, _, older = newest_first([new, edited])
    assert [m.id for m in shown] == [1, 2] and older == {2}


def test_whose_first_answers_about_whom_the_question_asks() -> None:
    mom = _memory(1, "我妈的手机号是13900002222", "2026-11-01T09:00:00.000Z")
    dad = _memory(2, "我爸换手机号了，新号码是13700003333", "2026-11-02T09:00:00.000Z")
    assert [m.id for m in whose_first("我爸的手机号是多少", [mom, dad])] == [2, 1]
    leo = _memory(3, "Leo's shoe size is 31", "2026-11-01T09:00:00.000Z")
    mine = _memory(4, "My shoe size is 42", "2026-11-01T09:00:00.000Z")
    assert [m.id for m in whose_first("what's my shoe size?", [leo, mine])] == [4, 3]
    assert [m.id for m in whose_first("shoe sizes", [leo, mine])] == [3, 4]  # nobody asked


# (old, new, restated): an amount said to have changed, of what the rules cannot read alike.
RESTATED = [
    ("Our cleaner is Marta, she comes for 3 hours", "Marta cut her visit, it's 2 hours now", True),
    ("Dr. Osei's practice is on the 2nd floor", "Dr. Osei moved to the 4th floor", True),
    ("女儿晚上9点洗澡", "开学了，女儿改成8点半洗澡", True),
    # Nothing says it changed, someone else's, another qualifier, no shared subject, no amount.
    ("Our cleaner is Marta, she comes for 3 hours", "Marta comes on Fridays for 2 hours", False),
    ("Mum's train arrives at 6:40pm", "Dad's train now arrives at 9:15pm", False),
    ("The upstairs heater is set to 20 degrees", "The downstairs one is now 22 degrees", False),
    ("Our cleaner is Marta, she charges $20 an hour", "The gardener raised his rate to $30", False),
    ("我的鞋码是42码", "儿子的鞋码现在是31码", False),
    ("Our cleaner is Marta, she comes on Fridays", "Marta moved to Thursdays now", False),
]


@pytest.mark.parametrize(("old", "new", "restated"), RESTATED)
def test_restates(old: str, new: str, restated: bool) -> None:
    assert restates(new, old) is restated


def test_newest_first_shows_a_restated_amount_first() -> None:
    old = _memory(1, "Our cleaner is Marta, she comes for 3 hours", "2026-11-01T09:00:00.000Z")
    new = _memory(2, "Marta cut her visit, it's 2 hours now", "2026-11-03T09:00:00.000Z")
    other = _memory(3, "Marta's number is 555-0101", "2026-11-04T09:00:00.000Z")
    shown, rest, older = newest_first([old, other], [new])
    assert [m.id for m in shown] == [2, 1, 3] and rest == [] and older == {1}
