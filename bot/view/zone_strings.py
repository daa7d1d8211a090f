"""The strings of ``/timezone`` and the choices around it, in English and Chinese;
``bot.view.i18n`` adds them to its table (HTML unless the key ends in ``_plain``)."""

from __future__ import annotations

_EXAMPLES = (
    "<code>/timezone Berlin</code> · <code>/timezone 北京</code> · "
    "<code>/timezone New York</code> · <code>/timezone Japan</code> · "
    "<code>/timezone UTC+8</code> · <code>/timezone Europe/Paris</code>"
)

EN = {
    "zone_now": "🌐 Time zone here: <b>{zone}</b>{details}{default}. Local time now: {now}.",
    "zone_details": " ({parts})",
    "zone_joiner_plain": ", ",
    "zone_default_mark": ", the bot's default",
    "zone_how": "To change it, send a city, a country or an offset:\n" + _EXAMPLES,
    "zone_how_private": "…or tap “📍 Send my location” below.",
    "zone_how_group": "…or reply to this message with a location (📎 → Location).",
    "zone_set": "🕒 Time zone set to <b>{zone}</b> ({said}, {offset}); it's now {now}.",
    "zone_set_fixed": "🕒 Time zone set to <b>{zone}</b>; it's now {now}.",
    "zone_fixed_note": "A fixed offset does not follow daylight saving time. To follow a "
    "place's clock, send its city instead, e.g. <code>/timezone {city}</code>.",
    "zone_unknown": "“{name}” is not a time zone I know, so nothing changed. Send a city, a "
    "country or an offset, for example:\n" + _EXAMPLES,
    "zone_did_you_mean": "Did you mean one of these?",
    "zone_choose": "“{name}” has more than one time zone. Which one is yours? "
    "(Or send your city: <code>/timezone Chicago</code>.)",
    "zone_admins_only": "Only the group's administrators can change its time zone.",
    "zone_from_location_plain": "from your location",
    "zone_no_zone_there": "I found no time zone at that place (open sea?), so nothing "
    "changed. Send your city instead: <code>/timezone Berlin</code>.",
    "zone_no_locations": "This bot cannot tell a time zone from a location (its optional "
    "package tzfpy is not installed), so nothing changed. Send your city instead: "
    "<code>/timezone Berlin</code>.",
    "zone_moves": "{count} reminders here are set in other time zones. What should they do?\n"
    "• <b>Move</b>: each keeps its clock time in {zone}: “{text}” at {before} would ring at "
    "{moved}.\n"
    "• <b>Keep</b>: each rings at the same moment as before: that is {kept} here.",
    "zone_moves_one": "A reminder here is set in another time zone: “{text}” at {before}. "
    "What should it do?\n"
    "• <b>Move</b>: keep its clock time, {moved}.\n"
    "• <b>Keep</b>: ring at the same moment as before, {kept} here.",
    "zone_moved": "✅ Moved {count} reminders to the same local time in <b>{zone}</b>:",
    "zone_moved_none": "Nothing to move: no reminder here is in another time zone any more.",
    "zone_moved_passed": "⌛ {count} kept their moment: their local time has already passed "
    "in {zone}.",
    "zone_moved_busy": "⏳ {count} being sent right now kept their moment; move it later with "
    "✏️ Change.",
    "zone_moved_more": "… and {count} more (/reminders).",
    "zone_moved_others": "👥 {count} set by others stay as they were: who set them can move "
    "theirs with the button below.",
    "zone_kept": "👍 Your reminders ring at the same moments as before; /reminders shows each "
    "in its own time zone.",
    "zone_changed_since": "The time zone here has changed since; send /timezone again.",
    "button_zone_move_plain": "Move {count} reminders to the same local time",
    "button_zone_move_one_plain": "Move it to the same local time",
    "button_zone_keep_plain": "Keep them at the same instant",
    "button_zone_keep_one_plain": "Keep it at the same instant",
    "button_zone_option_plain": "{city} · {zone} ({offset})",
    "button_zone_location_plain": "📍 Send my location",
    "button_zone_use_location_plain": "🕒 Use for my time zone",
}

