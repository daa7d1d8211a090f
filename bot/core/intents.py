"""What a plain message is, read by rules: a note to keep, a question, a statement, a fragment.

Without a language model the bot tells these apart itself (with one, the model decides):

- a **note** asks to be remembered: "remember that my locker is 23", "note: …", "don't forget
  …", "note to self: …", "记住…", "帮我记一下…", "备忘：…". ``read_intent`` gives its text
  without the trigger words ("my locker is 23"), which is then stored as /remember stores it;
- a **question** asks for something: it ends with a question mark (or 吗, 呢, 么), starts with
  an interrogative ("where", "what's", "how") or with a verb before its subject ("is the gym
  open", "did I pay"), asks to be told or shown ("tell me", "告诉我", "查一下"), appeals to the
  bot's memory ("do you remember …", "remember when …", "I remember you said …", "我记得…",
  "你还记得…"), or holds a Chinese interrogative anywhere (哪, 什么, 几点, 多少, 有没有 …);
- a **fragment** is a few words (fewer than three, a Chinese character counting as half a
  word: "wifi password", "我的护照") or small talk ("thanks", "好的"): what people type to search;
- anything else is a **statement** ("my locker is 23", "护照在抽屉里").

The rules, in order: a question mark (or 吗 / 呢 / 么) at the end wins, so "note that this is a
question?" is a question; then a note trigger, only at the start and after politeness
("please", "hey", "can you", "请", "麻烦你", "帮我"), followed by the note. "remember" (or "记住",
"别忘了" …) may be followed directly by the note; a noun trigger ("note", "memo", "备忘", "笔记")
needs a colon or "that" (so "notes from the meeting are in the drive" stays a statement). A verb
trigger followed directly by an interrogative ("remember when we …", "remember what …"; in
Chinese an interrogative anywhere after it) or by a lone pronoun ("remember me") is not a note;
neither is "记住了" (got it) nor "你记得…" (a question). Then questions, then fragments.

When unsure the rules lean to a question: a question is searched, as every message was before,
so a misreading costs a button, never a memory stored by mistake. The word lists are here and
nowhere else; ``tests/bot/test_intents.py`` is the table of phrases they are held to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["note", "question", "statement", "fragment"]
NOTE: Kind = "note"
QUESTION: Kind = "question"
STATEMENT: Kind = "statement"
FRAGMENT: Kind = "fragment"


@dataclass(frozen=True)
class Intent:
    """What a message is; ``text`` is a note's text without its trigger, else the message."""

    kind: Kind
    text: str


# -- the word lists ----------------------------------------------------------------------------

_WS = r"[\s\u3000]"
_APOSTROPHE = "['’]"

# Politeness and address before a request ("please", "hey bot,", "can you", "I want you to").
EN_LEAD = (
    r"(?:(?:please|pls|plz|kindly|just|hey|hi|hello|ok|okay|so|also|and|oh|btw|yo|bot)(?![\w'’])"
    r"[\s,，!！.]*)*"
    r"(?:(?:can|could|would|will)\s+(?:you|u)\s+|i\s+(?:want|need)\s+you\s+to\s+"
    rf"|i{_APOSTROPHE}?d\s+like\s+you\s+to\s+|make\s+sure\s+(?:you\s+|to\s+)?)?"
    r"(?:please\s+)?"
)
# Verbs that the note may follow directly: "remember my locker is 23".
EN_VERBS = (
    rf"remember|don{_APOSTROPHE}?t\s+forget|do\s+not\s+forget|never\s+forget"
    r"|keep\s+in\s+mind|bear\s+in\s+mind|(?:note|write|jot)\s+(?:this\s+|it\s+)?down"
    r"|make\s+a\s+note\s+of|take\s+note\s+of|(?:note|memo|reminder)\s+to\s+self|for\s+the\s+record|fyi"
)
# Words that start a note only before a colon (or "that"): "note: …", "memo: …", "save this: …".
EN_NOUNS = (
    r"note|notes|memo|(?:save|store|keep|log)\s+(?:this|that)|remember\s+this"
    r"|make\s+a\s+note|take\s+(?:a\s+)?note|add\s+(?:a\s+)?note|new\s+note|n\.?b\.?|p\.?s\.?"
)
# What may sit between an English trigger and the note: a colon or a dash (``mark``: what follows
# is the note, whatever it is), "that", a comma, a space.
EN_SEPARATOR = (
    r"(?:(?P<mark>\s*(?:[:：]|[-–—]{1,2})\s*|\s+(?:this|it)\s*[:：]\s*)"
    r"|(?P<that>\s+that(?![\w'’])[\s,，:：]*)|\s*[,，]\s*|\s*)"
)
EN_TODO = ("remember", "don", "do not", "never")  # "remember to buy milk" keeps "buy milk"

