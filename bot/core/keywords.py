"""The tags /remember picks for a note without hashtags: the words a person would pick.

A person tagging "my passport is in the second drawer of the desk" picks ``passport``,
``drawer``, ``desk``: the things, names and places the note is about, and a number when it
identifies something (locker ``117``, flight ``ba123``, room ``4b``, the year ``2027``). They
never pick a verb ("放在", "parked"), a pronoun, a time ("tomorrow", "下午", "三点"), an amount
("20 euros", "200块"), an ordinal ("第二个", "second") or a word that says nothing about the
note ("near", "now", "thing", "东西"), and never a secret: a tag is shown in /stats and the
digest, so the value of a password, PIN or code is not one. ``keywords`` keeps exactly that:

- Chinese runs are cut by jieba with its parts of speech (``jieba.posseg``, offline, its own
  dictionary), its guesses at words outside the dictionary checked (``bot.core.chinese_words``:
  "公司年会定在" is 公司 / 年会 / 定 / 在, never the guess 会定); a word is kept when it is a noun
  of some kind (``n``, a person ``nr``, a place ``ns``, an organisation ``nt``, another proper
  noun ``nz``, a place word ``s``, an abbreviation ``j``, a verbal noun ``vn``), two characters
  or more, and not a vague one (``东西``, ``时候``). jieba's dictionary files a few everyday
  things as verbs (``超市``, ``快递``, ``例会``) and days people tag as times (``生日``,
  ``纪念日``): ``_TAG_FIXES`` corrects those, without touching jieba's state (search segments
  with it too).
- Latin words (English, and the Latin inside Chinese: ``WiFi``, ``B2``) have no tagger offline:
  a word is kept unless it is a stop word (the search's list), a vague or time word, one of
  the common verbs in any form (``park``, ``parks``, ``parked``; ``-ing`` forms stay, they are
  often things: ``meeting``, ``parking``), or a common adjective or adverb (``blue``,
  ``quick``). A possessive goes (``mom's`` -> ``mom``); paths, addresses, times and codes with
  punctuation inside (``D:\\projects``, ``192.168.1.1``, ``10:15``, ``HX-20931-7``) stay in
  the content only.
- Numbers: three or four digits that are not part of a longer number (``555 0199``), not an
  amount or a date (``200块``, ``5日``), and not after a secret word; letters with digits of up
  to eight characters (``ba123``, ``4b``, ``b2``), not a time or a unit (``3pm``, ``2nd``,
  ``5kg``).
- After a secret word (``password``, ``pin``, ``code``, ``密码``, ``验证码`` ...), nothing with a
  digit in it in that clause is a tag, nor anything after its "is" / "是" / ":".
- Preference: names and places first (a Chinese ``nr``, ``ns``, ``nt``, ``nz``; an English word
  capitalised inside a sentence), then things and identifiers, then plain numbers; the best
  ``limit`` are returned in the order of the note.

Measured on ``bench.tag_notes`` (45 English and 46 Chinese notes with the tags a person would
accept; ``python -m bench.tag_bench``): see that module's docstring and the README.
"""

from __future__ import annotations

import re
import unicodedata

from bot.core import chinese_words
from memory.model import MAX_TAG_CHARS
from memory.text import IRREGULAR, STOP_WORDS

