"""The strings of reminders (``/remind``, ``/reminders``, deliveries), in English and Chinese;
``bot.view.i18n`` adds them to its table, with the same conventions (HTML unless the key ends in
``_plain``). Those of ``/timezone`` are ``zone_strings``."""

from __future__ import annotations

_EXAMPLES_EN = (
    "<code>/remind tomorrow 9am call mom</code>\n"
    "<code>/remind in 2 hours take the laundry out</code>\n"
    "<code>/remind next friday 15:00 dentist</code>\n"
    "<code>/remind every monday 9:00 weekly report</code>\n"
    "<code>/remind 明天早上9点 给妈妈打电话</code>\n"
    "Reply to a message with <code>/remind tomorrow 9am</code> to be reminded of it."
)
_EXAMPLES_ZH = (
    "<code>/remind 明天早上9点 给妈妈打电话</code>\n"
    "<code>/remind 两小时后 收衣服</code>\n"
    "<code>/remind 下周二下午三点 看牙医</code>\n"
    "<code>/remind 每周一早上9点 周会</code>\n"
    "<code>/remind tomorrow 9am call mom</code>\n"
    "回复一条消息并发送 <code>/remind 明天9点</code>，到时提醒你那条消息。"
)

EN = {
    "usage_remind": "When, and of what? For example:\n" + _EXAMPLES_EN,
    "reminder_unclear": "I could not tell when “{phrase}” is, so I set nothing. Write the "
    "time first, then what to remind you of, for example:\n" + _EXAMPLES_EN,
    "reminder_no_text": "What should I remind you of? Write it after the time "
    "(<code>/remind {phrase} call mom</code>), or reply to a message with /remind.",
    "reminder_past": "⌛ {when} has already passed, so I set nothing. Send a time in the "
    "future, e.g. <code>/remind tomorrow 9am …</code>.",
    "reminder_too_long": "A reminder is at most {max} characters ({chars} given). Nothing was set.",
    "reminder_too_many": "This chat already has {max} reminders; cancel some in /reminders first.",
    "reminder_too_far": "⌛ That is more than 5 years ahead, so I set nothing. A reminder can be "
    "at most 5 years ahead.",
    "reminder_line": "⏰ {when} — {text}",
    "llm_confirm_reminders": "⚠️ The model wanted to set {count} more reminders. They wait "
    "for your confirmation below.",
    "change_remind": "➕ ⏰ {when} — {text}{repeat}",
    "changes_reminders_not_set": "Reminders not set, their time has passed or the chat has "
    "too many: {count}.",
    "undo_reminder_cancelled": "🗑 Cancelled: {line}",
    "not_yours_reminders_plain": "Only the member who asked for these reminders or a group "
    "administrator can set them.",
    "reminder_repeat": "🔁 {rule}",
    "reminder_moved": "↪ That time has passed, so I took the next one.",
    "reminder_date_only": "No time given, so it is at {hour}.",
    "reminder_zone_default": "🌐 Times here are in <b>{zone}</b>, the bot's default. To use "
    "yours, send your city: <code>/timezone Berlin</code>, <code>/timezone 上海</code> (or a "
    "country, an offset, an IANA name).",
    "reminder_set_title": "✅ I will remind you:",
    "reminders_title": "⏰ <b>Upcoming reminders</b> ({count}), soonest first:",
    "reminders_title_due": "⏰ <b>Your reminders</b> ({count}), soonest first; ⌛ marks one "
    "whose time has come:",
    "reminder_line_due": "⌛ {when} — {text}",
    "reminder_due_now": "<i>⌛ due now: being sent</i>",
    "reminders_none": "No upcoming reminders. Set one with <code>/remind tomorrow 9am call "
    "mom</code>.",
    "reminders_more": "… and {count} more",
    "reminder_paused": "⏸ paused: Telegram did not let me write here",
    "reminder_paused_refused": "⏸ paused: Telegram refused this reminder",
    "reminders_resumed": "▶️ {count} paused reminders are on again.",
    "reminder_delivery": "⏰ <b>Reminder</b>: {text}",
    "reminder_delivery_of": "⏰ <b>Reminder</b> of this message:",
    "reminder_late": "<i>(late: due at {time})</i>",
    "reminder_maybe_repeat": "<i>(may be a repeat: I was interrupted while sending it)</i>",
    "reminder_topic_gone": "<i>(sent here: the topic it was set in is closed or gone)</i>",
    "reminder_refused_plain": "⚠️ Telegram refused a reminder here, so it is paused: “{text}” "
    "({reason}). The chat's other reminders go on; send /reminders to try it again.",
    "reminder_for": "for {mention}",
    "reminder_summary": "⏰ <b>While I was offline, these reminders fell due</b>:\n{items}",
    "reminder_done": "✅ Done: {text}",
    "reminder_done_once": "✅ Done for this time: {text}\nNext: {when}",
    "reminder_snoozed": "⏰ Snoozed until {when}: {text}",
    "reminder_cancelled": "🗑 Cancelled: {text}",
    "reminder_changed": "✏️ Changed:",
    "reminder_change_prompt": "✏️ ⏰#{id} When should “{text}” be instead? Reply to this "
    "message with the new time, e.g. <code>tomorrow 10am</code> or <code>in 2 hours</code>.",
    "reminder_from_memory_past_plain": "That time has passed: no reminder set.",
    "reminder_from_memory_none_plain": "I found no time in that memory.",
    "reminder_from_memory_set_plain": "That reminder is set already.",
    "reminder_pressed_again_plain": "Done already: that button was pressed before.",
    "reminder_gone_plain": "That reminder is over, or not here (anymore).",
    "reminder_not_yours_plain": "Only the member who set this reminder or a group "
    "administrator can change it.",
    "reminder_not_yours": "Only the member who set this reminder or a group administrator can "
    "change it.",
    "reminder_snoozed_plain": "Snoozed.",
    "button_done_plain": "✅ Done",
    "button_snooze_10_plain": "⏰ 10 min",
    "button_snooze_60_plain": "1 hour",
    "button_snooze_tomorrow_plain": "tomorrow",
    "button_reminder_cancel_plain": "🗑 Cancel",
    "button_reminder_cancel_one_plain": "🗑 {index}: {preview}",
    "button_reminder_change_plain": "✏️ Change",
    "button_make_reminder_plain": "⏰ Remind me {when}",
    "repeat_daily": "every day",
    "repeat_every_days": "every {n} days",
    "repeat_weekdays": "every weekday (Mon–Fri)",
    "repeat_weekly": "every {days}",
    "repeat_every_weeks": "every {n} weeks on {days}",
    "repeat_monthly": "every month on day {day}",
    "repeat_every_months": "every {n} months on day {day}",
    "repeat_yearly": "every year",
    "repeat_every_years": "every {n} years",
    "weekday_names_plain": "Monday Tuesday Wednesday Thursday Friday Saturday Sunday",
    "cmd_remind_plain": "Set a reminder: /remind tomorrow 9am call mom",
    "cmd_reminders_plain": "Upcoming reminders",
    "cmd_timezone_plain": "This chat's time zone: /timezone Berlin",
}