ZH_LEAD = (
    r"(?:(?:请你?|麻烦你?|劳驾|拜托你?|嘿|喂|好的?|那|我要你|我希望你|你要|你|您|要|能不能|可不可以|能|可以"
    r"|一定要?|千万|务必)"
    rf"{_WS}*[,，、!！]?{_WS}*)*"
)
ZH_VERBS = (
    r"(?:帮我|给我|替我|帮忙)?(?:记住|记下来|记下|记一下|记一笔|记录一下|记录下来|记着|记好)"
    r"|(?:帮我|给我|替我)记|记得|(?:千万|可)?(?:别|不要|不能)忘(?:了|记)"
    r"|(?:帮我|给我|替我)?(?:保存|存|备忘)(?:一下|下来)"
)
ZH_NOUNS = r"(?:帮我|给我|替我)?(?:备忘录?|备注|笔记|便签|记事|记)"
# After the trigger: 了 (记住了: "got it"; but 记好了：… asks), 过, 吗, 没, 不 (记不住) make it
# no request.
ZH_NOT_AFTER = rf"(?:了(?={_WS}*[:：])|(?![了过吗嗎没不]))"
# "这个" (this) is a separator only before a colon: in "记住这个密码是1234" it is the note's.
ZH_SEPARATOR = (
    rf"[啊哦喔呀哈吧]*{_WS}*(?P<mark>[:：])?{_WS}*[,，、]?{_WS}*(?:(?:这个|这件事|这条|一下){_WS}*(?=[:：]))?"
    rf"(?P<mark2>[:：])?{_WS}*[,，、]?{_WS}*"
)
ZH_ASKERS = ("你", "您")  # "你记得…" asks whether the bot remembers ("我要你记得…" does not)

# A trigger followed by one of these (or nothing else) asks, or says nothing to keep.
EN_INTERROGATIVES = frozenset(
    "what what's whats when where who whom whose which why how whether if".split()
)
# "remember the time we …", "记得那次…": reminiscing, a question about memory, not a note.
EN_RECALLING = (
    r"(?:the\s+|that\s+)?(?:time|day|night|evening|morning|summer|winter|weekend|trip|party)"
    r"\s+(?:when|we|i|you|they|he|she|my|our)(?![\w'’])"
)
ZH_RECALLING = r"那次|那天|那时|当时|当年|那年|上次"
PRONOUNS = frozenset("me us it this that them him her 我 我们 它 这 这个 那个 这件事 一下".split())

