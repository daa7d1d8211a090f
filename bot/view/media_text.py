"""The strings of non-text messages, imports, edits and inline mode, in English and Chinese.

Kept apart from ``bot.view.i18n`` (which merges them into its ``STRINGS``) so that the table of
every other feature stays as it is; the same rules hold: templates are Telegram HTML, keys
ending in ``_plain`` are plain text (here also the descriptions stored as a memory's content).
"""

from __future__ import annotations

MEDIA_STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "content_photo_plain": "📷 photo",
        "content_animation_plain": "🎞 GIF",
        "content_document_plain": "📄 {name} ({size})",
        "content_video_plain": "🎬 video ({duration})",
        "content_video_note_plain": "📹 video message ({duration})",
        "content_audio_plain": "🎵 {title} ({duration})",
        "content_audio_untitled_plain": "audio",
        "content_voice_plain": "🎤 voice note ({duration})",
        "content_location_plain": "📍 location {latitude}, {longitude}",
        "content_venue_plain": "📍 {title}, {address} ({latitude}, {longitude})",
        "content_contact_plain": "👤 {name} {phone}",
        "content_described_plain": "📷 photo (description by the model): {description}",
        "content_transcribed_plain": "🎤 {text}",
        "media_remembered": "🧠 Remembered:\n{memory}",
        "media_remembered_many": "🧠 Remembered {count} messages:\n\n{memories}",
        "media_sent_back": "/recall sends it back.",
        "media_ask_caption": "📝 A photo without a caption is hard to find again: edit the "
        "photo to add one, or send <code>/edit {id} what it shows</code>.",
        "media_described": "🔍 The model described the photo (its words, not yours): "
        "<i>{description}</i>. <code>/edit {id} ...</code> changes it.",
        "media_origin": "↪️ forwarded from {name} · {date}",
        "media_origin_hidden": "↪️ forwarded from {name} (hidden account) · {date}",
        "media_unsupported": "I can't remember {kind}. Send me text, a photo, a file, a voice "
        "note, a location or a contact, or forward a message.",
        "kind_sticker": "stickers",
        "kind_poll": "polls",
        "kind_dice": "dice rolls",
        "kind_game": "games",
        "kind_story": "stories",
        "kind_invoice": "invoices",
        "kind_paid_media": "paid media",
        "kind_checklist": "checklists",
        "file_too_big": "This file is {size}; bots can download at most 20 MB from Telegram.",
        "file_download_failed": "I couldn't download the file from Telegram; nothing changed. "
        "Try sending it again.",
        "voice_transcribed": "🎤 <i>{text}</i>",
        "voice_not_transcribed": "🎤 I couldn't transcribe this voice note ({reason}), so I "
        "kept it as a voice note.",
        "voice_reason_too_big_plain": "it is over the 20 MB bots can download",
        "voice_reason_empty_plain": "no words were heard",
        "voice_reason_timeout_plain": "the transcription service did not answer in {seconds} s",
        "voice_reason_failed_plain": "the transcription service did not work",
        "voice_reason_download_plain": "Telegram did not give me the file",
        "import_preview": "📥 <b>{name}</b>: {total} memories in the file.\n"
        "• {new} new\n• {present} already here\n• {refused} refused{reasons}{renumbered}"
        "\n\n{question}",
        "import_renumber": "\n🔢 {count} ids renumbered (old → new, given at import): {ids}; "
        "later than tomorrow, they would leave no ids for what you remember next.",
        "import_renumbered": "\n🔢 {count} ids renumbered (old → new): {ids}",
        "import_question": "Import the {new} new ones?",
        "import_nothing": "Nothing to import: every memory in it is already here or refused.",
        "import_reason": "\n   – {count} × {reason}",
        "import_reason_not_object": "it is not a memory (an object with an id and a text)",
        "import_reason_id_taken": "its id belongs to a different memory here",
        "button_import_plain": "📥 Import",
        "button_cancel_import_plain": "Cancel",
        "import_done": "📥 Imported {added} memories ({present} were already here, "
        "{refused} refused).",
        "import_cancelled": "Import cancelled; nothing changed.",
        "import_gone_plain": "This import is no longer waiting: send the file again.",
        "import_not_yours_plain": "Only the person who sent the file can import it.",
        "import_too_big": "📥 {name} is {size}; I import files of at most {limit}. Nothing "
        "changed.",
        "import_not_json": "📥 {name} is not a memory file I can read: {reason}. Nothing "
        "changed. Send the <code>memory.json</code> that /export gives.",
        "import_wrong_shape": "📥 {name} is JSON, but not a list of memories ({reason}). "
        "Nothing changed. A memory file is a JSON array of objects with "
        "<code>id</code> and <code>content</code>, as /export gives.",
        "import_shape_not_list_plain": "the file holds {found}, not a list",
        "import_shape_too_many_plain": "{count} entries; at most {limit}",
        "edit_updated": "✏️ Updated to match your edited message:\n{memory}",
        "edit_empty": "The edited message has no text; the memory stays as it was.",
        "inline_untitled_plain": "memory {id}",
    },
    "zh": {
        "content_photo_plain": "📷 照片",
        "content_animation_plain": "🎞 动图",
        "content_document_plain": "📄 {name}（{size}）",
        "content_video_plain": "🎬 视频（{duration}）",
        "content_video_note_plain": "📹 视频消息（{duration}）",
        "content_audio_plain": "🎵 {title}（{duration}）",
        "content_audio_untitled_plain": "音频",
        "content_voice_plain": "🎤 语音（{duration}）",
        "content_location_plain": "📍 位置 {latitude}, {longitude}",
        "content_venue_plain": "📍 {title}，{address}（{latitude}, {longitude}）",
        "content_contact_plain": "👤 {name} {phone}",
        "content_described_plain": "📷 照片（模型的描述）：{description}",
        "content_transcribed_plain": "🎤 {text}",
        "media_remembered": "🧠 记住了：\n{memory}",
        "media_remembered_many": "🧠 记住了 {count} 条消息：\n\n{memories}",
        "media_sent_back": "/recall 会把它发回给你。",
        "media_ask_caption": "📝 没有说明的照片以后很难找到：编辑这张照片加上说明，"
        "或者发送 <code>/edit {id} 照片内容</code>。",
        "media_described": "🔍 模型描述了这张照片（是它的话，不是你的）："
        "<i>{description}</i>。<code>/edit {id} ...</code> 可以修改。",
        "media_origin": "↪️ 转发自 {name} · {date}",
        "media_origin_hidden": "↪️ 转发自 {name}（隐藏的账号）· {date}",
        "media_unsupported": "我记不住{kind}。请发给我文字、照片、文件、语音、位置或联系人，"
        "或者转发一条消息。",
        "kind_sticker": "贴纸",
        "kind_poll": "投票",
        "kind_dice": "骰子",
        "kind_game": "游戏",
        "kind_story": "动态",
        "kind_invoice": "账单",
        "kind_paid_media": "付费内容",
        "kind_checklist": "清单",
        "file_too_big": "这个文件有 {size}；机器人最多只能从 Telegram 下载 20 MB。",
        "file_download_failed": "没能从 Telegram 下载这个文件，没有做任何修改。请再发一次。",
        "voice_transcribed": "🎤 <i>{text}</i>",
        "voice_not_transcribed": "🎤 没能转写这条语音（{reason}），我把它当作语音记住了。",
        "voice_reason_too_big_plain": "超过了机器人能下载的 20 MB",
        "voice_reason_empty_plain": "没有听到任何话",
        "voice_reason_timeout_plain": "转写服务 {seconds} 秒内没有回应",
        "voice_reason_failed_plain": "转写服务出了问题",
        "voice_reason_download_plain": "Telegram 没有给我这个文件",
        "import_renumber": "\n🔢 {count} 个编号将重新编排（旧 → 新，导入时给出）：{ids}；"
        "它们晚于明天，会让以后记的内容没有编号可用。",
        "import_renumbered": "\n🔢 {count} 个编号已重新编排（旧 → 新）：{ids}",
        "import_preview": "📥 <b>{name}</b>：文件里有 {total} 条记忆。\n"
        "• 新的 {new} 条\n• 已有 {present} 条\n• 拒绝 {refused} 条{reasons}{renumbered}\n\n"
        "{question}",
        "import_question": "导入这 {new} 条新的记忆吗？",
        "import_nothing": "没有可导入的：文件里的记忆都已经有了，或者被拒绝。",
        "import_reason": "\n   – {count} × {reason}",
        "import_reason_not_object": "不是一条记忆（带编号和文字的对象）",
        "import_reason_id_taken": "编号已被这里另一条记忆占用",
        "button_import_plain": "📥 导入",
        "button_cancel_import_plain": "取消",
        "import_done": "📥 导入了 {added} 条记忆（{present} 条已有，{refused} 条被拒绝）。",
        "import_cancelled": "已取消导入，没有做任何修改。",
        "import_gone_plain": "这个导入已不在等待中：请重新发送文件。",
        "import_not_yours_plain": "只有发送文件的人可以导入它。",
        "import_too_big": "📥 {name} 有 {size}；我最多导入 {limit} 的文件。没有做任何修改。",
        "import_not_json": "📥 {name} 不是我能读的记忆文件：{reason}。没有做任何修改。"
        "请发送 /export 给出的 <code>memory.json</code>。",
        "import_wrong_shape": "📥 {name} 是 JSON，但不是记忆列表（{reason}）。没有做任何修改。"
        "记忆文件是一个 JSON 数组，每一项是带 <code>id</code> 和 <code>content</code> "
        "的对象，和 /export 给出的一样。",
        "import_shape_not_list_plain": "文件里是{found}，不是数组",
        "import_shape_too_many_plain": "{count} 项；最多 {limit} 项",
        "edit_updated": "✏️ 已按你编辑后的消息更新：\n{memory}",
        "edit_empty": "编辑后的消息没有文字；记忆保持不变。",
        "inline_untitled_plain": "记忆 {id}",
    },
}
