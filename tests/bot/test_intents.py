"""The phrase table ``bot.core.intents`` is held to: notes (with the text they keep),
questions, statements and fragments, in English and in Chinese, tricky ones included."""

from __future__ import annotations

import pytest

from bot.core.intents import FRAGMENT, NOTE, QUESTION, STATEMENT, Intent, note_of, read_intent

NOTES_EN = [
    ("remember that my locker is 23", "my locker is 23"),
    ("Remember: my locker is 23", "my locker is 23"),
    ("remember my locker is 23", "my locker is 23"),
    ("remember, the spare key is under the mat", "the spare key is under the mat"),
    ("please remember that the wifi password is hunter2", "the wifi password is hunter2"),
    ("Please remember my bike lock code is 4711", "my bike lock code is 4711"),
    ("hey bot, remember that Tom's birthday is May 3", "Tom's birthday is May 3"),
    ("can you remember that I parked on level B2", "I parked on level B2"),
    ("could you please remember the gate code is 1234", "the gate code is 1234"),
    ("I want you to remember that I'm allergic to peanuts", "I'm allergic to peanuts"),
    ("don't forget that the meeting moved to 3pm", "the meeting moved to 3pm"),
    ("Don’t forget: the plumber comes Friday", "the plumber comes Friday"),
    ("do not forget the dentist is on Elm Street", "the dentist is on Elm Street"),
    ("remember to buy oat milk", "buy oat milk"),
    ("don't forget to water the plants", "water the plants"),
    ("note: the router is in the hall cupboard", "the router is in the hall cupboard"),
    ("Note that the office closes at 6 on Fridays", "the office closes at 6 on Fridays"),
    ("note to self: renew the passport in March", "renew the passport in March"),
    ("Note to self - call the bank", "call the bank"),
    ("memo: Anna prefers tea", "Anna prefers tea"),
    ("memo to self buy stamps", "buy stamps"),
    ("keep in mind that Sam is vegetarian", "Sam is vegetarian"),
    ("write down my shoe size is 43", "my shoe size is 43"),
    ("jot this down: flight LH123 leaves at 7", "flight LH123 leaves at 7"),
    ("make a note of the plumber's number 555-0101", "the plumber's number 555-0101"),
    ("make a note: the car needs new tyres", "the car needs new tyres"),
    ("save this: the VPN server is vpn.example.com", "the VPN server is vpn.example.com"),
    ("remember this: standup is at 10", "standup is at 10"),
    ("for the record, I paid the deposit", "I paid the deposit"),
    ("ok remember that work: standup at 10 #meeting", "work: standup at 10 #meeting"),
    ("remember that dentist next Tuesday 3pm", "dentist next Tuesday 3pm"),
    ("REMEMBER THAT THE CODE IS 9876", "THE CODE IS 9876"),
    ("just remember my locker is 23", "my locker is 23"),
    ("btw remember that Tom is vegan", "Tom is vegan"),
    ("Please note that the office is closed on Monday", "the office is closed on Monday"),
    ("📝 note: buy milk", "buy milk"),
    ("note that the day starts at 7", "the day starts at 7"),  # "the day" is no reminiscing
]