# A question: how it ends.
ENDS_ASKING = re.compile(r"(?:[?？]|[吗嗎呢么麼])$")
# What may follow the last word: matched on the reversed text (a leading match is linear in the
# run's length; a trailing one is tried from every position of it).
TRAILING = re.compile(
    r"[\s\u3000。.!！~～…,，;；:：\"'“”‘’)）\]】\U0001f000-\U0001faff\u2600-\u27bf\ufe0f]+"
)
# A question: how it starts (after "hey", "so", "ok" …).
EN_ASK_LEAD = (
    r"(?:(?:hey|hi|hello|ok|okay|so|and|but|also|um|uh|oh|well|then|btw|bot|please|pls)"
    r"(?![\w'’])[\s,，!！.]*)*"
)
EN_WH = rf"(?:what|where|when|who|how){_APOSTROPHE}?s?|whom|whose|which|why"
# A verb before its subject asks ("is the gym open"); without one it is a diary line
# ("had lunch with Tom", "will be late"), so the subject is part of the rule.
EN_AUXILIARIES = (
    r"is|are|am|was|were|do|does|did|can|could|would|will|shall|should|may|might|must|have|has"
    rf"|had|isn{_APOSTROPHE}?t|aren{_APOSTROPHE}?t|wasn{_APOSTROPHE}?t|weren{_APOSTROPHE}?t"
    rf"|doesn{_APOSTROPHE}?t|didn{_APOSTROPHE}?t|don{_APOSTROPHE}?t|can{_APOSTROPHE}?t"
    rf"|couldn{_APOSTROPHE}?t|won{_APOSTROPHE}?t|wouldn{_APOSTROPHE}?t|shouldn{_APOSTROPHE}?t"
    rf"|haven{_APOSTROPHE}?t|hasn{_APOSTROPHE}?t"
)
EN_SUBJECTS = (
    r"i|you|u|we|they|he|she|it|there|this|that|these|those|my|your|our|their|his|her|its|the"
    r"|a|an|any|anyone|anybody|someone|somebody|everyone|everything|something|anything"
)
EN_ASKING_PHRASES = (
    r"tell\s+me|show\s+me|give\s+me|find|search|look\s+up|lookup|recall|list|remind\s+me"
    r"|any\s+idea|anything\s+(?:about|on)|do\s+you\s+(?:know|remember|recall)|i\s+wonder"
    rf"|wondering|i\s+forg[eo]t|i\s+can{_APOSTROPHE}?t\s+(?:remember|recall|find)"
    rf"|i\s+don{_APOSTROPHE}?t\s+(?:remember|recall|know)|i\s+need\s+to\s+know"
    r"|i\s+(?:remember|recall)|you\s+(?:said|told\s+me|mentioned)"
    r"|remember\s+(?:when|what|where|who|whom|whose|which|why|how|whether|if)"
    rf"|remember\s+{EN_RECALLING}"
)
ZH_ASKING_START = (
    r"告诉我|帮我查|帮我找|查一下|查查|找一下|找找|搜一下|搜搜|搜索|查找|我想知道|想知道|请问"
    r"|我忘了|忘了|我不记得|不记得|我记不清|记不清|我记得|我记着|你说过|你告诉过我|你提过|你跟我说过"
    rf"|[你您]记得|[你您]还记得|还记得|记不记得|记得不记得|记得(?:{ZH_RECALLING})|列出|显示"
)
ZH_INTERROGATIVES = (
    r"什么|什麼|啥|哪|谁|誰|怎么|怎麼|怎样|怎樣|如何|为什么|為什麼|为啥|几点|几个|几号|几天|几次"
    r"|几岁|几楼|几层|几月|几时|多少|多久|多大|多长|多远|多高|是不是|有没有|能不能|可不可以|会不会"
    r"|要不要|对不对|好不好|行不行|是否|吗|嗎"
)
# Words that hold an interrogative without asking: 哪怕 (even if), 什么都 (anything), 不怎么 …
ZH_NOT_ASKING = (
    r"不怎么|哪怕|什么都|什么也|谁都|谁也|怎么都|怎么也|无论[^，,。！!]*|不管[^，,。！!]*"
)

SMALL_TALK_WORDS = (
    r"thanks?(?:\s+you)?(?:\s+(?:so|very)\s+much|\s+a\s+lot)?|thx|ty|cheers|hi|hello|hey|yo"
    r"|good\s+(?:morning|night|evening|afternoon)|bye|goodbye|see\s+you|ok(?:ay)?|sure|cool"
    r"|great|nice|awesome|got\s+it|noted|never\s*mind|nvm|lol|haha+|yes|no|yep|nope|bot"
    r"|谢谢(?:你|您)?|多谢|感谢|你好|您好|早上好|早安|午安|晚上好|晚安|好的?|好吧|行|可以|知道了"
    r"|明白了?|收到|记住了|记下了|记好了|嗯+|哦+|哈+|拜拜|再见"
)
STATEMENT_WORDS = 2.5  # fewer words than this (a Chinese character is half a word): a fragment

# -- the rules ---------------------------------------------------------------------------------

