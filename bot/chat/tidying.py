"""``/tidy`` and the buttons of a tidy's questions.

``/tidy`` tidies the chat's memories now (``bot.jobs.tidy.TidyJob.tidy``, as who sent it: one
change, which /undo reverts) and answers with what it did and what it asks;
``/tidy off`` and ``/tidy on`` switch the nightly tidy. In a group's shared namespace only an
administrator may do either: a tidy changes memories of every member (``bot.core.policy``).

A question's buttons (``tq:<token>:<n>:<n|o|b>``, ``bot.view.callbacks``) keep the newer,
the older or both of conflict ``n`` (``bot.core.tidying.settle``). As every button, a press is
resolved in the presser's namespace, and the memory removed must be theirs to change (keeping
both: the namespace's settings); the answered conflict's buttons go.
"""

from __future__ import annotations

import logging

from telegram import InlineKeyboardMarkup, Message, Update
from telegram.error import TelegramError
from telegram.ext import ContextTypes

from bot.chat.access import caller_of, is_group, may_change_settings, run_changing
from bot.chat.presses import pressed
from bot.chat.services import services
from bot.core import tidying
from bot.core.entry import split_command
from bot.errors import NotAllowed
from bot.jobs.tidy_report import render
from bot.view import callbacks
from bot.view.digest_view import next_report_text
from bot.view.i18n import language_of, t
from bot.view.render import escape, preview
from bot.view.replies import reply_html
from memory.errors import MemoryInvalid, MemoryNotFound

log = logging.getLogger(__name__)

CHOICES = {"n": "newer", "o": "older", "b": "both"}
PREVIEW = 80


async def tidy_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Tidy the chat's memories now, or switch the nightly tidy on or off."""
    message, caller = update.effective_message, caller_of(update, context)
    job = services(context).tidy
    if message is None or caller is None or job is None:
        return
    language = language_of(update.effective_user)
    _, argument = split_command(message.text or "")
    action = argument.split(maxsplit=1)[0].lower() if argument else ""
    if action not in ("", "on", "off"):
        await reply_html(message, t(language, "tidy_usage"))
        return
    if not await may_change_settings(update, context):
        await reply_html(message, t(language, "tidy_admins_only"))
        return
    run, name = services(context).workers.call, caller.namespace
    if action:
        on = action == "on"
        await run(lambda: job.switch(name, on, language=language))
        if not on:
            await reply_html(message, t(language, "tidy_switched_off"))
            return
        key = "tidy_switched_on" if job.config.enabled else "tidy_disabled"
        next_run = next_report_text(*await run(lambda: job.next_run(name)), language)
        await reply_html(message, t(language, key, next=next_run))
        return
    await run(lambda: job.note_language(name, language))
    outcome = await run(lambda: job.tidy(name))
    group = is_group(message.chat)
    await reply_html(message, *render(outcome.tidied, language, group=group, change=outcome.change))


async def choose(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Keep the newer, the older or both, pressed under a tidy's question."""
    press = await pressed(update, context)
    if press is None:
        return
    token, number, choice = press.value.split(":")
    try:
        settled = await run_changing(
            update, context, press.caller, tidying.settle, token, int(number), CHOICES[choice]
        )
    except NotAllowed:
        await press.refuse("not_yours_plain")
        return
    except (MemoryInvalid, MemoryNotFound):
        settled = None
    if settled is None:
        await press.refuse("tidy_gone_plain")
        return
    await press.answer()
    message, language = press.message, press.language
    await _drop_row(callbacks.TIDY_QUESTION.data(token, number, choice), message)
    if settled.both is not None:
        newer, older = (escape(preview(m.content, PREVIEW)) for m in settled.both)
        await reply_html(message, t(language, "tidy_kept_both", newer=newer, older=older))
        return
    assert settled.kept is not None and settled.removed is not None
    kept, removed = (escape(preview(m.content, PREVIEW)) for m in (settled.kept, settled.removed))
    await reply_html(message, t(language, "tidy_kept", content=kept, removed=removed))


async def _drop_row(data: str, message: Message) -> None:
    """Take the answered conflict's buttons off the report (the others stay)."""
    markup = message.reply_markup
    if markup is None:
        return
    prefix = data.rsplit(":", 1)[0] + ":"
    rows = [
        row
        for row in markup.inline_keyboard
        if not any(str(b.callback_data or "").startswith(prefix) for b in row)
    ]
    try:
        await message.edit_reply_markup(InlineKeyboardMarkup(rows) if rows else None)
    except TelegramError as e:  # a courtesy: the answer is given anyway
        log.info("could not take the answered question's buttons off: %s", e)