MAX_KEYWORDS = 5

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A CJK run; a Latin word (letters and digits, with inner . ' ’ : \ / - as in "D:\x", "mom's",
# "https://x.org/a": one token, so that a path or an address is never cut into tags);
# or a clause break, which ends what a secret word covers.
_TOKEN = re.compile(
    rf"([{_CJK}]+)|([^\W_{_CJK}]+(?:[.'’:\\/-]+[^\W_{_CJK}]+)*)|([,;!?，；。！？\n])"
)
_POSSESSIVE = re.compile(r"['’]s\Z")
_HAS_DIGIT = re.compile(r"\d")
_IDENTIFIER = re.compile(r"(?=[a-z]*\d)(?=\d*[a-z])[a-z0-9]{2,8}")
_NOT_IDENTIFIER = re.compile(
    r"\d+(?:am|pm|h|hr|hrs|min|mins|s|st|nd|rd|th|x|k|kg|g|km|m|cm|mm|ml|l|mb|gb|tb|yo)"
)

# -- the Chinese side: parts of speech kept, and jieba's tags corrected ----------------------

_NOUN_FLAGS = frozenset({"n", "nr", "nrfg", "nrt", "ns", "nt", "nz", "nw", "s", "j", "vn"})
_NAME_FLAGS = frozenset({"nr", "nrfg", "nrt", "ns", "nt", "nz"})
# Everyday things and activities people tag that jieba's dictionary files as verbs, adverbs or
# adjectives (found by running a list of ~200 everyday nouns through it), and days that it
# files as times.
_TAG_FIXES = dict.fromkeys(
    """
    驾照 相机 合同 快递 外卖 包裹 超市 诊所 微信 报销 体检 面试 开会 出差 上课 健身 加班
    值班 搬家 装修 维修 预约 邻居 理财 签证 积分 会员 备份 标签 锻炼 治疗 学习 例会
    生日 纪念日 节日 假期 寒假 暑假 春节 国庆 中秋 元旦 圣诞 端午 情人节
    """.split(),
    "n",
)
# A surname and one of these after it are a person (李 阿姨, 陈 医生); jieba knows some already.
_TITLES = frozenset("阿姨 叔叔 老师 医生 大夫 师傅 经理 律师 教授 主任 先生 女士 同学".split())
# A noun and one of these after it are one word (贝克 路, 快递 员, 游泳 课, 微信 群); the
# first group names a place.
_PLACE_SUFFIXES = frozenset("街路道巷区市县镇村省站馆园桥湖山")
_NOUN_SUFFIXES = _PLACE_SUFFIXES | frozenset("员柜费室店院卡证课厅房群")
_VAGUE_CN = frozenset(
    """
    东西 事情 事儿 时候 地方 问题 情况 方面 办法 样子 部分 东东 玩意 玩意儿 一下 那边 这边
    旁边 附近 里面 外面 上面 下面 前面 后面 左边 右边 这里 那里 哪里 今天 明天 后天 昨天
    现在 以后 之前 之后 时间 日子 人家 大家 别人 自己 我们 你们 他们 内容 信息 记录 备忘
    管理 自动 启动 服务 发展 使用 处理 安排 提醒 完成 开始 结束 准备 注意 影响 变化 改变
    提供 支持 帮助 建议 要求 需要 新 一起
    红色 蓝色 绿色 黄色 黑色 白色 灰色 紫色 粉色 橙色 棕色 金色 银色
    http https www com
    """.split()
)
# After a number: an amount, a duration or part of a date, not something it identifies.
_AMOUNT_AFTER = frozenset("块元角毛个只次遍天岁分点秒米斤克码度月日周小斤吨位人")

# -- the Latin side: what a person never picks ------------------------------------------------

_VAGUE_EN = frozenset(
    """
    thing things stuff something anything everything nothing someone somebody anyone anybody
    everyone everybody somewhere anywhere everywhere way ways lot lots bit bits kind sort type
    part piece one ones place places side end middle top bottom front back left right near
    nearby outside inside behind beside upstairs downstairs underneath around across along
    toward towards within without opposite next last first second third fourth fifth sixth
    seventh eighth ninth tenth
    now today tonight tomorrow yesterday later soon ago early late earlier before after
    morning afternoon evening night noon midnight weekend weekday week weeks day days month
    months year years time times hour hours minute minutes moment while
    monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs
    fri sat sun january february march april may june july august september october november
    december jan feb mar apr jun jul aug sep sept oct nov dec am pm
    note notes reminder remind remember memo please thanks thank ok okay yes yeah maybe also
    really actually probably always never sometimes often usually again still already even
    every each many much more most less least few several other another same different
    such own else instead ever almost quite rather pretty enough way
    mr mrs ms dr st rd etc eg ie vs
    """.split()
)
_DESCRIPTORS = frozenset(
    """
    good bad great nice fine best better worse worst big small large little huge tiny long
    short tall high low quick quickly fast slow slowly easy hard difficult important urgent
    free full empty hot cold warm cool new old young fresh clean dirty open closed close far
    sure ready happy sad busy spare main own real true false right wrong whole half
    red blue green yellow black white brown grey gray orange purple pink dark light bright
    usual regular extra special favourite favorite cheap expensive safe dangerous private
    public local only just very too so also quite
    """.split()
)
_VERBS = """
    be have do go get make take put give keep let say tell ask call buy pick send bring need
    want like love know think see look find leave meet pay use try start stop finish check
    remember forget book cancel order return come move live stay park open close clean cook
    eat drink read write watch visit fix change sign drop water feed wash charge renew lend
    borrow owe bring carry fill print save store hide show turn set run walk drive ride fly
    travel wait hold hang plug unplug lock unlock leave reach arrive depart expire due
    recommend suggest mention plan schedule confirm reschedule expect help pass mail post text
    email phone ping message reply answer label mark tidy sort throw replace repair update
    install apply collect deliver ship pack unpack move rent sell share join sit sleep wake
    """.split()


def _inflections(verb: str) -> set[str]:
    """A regular verb's base, -s and -ed forms (-ing is left: often a thing, "meeting")."""
    stem = verb[:-1] if verb.endswith("e") else verb
    forms = {verb, verb + "s", verb + "es", stem + "ed", verb + "d"}
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        forms |= {verb[:-1] + "ies", verb[:-1] + "ied"}
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgklmnprt]", verb) or verb.endswith("l"):
        forms.add(verb + verb[-1] + "ed")  # stop -> stopped, plan -> planned, label -> labelled
    return forms


