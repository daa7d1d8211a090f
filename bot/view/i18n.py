"""Every string a user sees, in English and Chinese.

A user whose Telegram ``language_code`` starts with ``zh`` gets Chinese, everyone else English.
Templates are Telegram HTML: placeholders (``{content}``) must be given text that is already
escaped (``bot.view.render.escape``), and literal ``<``, ``>`` and ``&`` are written as entities.
Keys ending in ``_plain`` are plain text (button labels, pop-up alerts, command descriptions),
never parsed as HTML, so they are not escaped.
"""

from __future__ import annotations

import logging
import re

from telegram import User

from bot.view import problem_strings, reminder_strings, zone_strings
from bot.view.media_text import MEDIA_STRINGS
from memory.errors import MemoryInvalid
from memory.model import MAX_CONTENT_CHARS, MAX_TAG_CHARS, MAX_TAGS

LANGUAGES = ("en", "zh")
_SURROGATE = re.compile("[\ud800-\udfff]")

log = logging.getLogger(__name__)

# The commands, in menu order: (command, key of its description).
COMMANDS = (
    ("remember", "cmd_remember_plain"),
    ("recall", "cmd_recall_plain"),
    ("forget", "cmd_forget_plain"),
    ("list", "cmd_list_plain"),
    ("edit", "cmd_edit_plain"),
    ("related", "cmd_related_plain"),
    ("stats", "cmd_stats_plain"),
    ("export", "cmd_export_plain"),
    ("digest", "cmd_digest_plain"),
    ("remind", "cmd_remind_plain"),
    ("reminders", "cmd_reminders_plain"),
    ("timezone", "cmd_timezone_plain"),
    ("undo", "cmd_undo_plain"),
    ("history", "cmd_history_plain"),
    ("help", "cmd_help_plain"),
    ("start", "cmd_start_plain"),
)

_HELP_EN = """<b>Commands</b>
/remember <i>text</i> — remember something; the whole text is kept as you wrote it. \
<code>#hashtags</code> (or <code>＃</code>, emoji too) become tags. A category is set only at \
the start, by a known category word and a colon (work, personal, project, schedule, contact, \
home, family, health, finance, shopping, travel, study, idea, todo: \
<code>/remember work: standup at 10 #meeting</code>) or by a hashtag and a colon \
(<code>/remember #recipes: pancakes need 2 eggs</code>); <code>Password: hunter2</code> stays \
one note. Without hashtags I pick tags from the keywords. Dates such as “next Tuesday 3pm” are \
worked out and shown with the memory. Something already stored is not stored twice; if a \
memory is much like one you have, I ask: keep both, replace the old one, or cancel. Send \
/remember as a reply to store that message.
/recall <i>question</i> — the best matching memories (no question: the most recent). \
<code>/recall today</code> or <code>/recall Dec 8</code> finds what you saved or planned that day.
/forget <i>id</i> [<i>id</i> …] — delete memories (I ask first, for each).
/list [<i>category</i> | #<i>tag</i>] — all memories (or one category's, or one tag's), newest \
first, page by page.
/edit <i>id</i> <i>new text</i> — change a memory (hashtags and <code>category:</code> too).
/related <i>id</i> — memories sharing its tags or category.
/stats — totals, categories, top tags, most used.
/export — your memories as a <code>memory.json</code> file.
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

Say it in words too: “remember that my locker is 23”, “note: …”, “don't forget …”. Any \
other message is searched; without a language model, a statement gets a 💾 Remember this \
button that stores it.
In groups, address me with a command, an @mention or a reply to one of my messages. A group's \
memories are shared: every member can find them, and a memory can be deleted or changed by \
the member who stored it or by a group administrator."""

_HELP_ZH = """<b>命令</b>
/remember <i>内容</i> — 记住一件事，内容按你写的原样保存。<code>#话题标签</code>（或 \
<code>＃</code>，表情也可以）会成为标签。分类只能写在开头：已知的分类词加冒号（工作、个人、项目、\
日程、联系人、家庭、健康、财务、购物、旅行、学习、想法、待办：\
<code>/remember 工作：明天十点开会 #会议</code>），或话题标签加冒号\
（<code>/remember #菜谱：松饼要两个鸡蛋</code>）；<code>公司WiFi密码：abc</code> 仍是一整条记忆。\
没写标签时，我会从关键词里挑选。“下周二下午三点”这样的日期会被换算成具体日期，和记忆一起显示。\
已经记住的内容不会重复保存；和已有记忆很像时，我会问你：都保留、替换旧的，还是取消。\
回复某条消息并发送 /remember，可以记住那条消息。
/recall <i>问题</i> — 找出最相关的记忆（不写问题：最近的记忆）。
/forget <i>编号</i> [<i>编号</i> …] — 删除记忆（每条都会先确认）。
/list [<i>分类</i> | #<i>标签</i>] — 分页列出全部记忆（或某个分类、某个标签的），最新的在前。
/edit <i>编号</i> <i>新内容</i> — 修改一条记忆（也可以改标签和 <code>分类：</code>）。
/related <i>编号</i> — 与它标签或分类相同的记忆。
/stats — 总数、分类、常用标签、最常用的记忆。
/export — 把你的记忆导出为 <code>memory.json</code> 文件。
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

也可以直接说：“记住我的柜子是23号”“帮我记一下……”“备忘：……”。其他消息我会在记忆里搜索；\
没有配置语言模型时，陈述句下面有 💾 记住这条 按钮，点一下就保存。
在群组里，请用命令、@我 或回复我的消息来跟我说话。群组的记忆是共享的：每个成员都能查到；\
只有存入它的成员或群组管理员可以删除或修改它。"""