NOTES_ZH = [
    ("记住我的储物柜是23号", "我的储物柜是23号"),
    ("记住：我的储物柜是23号", "我的储物柜是23号"),
    ("请记住护照在书房的抽屉里", "护照在书房的抽屉里"),
    ("帮我记住车停在B2层", "车停在B2层"),
    ("帮我记一下，明天要交报告", "明天要交报告"),
    ("帮我记一下明天要交报告", "明天要交报告"),
    ("记一下：周五交房租", "周五交房租"),
    ("记一下wifi密码是abc123", "wifi密码是abc123"),
    ("记下来：老王的电话是13800138000", "老王的电话是13800138000"),
    ("记下：门禁密码1234", "门禁密码1234"),
    ("备忘：下周二下午三点看牙医", "下周二下午三点看牙医"),
    ("备忘录：买牛奶", "买牛奶"),
    ("备注：快递放在门卫", "快递放在门卫"),
    ("笔记：会议改到三楼", "会议改到三楼"),
    ("记：妈妈喜欢百合", "妈妈喜欢百合"),
    ("别忘了带伞", "带伞"),
    ("不要忘记周日是妈妈的生日", "周日是妈妈的生日"),
    ("千万别忘了交电费", "交电费"),
    ("记得带身份证", "带身份证"),
    ("麻烦你记住我不吃香菜", "我不吃香菜"),
    ("你能帮我记住车牌号是京A12345", "车牌号是京A12345"),
    ("请帮我记下来，会议室是301", "会议室是301"),
    ("给我记一下：小李欠我200块", "小李欠我200块"),
    ("帮我记车停在B2层", "车停在B2层"),
    ("记住这个：柜子钥匙在花盆下面", "柜子钥匙在花盆下面"),
    ("记住这个密码是1234", "这个密码是1234"),
    ("帮我保存一下：发票抬头是某某公司", "发票抬头是某某公司"),
    ("记着，周三不用接孩子", "周三不用接孩子"),
    ("记好了：新地址是长安街1号", "新地址是长安街1号"),  # 了 before a colon
    ("请记住：工作：周会改到十点 #会议", "工作：周会改到十点 #会议"),
    ("一定要记住奶奶对青霉素过敏", "奶奶对青霉素过敏"),
    ("记住啊，我的车牌是京A12345", "我的车牌是京A12345"),
    ("记一下吧，周五交房租", "周五交房租"),
    ("帮我备忘一下：周五交房租", "周五交房租"),
    ("你要记住：我不吃辣", "我不吃辣"),
    ("我要你记住我不吃辣", "我不吃辣"),
]

QUESTIONS_EN = [
    "where is my passport?",
    "where is my passport",
    "what's the wifi password",
    "whats the wifi password",
    "What is Tom's birthday",
    "when is the dentist",
    "who fixed the boiler last time",
    "how do I reset the router",
    "which locker is mine",
    "why did we cancel the trip",
    "is the gym open on Sundays",
    "did I pay the rent",
    "do I have a meeting tomorrow",
    "can you find my notes about the car",
    "have I told you about the plumber",
    "tell me the gate code",
    "show me everything about the flat",
    "find the insurance number",
    "any idea where the charger is",
    "do you remember what I said about the wifi?",
    "do you remember what I said about the wifi",
    "remember when we went to Paris?",
    "remember when we went to Paris",
    "remember what the doctor said",
    "note that this is a question?",
    "remember that the shop closes at 6?",
    "I can't remember where I parked",
    "I forgot the wifi password",
    "I remember you said the code was 1234",
    "you told me the party is on Friday",
    "hey, where did I put my keys",
    "so what's the plan for Saturday",
    "my passport is where?",
    "remember the time we went skiing",
    "remember that night when it snowed",
]

QUESTIONS_ZH = [
    "我的护照在哪",
    "我的护照在哪？",
    "我的护照在哪里",
    "wifi密码是什么",
    "wifi密码是多少",
    "车停在哪儿了",
    "明天几点开会",
    "谁修的热水器",
    "怎么重置路由器",
    "为什么取消了旅行",
    "周日健身房开门吗",
    "我交房租了吗",
    "我的钥匙呢",
    "我记得你说过密码是1234",
    "我记得你说过wifi密码",
    "你还记得我们去巴黎那次吗",
    "你还记得我的车停在哪",
    "你记得我的生日吗",
    "你记得我的生日",
    "还记得小王的电话吗",
    "记不记得老板说的截止日期",
    "告诉我门禁密码",
    "查一下保险单号",
    "帮我找一下充电器放哪了",
    "请问明天有会吗",
    "我忘了wifi密码",
    "不记得车停在几楼了",
    "有没有记过小李的地址",
    "是不是周五交报告",
    "记住了吗",
    "记一下吗",
    "备忘：这是问题吗？",
    "你说过会议改到几点",
    "记得那次我们去巴黎",
    "能帮我记一下明天交报告吗",  # a question mark (吗) wins, even in a polite request
]

