"""Edited messages: a remembered message edited updates its memory; a question is re-answered.

Telegram sends an edit as ``edited_message``, with the message's id: the memory stored from that
message is the one whose ``source`` names it (``bot.core.operations.from_source``; /remember,
a photo's caption, a file). Its content, and the tags and category written in it, become the
new ones through the one edit operation (``operations.edit``: recorded and undoable like
/edit, and allowed only to whoever may change that memory). An edit to nothing (only a
command, only hashtags) keeps the memory as it was, and says so.

An edited message that stored nothing is answered again, as the new text would be: plain
text by ``bot.chat.messages.answer_text`` (the model, or a search), ``/recall`` by /recall.
Other commands are not run again on an edit (an edited /forget must not delete twice).
"""

from __future__ import annotations

from telegram import Update
from telegram.ext import ContextTypes

from bot.chat.access import caller_of, message_source, run_changing, without_mention
from bot.chat.incoming import addressed
from bot.chat.services import services
from bot.core import operations
from bot.core.entry import parse_entry, split_command
from bot.core.intents import note_of
from bot.errors import NotAllowed
from bot.view.i18n import invalid_reason, language_of, t
from bot.view.render import memory_block
from bot.view.replies import reply_html
from memory.errors import MemoryInvalid, MemoryNotFound

RE_ANSWERED = ("recall",)


async def edited_message(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Update the memory an edited message stored, or answer the edited question again."""
    message, caller = update.edited_message, caller_of(update, context)
    if message is None or caller is None or not addressed(message, context):
        return
    language = language_of(update.effective_user)
    memory = await services(context).workers.run(
        caller.namespace, operations.from_source, message_source(message)
    )
    raw = message.text if message.text is not None else (message.caption or "")
    command, argument = split_command(raw)
    if memory is None:
        if message.text is None:
            return  # a caption edited on something not remembered (a group's photo)
        if command in RE_ANSWERED:
            from bot.chat import commands

            await commands.recall(update, context)
        elif not command:
            from bot.chat.messages import answer_text

            text = without_mention(message.text, context.bot)
            await answer_text(update, context, message, caller, text, language)
        return
    text = argument if command else without_mention(raw, context.bot)
    if not command and message.text is not None:  # "remember that …" stored its note
        text = note_of(text) or text
    entry = parse_entry(text, derive_tags=False)
    if not entry.content:
        await reply_html(message, t(language, "edit_empty"))
        return
    try:
        changed = await run_changing(
            update,
            context,
            caller,
            operations.edit,
            memory.id,
            content=entry.content,
            tags=entry.tags or None,
            category=entry.category,
        )
    except NotAllowed:
        await reply_html(message, t(language, "not_yours"))
        return
    except MemoryNotFound as e:  # forgotten meanwhile
        await reply_html(message, t(language, "not_found", id=e.memory_id))
        return
    except MemoryInvalid as e:
        await reply_html(message, invalid_reason(language, e, entry.content))
        return
    await reply_html(
        message, t(language, "edit_updated", memory=memory_block(changed, language=language))
    )
