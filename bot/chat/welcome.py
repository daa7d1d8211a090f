"""/start and /help: a greeting that fits on a phone's screen, and the whole manual.

/start is what a person reads first, on a phone: what the bot does in one sentence, two lines
to try (a note and its question, each tap-to-copy), and two buttons, 💡 Examples (more lines
to copy: notes, questions, reminders, a category and a hashtag) and 📖 Help (the /help text).
It stays well within a phone's screen (``tests/bot/test_bot_commands.py`` counts its lines as
a 40-column screen shows them). /help is the manual: every command and the syntax of a note.

The buttons carry ``w:examples`` and ``w:help`` (``bot.view.callbacks``). Pressing reads nothing and
changes nothing, so anyone in the chat may press; each press sends its text as a new message (the
greeting stays, so both buttons keep working).
"""

from __future__ import annotations

from telegram import InlineKeyboardMarkup, Update
from telegram.ext import ContextTypes

from bot.chat.access import actor_of
from bot.chat.presses import pressed
from bot.view import callbacks
from bot.view.i18n import language_of, t
from bot.view.render import escape
from bot.view.replies import reply_html


def start_keyboard(language: str) -> InlineKeyboardMarkup:
    """💡 Examples and 📖 Help, under /start."""
    return InlineKeyboardMarkup(
        [
            [
                callbacks.WELCOME.button(t(language, "button_examples_plain"), "examples"),
                callbacks.WELCOME.button(t(language, "button_help_plain"), "help"),
            ]
        ]
    )


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Greet the user in a few lines, with 💡 Examples and 📖 Help."""
    message, user, actor = update.effective_message, update.effective_user, actor_of(update)
    if message is None:
        return
    if actor is not None and not actor.is_user:  # a channel, or the group itself
        name = escape(actor.name)
    else:
        name = escape(user.first_name) if user is not None else ""
    language = language_of(user)
    await reply_html(message, t(language, "start", name=name), start_keyboard(language))


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """List the commands and the syntax of a memory."""
    message = update.effective_message
    if message is not None:
        await reply_html(message, t(language_of(update.effective_user), "help"))


async def press_welcome(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """💡 Examples or 📖 Help pressed under /start: send that text."""
    press = await pressed(update, context)
    if press is None:
        return
    await press.answer()
    key = "start_examples" if press.value == "examples" else "help"
    await reply_html(press.message, t(press.language, key))
