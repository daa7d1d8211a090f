"""The strings of /start and /help (the greeting, the examples, the manual), in English and
Chinese; ``bot.view.i18n`` adds them to its table (HTML unless the key ends in ``_plain``)."""

from __future__ import annotations

HELP_EN = """<b>Commands</b>
/remember <i>text</i> — remember something; the whole text is kept as you wrote it. \
<code>#hashtags</code> (or <code>＃</code>, emoji too) become tags. A category is set only at \
the start, by a known category word and a colon (work, personal, project, schedule, contact, \
home, family, health, finance, shopping, travel, study, idea, todo: \
<code>/remember work: standup at 10 #meeting</code>) or by a hashtag and a colon \
(<code>/remember #recipes: pancakes need 2 eggs</code>); <code>Password: hunter2</code> stays \
one note. Without hashtags I pick tags from the keywords. Dates such as “next Tuesday 3pm” are \
worked out and shown with the memory. Something already stored is not stored twice. A new \
value for something you told me (“the cabin wifi password is now …”) replaces the old one, \
and ↩ Undo brings it back; if a memory is much like one you have, I ask: keep both, replace \
the old one, or cancel. Send /remember as a reply to store that message.
/recall <i>question</i> — the best matching memories (no question: the most recent). \
<code>/recall today</code> or <code>/recall Dec 8</code> finds what you saved or planned that day.
/forget <i>id</i> [<i>id</i> …] — delete memories (I ask first, for each).
/list [<i>category</i> | #<i>tag</i>] — all memories (or one category's, or one tag's), newest \
first, page by page.
/edit <i>id</i> <i>new text</i> — change a memory (hashtags and <code>category:</code> too).
/related <i>id</i> — memories sharing its tags or category.
/stats — totals, categories, top tags, most used.
/export [md|ics] — your memories as a <code>memory.json</code> file (<code>md</code>: as \
Markdown, by category); <code>ics</code>: this chat's reminders as a calendar file. Send a \
<code>.json</code>, <code>.md</code> or a <code>.zip</code> of notes back to import it.
/calendar — a private link that puts this chat's reminders in your calendar app, kept up to \
date (<code>/calendar reset</code>: a new link).
/digest [on|off|now] — a scheduled report: the most used memories, the new ones, those \
gone unused. /digest alone shows the setting and the next report.
/remind <i>when</i> <i>what</i> — a reminder, in English or Chinese: \
<code>/remind tomorrow 9am call mom</code>, <code>/remind in 2 hours laundry</code>, \
<code>/remind every monday 9:00 weekly report</code>, <code>/remind 下周二下午三点 看牙医</code>. \
As a reply, it reminds you of that message. "remind me …" in a message works too.
/reminders — the upcoming reminders, with a cancel button each.
/timezone [<i>place</i>] — this chat's time zone: a city, a country, an offset or a location \
(<code>/timezone Berlin</code>, <code>/timezone UTC+8</code>).
/undo — take back the last change made in this chat (again: the one before). A model's whole \
answer is one change; a memory changed since is left as it is.
/history [<i>id</i>] — the recent changes (deletions too), or every version of one memory, \
who made it and when, with a button to restore one.
/tidy [on|off] — tidy up now: duplicates merged, past events marked, ended reminders closed, \
conflicting values asked about. It also runs every night unless /tidy off; /undo reverts it.

Say it in words too: “remember that my locker is 23”, “note: …”, “don't forget …”. Any \
other message is searched; without a language model, a statement gets a 💾 Remember this \
button that stores it.
In groups, address me with a command, an @mention or a reply to one of my messages. A group's \
memories are shared: every member can find them, and a memory can be deleted or changed by \
the member who stored it or by a group administrator."""

