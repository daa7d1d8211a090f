"""What every handler needs: the configuration, the memory store and the language model.

``build_application`` puts one ``Services`` into ``application.bot_data``; handlers (and the
later LLM tools and jobs) reach it with ``services(context)``. Handlers keep no other state:
buttons carry small ids and everything else is re-derived from the update.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from telegram.ext import ContextTypes

from bot.config import Config
from bot.core.workers import Workers
from memory.interface import Store

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from telegram import Message

    from bot.assistant.senses import Transcriber
    from bot.core.policy import Caller
    from bot.jobs.digest import Digest
    from bot.jobs.reminders import ReminderJob
    from bot.jobs.tidy import TidyJob

KEY = "services"


@dataclass(frozen=True)
class Services:
    """The bot's resources, opened before polling starts and closed after it stops."""

    config: Config
    store: Store
    workers: Workers  # every store call of a handler goes through it (off the loop)
    llm: AsyncOpenAI | None = None
    digest: Digest | None = None  # the scheduled report (None: not set up, e.g. in unit tests)
    conversation: FreeText | None = None  # free text through ``llm`` (None: no model)
    reminders: ReminderJob | None = None  # the reminders' delivery and its index
    transcriber: Transcriber | None = None  # voice notes to text (None: not configured)
    tidy: TidyJob | None = None  # the nightly tidy and /tidy (None: not set up)


class FreeText(Protocol):
    """Answers a message with the language model (``bot.chat.conversation.Conversation``)."""

    async def answer(self, message: Message, caller: Caller, text: str, language: str) -> None:
        """Reply to ``message``, whose ``text`` is for the model, in ``caller``'s namespace."""
        ...


def services(context: ContextTypes.DEFAULT_TYPE) -> Services:
    """The ``Services`` of the running application."""
    return cast(Services, context.bot_data[KEY])
