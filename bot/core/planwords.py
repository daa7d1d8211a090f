"""The words that tell a plan from a statement, in English and Chinese: the lexicon of ``plans``.

Every list here is a class of words, not a list of phrases: modal and future cues ("need to",
"going to", 要, 得, 打算), verbs that start a to-do ("call", "pay", 去, 交), events a person
attends ("appointment", "flight", 会议, 面试), and what turns a sentence into something that is
no plan (negation, the past, a vague time, a question). ``bot.core.plans`` combines them;
``tests/bot/test_plans.py`` holds them to a table of phrases, ``bench/offers.py`` to two sets.
"""

from __future__ import annotations

import re

_I = re.IGNORECASE

# -- English ------------------------------------------------------------------------------------

# Contractions spelled out, so that one pattern reads "I'll" and "I will" ("’" is "'" by now).
EN_CONTRACTIONS = (
    (re.compile(r"\b(i|we|you|u)'ll\b", _I), r"\1 will"),
    (re.compile(r"\bi'm\b", _I), "i am"),
    (re.compile(r"\b(we|you)'re\b", _I), r"\1 are"),
    (re.compile(r"\b(i|we|you)'ve\b", _I), r"\1 have"),
    (re.compile(r"\b(i|we|you)'d\b", _I), r"\1 would"),
    (re.compile(r"\bgotta\b", _I), "got to"),
    (re.compile(r"\bgonna\b", _I), "going to"),
    (re.compile(r"\bwanna\b", _I), "want to"),
    (re.compile(r"\blet's\b", _I), "let us"),
    (re.compile(r"\bim\b", _I), "i am"),
)
# "would better" is "'d better" spelled out.
EN_MODAL = (
    r"(?:need|needs|have|has|have\s+got|got|ought|want|wants|would\s+like|would\s+love"
    r"|plan|plans|planning|intend|intends|mean|hope|try|am\s+supposed|are\s+supposed"
    r"|supposed|am\s+going|are\s+going|going|am\s+planning|are\s+planning|remember"
    r"|would\s+need|will\s+need|will\s+have|must\s+remember|should\s+remember)\s+to"
    r"|must|should|shall|will|had\s+better|would\s+better|better"
)
EN_ADVERBS = r"(?:really|still|also|just|definitely|absolutely|probably|then|first|finally|both)"
EN_SUBJECT = r"(?:i|we|you|u)"
# Events a person attends: "a dentist appointment", "my flight", "yoga class".
EN_EVENTS = (
    r"appointment|appt|meeting|interview|exam|test|flight|train|call|class|lesson|session"
    r"|party|dinner|lunch|breakfast|brunch|date|concert|game|match|show|check-?up|surgery"
    r"|deadline|presentation|conference|webinar|demo|reservation|booking|haircut|massage"
    r"|practice|rehearsal|wedding|funeral|trip|visit|shift|training|workout|ceremony"
    r"|recital|hearing|consultation|vaccination|vaccine|jab|pickup|drop-?off|stand-?up"
    r"|one-on-one|1:1|sync|coffee|drinks|playdate|gig|screening|viewing|inspection"
    r"|service|therapy|physio|course|seminar|workshop|lecture|tutorial|standup|review"
    # whom one has an appointment with: "dentist at 3:30 tomorrow"
    r"|dentist|doctor|doctor's|gp|vet|hairdresser|barber|optician|orthodontist|dermatologist"
    r"|therapist|physiotherapist|chiropractor|pediatrician|paediatrician|tutor|trainer"
)
# Up to three words before the event, none of them a pronoun, an article or a verb of thought
# ("yoga class", "doctor's appointment"; not "I think the meeting", "the game").
EN_MODIFIER = (
    r"(?!(?:the|this|that|these|those|i|we|you|he|she|they|it|there|is|are|was|were|be|think"
    r"|thought|know|guess|hope|said|says|his|her|their|its)\b)[\w'&-]+\s+"
)
# The event alone, or followed by with whom, where, when: "dinner with the Johnsons"; not
# "dinner is at 7" (a statement).
EN_EVENT_AT_START = re.compile(
    rf"^(?:(?:my|our|your|a|an)\s+)?(?:{EN_MODIFIER}){{0,3}}?(?:{EN_EVENTS})s?\b"
    r"(?:\s*$|\s*[-–:,(@]|\s+(?:with|at|for|in|on|to|about|and|from|near|by)\b)",
    _I,
)
# Who has the event: the person, or someone they name ("my son", "the kids", "Anna"); not he,
# she, it ("it has a meeting room").
EN_HAVE_EVENT = re.compile(
    rf"(?:\b{EN_SUBJECT}|\b(?:my|our|the)\s+[\w'-]+|^(?!(?:he|she|it|they|there|this|that)\b)"
    r"[\w'-]+)\s+"
    rf"(?:{EN_ADVERBS}\s+)?"
    r"(?:have|has|have\s+got|has\s+got|got|will\s+have)\s+"
    rf"(?:a|an|my|our|the|another|one|two)?\s*(?:[\w'&-]+\s+){{0,3}}?(?:{EN_EVENTS})s?\b",
    _I,
)
EN_MY_EVENT = re.compile(
    rf"\b(?:my|our|your)\s+(?:[\w'&-]+\s+){{0,3}}?(?:{EN_EVENTS})s?\b"
    r"(?:\s+[\w'&-]+){0,4}?\s+(?:is|starts|begins|leaves|departs|will\s+be)\b",
    _I,
)
EN_WILL_DO = re.compile(
    rf"(?:^|\b{EN_SUBJECT}\s+|\blet\s+us\s+)(?:{EN_ADVERBS}\s+)?(?:{EN_MODAL})\b"
    rf"|\b(?:i\s+am|we\s+are)\s+(?:{EN_ADVERBS}\s+)?(?!(?:thinking|wondering|feeling|"
    r"considering|hoping|sorry|tired|done|not)\b)\w+ing\b"
    r"|^(?:let\s+us|don't\s+forget|do\s+not\s+forget|make\s+sure|be\s+sure|remember\s+to"
    r"|time\s+to|must\s+remember)\b"
    r"|\b(?:don't|do\s+not|can't|cannot|mustn't|must\s+not|never)\s+forget\s+(?:to|about)\b"
    r"|\bremember\s+to\b|\bremind\s+myself\b|\b(?:i\s+am|we\s+are)\s+off\s+to\b"
    r"|\blet\s+me\s+(?:not\s+)?forget\b"
    # arranged: "I booked a table for Friday at 8pm", "we signed up for the 5k on Sunday"
    r"|\b(?:i|we)\s+(?:have\s+|just\s+|already\s+)?(?:booked|scheduled|arranged|reserved"
    r"|promised|agreed|signed\s+up|registered|made\s+(?:an?\s+)?(?:appointment|reservation"
    r"|booking|plans?))\b",
    _I,
)
# Verbs a to-do starts with ("call the bank tomorrow at 10am", "pay rent on Friday").
EN_TODO_VERBS = (
    "call ring phone text email e-mail message whatsapp buy get grab pick drop pay book renew "
    "submit send finish return bring take clean wash fix check visit meet see go attend cancel "
    "order print sign water feed walk file prepare review write read study start move pack "
    "collect deliver post mail schedule confirm register apply charge recharge update install "
    "transfer deposit withdraw ask tell invite congratulate wish celebrate cook bake shop fetch "
    "change replace refill top iron defrost hand leave vote practise practice exercise run swim "
    "jog clear empty put set reserve follow contact reply respond finalize finalise complete "
    "fill upload download back repair service inspect mow vacuum tidy hoover dust sweep make do "
    "organize organise plan arrange sort rsvp purchase oil swap rotate unplug lock turn switch "
    "open close give lend borrow donate recycle throw rent cash claim redeem extend cook prep "
    "drive fly head travel board catch water wake get-up stretch meditate pray study revise "
    "present publish release deploy ship migrate backup book check-in checkout check-out "
    "pick-up drop-off return refund exchange remind text tidy vacuum wrap mail"
).split()
EN_IMPERATIVE = re.compile(
    r"^(?:please\s+|pls\s+|and\s+|then\s+|also\s+)?(?:" + "|".join(EN_TODO_VERBS) + r")\b", _I
)
# No plan: a negation (not of forgetting), a past event, a vague time.
EN_NEGATION = re.compile(
    r"\b(?:not|never|no\s+longer|no\s+need|don't|do\s+not|doesn't|does\s+not|won't|will\s+not"
    r"|can't|cannot|can\s+not|shouldn't|needn't|isn't|aren't|wasn't|weren't|didn't"
    r"|cancell?ed|called\s+off|postponed|skipping|skip)\b",
    _I,
)
EN_NOT_NEGATION = re.compile(
    r"\b(?:don't|do\s+not|never|not\s+to|mustn't|must\s+not|can't|cannot)\s+forget\b"
    r"|\b(?:don't|do\s+not)\s+be\s+late\b|\bnot\s+later\s+than\b"
    r"|\b(?:don't|do\s+not)\s+let\s+me\s+forget\b",
    _I,
)
EN_PAST_IRREGULAR = (
    "went did was were had came saw met took made ran ate left forgot paid bought sent "
    "spent gave told said found began caught drove flew wrote slept woke sat felt kept lost "
    "won brought thought spoke broke chose fell held hung led meant quit rode rang sang sold "
    "shut stood swam threw understood wore drank fed heard hid hit hurt knew lay lit read "
    "became built bit blew burnt dealt dug drew dreamt fought fled forgave froze grew hid "
    "taught tore"
).split()
# Words in -ed that are no past tense ("I need to").
NOT_PAST = (
    r"(?:need|feed|speed|bleed|proceed|succeed|exceed|breed|heed|embed|shred|wed|bed|red|bred"
    r"|seed)\b"
)
# Past forms that arrange something to come ("I booked a table for Friday at 8").
EN_ARRANGED = (
    "booked scheduled arranged planned promised agreed decided reserved ordered registered "
    "signed invited moved rescheduled confirmed"
).split()
EN_PAST = re.compile(
    r"\b(?:i|we|he|she|they|you)\s+(?:just\s+|already\s+|finally\s+|also\s+)?"
    r"(?!(?:" + "|".join(EN_ARRANGED) + r")\b)"
    r"(?:" + "|".join(EN_PAST_IRREGULAR) + r"|got(?!\s+to\b)|(?!" + NOT_PAST + r")\w+ed)\b"
    r"|\b(?:was|were|used\s+to|yesterday|ago|last\s+(?:night|week|month|year|time|\w+day)"
    r"|earlier\s+today|this\s+past|had\s+to|have\s+been|has\s+been)\b",
    _I,
)
EN_VAGUE = re.compile(
    r"\b(?:might|maybe|perhaps|possibly|someday|some\s+day|sometime\s+(?:next|this|soon|later)|one\s+day|soon|eventually"
    r"|at\s+some\s+point|in\s+the\s+future|later(?!\s+(?:today|this|on\s+today|tonight))"
    r"|(?:next|this|the\s+following|the\s+coming)\s+(?:month|year))\b",
    _I,
)
# "next week" with no day in it; "next week on Monday" names one.
EN_WEEK_ALONE = re.compile(r"\b(?:next|this|the\s+following|the\s+coming)\s+week\b", _I)
EN_BIRTHDAY = re.compile(
    r"\b(?:birthday|b-?day|anniversary)(?!\s+(?:party|present|gift|card|cake|dinner|lunch|"
    r"celebration|bash|drinks|trip|plans?|surprise|shopping|wishes|message|call)\b)",
    _I,
)
# The subject and cue a reminder's text goes without: "I need to call him" -> "call him".
# "going to the gym" goes somewhere: there "to" is no modal, and stays in the text.
_GOING_SOMEWHERE = r"(?!(?:am\s+|are\s+)?going\s+to\s+(?:the|a|an|my|our|your|bed|work|school)\b)"
EN_LEAD = re.compile(
    rf"^(?:(?:i|we|you|u)\s+(?:{EN_ADVERBS}\s+)?{_GOING_SOMEWHERE}(?:{EN_MODAL})\s+"
    rf"(?:{EN_ADVERBS}\s+)?"
    rf"|{_GOING_SOMEWHERE}(?:need|needs|have|got|must|should|going|want|plan|supposed|better"
    r"|remember)\s+(?:to\s+)?|let\s+us\s+|don't\s+forget\s+(?:to\s+)?|make\s+sure\s+(?:to\s+)?"
    r"|(?:i|we)\s+(?:have\s+got|have|got)\s+(?=(?:a|an|my|our|the|another)\b)"
    r"|(?:i|we)\s+am\s+|(?:i|we)\s+are\s+|i\s+|we\s+)",
    _I,
)
EN_TAIL = re.compile(
    r"(?:[\s,;:.!-]+|\b(?:before|by|on|at|in|for|until|from|and|is|are|starts|begins)\b)+$", _I
)

