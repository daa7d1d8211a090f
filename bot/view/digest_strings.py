"""The strings of the digest (the report and /digest), in English and Chinese;
``bot.view.i18n`` adds them to its table (HTML unless the key ends in ``_plain``)."""

from __future__ import annotations

EN = {
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
    "digest_never": "none scheduled",
}

ZH = {
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
    "digest_never": "暂无安排",
}
