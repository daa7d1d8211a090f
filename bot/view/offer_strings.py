"""The strings of reminder offers ("⏰ Remind you 2026-12-02 (Wed) 09:00?"), in English and
Chinese; ``bot.view.i18n`` adds them to its table, with the same conventions (HTML unless the key
ends in ``_plain``)."""

from __future__ import annotations

EN = {
    "offer_reminder": "⏰ Remind you {when}? — {text}",
    "offer_reminder_repeat": "🔁 {rule}",
    "button_offer_yes_plain": "✅ Yes",
    "button_offer_other_plain": "🕒 Another time",
    "button_offer_no_plain": "✖️ No",
    "offer_declined": "OK, no reminder: {text}",
    "offer_ask_time": "🕒 When should I remind you of “{text}”? Pick a time below, or reply to "
    "this message with one, e.g. <code>tomorrow 8am</code> or <code>in 2 hours</code>.",
    "offer_ask_time_private": "🕒 When should I remind you of “{text}”? Pick a time below, or "
    "send one, e.g. <code>tomorrow 8am</code> or <code>in 2 hours</code>.",
    "button_offer_hour_before_plain": "1 hour before ({time})",
    "button_offer_day_before_plain": "The day before ({when})",
    "button_offer_evening_before_plain": "The evening before ({when})",
    "offer_time_unclear": "I could not tell when “{phrase}” is. Send only the time, e.g. "
    "<code>tomorrow 8am</code>, <code>Friday 18:00</code>, <code>in 2 hours</code>.",
    "offer_gone_reminder_plain": "This offer is no longer open.",
    "offer_declined_plain": "You said no to this reminder.",
    "offer_taken_plain": "That reminder is set already: see /reminders.",
    "offer_not_yours_plain": "Only who said it, or a group administrator, can answer this.",
    "offer_past_plain": "That time has passed. Pick another time.",
    "offer_too_many_plain": "This chat has too many reminders; cancel some in /reminders first.",
}

ZH = {
    "offer_reminder": "⏰ 要在 {when} 提醒你吗？— {text}",
    "offer_reminder_repeat": "🔁 {rule}",
    "button_offer_yes_plain": "✅ 好",
    "button_offer_other_plain": "🕒 换个时间",
    "button_offer_no_plain": "✖️ 不用",
    "offer_declined": "好的，不提醒：{text}",
    "offer_ask_time": "🕒 什么时候提醒你“{text}”？选一个时间，或回复这条消息告诉我，例如"
    "<code>明天早上8点</code>、<code>两小时后</code>。",
    "offer_ask_time_private": "🕒 什么时候提醒你“{text}”？选一个时间，或直接发给我，例如"
    "<code>明天早上8点</code>、<code>两小时后</code>。",
    "button_offer_hour_before_plain": "提前1小时（{time}）",
    "button_offer_day_before_plain": "前一天（{when}）",
    "button_offer_evening_before_plain": "前一天晚上（{when}）",
    "offer_time_unclear": "我没看懂“{phrase}”是什么时候。请只发时间，例如"
    "<code>明天早上8点</code>、<code>周五18:00</code>、<code>两小时后</code>。",
    "offer_gone_reminder_plain": "这个提议已经失效了。",
    "offer_declined_plain": "你已经拒绝了这个提醒。",
    "offer_taken_plain": "这个提醒已经设好了：见 /reminders。",
    "offer_not_yours_plain": "只有说这句话的人或群组管理员可以回答。",
    "offer_past_plain": "这个时间已经过去了，请换个时间。",
    "offer_too_many_plain": "这个聊天的提醒太多了，请先在 /reminders 里取消一些。",
}