_VERB_FORMS = frozenset(form for verb in _VERBS for form in _inflections(verb)) | frozenset(
    form for form, base in IRREGULAR.items() if base in _VERBS or base in {"see"}
)
_UNIT_AFTER = frozenset(
    """
    euro euros eur dollar dollars usd bucks pound pounds gbp yuan rmb cent cents percent
    kg g km m cm mm ml l mb gb tb min mins minute minutes hour hours hr hrs day days week weeks
    month months year years people persons times pcs pieces items
    """.split()
)
_VERB_BASES = frozenset(_VERBS) - _DESCRIPTORS - _VAGUE_EN - STOP_WORDS
_NEVER_EN = STOP_WORDS | _VAGUE_EN | _DESCRIPTORS | _VERB_FORMS | _UNIT_AFTER
_DETERMINERS = frozenset("the a an my your his her our their its this that these those".split())

# -- secrets ----------------------------------------------------------------------------------

_SECRET_EN = frozenset("password passwords passcode passphrase pin pins code codes otp".split())
_SECRET_CN = re.compile(r"密码|口令|验证码|提取码|取件码|激活码|卡密")
_COPULA = frozenset({"is", "are", "was", "=", ":", "是", "为", "："})


class _Candidate:
    __slots__ = ("position", "priority", "word")

    def __init__(self, word: str, priority: int, position: int) -> None:
        self.word, self.priority, self.position = word, priority, position


def keywords(text: str, limit: int = MAX_KEYWORDS) -> list[str]:
    """Up to ``limit`` tags for ``text``, lower-cased, in the order of the note: the names,
    things, places and identifying numbers of it (see the module docstring)."""
    tokens = _tokens(unicodedata.normalize("NFKC", text))
    found: dict[str, _Candidate] = {}
    secret = False  # a secret word was seen in this clause
    after_copula = False  # ... and then its "is": the rest of the clause is the secret
    for index, (word, kind) in enumerate(tokens):
        if kind == "break":
            secret = after_copula = False
            continue
        lowered = word.lower()
        if kind == "cjk-secret" or lowered in _SECRET_EN:
            secret = True
        elif secret and (lowered in _COPULA or kind == "copula"):
            after_copula = True
        if after_copula or (secret and _HAS_DIGIT.search(word) and kind == "latin"):
            continue
        priority = _priority(tokens, index)
        if priority is None:
            continue
        tag = _POSSESSIVE.sub("", lowered) if kind == "latin" else lowered
        if tag not in found:
            found[tag] = _Candidate(tag, priority, index)
    best = sorted(found.values(), key=lambda c: (c.priority, c.position))[:limit]
    return [c.word for c in sorted(best, key=lambda c: c.position)]


def _tokens(text: str) -> list[tuple[str, str]]:
    """(word, kind) in order: kind ``latin``, ``break``, ``copula`` (是, ：), ``cjk-secret``
    (a Chinese secret word), or a jieba part-of-speech flag for a Chinese word."""
    out: list[tuple[str, str]] = []
    for match in _TOKEN.finditer(text):
        cjk, latin, stop = match.groups()
        if stop:
            out.append((stop, "break"))
        elif latin:
            out.append((latin, "latin"))
        else:
            out.extend(_chinese(cjk))
        if stop is None and match.end() < len(text) and text[match.end()] in ":：":
            out.append((":", "copula"))
    return out