ZH = {
    "usage_remind": "什么时候，提醒什么？例如：\n" + _EXAMPLES_ZH,
    "reminder_unclear": "我看不懂“{phrase}”是什么时候，所以没有设置提醒。"
    "请先写时间，再写要提醒的事，例如：\n" + _EXAMPLES_ZH,
    "reminder_no_text": "要提醒你什么？请写在时间后面"
    "（<code>/remind {phrase} 给妈妈打电话</code>），"
    "或回复一条消息并发送 /remind。",
    "reminder_past": "⌛ {when} 已经过去了，所以没有设置提醒。请给一个将来的时间，"
    "例如 <code>/remind 明天早上9点 …</code>。",
    "reminder_too_long": "提醒最多 {max} 个字符（你写了 {chars} 个），没有设置。",
    "reminder_too_many": "这个聊天已经有 {max} 个提醒了；请先在 /reminders 里取消一些。",
    "reminder_too_far": "⌛ 这个时间在 5 年以后，所以没有设置提醒。提醒最多只能设在 5 年以内。",
    "reminder_line": "⏰ {when} — {text}",
    "llm_confirm_reminders": "⚠️ 模型还想再设 {count} 个提醒，需要你在下面确认。",
    "change_remind": "➕ ⏰ {when} — {text}{repeat}",
    "changes_reminders_not_set": "未设置的提醒（时间已过，或本聊天的提醒太多）：{count} 个。",
    "undo_reminder_cancelled": "🗑 已取消：{line}",
    "not_yours_reminders_plain": "只有要求这些提醒的成员或群组管理员可以设置它们。",
    "reminder_repeat": "🔁 {rule}",
    "reminder_moved": "↪ 这个时间已经过去，我改成了下一次。",
    "reminder_date_only": "没写具体时间，定在 {hour}。",
    "reminder_zone_default": "🌐 这里的时间按机器人默认的时区 <b>{zone}</b> 计算。"
    "要用你的时区，请发送你的城市：<code>/timezone 上海</code>、<code>/timezone 柏林</code>"
    "（也可以是国家、时差或 IANA 名称）。",
    "reminder_set_title": "✅ 我会提醒你：",
    "reminders_title": "⏰ <b>即将到来的提醒</b>（{count} 个），最近的在前：",
    "reminders_title_due": "⏰ <b>提醒列表</b>（{count} 个），最近的在前；⌛ 表示已经到时间：",
    "reminder_line_due": "⌛ {when} — {text}",
    "reminder_due_now": "<i>⌛ 已经到时间，正在发送</i>",
    "reminders_none": "没有待发的提醒。发送 <code>/remind 明天早上9点 给妈妈打电话</code> "
    "设置一个。",
    "reminders_more": "……还有 {count} 个",
    "reminder_paused": "⏸ 已暂停：Telegram 不让我在这里发消息",
    "reminder_paused_refused": "⏸ 已暂停：Telegram 拒绝了这个提醒",
    "reminders_resumed": "▶️ {count} 个暂停的提醒已恢复。",
    "reminder_delivery": "⏰ <b>提醒</b>：{text}",
    "reminder_delivery_of": "⏰ <b>提醒</b>：这条消息",
    "reminder_late": "<i>（晚了：原定 {time}）</i>",
    "reminder_maybe_repeat": "<i>（可能重复：发送时我被中断了）</i>",
    "reminder_topic_gone": "<i>（发在这里：设置它的话题已关闭或不存在）</i>",
    "reminder_refused_plain": "⚠️ Telegram 拒绝了这里的一个提醒，所以它已暂停：“{text}”"
    "（{reason}）。这个聊天的其他提醒照常；发送 /reminders 可以再试一次。",
    "reminder_for": "提醒 {mention}",
    "reminder_summary": "⏰ <b>我离线期间，这些提醒已经到期</b>：\n{items}",
    "reminder_done": "✅ 完成：{text}",
    "reminder_done_once": "✅ 这次完成：{text}\n下一次：{when}",
    "reminder_snoozed": "⏰ 推迟到 {when}：{text}",
    "reminder_cancelled": "🗑 已取消：{text}",
    "reminder_changed": "✏️ 已修改：",
    "reminder_change_prompt": "✏️ ⏰#{id} “{text}”改到什么时候？请回复这条消息写新的时间，"
    "例如 <code>明天上午10点</code> 或 <code>两小时后</code>。",
    "reminder_from_memory_past_plain": "这个时间已经过去，没有设置提醒。",
    "reminder_from_memory_none_plain": "这条记忆里没有找到时间。",
    "reminder_from_memory_set_plain": "这个提醒已经设好了。",
    "reminder_pressed_again_plain": "已经处理过了：这个按钮之前按过。",
    "reminder_gone_plain": "这个提醒已经结束，或不在这里了。",
    "reminder_not_yours_plain": "只有设置这个提醒的成员或群组管理员可以修改它。",
    "reminder_not_yours": "只有设置这个提醒的成员或群组管理员可以修改它。",
    "reminder_snoozed_plain": "已推迟。",
    "button_done_plain": "✅ 完成",
    "button_snooze_10_plain": "⏰ 10 分钟",
    "button_snooze_60_plain": "1 小时",
    "button_snooze_tomorrow_plain": "明天",
    "button_reminder_cancel_plain": "🗑 取消",
    "button_reminder_cancel_one_plain": "🗑 {index}：{preview}",
    "button_reminder_change_plain": "✏️ 修改",
    "button_make_reminder_plain": "⏰ 提醒我 {when}",
    "repeat_daily": "每天",
    "repeat_every_days": "每 {n} 天",
    "repeat_weekdays": "每个工作日（周一至周五）",
    "repeat_weekly": "每{days}",
    "repeat_every_weeks": "每 {n} 周的{days}",
    "repeat_monthly": "每月 {day} 号",
    "repeat_every_months": "每 {n} 个月的 {day} 号",
    "repeat_yearly": "每年",
    "repeat_every_years": "每 {n} 年",
    "weekday_names_plain": "周一 周二 周三 周四 周五 周六 周日",
    "cmd_remind_plain": "设置提醒：/remind 明天早上9点 给妈妈打电话",
    "cmd_reminders_plain": "即将到来的提醒",
    "cmd_timezone_plain": "这个聊天的时区：/timezone 上海",
}