# -- Chinese ------------------------------------------------------------------------------------

# A modal or future cue: 要 (not 重要, 只要, 要是, 要不要), 得 before a verb, 需要, 打算 ...
ZH_MODAL = re.compile(
    r"(?<![重主只不想必需])要(?![是求紧命素闻不])"
    r"|(?:^|(?<=[\s我们都还也就先]))得(?=[\u4e00-\u9fff])"
    r"|需要|必须|应该|应当|准备|打算|计划|想(?![起到法念象])|将要|记得|别忘|不要忘|不能忘"
    r"|千万|务必|一定|约了|约好|预约|订了|定了|安排了|报名了|不得不|提醒自己"
)
# What a to-do starts with, after the time: 去, 交, 开会, 和老王吃饭, 给妈妈打电话 ...
ZH_TODO = (
    "去 回 到 来 接 送 见 开会 开 参加 看 买 交 缴 还 取 拿 办 做 打 给 和 跟 与 带 请 约 陪 "
    "赶 坐 飞 出差 出发 出门 面试 考试 上课 上班 加班 值班 体检 复查 复诊 看病 吃 喝 聚餐 "
    "聚会 健身 跑步 游泳 爬山 打球 签 寄 收 搬 装 修 洗 剪 理发 充 付 转 汇 存 提交 发 写 "
    "读 学 练 准备 收拾 整理 打扫 遛 喂 浇 订 预订 退 换 续 报名 登记 预约 排队 挂号 开户 领 "
    "报到 面签 起床 入住 退房 提车 取车 还车 保养 年检 加油 开车 联系 通知 叫 喊 登机 值机 "
    "听 上课 上班 上网课 下楼 烧 煮 吃药 打针 接种 过生日 庆祝 祝 拜访 看望 探望 参观 逛 晒 把 "
    "帮 找 问 催 核对 检查 确认 复习 预习 备课 开始 结束 完成 处理 讨论 汇报 演讲 答辩 考 "
    "报税 续费 充值 还款 还贷 打卡 锻炼 早起 请客 约会 相亲 拍照 搬家 装修 离开 出院 住院 "
    "手术 扔 倒 带上 记 背 送给 陪同 参与 出席 主持 签约 见面 碰头 集合 到场 赴约 回复 发送"
).split()
ZH_TODO_AT_START = re.compile(
    r"^(?:(?:我们|咱们|我|咱|大家)(?:和|跟|与)?[\u4e00-\u9fff]{0,3}?)?(?:还|也|就|都|先|再)?"
    r"(?:在|于)?\s*(?:" + "|".join(sorted(set(ZH_TODO), key=len, reverse=True)) + r")"
)
ZH_EVENTS = (
    r"会议|例会|周会|晨会|开会|会|面试|考试|航班|高铁|动车|火车|飞机|电话会议?|视频会议?|约会|预约"
    r"|聚会|聚餐|饭局|婚礼|派对|课|讲座|手术|体检|复查|演出|比赛|球赛|电影|音乐会|家长会|年会"
    r"|面签|门诊|号|活动|培训|party"
)
ZH_HAVE_EVENT = re.compile(
    rf"(?:^|[\s我们])有(?:个|一个|场|一场|节|一节|趟|班)?.{{0,6}}?(?:{ZH_EVENTS})"
)
# "的高铁", "的火车去苏州", "的会议在3楼": the event, alone or followed by where it goes; not
# "的会议记录在共享盘" (a thing named after it).
ZH_EVENT_ALONE = re.compile(
    rf"^的?.{{0,4}}?(?:{ZH_EVENTS})(?:[\s,，。!！]*$|[\s,，]*(?:去|到|飞|回|出发|开|在|见|要|得))"
)
# Not the person's plan: someone else's (他明天要去北京), a guess or the weather (明天可能要下雪).
ZH_NOT_MINE = re.compile(
    r"^(?:[\s,，]*)(?:他们|她们|他|她|它|人家|别人)|可能|也许|或许|大概|估计|好像|似乎|下雨|下雪|降温|升温"
    r"|刮风|雾霾|台风|天气"
)
ZH_NEGATION = re.compile(
    r"不(?!错|少|久|过|仅|但|然|如|断|管|见不散|得不|要忘|能忘|会忘|一定|太)|没|别(?!忘)|取消|推迟|延期|算了|免了"
)
ZH_PAST = re.compile(
    r"已经(?!约|订|定|预约|安排|报名|买好)|刚才|刚刚|刚(?![好才])|曾经|小时候|当时|那时|那天|上次|以前(?=[我他她])"
    r"|(?<![约订定排忘])(?<!预约)(?<!报名)了(?![解])|过(?=[了的])|[去做吃见看到来]过"
)
ZH_VAGUE = re.compile(
    r"改天|以后|有空|回头|过几天|过两天|哪天|早晚|迟早|将来|有机会|这几天|最近|近期|早日|尽快|找时间|抽空"
    r"|(?:下下?个?|这个?|本)(?:周|星期|礼拜)(?![一二三四五六日天末1-7])"
    r"|(?:下个?|这个?|本)月(?![\d一二三四五六七八九十初底中])|明年(?![\d一二三四五六七八九十])"
    r"|今年(?![\d一二三四五六七八九十])"
)
ZH_BIRTHDAY = re.compile(r"(?:生日|纪念日|周年)(?=\s*(?:是|在|为|就是|:|：|,|，|$))")
ZH_LEAD = re.compile(
    r"^(?:[\s,，的]|我们|咱们|我|咱|也|就|都|先|在|于|要|得|需要|必须|应该|应当|准备|打算|计划|想"
    r"|记得|别忘了?|不要忘了?|千万|务必|一定要?|之前|以前|前)+"
)
# "下周的会议材料", "next week's slides": a time that says which thing, not when to do it.
ZH_TIME_OF = re.compile(
    r"(?:下下?个?|这个?|本|上个?)(?:周|星期|礼拜|月)的|(?:明天|今天|后天|明年|今年)的(?=.)"
)
EN_TIME_OF = re.compile(
    r"\b(?:next|this|last)\s+(?:week|month|year)'s\b|\b(?:tomorrow|today)'s\b", _I
)
ZH_TAIL = re.compile(r"(?:[\s,，。.!！~～吧啊呀哦了]|别忘|千万别忘|记得)+$")
# Words of the evening: "dinner on Saturday at 7" is 19:00, as "明天七点吃晚饭".
EVENING = re.compile(
    r"\b(?:dinner|supper|party|drinks|movie|film|concert|show|gig|theatre|theater|date\s+night"
    r"|bar|pub|club|game\s+night)\b|晚饭|晚餐|夜宵|聚餐|喝酒|电影|演唱会|晚会|酒吧",
    _I,
)

# -- either -------------------------------------------------------------------------------------

CJK = re.compile(r"[\u3400-\u9fff]")
# After 。！？； always; after . ! ? ; only before a space (not "3.30"); never after "Mrs." or
# "a.m." (``ABBREVIATED`` joins those back).
SENTENCE_END = re.compile(r"(?<=[。！？；])\s*|(?<=[.!?;])\s+|\n+")
ABBREVIATED = re.compile(r"(?:\b(?:mr|mrs|ms|dr|st|jr|sr|vs|etc|no|e\.g|i\.e|a\.m|p\.m)\.)$", _I)