def _chinese(run: str) -> list[tuple[str, str]]:
    """The words of a CJK run (``bot.core.chinese_words``: jieba's, its guesses checked) with
    their (corrected) parts of speech, a noun and its suffix joined (贝克 路 -> 贝克路, a
    place), 小 / 老 / 阿 and a surname joined (小陈), a surname and a title too (李 阿姨 ->
    李阿姨), secret words and 是 marked."""
    out: list[tuple[str, str]] = []
    for word, flag in chinese_words.words(run):
        fixed = _TAG_FIXES.get(word, flag)
        if _SECRET_CN.search(word):
            out.append((word, "cjk-secret"))
        elif word in ("是", "为"):
            out.append((word, "copula"))
        elif flag == "nr" and len(word) == 1 and out and out[-1][0] in ("小", "老", "阿"):
            out[-1] = (out[-1][0] + word, "nr")  # 小 陈 -> 小陈, a name by its surname
        elif word in _TITLES and out and out[-1][1] == "nr" and len(out[-1][0]) == 1:
            out[-1] = (out[-1][0] + word, "nr")  # 李 阿姨 -> 李阿姨, a surname and a title
        elif word in _NOUN_SUFFIXES and out and out[-1][1] in _NOUN_FLAGS:
            place = word in _PLACE_SUFFIXES or out[-1][1] == "ns"
            out[-1] = (out[-1][0] + word, "ns" if place else "n")
        else:
            out.append((word, fixed))
    return out


def _priority(tokens: list[tuple[str, str]], index: int) -> int | None:
    """0 a name or place, 1 a thing or identifier, 2 a plain number; None: not a tag."""
    word, kind = tokens[index]
    if kind in ("copula", "cjk-secret"):
        return None
    if kind != "latin":  # a Chinese word and its part of speech
        if kind not in _NOUN_FLAGS or len(word) < 2 or word in _VAGUE_CN:
            return None
        return 0 if kind in _NAME_FLAGS else 1
    lowered = _POSSESSIVE.sub("", word.lower())
    if not 2 <= len(lowered) <= MAX_TAG_CHARS or re.search(r"[.:\\/'’]", lowered):
        return None
    if "-" in lowered:
        return None if _HAS_DIGIT.search(lowered) else 1  # a code; "e-mail" is a word
    if lowered.isdigit():
        return 2 if _identifying_number(tokens, index) else None
    if _HAS_DIGIT.search(lowered):
        identifies = _IDENTIFIER.fullmatch(lowered) and not _NOT_IDENTIFIER.fullmatch(lowered)
        return 1 if identifies else None
    if lowered in _VERB_BASES and _after_determiner(tokens, index):
        return 1  # "the book", "my drive", "work email": a thing, not a verb
    if lowered in _NEVER_EN:
        return None
    # A capital inside a sentence is a name ("Sam", "Lisbon"); at the start it says nothing.
    starts = index == 0 or tokens[index - 1][1] == "break"
    return 0 if word[:1].isupper() and not starts and not word.isupper() else 1


def _after_determiner(tokens: list[tuple[str, str]], index: int) -> bool:
    """Whether the word at ``index`` follows a determiner, a possessive or a noun (then a verb's
    base form is a noun: "the book", "Julia's place", "backup drive")."""
    if not index or tokens[index - 1][1] != "latin":
        return False
    word = tokens[index - 1][0]
    before = word.lower()
    if before in _DETERMINERS or _POSSESSIVE.search(before):
        return True
    # A lower-case noun before it ("backup drive"); after a name it is a verb ("Max start").
    return before not in _NEVER_EN and word.isalpha() and word.islower()


def _identifying_number(tokens: list[tuple[str, str]], index: int) -> bool:
    """Whether the number at ``index`` names something (locker 117, 2027年): three or four
    digits, not a piece of a longer number, not an amount or a day."""
    word = tokens[index][0]
    if not 3 <= len(word) <= 4 or word.startswith("0"):
        return False
    before = tokens[index - 1] if index else ("", "")
    after = tokens[index + 1] if index + 1 < len(tokens) else ("", "")
    if before[0].isdigit() or after[0].isdigit():  # 555 0199: a phone number, cut
        return False
    if after[1] == "latin" and after[0].lower() in _UNIT_AFTER:
        return False
    following = after[0][:1] if after[1] not in ("latin", "break") else ""
    if following == "年":
        return len(word) == 4  # a year
    return following not in _AMOUNT_AFTER
