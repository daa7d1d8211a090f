"""The strings of /export's formats, /calendar and Markdown imports, in English and Chinese.

Merged into ``bot.view.i18n.STRINGS``; a key ending in ``_plain`` is plain text, the others
Telegram HTML with their values escaped by the caller.
"""

from __future__ import annotations

EN = {
    "cmd_calendar_plain": "Reminders in your calendar app",
    "export_usage": "/export — your memories as <code>memory.json</code> (the article's format)\n"
    "/export md — your memories as Markdown, by category (Obsidian reads it)\n"
    "/export ics — this chat's reminders as a calendar file",
    "export_md_caption": "📝 {count} memories as Markdown, by category. Send the file back "
    "(or a .zip of Markdown notes) to import it.",
    "export_ics_caption": "📅 {count} reminders as a calendar (iCalendar). Open the file to "
    "add them to your calendar; /calendar gives a link that stays up to date.",
    "export_ics_empty": "No reminders to put in a calendar yet. Set one with /remind.",
    "calendar_name_plain": "Reminders",
    "calendar_name_titled_plain": "Reminders · {title}",
    "reminder_untitled_plain": "Reminder",
    "calendar_link": "📅 This chat's reminders as a calendar that stays up to date:\n"
    "<code>{url}</code>\n\n"
    "Add it as a subscription: Google Calendar: Other calendars ➕ → From URL; Apple "
    "Calendar: File → New Calendar Subscription; Outlook: Add calendar → Subscribe from web.\n"
    "🔒 Keep it private: whoever has it sees these reminders. /calendar reset replaces it "
    "(the old link stops working).",
    "calendar_reset_done": "🔄 A new calendar link; the old one no longer works:\n"
    "<code>{url}</code>\n\nAdd it to your calendar again (and remove the old one).",
    "calendar_unavailable": "📅 This bot has no web server to serve calendar links from. "
    "Whoever runs it can turn one on in <code>config.toml</code>: <code>[calendar] listen</code>, "
    "<code>port</code> and <code>public_url</code> (or run it in webhook mode). Meanwhile "
    "/export ics sends the reminders as a file.",
    "calendar_disabled": "📅 Calendar links are turned off on this bot. /export ics sends the "
    "reminders as a file.",
    "calendar_admins_only": "Only the group's administrators can replace its calendar link.",
    "calendar_usage": "/calendar — this chat's calendar link\n"
    "/calendar reset — a new link; the old one stops working",
    "import_skipped": "⏭ {count} files that are not notes were skipped (pictures, settings).\n",
    "import_not_text": "📥 {name} is not a text file I can read (it is not UTF-8). Nothing "
    "changed.",
    "import_notes_too_many": "📥 {name} has too many memories ({reason}). Nothing changed.",
    "import_archive_refused": "📥 {name} cannot be imported: {reason}. Nothing changed.",
    "import_archive_damaged_plain": "it is not a zip file, or it is damaged",
    "import_archive_unsafe_name_plain": "“{member}” is a link or has a name that points "
    "outside the folder",
    "import_archive_encrypted_plain": "“{member}” is protected by a password",
    "import_archive_nested_plain": "“{member}” is an archive inside the archive; send the "
    "notes in one .zip",
    "import_archive_too_big_plain": "“{member}” is too big unpacked (a note may be at most "
    "{note}, all of them {total})",
    "import_archive_too_many_plain": "it holds too many files",
    "import_archive_not_text_plain": "“{member}” is not UTF-8 text",
    "import_archive_no_notes_plain": "it holds no Markdown notes (.md files)",
}

ZH = {
    "cmd_calendar_plain": "把提醒放进日历应用",
    "export_usage": "/export — 导出记忆为 <code>memory.json</code>（文章中的格式）\n"
    "/export md — 按分类导出记忆为 Markdown（笔记软件可以直接打开）\n"
    "/export ics — 把这个聊天的提醒导出为日历文件",
    "export_md_caption": "📝 {count} 条记忆，Markdown 格式，按分类排列。把文件发回给我"
    "（或 Markdown 笔记的压缩包）就能导入。",
    "export_ics_caption": "📅 {count} 个提醒，日历格式（iCalendar）。打开文件即可加入你的日历；"
    "/calendar 可以获取一个自动更新的链接。",
    "export_ics_empty": "还没有可以放进日历的提醒。用 /remind 设置一个。",
    "calendar_name_plain": "提醒",
    "calendar_name_titled_plain": "提醒 · {title}",
    "reminder_untitled_plain": "提醒",
    "calendar_link": "📅 这个聊天的提醒，作为自动更新的日历：\n<code>{url}</code>\n\n"
    "在日历应用里以订阅方式添加（谷歌日历：其他日历 ➕ → 通过网址添加；苹果日历：文件 → "
    "新建日历订阅）。\n"
    "🔒 请不要公开：拿到链接的人都能看到这些提醒。<code>/calendar reset</code> 会换一个新链接"
    "（旧链接失效）。",
    "calendar_reset_done": "🔄 已换成新的日历链接，旧链接不再有效：\n<code>{url}</code>\n\n"
    "请在日历里重新添加（并删除旧的）。",
    "calendar_unavailable": "📅 这个机器人没有可以提供日历链接的网页服务。运行它的人可以在 "
    "<code>config.toml</code> 里开启：<code>[calendar] listen</code>、<code>port</code> 和 "
    "<code>public_url</code>（或设置 <code>[telegram] webhook_url</code>）。"
    "在此之前，/export ics 可以把提醒作为文件发送。",
    "calendar_disabled": "📅 这个机器人关闭了日历链接。/export ics 可以把提醒作为文件发送。",
    "calendar_admins_only": "只有群组管理员可以更换群组的日历链接。",
    "calendar_usage": "/calendar — 这个聊天的日历链接\n"
    "<code>/calendar reset</code> — 换一个新链接，旧链接失效",
    "import_skipped": "⏭ 跳过了 {count} 个不是笔记的文件（图片、设置）。\n",
    "import_not_text": "📥 {name} 不是我能读的文本文件（编码不是 <code>UTF-8</code>）。"
    "没有做任何修改。",
    "import_notes_too_many": "📥 {name} 里的记忆太多（{reason}）。没有做任何修改。",
    "import_archive_refused": "📥 {name} 无法导入：{reason}。没有做任何修改。",
    "import_archive_damaged_plain": "它不是压缩包，或者已经损坏",
    "import_archive_unsafe_name_plain": "“{member}”是链接，或者名字指向文件夹之外",
    "import_archive_encrypted_plain": "“{member}”有密码保护",
    "import_archive_nested_plain": "“{member}”是压缩包里的压缩包；请把笔记放在同一个压缩包里发送",
    "import_archive_too_big_plain": "“{member}”解压后太大（每篇笔记最多 {note}，全部最多 {total}）",
    "import_archive_too_many_plain": "里面的文件太多",
    "import_archive_not_text_plain": "“{member}”不是文本（编码不是统一码）",
    "import_archive_no_notes_plain": "里面没有 Markdown 笔记",
}
