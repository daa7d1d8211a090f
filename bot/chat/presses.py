"""What every button press starts with: who pressed where, what the button carries, the answer.

Telegram shows a spinner on a pressed button until the bot answers the press, so every press is
answered once: silently when it did what it says (``Press.answer()``), with a pop-up saying why
when it did nothing (``Press.refuse(key)``; ``Press.stale()``: the button no longer means
anything). ``pressed`` is the prologue every button handler shares: it resolves the presser and
their namespace as a command's sender is resolved (``bot.chat.access.caller_of``: the person
who pressed, in the chat where they pressed, never anything the button carries), and answers a
press there is nothing for (no namespace, an inline-mode message, a message gone, a press
without data) as stale, so that the handler never sees it. What follows the button's prefix is
``Press.value`` (``bot.view.callbacks``); the handler checks it against the namespace, and
every change goes through ``bot.core`` with the presser as the caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from telegram import CallbackQuery, Message, Update
from telegram.ext import ContextTypes

from bot.chat.access import caller_of
from bot.core.policy import Caller
from bot.view.i18n import language_of, t


@dataclass(frozen=True)
class Press:
    """A press to act on: by ``caller`` (who, in which namespace), on the button of
    ``message`` whose callback data is ``<prefix>:<value>``, read in ``language``."""

    query: CallbackQuery
    caller: Caller
    prefix: str
    value: str
    message: Message
    language: str

    async def answer(self, key: str | None = None, **values: object) -> None:
        """Answer the press: silently, or with the string ``key`` in a short notice."""
        await self.query.answer(t(self.language, key, **values) if key else None)

    async def refuse(self, key: str, **values: object) -> None:
        """Answer the press with the string ``key`` in a pop-up: why nothing was done."""
        await self.query.answer(t(self.language, key, **values), show_alert=True)

    async def stale(self) -> None:
        """Answer that the button no longer means anything (gone, done, or never ours)."""
        await self.refuse("stale_plain")


async def pressed(update: Update, context: ContextTypes.DEFAULT_TYPE) -> Press | None:
    """The press of ``update``; None once it is answered as stale (no namespace for the presser
    here, no message under the button, no callback data)."""
    query = update.callback_query
    assert query is not None
    language = language_of(update.effective_user)
    caller = caller_of(update, context)
    # A press without data reaches every button handler whatever its pattern (python-telegram-
    # bot's rule); this bot's buttons always have data, so such a press names nothing.
    if caller is None or not isinstance(query.message, Message) or not query.data:
        await query.answer(t(language, "stale_plain"), show_alert=True)
        return None
    prefix, _, value = query.data.partition(":")
    return Press(query, caller, prefix, value, query.message, language)
