"""Every string a user sees, in English and Chinese.

A user whose Telegram ``language_code`` starts with ``zh`` gets Chinese, everyone else English.
Templates are Telegram HTML: placeholders (``{content}``) must be given text that is already
escaped (``bot.view.render.escape``), and literal ``<``, ``>`` and ``&`` are written as entities.
Keys ending in ``_plain`` are plain text (button labels, pop-up alerts, command descriptions),
never parsed as HTML, so they are not escaped. The table is this module's strings and those of
one subject each beside it (``help_strings``, ``reminder_strings``, ``zone_strings``,
``problem_strings``, ``change_strings``, ``digest_strings``, ``export_strings``, ``offer_strings``,
``media_text``).
"""

from __future__ import annotations

import logging
import re

from telegram import User

from bot.view import (
    change_strings,
    digest_strings,
    export_strings,
    help_strings,
    offer_strings,
    problem_strings,
    reminder_strings,
    update_strings,
    zone_strings,
)
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
    ("calendar", "cmd_calendar_plain"),
    ("digest", "cmd_digest_plain"),
    ("remind", "cmd_remind_plain"),
    ("reminders", "cmd_reminders_plain"),
    ("timezone", "cmd_timezone_plain"),
    ("undo", "cmd_undo_plain"),
    ("history", "cmd_history_plain"),
    ("tidy", "cmd_tidy_plain"),
    ("help", "cmd_help_plain"),
    ("start", "cmd_start_plain"),
)

STRINGS: dict[str, dict[str, str]] = {
    "en": {
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
        "statement_new": "Nothing stored about “{query}” yet.",
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
        "cmd_export_plain": "Export memories (JSON, Markdown) or reminders (ics)",
        "cmd_digest_plain": "Scheduled report: /digest on, off or now",
        "weekdays_plain": "Mon Tue Wed Thu Fri Sat Sun",
    },
    "zh": {
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
        "statement_new": "还没有记下关于“{query}”的内容。",
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
        "cmd_export_plain": "导出记忆（JSON、Markdown）或提醒（日历文件）",
        "cmd_digest_plain": "定期摘要：/digest on、/digest off 或 /digest now",
        "weekdays_plain": "周一 周二 周三 周四 周五 周六 周日",
    },
}

for _language, _strings in MEDIA_STRINGS.items():  # non-text messages, imports, inline mode
    STRINGS[_language].update(_strings)


# The strings of one subject each, beside this module.
for _part in (
    help_strings,
    reminder_strings,
    zone_strings,
    problem_strings,
    change_strings,
    digest_strings,
    export_strings,
    offer_strings,
    update_strings,
):
    STRINGS["en"].update(_part.EN)
    STRINGS["zh"].update(_part.ZH)


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