_I = re.IGNORECASE | re.DOTALL
_EN_NOTE = re.compile(
    rf"\s*{EN_LEAD}(?:(?P<verb>{EN_VERBS})|(?P<noun>{EN_NOUNS}))(?![\w'’]){EN_SEPARATOR}(?P<rest>.*)",
    _I,
)
_ZH_NOTE = re.compile(
    rf"{_WS}*(?P<lead>{ZH_LEAD})(?:(?P<verb>{ZH_VERBS})|(?P<noun>{ZH_NOUNS})){ZH_NOT_AFTER}"
    rf"{ZH_SEPARATOR}(?P<rest>.*)",
    _I,
)
_EN_ASKING = re.compile(
    rf"\s*{EN_ASK_LEAD}(?:(?:{EN_WH}|{EN_ASKING_PHRASES})(?![\w'’])"
    rf"|(?:{EN_AUXILIARIES})\s+(?:{EN_SUBJECTS})(?![\w'’]))",
    _I,
)
_ZH_ASKING = re.compile(rf"{_WS}*(?:(?:嘿|喂|那|你好|请)[,，、\s]*)?(?:{ZH_ASKING_START})")
_ZH_INTERROGATIVE = re.compile(ZH_INTERROGATIVES)
_ZH_NOT_ASKING = re.compile(ZH_NOT_ASKING)
_SMALL_TALK = re.compile(
    rf"\s*(?:{SMALL_TALK_WORDS})(?:[\s!！.。~～,，]+(?:{SMALL_TALK_WORDS}))*[\s!！.。~～,，]*", _I
)
_FIRST_WORD = re.compile(r"[\w'’]+")
_EN_RECALLED = re.compile(EN_RECALLING, _I)
_ZH_RECALLED = re.compile(ZH_RECALLING)
_LEADING = re.compile(r"^[\s\u3000\U0001f000-\U0001faff\u2600-\u27bf\ufe0f*•>\-]+")
_LATIN_WORD = re.compile(r"[A-Za-z0-9\u00c0-\u024f][A-Za-z0-9\u00c0-\u024f'’.\-]*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def read_intent(text: str) -> Intent:
    """What ``text`` (a plain message, its @mention removed) is; see the module docstring."""
    said = text.strip()
    if asks(said):
        return Intent(QUESTION, said)
    note = note_of(said)
    if note is not None:
        return Intent(NOTE, note)
    if is_question(said):
        return Intent(QUESTION, said)
    if _SMALL_TALK.fullmatch(said) or _words(said) < STATEMENT_WORDS:
        return Intent(FRAGMENT, said)
    return Intent(STATEMENT, said)


def asks(text: str) -> bool:
    """Whether ``text`` ends as a question does: ``?``, ``？``, 吗, 呢, 么 (then punctuation)."""
    return bool(ENDS_ASKING.search(_trimmed(text)))


def note_of(text: str) -> str | None:
    """The note ``text`` asks to be remembered ("remember that X": X), or None if it asks none;
    ``""`` when it asks with nothing to remember ("remember", "帮我记一下", "note:").

    Unlike ``read_intent`` this does not look at how the text ends: "remember: is the gym open
    on Sundays?" edited into a note keeps its question mark.
    """
    text = _LEADING.sub("", text)
    for match, chinese in ((_EN_NOTE.fullmatch(text), False), (_ZH_NOTE.fullmatch(text), True)):
        if match is None:
            continue
        rest = match["rest"].strip()
        colon = bool(match["mark"] or (chinese and match["mark2"]))
        verb = match["verb"]
        if match["noun"] and not (colon or (not chinese and match["that"])):
            continue
        if not re.search(r"\w", rest):
            return ""  # "remember", "帮我记一下", "note:": a request without its note
        if chinese and verb == "记得" and re.sub(r"\W", "", match["lead"]) in ZH_ASKERS:
            continue  # "你记得…" asks whether the bot remembers
        if not colon and (_asks_after(rest, verb, chinese) or _plain(rest) in PRONOUNS):
            continue
        if not chinese and verb and verb.lower().startswith(EN_TODO):
            rest = re.sub(r"^to\s+", "", rest, flags=re.IGNORECASE)
        return rest
    return None


def is_question(text: str) -> bool:
    """Whether ``text`` asks something (the question rules of the module docstring)."""
    if asks(text) or _EN_ASKING.match(text) or _ZH_ASKING.match(text):
        return True
    return bool(_ZH_INTERROGATIVE.search(_ZH_NOT_ASKING.sub("", text)))


def _asks_after(rest: str, verb: str | None, chinese: bool) -> bool:
    """Whether what follows a trigger without a colon asks ("remember when …", "记住护照在哪")
    or, after "remember" / 记得, reminisces ("remember the time we …", "记得那次…")."""
    recalls = (verb or "").lower() in ("remember", "记得")
    if chinese:
        asks_here = _ZH_INTERROGATIVE.search(_ZH_NOT_ASKING.sub("", rest))
        return bool(asks_here or (recalls and _ZH_RECALLED.match(rest)))
    first = _FIRST_WORD.match(rest)
    if first is not None and first.group().lower() in EN_INTERROGATIVES:
        return True
    return recalls and bool(_EN_RECALLED.match(rest))


def _trimmed(text: str) -> str:
    """``text`` without the punctuation, spaces and emoji after its last word."""
    run = TRAILING.match(text[::-1])
    return text[: len(text) - run.end()] if run else text


def _plain(text: str) -> str:
    return _trimmed(text).lower()


def _words(text: str) -> float:
    """Words of ``text``: Latin words and numbers one each, Chinese characters half each."""
    return len(_LATIN_WORD.findall(text)) + len(_CJK.findall(text)) / 2