STRINGS: dict[str, dict[str, str]] = {
    "en": {
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
        "help": _HELP_EN,
        "usage_remember": "What should I remember? Send <code>/remember standup is at 10:00</code>"
        " or reply to a message with /remember.",
        "usage_forget": "Which memory? Send <code>/forget 1712345678901</code>; /recall and /list "
        "show the ids.",
        "usage_edit": "Send <code>/edit 1712345678901 new text</code>; /recall and /list show the "
        "ids.",
        "usage_related": "Send <code>/related 1712345678901</code>; /recall and /list show the "
        "ids.",
        "remembered": "✅ Remembered.\n{memory}",
        "tags_derived": "<i>Tags picked from the keywords; add #hashtags to choose your own.</i>",
        "recent_title": "🕘 Most recent memories:",
        "recall_count": "<i>{count} of {total}</i>",
        "recall_range": "<i>{first}–{last} of {total}</i>",
        "recall_none": "I found nothing about “{query}”.",
        "recall_hint": "<i>Try other words, browse with /list, or store it with /remember.</i>",
        "recall_answer_title": "🔎 “{query}”",
        "recall_weaker_title": "🔎 Weaker matches for “{query}” <i>({first}–{last} of {total})</i>",
        "button_closest_plain": "Closest matches ▶",
        "list_reminders_apart": "<i>⏰ {count} reminder memories are kept apart: /list reminder "
        "shows them, /reminders the ones to come.</i>",
        "button_more_count_plain": "More ({count}) ▶",
        "button_menu_forget_plain": "🗑 Forget",
        "button_menu_related_plain": "🔗 Related",
        "button_menu_history_plain": "🕘 History",
        "no_memories": "No memories yet. Send <code>/remember something</code> to store one.",
        "free_text_hint": "💡 Or say it in words: “remember that …” stores what follows.",
        "button_remember_this_plain": "💾 Remember this",
        "not_yours_offer_plain": "Only who said it, or a group administrator, can store it.",
        "offer_gone_plain": "This offer is too old; send /remember with the text instead.",
        "forget_confirm": "Forget this memory?\n{memory}",
        "forgotten": "🗑 Forgotten: {content}",
        "kept": "👍 Kept: {content}",
        "already_remembered": "👌 Already remembered, nothing stored twice:\n{memory}",
        "near_duplicate": "🤔 “{content}” is much like what you already have. Keep both, "
        "replace the old one, or cancel?",
        "button_keep_both_plain": "➕ Keep both",
        "button_replace_plain": "✏️ Replace {index}: {preview}",
        "button_cancel_plain": "✖ Cancel",
        "not_yours_choice_plain": "Only who asked to store it, or a group administrator, can "
        "choose; replacing needs the right to change the old memory.",
        "resolved_date": "📅 {when}",
        "cancelled": "👍 Cancelled.",
        "not_found": "There is no memory <code>{id}</code> here. /recall and /list show the ids.",
        "bad_id": "“{value}” is not a memory id; ids are the numbers that /recall and /list show.",
        "edited": "✏️ Updated.\n{memory}",
        "related_title": "🔗 Related to “{content}”:",
        "related_none": "Nothing shares tags or a category with “{content}”.",
        "stats_title": "📊 <b>Memories:</b> {total}",
        "stats_by_category": "<b>Categories:</b> {items}",
        "stats_top_tags": "<b>Top tags:</b> {items}",
        "stats_most_accessed": "<b>Most used:</b>",
        "stats_times": "{count}×",
        "llm_memory_updated": "🧠 <i>Memory updated: {changes}.</i>",
        "llm_added": "added {ids}",
        "llm_changed": "changed {ids}",
        "llm_deleted": "deleted {ids}",
        "llm_confirm_changes": "⚠️ The model wanted {count} more changes to existing memories. "
        "They wait for your confirmation below.",
        "llm_message_cut": "✂️ <i>Your message was long: I read its first {kept} of {total} "
        "characters. Send the rest in another message if it matters.</i>",
        "llm_not_kept": "⚠️ I could not save the old versions of what the model changed, so I "
        "undid its changes: nothing was changed. Please try again later; the bot's owner can "
        "find the details in the log.",
        "changes_pending": "⚠️ <b>Waiting for your confirmation</b>: the model wants to make "
        "these changes.\n{items}",
        "change_update": "✏️ <code>{id}</code> {old}\n    → {new}",
        "change_delete": "🗑 <code>{id}</code> {old}",
        "changes_more": "… and {count} more",
        "changes_applied": "✅ Applied: {count}.",
        "changes_skipped": "Left alone, changed or deleted since: {count}.",
        "changes_remaining": "Still waiting for their author or a group administrator:\n{items}",
        "changes_discarded": "👍 Discarded: nothing was changed.",
        "undo_title": "↩ Undone:",
        "undo_nothing_changed": "↩ Nothing was put back:",
        "undo_removed": "🆔 <code>{id}</code> removed again (it was added): {content}",
        "undo_reinstated": "🆔 <code>{id}</code> restored: {content}",
        "undo_back": "🆔 <code>{id}</code> back to: {content}",
        "undo_left": "🆔 <code>{id}</code> left as it is: changed since, {who}, {at}. "
        "/history {id} shows its versions.",
        "undo_left_unknown": "🆔 <code>{id}</code> left as it is: changed since. "
        "/history {id} shows its versions.",
        "undo_nothing": "Nothing to undo in this chat.",
        "undo_nothing_group": "Nothing of yours to undo in this chat (an administrator can undo "
        "anyone's changes).",
        "undo_gone_plain": "Nothing to do: this change was undone already, or is too old.",
        "door_model": "the assistant",
        "door_button": "a button",
        "door_text": "a message",
        "door_cli": "the command line",
        "door_library": "a program",
        "history_version": "v{n}",
        "history_someone": "user {id}",
        "history_who": "{who} via {door}",
        "history_recent_title": "🕘 <b>The last {count} changes</b> (newest first)",
        "history_hint": "/history <i>id</i> shows every version of one memory.",
        "history_empty": "No changes recorded yet.",
        "history_none": "No history for <code>{id}</code>: no such memory, or its changes are "
        "too old.",
        "history_memory_title": "🕘 <b>History of</b> 🆔 <code>{id}</code> (oldest first)",
        "history_deleted": "deleted",
        "history_is_deleted": "🗑 It is deleted now; the button below brings it back with its id.",
        "history_unreadable": "⚠️ {count} records of the history could not be read; the file as "
        "it was is kept as <code>{file}</code>. No memory was changed.",
        "op_add": "added",
        "op_import": "imported",
        "op_update": "edited",
        "op_restore": "restored",
        "button_version_plain": "↩ Back to v{n}",
        "button_reinstate_version_plain": "♻ Restore v{n}",
        "button_reinstate_plain": "♻ Restore {id}",
        "restored": "♻ Restored:\n{memory}",
        "cmd_undo_plain": "Undo the last change in this chat",
        "cmd_history_plain": "Recent changes, or /history id: its versions",
        "llm_empty": "<i>(The model gave no answer.)</i>",
        "llm_timeout": "⏱ The language model did not answer within {timeout} s. Nothing was "
        "changed; please send your message again.",
        "llm_connection": "🔌 I could not reach the language model. Nothing was changed; "
        "please try again in a minute. Meanwhile /recall and /remember work.",
        "llm_auth": "🔑 The language model refused the bot's API key (HTTP {status}). Nothing "
        "was changed. The bot's owner needs to check <code>[llm] api_key</code>; meanwhile "
        "/recall and /remember work.",
        "llm_rate_limit": "🚦 The language model is busy (rate limited). Nothing was changed; "
        "please try again in {seconds} s.",
        "llm_rate_limit_soon": "🚦 The language model is busy (rate limited). Nothing was "
        "changed; please try again in a minute.",
        "llm_quota": "💳 The language model's quota for this bot is used up. Nothing was "
        "changed. The bot's owner needs to check the account; meanwhile /recall and /remember "
        "work.",
        "llm_server": "⚠️ The language model had an internal error{status_text}, also on "
        "retrying. Nothing was changed; please try again in a few minutes.",
        "llm_request": "⚠️ The language model refused the request (HTTP {status}). Nothing was "
        "changed. The bot's owner should check <code>[llm] model</code> and "
        "<code>base_url</code>.",
        "llm_bad_response": "⚠️ The language model sent an answer I could not read. Nothing "
        "was changed; please try again.",
        "llm_tool_limit": "🔁 I stopped: the model kept calling memory tools for {rounds} "
        "rounds without answering, so I undid what those calls changed. Please rephrase, or "
        "ask something narrower.",
        "stats_llm": "<b>Language model:</b> {turns} messages, {prompt} prompt + {completion} "
        "completion tokens since {since}",
        "stats_search_keywords": "<b>Search:</b> keywords only",
        "stats_search_failing": "<b>Search:</b> keywords only for now (the embedding service is "
        "failing; meaning comes back when it works)",
        "stats_search_hybrid": "<b>Search:</b> keywords and meaning ({model}; {embedded} of "
        "{total} memories embedded)",
        "list_title": "📋 Memories{category}: page {page} of {pages} (total: {total})",
        "list_empty": "No memories{category} yet.",
        "export_caption": "Exported: {count}, in the article's memory.json format.",
        "export_empty": "Nothing to export yet.",
        "invalid": "I couldn't do that: {reason}",
        "unknown_command": "I don't know that command. /help lists what I can do.",
        "refused": "Sorry, this bot is private. Your Telegram user id is <code>{user_id}</code>:"
        " send it to the bot's owner, who can add it to <code>allowed_user_ids</code>.",
        "refused_chat": "Sorry, this bot is private. You are writing as a chat (a channel, or "
        "the group itself) whose Telegram id is <code>{chat_id}</code>: the bot's owner can add "
        "it to <code>allowed_user_ids</code>, or write as yourself.",
        "error_generic": "Sorry, something went wrong on my side and nothing was changed. Please "
        "try again; if it keeps happening, tell the bot's owner.",
        "error_storage": "Sorry, I couldn't reach my storage, so nothing was saved. Please try "
        "again later; the bot's owner can find the details in the log.",
        "quarantined": "⚠️ The memory file here was damaged and could not be read in full. I "
        "kept its bytes untouched as <code>{file}</code> for the bot's owner, and this chat "
        "still has {count} memories, the ones I held or could read: /list shows them.",
        "quarantined_empty": "⚠️ The memory file here was damaged and could not be read. I "
        "kept its bytes untouched as <code>{file}</code>; no memory of it could be read, so "
        "/list shows none until the bot's owner recovers them from that file.",
        "not_yours": "Only the member who stored this memory or a group administrator can "
        "delete or change it.",
        "not_yours_plain": "Only the member who stored this memory or a group administrator "
        "can delete it.",
        "restore_not_yours_plain": "You did not delete this memory yourself: only a group "
        "administrator can bring it back.",
        "admin_error": "⚠️ An update failed: <code>{error}</code>. The log has the traceback.",
        "admin_poison": (
            "⚠️ Update {update_id} (chat {chat}) was being handled during {tries} crashes of "
            "the bot; it is set aside in data/.bot/poison.jsonl and will not be handled again. "
            "Its text begins: <code>{text}</code>"
        ),
        "admin_overdue": (
            "⚠️ Update {update_id} (chat {chat}) was still being handled after {seconds} s, the "
            "handler deadline: it was stopped and set aside, and will not be handled again; the "
            "chat goes on. Its text begins: <code>{text}</code>"
        ),
        "refused_plain": "Sorry, this bot is private. Your Telegram user id is {user_id}.",
        "stale_plain": "That memory is not here (anymore).",
        "error_plain": "Sorry, something went wrong. Please try again.",
        "button_forget_plain": "🗑 Forget {index}: {preview}",
        "button_delete_plain": "🗑 Delete",
        "button_keep_plain": "Keep",
        "button_apply_plain": "✅ Apply all",
        "button_discard_plain": "Discard",
        "button_undo_plain": "↩ Undo",
        "changes_gone_plain": "Nothing to do: these changes were already applied, discarded or "
        "undone, or are too old.",
        "not_yours_changes_plain": "Only the member who stored these memories or a group "
        "administrator can change them.",
        "button_prev_plain": "◀",
        "button_next_plain": "▶",
        "button_more_plain": "More ▶",
        "cmd_start_plain": "What I do",
        "cmd_help_plain": "How to use me",
        "cmd_remember_plain": "Remember something (#tags, category: …)",
        "cmd_recall_plain": "Find memories for a question",
        "cmd_forget_plain": "Delete a memory by id",
        "cmd_stats_plain": "Totals, categories, top tags",
        "cmd_list_plain": "All memories, page by page",
        "cmd_edit_plain": "Change a memory: /edit id new text",
        "cmd_related_plain": "Memories related to one: /related id",
        "cmd_export_plain": "Download memory.json",
        "cmd_digest_plain": "Scheduled report: /digest on, off or now",
        "digest_title": "📬 <b>Your memory digest</b> · {total} memories",
        "digest_title_group": "📬 <b>Memory digest of {group}</b> · {total} memories",
        "digest_title_this_group": "📬 <b>This group's memory digest</b> · {total} memories",
        "digest_top": "<b>Most used</b>",
        "digest_top_none": "<i>None of these memories has been recalled yet.</i>",
        "digest_added": "🆕 <b>Added since {since}:</b> {count}",
        "digest_added_none": "🆕 Nothing added since {since}.",
        "digest_added_more": "… and {count} more (/list)",
        "digest_stale": "💤 <b>{count}</b> memories not recalled for {days} days. Review them "
        "with /list and remove what is out of date with /forget.",
        "digest_footer": "<i>/digest off stops these reports.</i>",
        "digest_status_on": "📬 The digest is <b>on</b> here. Next report: {next}.\n"
        "/digest off stops it; /digest now sends one now.",
        "digest_status_off": "📭 The digest is <b>off</b> here. /digest on sends a report of "
        "the most used, the new and the unused memories on a schedule (next: {next}); "
        "/digest now sends one now.",
        "digest_switched_on": "✅ Digest on. Next report: {next}. /digest off stops it.",
        "digest_switched_off": "🔕 Digest off. /digest on turns it back on.",
        "digest_disabled": "The bot's owner has turned the scheduled digest off. /digest now "
        "still sends the report.",
        "digest_admins_only": "Only the group's administrators can turn the digest on or off. "
        "/digest alone shows the setting; /digest now sends the report.",
        "digest_no_chat": "The scheduled digest goes to a private chat or to a group, and "
        "memories kept for a channel have neither. /digest now sends the report here.",
        "digest_usage": "Send <code>/digest on</code>, <code>/digest off</code> or "
        "<code>/digest now</code>; /digest alone shows the setting.",
        "digest_when": "{weekday} {date} {time} ({zone})",
        "digest_never": "none scheduled",
        "weekdays_plain": "Mon Tue Wed Thu Fri Sat Sun",
    },
    "zh": {
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
        "help": _HELP_ZH,
        "usage_remember": "要记住什么？发送 <code>/remember 每天十点站会</code>，"
        "或回复一条消息并发送 /remember。",
        "usage_forget": "删除哪一条？发送 <code>/forget 1712345678901</code>；/recall 和 /list "
        "会显示编号。",
        "usage_edit": "发送 <code>/edit 1712345678901 新内容</code>；/recall 和 /list 会显示编号。",
        "usage_related": "发送 <code>/related 1712345678901</code>；/recall 和 /list 会显示编号。",
        "remembered": "✅ 记住了。\n{memory}",
        "tags_derived": "<i>标签取自关键词；加上 #话题标签 可以自己指定。</i>",
        "recent_title": "🕘 最近的记忆：",
        "recall_count": "<i>{count} 条，共 {total} 条</i>",
        "recall_range": "<i>第 {first}–{last} 条，共 {total} 条</i>",
        "recall_none": "没有找到与“{query}”相关的记忆。",
        "recall_hint": "<i>换个说法试试，用 /list 浏览全部，或用 /remember 记下来。</i>",
        "recall_answer_title": "🔎 “{query}”",
        "recall_weaker_title": "🔎 与“{query}”不太相关的记忆 "
        "<i>（第 {first}–{last} 条，共 {total} 条）</i>",
        "button_closest_plain": "最接近的 ▶",
        "list_reminders_apart": "<i>⏰ 另有 {count} 条提醒的记忆：/list 提醒 查看，/reminders "
        "查看即将到来的提醒。</i>",
        "button_more_count_plain": "更多（{count}）▶",
        "button_menu_forget_plain": "🗑 删除",
        "button_menu_related_plain": "🔗 相关",
        "button_menu_history_plain": "🕘 历史",
        "no_memories": "还没有记忆。发送 <code>/remember 内容</code> 来记住一件事。",
        "free_text_hint": "💡 也可以直接说“记住……”，我就把后面的话记下来。",
        "button_remember_this_plain": "💾 记住这条",
        "not_yours_offer_plain": "只有说这句话的人或群组管理员可以保存它。",
        "offer_gone_plain": "这个按钮已经过期了；请用 /remember 加上内容来保存。",
        "forget_confirm": "要删除这条记忆吗？\n{memory}",
        "forgotten": "🗑 已删除：{content}",
        "kept": "👍 已保留：{content}",
        "already_remembered": "👌 已经记住了，不会重复保存：\n{memory}",
        "near_duplicate": "🤔 “{content}”和已有的记忆很像。都保留、替换旧的，还是取消？",
        "button_keep_both_plain": "➕ 都保留",
        "button_replace_plain": "✏️ 替换 {index}：{preview}",
        "button_cancel_plain": "✖ 取消",
        "not_yours_choice_plain": "只有要求保存的人或群组管理员可以选择；"
        "替换还需要有修改旧记忆的权限。",
        "resolved_date": "📅 {when}",
        "cancelled": "👍 已取消。",
        "not_found": "这里没有编号为 <code>{id}</code> 的记忆。/recall 和 /list 会显示编号。",
        "bad_id": "“{value}”不是记忆编号；编号是 /recall 和 /list 显示的数字。",
        "edited": "✏️ 已修改。\n{memory}",
        "related_title": "🔗 与“{content}”相关：",
        "related_none": "没有与“{content}”标签或分类相同的记忆。",
        "stats_title": "📊 共 <b>{total}</b> 条记忆",
        "stats_by_category": "<b>分类：</b>{items}",
        "stats_top_tags": "<b>常用标签：</b>{items}",
        "stats_most_accessed": "<b>最常用：</b>",
        "stats_times": "{count} 次",
        "llm_memory_updated": "🧠 <i>记忆已更新：{changes}。</i>",
        "llm_added": "新增 {ids}",
        "llm_changed": "修改 {ids}",
        "llm_deleted": "删除 {ids}",
        "llm_confirm_changes": "⚠️ 模型还想再修改 {count} 条已有的记忆，需要你在下面确认。",
        "llm_message_cut": "✂️ <i>你的消息太长：我只读了前 {kept} 个字符（共 {total} 个）。"
        "如果后面的内容重要，请另发一条。</i>",
        "llm_not_kept": "⚠️ 我无法保存模型所改记忆的旧版本，所以撤销了它的改动：什么都没有改动。"
        "请稍后再试；机器人的主人可以在日志里看到详情。",
        "changes_pending": "⚠️ <b>等待你的确认</b>：模型想做以下改动。\n{items}",
        "change_update": "✏️ <code>{id}</code> {old}\n    → {new}",
        "change_delete": "🗑 <code>{id}</code> {old}",
        "changes_more": "……还有 {count} 条",
        "changes_applied": "✅ 已应用：{count} 条。",
        "changes_skipped": "之后已被修改或删除，未动：{count} 条。",
        "changes_remaining": "仍在等待记忆的作者或群组管理员确认：\n{items}",
        "changes_discarded": "👍 已放弃：什么都没有改动。",
        "undo_title": "↩ 已撤销：",
        "undo_nothing_changed": "↩ 没有恢复任何记忆：",
        "undo_removed": "🆔 <code>{id}</code> 已重新移除（它是新加的）：{content}",
        "undo_reinstated": "🆔 <code>{id}</code> 已恢复：{content}",
        "undo_back": "🆔 <code>{id}</code> 已改回：{content}",
        "undo_left": "🆔 <code>{id}</code> 保持原样：之后又被修改过（{who}，{at}）。"
        "/history {id} 可以查看它的各个版本。",
        "undo_left_unknown": "🆔 <code>{id}</code> 保持原样：之后又被修改过。"
        "/history {id} 可以查看它的各个版本。",
        "undo_nothing": "本聊天里没有可以撤销的改动。",
        "undo_nothing_group": "本聊天里没有你可以撤销的改动（管理员可以撤销任何人的改动）。",
        "undo_gone_plain": "无需操作：这次改动已经撤销过，或者已经太旧。",
        "door_model": "助手",
        "door_button": "按钮",
        "door_text": "消息",
        "door_cli": "命令行",
        "door_library": "程序",
        "history_version": "第 {n} 版",
        "history_someone": "用户 {id}",
        "history_who": "{who} 通过 {door}",
        "history_recent_title": "🕘 <b>最近 {count} 次改动</b>（最新的在前）",
        "history_hint": "/history <i>编号</i> 可以查看一条记忆的每个版本。",
        "history_empty": "还没有记录到任何改动。",
        "history_none": "<code>{id}</code> 没有历史：没有这条记忆，或者它的改动已经太旧。",
        "history_memory_title": "🕘 🆔 <code>{id}</code> <b>的历史</b>（最早的在前）",
        "history_deleted": "已删除",
        "history_is_deleted": "🗑 它现在已被删除；下面的按钮可以按原编号恢复它。",
        "history_unreadable": "⚠️ 有 {count} 条历史记录无法读取；原文件保存在 <code>{file}</code>。"
        "没有任何记忆被改动。",
        "op_add": "添加",
        "op_import": "导入",
        "op_update": "修改",
        "op_restore": "恢复",
        "button_version_plain": "↩ 改回第 {n} 版",
        "button_reinstate_version_plain": "♻ 恢复第 {n} 版",
        "button_reinstate_plain": "♻ 恢复 {id}",
        "restored": "♻ 已恢复：\n{memory}",
        "cmd_undo_plain": "撤销本聊天里最近的一次改动",
        "cmd_history_plain": "最近的改动，或 /history 编号：它的各个版本",
        "llm_empty": "<i>（模型没有给出回答。）</i>",
        "llm_timeout": "⏱ 语言模型在 {timeout} 秒内没有回应。什么都没有改动，请重新发送你的消息。",
        "llm_connection": "🔌 无法连接语言模型。什么都没有改动，请过一分钟再试。在此期间 /recal"
        "l 和 /remember 仍可使用。",
        "llm_auth": "🔑 语言模型拒绝了机器人的 API 密钥（HTTP {status}）。什么都没有改动。请机"
        "器人的主人检查 <code>[llm] api_key</code>；在此期间 /recall 和 /remember 仍可使用。",
        "llm_rate_limit": "🚦 语言模型正忙（请求过于频繁）。什么都没有改动，请 {seconds} 秒后再"
        "试。",
        "llm_rate_limit_soon": "🚦 语言模型正忙（请求过于频繁）。什么都没有改动，请过一分钟再试。",
        "llm_quota": "💳 这个机器人的语言模型额度已用完。什么都没有改动。请机器人的主人检查账户"
        "；在此期间 /recall 和 /remember 仍可使用。",
        "llm_server": "⚠️ 语言模型内部出错{status_text}，重试后仍然如此。什么都没有改动，请过几"
        "分钟再试。",
        "llm_request": "⚠️ 语言模型拒绝了请求（HTTP {status}）。什么都没有改动。请机器人的主人"
        "检查 <code>[llm] model</code> 和 <code>base_url</code>。",
        "llm_bad_response": "⚠️ 语言模型返回了我无法读取的内容。什么都没有改动，请再试一次。",
        "llm_tool_limit": "🔁 我停下了：模型连续 {rounds} 轮调用记忆工具却没有给出回答，这些调"
        "用做的改动我已撤销。请换个说法，或者问得更具体一些。",
        "stats_llm": "<b>语言模型：</b>{turns} 条消息，提示 {prompt} + 生成 {completion} 个词元"
        "（自 {since} 起）",
        "stats_search_keywords": "<b>搜索：</b>仅关键词",
        "stats_search_failing": "<b>搜索：</b>暂时仅关键词（向量服务出错，恢复后自动按语义搜索）",
        "stats_search_hybrid": "<b>搜索：</b>关键词 + 语义（{model}；已嵌入 {embedded}/{total} "
        "条记忆）",
        "list_title": "📋 记忆{category}：第 {page}/{pages} 页，共 {total} 条",
        "list_empty": "还没有记忆{category}。",
        "export_caption": "{count} 条记忆，文章中的 memory.json 格式。",
        "export_empty": "还没有可以导出的记忆。",
        "invalid": "无法完成：{reason}",
        "unknown_command": "我不认识这个命令。/help 里有我能做的事。",
        "refused": "抱歉，这是私人机器人。你的 Telegram 用户编号是 <code>{user_id}</code>："
        "把它发给机器人的主人，主人可以把它加入 <code>allowed_user_ids</code>。",
        "refused_chat": "抱歉，这是私人机器人。你正以一个聊天（频道或群组本身）的身份发言，"
        "它的 Telegram 编号是 <code>{chat_id}</code>：机器人的主人可以把它加入 "
        "<code>allowed_user_ids</code>，或者请以你自己的身份发言。",
        "error_generic": "抱歉，我这边出了问题，什么都没有改动。"
        "请再试一次；如果一直出错，请告诉机器人的主人。",
        "error_storage": "抱歉，我无法访问存储，所以没有保存。"
        "请稍后再试；机器人的主人可以在日志里看到详情。",
        "quarantined": "⚠️ 这里的记忆文件已损坏，无法完整读取。我把它的内容原样保存为"
        "<code>{file}</code>，供机器人的主人修复；这个对话仍有 {count} 条记忆"
        "（我原有的或能读出的）：/list 可以查看。",
        "quarantined_empty": "⚠️ 这里的记忆文件已损坏，无法读取。我把它的内容原样保存为"
        "<code>{file}</code>；其中的记忆都读不出来，所以在机器人的主人从该文件恢复之前，"
        "/list 不会显示任何记忆。",
        "not_yours": "只有存入这条记忆的成员或群组管理员可以删除或修改它。",
        "not_yours_plain": "只有存入这条记忆的成员或群组管理员可以删除它。",
        "restore_not_yours_plain": "这条记忆不是你自己删除的：只有群组管理员可以恢复它。",
        "admin_error": "⚠️ 处理一条消息时出错：<code>{error}</code>。详细信息见日志。",
        "admin_poison": (
            "⚠️ 机器人在处理更新 {update_id}（聊天 {chat}）时已崩溃 {tries} 次；它已移到 "
            "<code>data/.bot/poison.jsonl</code>，不会再处理。它的开头是：<code>{text}</code>"
        ),
        "admin_overdue": (
            "⚠️ 更新 {update_id}（聊天 {chat}）处理了 {seconds} 秒仍未完成，超过了处理时限：已停止"
            "并移到一边，不会再处理；该聊天的后续消息照常处理。它的开头是：<code>{text}</code>"
        ),
        "refused_plain": "抱歉，这是私人机器人。你的 Telegram 用户编号是 {user_id}。",
        "stale_plain": "这条记忆已经不在这里了。",
        "error_plain": "抱歉，出了点问题，请再试一次。",
        "button_forget_plain": "🗑 删除 {index}：{preview}",
        "button_delete_plain": "🗑 删除",
        "button_keep_plain": "保留",
        "button_apply_plain": "✅ 全部应用",
        "button_discard_plain": "放弃",
        "button_undo_plain": "↩ 撤销",
        "changes_gone_plain": "无需操作：这些改动已被应用、放弃或撤销，或者已经太旧。",
        "not_yours_changes_plain": "只有存入这些记忆的成员或群组管理员可以修改它们。",
        "button_prev_plain": "◀",
        "button_next_plain": "▶",
        "button_more_plain": "更多 ▶",
        "cmd_start_plain": "我能做什么",
        "cmd_help_plain": "使用说明",
        "cmd_remember_plain": "记住一件事（#标签，分类：…）",
        "cmd_recall_plain": "按问题查找记忆",
        "cmd_forget_plain": "按编号删除记忆",
        "cmd_stats_plain": "总数、分类、常用标签",
        "cmd_list_plain": "分页列出全部记忆",
        "cmd_edit_plain": "修改记忆：/edit 编号 新内容",
        "cmd_related_plain": "相关记忆：/related 编号",
        "cmd_export_plain": "下载 memory.json",
        "cmd_digest_plain": "定期摘要：/digest on、/digest off 或 /digest now",
        "digest_title": "📬 <b>你的记忆摘要</b> · 共 {total} 条",
        "digest_title_group": "📬 <b>“{group}”的记忆摘要</b> · 共 {total} 条",
        "digest_title_this_group": "📬 <b>本群的记忆摘要</b> · 共 {total} 条",
        "digest_top": "<b>最常用</b>",
        "digest_top_none": "<i>这些记忆还没有被查到过。</i>",
        "digest_added": "🆕 <b>{since} 以来新增：</b>{count} 条",
        "digest_added_none": "🆕 {since} 以来没有新增记忆。",
        "digest_added_more": "…… 还有 {count} 条（/list）",
        "digest_stale": "💤 有 <b>{count}</b> 条记忆 {days} 天没有用到了。可以用 /list 看一看，"
        "过时的用 /forget 删除。",
        "digest_footer": "<i>发送 /digest off 可以关闭这份摘要。</i>",
        "digest_status_on": "📬 这里的定期摘要已<b>开启</b>。下一次发送：{next}。\n"
        "/digest off 关闭；/digest now 立即发送一份。",
        "digest_status_off": "📭 这里的定期摘要已<b>关闭</b>。/digest on 开启后，我会按计划发送"
        "最常用、新增和久未使用的记忆（下一次：{next}）；/digest now 立即发送一份。",
        "digest_switched_on": "✅ 定期摘要已开启。下一次发送：{next}。/digest off 可以关闭。",
        "digest_switched_off": "🔕 定期摘要已关闭。/digest on 可以重新开启。",
        "digest_disabled": "机器人的主人关闭了定期摘要。/digest now 仍然可以发送摘要。",
        "digest_admins_only": "只有群组管理员可以开启或关闭定期摘要。"
        "只发送 /digest 可以查看设置；/digest now 可以发送摘要。",
        "digest_no_chat": "定期摘要只发到私聊或群组，而频道的记忆两者都没有。"
        "/digest now 可以在这里发送摘要。",
        "digest_usage": "请发送 <code>/digest on</code>、<code>/digest off</code> 或 "
        "<code>/digest now</code>；只发送 /digest 可以查看设置。",
        "digest_when": "{date}（{weekday}）{time}（{zone}）",
        "digest_never": "暂无安排",
        "weekdays_plain": "周一 周二 周三 周四 周五 周六 周日",
    },
}

