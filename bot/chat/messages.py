"""Messages that are not commands: free text.

In a private chat every text message is for the bot; in a group only a mention of the bot or a
reply to one of its messages is (``access.addressed_to_bot``), anything else is left alone.

A message that asks for a reminder ("remind me tomorrow at 9 to call mom", "提醒我明天早上9点
给妈妈打电话") sets one (``bot.chat.reminding``), model or not: the code reads the time; only a
request whose time it cannot read goes to the model (its ``scheduleReminder`` tool), or without
one gets examples. A reply to the bot's ✏️ Change prompt is the reminder's new time.

With a language model configured, the message goes to it (``bot.chat.conversation``): it answers,
using the memory operations of the chat's namespace as tools. Without one
(``bot.chat.noting``), a note ("remember that …", "记住…") is stored as /remember stores it,
and anything else is searched like /recall: a statement with a 💾 Remember this button; a
search that found nothing, without the button, with a hint that /remember stores things (once
a day per chat: ``bot.core.hints``).
"""

from __future__ import annotations

from telegram import Message, Update
from telegram.ext import ContextTypes

from bot.chat import noting, offer_answers, reminding
from bot.chat.access import addressed_to_bot, caller_of, without_mention
from bot.chat.services import services
from bot.core.policy import Caller
from bot.view.i18n import language_of, t
from bot.view.replies import reply_html


async def free_text(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Answer a plain message addressed to the bot: by the model, or by searching for it."""
    message, caller = update.effective_message, caller_of(update, context)
    if message is None or message.text is None or caller is None:
        return
    if not addressed_to_bot(message, context.bot):
        return
    language = language_of(update.effective_user)
    query = without_mention(message.text, context.bot)
    await answer_text(update, context, message, caller, query, language)


async def answer_text(
    update: Update,
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    query: str,
    language: str,
) -> None:
    """Answer ``query``, the text of ``message`` as typed (or a voice note's transcription)."""
    if not query:
        await reply_html(message, t(language, "help"))
        return
    conversation = services(context).conversation
    model = conversation is not None
    if await offer_answers.take_time(context, message, caller, query, language):
        return  # the time asked for by 🕒 Another time, under a reminder offer
    if await reminding.from_free_text(context, message, caller, query, language, model=model):
        return
    if conversation is not None:
        await conversation.answer(message, caller, query, language)
        return
    await noting.answer_plainly(context, message, caller, query, language)
