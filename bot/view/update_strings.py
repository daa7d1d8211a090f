"""The strings of updates (a new value replacing an old one) and of the nightly tidy, in English
and Chinese; ``bot.view.i18n`` adds them to its table (HTML unless the key ends in ``_plain``)."""

from __future__ import annotations

EN = {
    # -- an update replaces (bot.core.adding, memory.updates)
    "replaced": "🔁 Replaced: {old} → {new}\n{meta}",
    "near_update": "🔁 “{content}” may be a new value for what you told me before. Replace "
    "the old one, or keep both?",
    "older_mark": "<i>(older)</i> ",
    # -- the nightly tidy (bot.core.tidying, bot.jobs.tidy, bot.chat.tidying)
    "cmd_tidy_plain": "Tidy up memories now: /tidy, /tidy off or /tidy on",
    "tidy_title": "🧹 Tidied up your memories:",
    "tidy_title_group": "🧹 Tidied up this group's memories:",
    "tidy_nothing": "🧹 Nothing to tidy: no duplicates, no past events to mark, no "
    "conflicting values.",
    "tidy_merged": "• merged {count} duplicate(s): {content}",
    "tidy_past": "• marked {count} past event(s) #past: {content}",
    "tidy_ended": "• {count} finished or cancelled reminder(s) ended: {content}",
    "tidy_resolved": "• replaced {count} older value(s): {content}",
    "tidy_question": "❓ These give one thing different values. Keep which?",
    "tidy_question_item": "{index}. {newer} <i>(newer)</i>\n    {older} <i>(older)</i>",
    "tidy_undo_hint": "<i>↩ Undo (or /undo) puts everything back as it was.</i>",
    "button_tidy_newer_plain": "{index}: keep the newer",
    "button_tidy_older_plain": "{index}: keep the older",
    "button_tidy_both_plain": "{index}: keep both",
    "tidy_kept": "👍 Kept: {content}\n🗑 Removed: {removed}",
    "tidy_kept_both": "👍 Kept both: {newer} · {older}",
    "tidy_gone_plain": "This question was answered already, or its memories changed.",
    "tidy_admins_only": "In a group, only its administrators can tidy its memories or turn "
    "the nightly tidy off.",
    "tidy_status_on": "🧹 The nightly tidy is <b>on</b> here (next: {next}). /tidy runs it now, "
    "/tidy off turns it off.",
    "tidy_status_off": "🧹 The nightly tidy is <b>off</b> here. /tidy runs it now, /tidy on "
    "turns it on.",
    "tidy_switched_on": "🧹 The nightly tidy is on (next: {next}).",
    "tidy_switched_off": "🧹 The nightly tidy is off. /tidy still tidies up when you send it.",
    "tidy_disabled": "🧹 The nightly tidy is switched off for this bot; /tidy still tidies up now.",
    "tidy_usage": "Usage: /tidy (tidy up now), /tidy on, /tidy off.",
    "digest_tidy": "🧹 Last tidy ({when}): {what}.",
    "digest_tidy_merged": "{count} merged",
    "digest_tidy_past": "{count} past event(s) marked",
    "digest_tidy_ended": "{count} reminder(s) ended",
    "digest_tidy_resolved": "{count} older value(s) replaced",
    "digest_tidy_questions": "{count} question(s) for you",
    "digest_tidy_nothing": "nothing to do",
    "digest_tidy_joiner_plain": ", ",
    "door_tidy": "the nightly tidy",
}

ZH = {
    "replaced": "🔁 已替换：{old} → {new}\n{meta}",
    "near_update": "🔁 “{content}”可能是你之前说过的事情的新值。替换旧的，还是都保留？",
    "older_mark": "<i>（较早）</i>",
    "cmd_tidy_plain": "立即整理记忆：/tidy、/tidy off 或 /tidy on",
    "tidy_title": "🧹 已整理你的记忆：",
    "tidy_title_group": "🧹 已整理本群的记忆：",
    "tidy_nothing": "🧹 没有需要整理的：没有重复，没有要标记的过去事项，也没有相互矛盾的值。",
    "tidy_merged": "• 合并了 {count} 条重复：{content}",
    "tidy_past": "• 标记了 {count} 件已过去的事 #已过：{content}",
    "tidy_ended": "• 结束了 {count} 条已完成或已取消的提醒：{content}",
    "tidy_resolved": "• 替换了 {count} 条旧值：{content}",
    "tidy_question": "❓ 下面这些对同一件事说了不同的值。保留哪个？",
    "tidy_question_item": "{index}. {newer} <i>（较新）</i>\n    {older} <i>（较早）</i>",
    "tidy_undo_hint": "<i>↩ 撤销（或 /undo）会把一切恢复原样。</i>",
    "button_tidy_newer_plain": "{index}：留新的",
    "button_tidy_older_plain": "{index}：留旧的",
    "button_tidy_both_plain": "{index}：都保留",
    "tidy_kept": "👍 保留：{content}\n🗑 已删除：{removed}",
    "tidy_kept_both": "👍 都保留：{newer} · {older}",
    "tidy_gone_plain": "这个问题已经回答过了，或者相关记忆已经改变。",
    "tidy_admins_only": "在群组里，只有管理员可以整理群的记忆或关闭每晚整理。",
    "tidy_status_on": "🧹 这里的每晚整理已<b>开启</b>（下次：{next}）。"
    "/tidy 立即整理，/tidy off 关闭。",
    "tidy_status_off": "🧹 这里的每晚整理已<b>关闭</b>。/tidy 立即整理，/tidy on 开启。",
    "tidy_switched_on": "🧹 每晚整理已开启（下次：{next}）。",
    "tidy_switched_off": "🧹 每晚整理已关闭。发送 /tidy 仍会立即整理。",
    "tidy_disabled": "🧹 这个机器人关闭了每晚整理；/tidy 仍会立即整理。",
    "tidy_usage": "用法：/tidy（立即整理）、/tidy on、/tidy off。",
    "digest_tidy": "🧹 上次整理（{when}）：{what}。",
    "digest_tidy_merged": "合并 {count} 条",
    "digest_tidy_past": "标记 {count} 件已过去的事",
    "digest_tidy_ended": "结束 {count} 条提醒",
    "digest_tidy_resolved": "替换 {count} 条旧值",
    "digest_tidy_questions": "{count} 个问题等你回答",
    "digest_tidy_nothing": "没有需要整理的",
    "digest_tidy_joiner_plain": "，",
    "door_tidy": "每晚整理",
}