for _language, _strings in MEDIA_STRINGS.items():  # non-text messages, imports, inline mode
    STRINGS[_language].update(_strings)


STRINGS["en"].update(reminder_strings.EN)
STRINGS["zh"].update(reminder_strings.ZH)
STRINGS["en"].update(zone_strings.EN)
STRINGS["zh"].update(zone_strings.ZH)
STRINGS["en"].update(problem_strings.EN)
STRINGS["zh"].update(problem_strings.ZH)


def language_of(user: User | None) -> str:
    """``zh`` for a user whose Telegram language starts with ``zh``, else ``en``."""
    code = (user.language_code or "") if user is not None else ""
    return "zh" if code.lower().startswith("zh") else "en"


def t(language: str, key: str, **values: object) -> str:
    """The string ``key`` in ``language`` (English if unknown), with ``values`` filled in."""
    table = STRINGS.get(language, STRINGS["en"])
    return table[key].format(**values)


def invalid_reason(language: str, error: MemoryInvalid, content: str = "") -> str:
    """Why the memory library refused an entry, in words for a person (escaped HTML).

    Never the library's own message (English, for programmers: it goes to the log): the
    error's ``field`` and ``content`` (what the person sent) choose a sentence of
    ``bot.view.problem_strings``, with the limits.
    """
    log.info("refused an entry: %s (field %s)", error.message, error.field)
    limits = {
        "max_chars": MAX_CONTENT_CHARS,
        "max_tags": MAX_TAGS,
        "max_label": MAX_TAG_CHARS,
        "chars": len(content.strip()),
    }
    field = error.field or ""
    if field == "content":
        if "\x00" in content:
            key = "problem_invisible"
        elif _SURROGATE.search(content):
            key = "problem_broken"
        elif not content.strip():
            key = "problem_empty"
        elif len(content.strip()) > MAX_CONTENT_CHARS:
            key = "problem_too_long"
        else:
            key = "problem_other"
    else:
        key = {"tags": "invalid_tags", "tag": "invalid_tags", "category": "invalid_category"}.get(
            field, "problem_other"
        )
    return t(language, "invalid", reason=t(language, key, **limits))