HELP_ZH = """<b>命令</b>
/remember <i>内容</i> — 记住一件事，内容按你写的原样保存。<code>#话题标签</code>（或 \
<code>＃</code>，表情也可以）会成为标签。分类只能写在开头：已知的分类词加冒号（工作、个人、项目、\
日程、联系人、家庭、健康、财务、购物、旅行、学习、想法、待办：\
<code>/remember 工作：明天十点开会 #会议</code>），或话题标签加冒号\
（<code>/remember #菜谱：松饼要两个鸡蛋</code>）；<code>公司WiFi密码：abc</code> 仍是一整条记忆。\
没写标签时，我会从关键词里挑选。“下周二下午三点”这样的日期会被换算成具体日期，和记忆一起显示。\
已经记住的内容不会重复保存。你说的是之前某件事的新值（“公司WiFi密码改成……了”）时，\
我会替换旧的，用 ↩ 撤销可以恢复；和已有记忆很像时，我会问你：都保留、替换旧的，还是取消。\
回复某条消息并发送 /remember，可以记住那条消息。
/recall <i>问题</i> — 找出最相关的记忆（不写问题：最近的记忆）。
/forget <i>编号</i> [<i>编号</i> …] — 删除记忆（每条都会先确认）。
/list [<i>分类</i> | #<i>标签</i>] — 分页列出全部记忆（或某个分类、某个标签的），最新的在前。
/edit <i>编号</i> <i>新内容</i> — 修改一条记忆（也可以改标签和 <code>分类：</code>）。
/related <i>编号</i> — 与它标签或分类相同的记忆。
/stats — 总数、分类、常用标签、最常用的记忆。
/export [md|ics] — 把你的记忆导出为 <code>memory.json</code> 文件（<code>md</code>：\
按分类导出为 Markdown）；<code>ics</code>：把这个聊天的提醒导出为日历文件。\
把 <code>.json</code>、<code>.md</code> 或笔记的 <code>.zip</code> 发给我即可导入。
/calendar — 一个私密链接，把这个聊天的提醒放进你的日历应用并自动更新\
（<code>/calendar reset</code>：换一个新链接）。
/digest [on|off|now] — 定期摘要：最常用的记忆、新增的记忆、久未使用的记忆。\
只发送 /digest 可以查看设置和下一次发送时间。
/remind <i>时间</i> <i>事情</i> — 设置提醒，中文英文都行：\
<code>/remind 明天早上9点 给妈妈打电话</code>、\
<code>/remind 每周一早上9点 周会</code>、<code>/remind 12月24日 买礼物</code>。\
回复一条消息发送，到时提醒你那条消息。消息里写“提醒我……”也可以。
/reminders — 即将到来的提醒，每个都有取消按钮。
/timezone [<i>地点</i>] — 这个聊天的时区：城市、国家、时差或位置\
（<code>/timezone 上海</code>、<code>/timezone UTC+8</code>）。
/undo — 撤销本聊天里最近的一次改动（再发一次：撤销更早的一次）。模型的一次回答算一次改动；\
之后又被改过的记忆保持原样。
/history [<i>编号</i>] — 最近的改动（包括删除），或一条记忆的每个版本、谁在何时改的，\
可以用按钮恢复某个版本。
/tidy [on|off] — 立即整理：合并重复、标记已过去的事、结束已完成的提醒、询问相互矛盾的值。\
每晚也会自动整理，除非 /tidy off；/undo 可以撤销。

也可以直接说：“记住我的柜子是23号”“帮我记一下……”“备忘：……”。其他消息我会在记忆里搜索；\
没有配置语言模型时，陈述句下面有 💾 记住这条 按钮，点一下就保存。
在群组里，请用命令、@我 或回复我的消息来跟我说话。群组的记忆是共享的：每个成员都能查到；\
只有存入它的成员或群组管理员可以删除或修改它。"""

EN = {
    "start": "👋 Hi {name}! Tell me what is worth keeping; ask for it later in your own "
    "words, and I find it.\n\n"
    "<code>remember my locker is 117</code>\n"
    "<code>which locker is mine?</code>\n\n"
    "💡 shows more to try; /help lists every command.",
    "start_examples": "💡 <b>Things to send</b> (tap one to copy it):\n"
    "<code>remember my passport is in the desk drawer</code>\n"
    "<code>where is my passport?</code>\n"
    "<code>/remember work: standup at 10 #meeting</code>\n"
    "<code>remind me tomorrow at 9 to call mom</code>\n"
    "<code>/remind every monday 9:00 weekly report</code>\n"
    "<code>/list</code> · <code>/stats</code> · <code>/reminders</code> · <code>/undo</code>",
    "button_examples_plain": "💡 Examples",
    "button_help_plain": "📖 Help",
    "help": HELP_EN,
}

ZH = {
    "start": "👋 你好，{name}！把值得记住的事告诉我，以后用你自己的话问，我帮你找出来。\n\n"
    "<code>记住我的柜子是117号</code>\n"
    "<code>我的柜子是几号？</code>\n\n"
    "💡 里有更多例子；/help 列出所有命令。",
    "start_examples": "💡 <b>可以这样发</b>（点一下就能复制）：\n"
    "<code>记住护照在书桌抽屉里</code>\n"
    "<code>我的护照在哪？</code>\n"
    "<code>/remember 工作：每天十点站会 #会议</code>\n"
    "<code>提醒我明天早上9点给妈妈打电话</code>\n"
    "<code>/remind 每周一早上9点 写周报</code>\n"
    "<code>/list</code> · <code>/stats</code> · <code>/reminders</code> · <code>/undo</code>",
    "button_examples_plain": "💡 例子",
    "button_help_plain": "📖 帮助",
    "help": HELP_ZH,
}