_EXAMPLES_ZH = (
    "<code>/timezone 北京</code> · <code>/timezone 上海</code> · "
    "<code>/timezone 纽约</code> · <code>/timezone 日本</code> · "
    "<code>/timezone UTC+8</code> · <code>/timezone Europe/Berlin</code>"
)

ZH = {
    "zone_now": "🌐 这里的时区：<b>{zone}</b>{details}{default}。当地时间：{now}。",
    "zone_details": "（{parts}）",
    "zone_joiner_plain": "，",
    "zone_default_mark": "，机器人默认",
    "zone_how": "要修改，请发送城市、国家或时差：\n" + _EXAMPLES_ZH,
    "zone_how_private": "……或点下面的“📍 发送我的位置”。",
    "zone_how_group": "……或回复这条消息发送一个位置（📎 → 位置）。",
    "zone_set": "🕒 时区已设为 <b>{zone}</b>（{said}，{offset}）；现在是 {now}。",
    "zone_set_fixed": "🕒 时区已设为 <b>{zone}</b>；现在是 {now}。",
    "zone_fixed_note": "固定时差不随夏令时变化。要跟随某地的时间，请发送城市，"
    "例如 <code>/timezone {city}</code>。",
    "zone_unknown": "我不认识“{name}”这个时区，没有修改。请发送城市、国家或时差，例如：\n"
    + _EXAMPLES_ZH,
    "zone_did_you_mean": "你是不是指下面的某一个？",
    "zone_choose": "“{name}”有不止一个时区。你在哪一个？（也可以直接发送城市："
    "<code>/timezone 芝加哥</code>。）",
    "zone_admins_only": "只有群组管理员可以修改群组的时区。",
    "zone_from_location_plain": "根据你的位置",
    "zone_no_zone_there": "那个地方没有时区（在海上？），没有修改。请发送城市："
    "<code>/timezone 北京</code>。",
    "zone_no_locations": "这个机器人无法根据位置判断时区"
    "（没有安装可选的 <code>tzfpy</code> 包），没有修改。"
    "请发送城市：<code>/timezone 北京</code>。",
    "zone_moves": "这里有 {count} 个提醒设在别的时区。它们要怎么办？\n"
    "• <b>移动</b>：保持钟点不变，改用 {zone}：“{text}”原来在 {before}，将在 {moved} 提醒。\n"
    "• <b>保持</b>：仍在原来的时刻提醒：也就是这里的 {kept}。",
    "zone_moves_one": "这里有一个提醒设在别的时区：“{text}”在 {before}。它要怎么办？\n"
    "• <b>移动</b>：保持钟点不变，{moved}。\n"
    "• <b>保持</b>：仍在原来的时刻提醒，也就是这里的 {kept}。",
    "zone_moved": "✅ 已把 {count} 个提醒移到 <b>{zone}</b> 的相同钟点：",
    "zone_moved_none": "没有要移动的：这里已经没有设在别的时区的提醒。",
    "zone_moved_passed": "⌛ {count} 个保持原来的时刻：它们的钟点在 {zone} 已经过去了。",
    "zone_moved_busy": "⏳ {count} 个正在发送，保持原来的时刻；之后可以用 ✏️ 修改 调整。",
    "zone_moved_more": "…… 还有 {count} 个（/reminders）。",
    "zone_moved_others": "👥 {count} 个别人设的提醒保持不变："
    "设提醒的人可以用下面的按钮移动自己的。",
    "zone_kept": "👍 你的提醒仍在原来的时刻提醒；/reminders 会按各自的时区显示。",
    "zone_changed_since": "这里的时区后来又改过了；请重新发送 /timezone。",
    "button_zone_move_plain": "把 {count} 个提醒移到相同钟点",
    "button_zone_move_one_plain": "移到相同钟点",
    "button_zone_keep_plain": "保持原来的时刻",
    "button_zone_keep_one_plain": "保持原来的时刻",
    "button_zone_option_plain": "{city} · {zone}（{offset}）",
    "button_zone_location_plain": "📍 发送我的位置",
    "button_zone_use_location_plain": "🕒 用作我的时区",
}