STATEMENTS_EN = [
    "my locker is 23",
    "the wifi password is hunter2",
    "I parked on level B2",
    "Tom's birthday is on May 3",
    "the spare key is under the mat",
    "I remembered to pay the rent",
    "I need to remember to buy milk",
    "notes from the meeting are in the drive",
    "note taking is hard",
    "remembering names is hard for me",
    "had lunch with Tom at noon",
    "will be late tomorrow",
    "was at the dentist today",
    "have to pick up the kids at 5",
    "the meeting is moved to 3pm",
    "Hi, my name is Alice",
    "the code is 1234, don't tell anyone",
    "she said the party is on Friday",
    "my doctor is Dr. Lee on Elm Street",
    "passport in the top drawer",
    "Anna prefers green tea",
    "our flight leaves at 7:40 from gate B12",
    "the plumber's number is 555-0101",
    "I'm allergic to peanuts",
    "standup moved to 10 #work",
    "bus 42 stops at the corner",
    "the router is in the hall cupboard",
    "Mom likes lilies",
    "insurance policy number AB-123-456",
    "we bought the sofa at IKEA in 2021",
]

STATEMENTS_ZH = [
    "我的储物柜是23号",
    "护照在书房的抽屉里",
    "车停在B2层",
    "wifi密码是abc123",
    "小王的生日是3月5日",
    "我不怎么喜欢咖啡",
    "哪怕下雨也要去跑步",
    "笔记本电脑在抽屉里",
    "记账软件用的是随手记",
    "备忘录放在桌上了",
    "妈妈喜欢百合花",
    "门禁密码是1234",
    "周五下午三点开会",
    "会议室改到301了",
    "我对青霉素过敏",
    "快递放在门卫室",
    "老王的电话是13800138000",
    "今天花了两百块买菜",
    "钥匙在花盆下面",
    "我记住了他的名字",  # "I remembered his name": a statement about me, no request
    "他什么都吃",
    "新地址是长安街1号",
    "保险单号是AB123456",
    "周三不用接孩子",
    "孩子的老师姓陈",
    "空调遥控器在沙发上",
    "下周二去上海出差",
    "小李欠我200块",
    "发票抬头是某某公司",
    "奶奶对青霉素过敏",
    "我还记得我们在巴黎住的酒店",
]

FRAGMENTS = [
    "wifi password",
    "passport",
    "thanks",
    "thank you so much!",
    "ok",
    "good morning",
    "locker 23",
    "remember me",
    "note",
    "护照",
    "wifi密码",
    "我的护照",
    "谢谢",
    "好的",
    "晚安",
    "记住我",
    "记住了",
    "记住了，谢谢",
]


@pytest.mark.parametrize(("said", "kept"), NOTES_EN + NOTES_ZH)
def test_a_note_is_read_with_its_trigger_words_removed(said: str, kept: str) -> None:
    assert read_intent(said).kind == NOTE
    assert read_intent(said).text == kept


@pytest.mark.parametrize("said", QUESTIONS_EN + QUESTIONS_ZH)
def test_a_question_is_a_question_never_a_note(said: str) -> None:
    assert read_intent(said).kind == QUESTION


@pytest.mark.parametrize("said", STATEMENTS_EN + STATEMENTS_ZH)
def test_a_statement_is_neither_a_note_nor_a_question(said: str) -> None:
    assert read_intent(said).kind == STATEMENT
    assert read_intent(said).text == said


@pytest.mark.parametrize("said", FRAGMENTS)
def test_a_few_words_or_small_talk_are_a_fragment(said: str) -> None:
    assert read_intent(said).kind == FRAGMENT


def test_the_table_has_thirty_phrases_of_each_kind_in_each_language() -> None:
    for table in (NOTES_EN, NOTES_ZH, QUESTIONS_EN, QUESTIONS_ZH, STATEMENTS_EN, STATEMENTS_ZH):
        assert len(table) >= 30


@pytest.mark.parametrize(
    "said", ["remember", "Remember that!", "note:", "记住", "帮我记一下", "备忘："]
)
def test_a_request_without_its_note_is_an_empty_note(said: str) -> None:
    assert read_intent(said) == Intent(NOTE, "")


def test_note_of_reads_an_edited_note_whatever_its_ending() -> None:
    assert note_of("remember: is the gym open on Sundays?") == "is the gym open on Sundays?"
    assert note_of("my locker is 23") is None
    assert note_of("remember when we went to Paris") is None
