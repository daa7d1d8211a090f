"""Free text through the language model, as Telegram sees it.

``Conversation.answer`` runs one ``Assistant`` turn for a message addressed to the bot (private
chats; in groups a mention of the bot or a reply to it, see ``bot.chat.access``) and replies:

- while the model works, the chat shows "typing…" (the action lasts five seconds, so it is
  sent again every four until the answer is out);
- the answer is the model's Markdown as Telegram HTML (``bot.view.markdown``: everything escaped,
  never a parse error), split at 4096 UTF-16 units by ``bot.view.replies.reply_html``;
- when the turn added, changed or deleted memories, one short line says so with the ids
  ("🧠 Memory updated: added 1712…"), and the answer gets an ↩ Undo button that puts back
  what the turn changed; the changes the model was not allowed to make on its own
  (``bot.assistant.executor.TurnPolicy``), and the reminders past the turn's cap
  (``bot.assistant.reminder_desk``), follow in one confirmation listing them, whose Apply all /
  Discard buttons are resolved in the presser's namespace (``bot.chat.confirmations``);
- each reminder the turn set gets its own confirmation, and the answer's ↩ Undo cancels them
  with the turn's changes; each one it offered (``offerReminder``) its offer, with Yes /
  another time / No (``bot.chat.offering``), set only on Yes;
- a failure of the endpoint or a model stopped at the round limit is told plainly, in the
  user's language, with what to do; the turn's memory changes were undone.

This module loads the openai SDK (about a second), so ``bot.chat.app`` imports it only when a model
is configured, and handlers reach it through ``Services.conversation``.

Ordering: updates of one chat are handled one at a time, in the order they came, and different
chats in parallel (``bot.chat.updates.ChatOrderedUpdateProcessor``). A slow model in one chat
delays only that chat; in that chat, the next message is answered after the current one, with
the current one already in the history.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from zoneinfo import ZoneInfo

from openai import AsyncOpenAI
from telegram import Message
from telegram.constants import ChatAction, ChatType
from telegram.error import TelegramError

from bot.assistant.changes import ReminderProposal
from bot.assistant.llm import RATE_LIMIT, ChatModel, RetryPolicy
from bot.assistant.reminder_desk import ReminderDesk
from bot.assistant.turn import NOT_KEPT, TOOL_LIMIT, Assistant, AssistantSettings, TurnResult
from bot.chat.access import message_source
from bot.chat.confirmations import changes_keyboard, pending_prompt
from bot.chat.offering import send_offer
from bot.chat.reminding import remember_reminder
from bot.config import LLMConfig
from bot.core.chat_zones import chat_zone
from bot.core.policy import Caller
from bot.core.reminder_offers import ReminderOffer
from bot.jobs.reminders import ReminderJob
from bot.view import reminder_view
from bot.view.i18n import t
from bot.view.markdown import markdown_to_html
from bot.view.replies import reply_html
from memory.interface import Store

log = logging.getLogger(__name__)

TYPING_EVERY = 4.0  # seconds; Telegram shows a chat action for five


async def _keep_typing(message: Message) -> None:
    while True:
        try:
            await message.get_bot().send_chat_action(
                message.chat_id, ChatAction.TYPING, message_thread_id=_thread(message)
            )
        except TelegramError as e:  # only a courtesy: the answer matters, not the indicator
            log.debug("typing action failed: %s", e)
        await asyncio.sleep(TYPING_EVERY)


def _thread(message: Message) -> int | None:
    return message.message_thread_id if message.is_topic_message else None


def _ids(ids: list[int]) -> str:
    return ", ".join(f"<code>{i}</code>" for i in ids)


def turn_markup(result: TurnResult, language: str, *, timeout: float) -> str:
    """The reply for a turn, as Telegram HTML."""
    failure = result.failure
    if failure is not None:
        if failure.kind == TOOL_LIMIT:
            return t(language, "llm_tool_limit", rounds=result.rounds)
        if failure.kind == NOT_KEPT:
            return t(language, "llm_not_kept")
        wait = round(failure.retry_after) if failure.retry_after else 0
        key = f"llm_{failure.kind}"
        if failure.kind == RATE_LIMIT and not wait:
            key = "llm_rate_limit_soon"
        status = failure.status or ""
        return t(
            language,
            key,
            seconds=wait,
            timeout=round(timeout),
            status=status,
            status_text=f" (HTTP {status})" if status else "",
        )
    parts = [markdown_to_html(result.text) if result.text else t(language, "llm_empty")]
    changes = result.changes
    if changes:
        done = []
        for ids, key in (
            (changes.added, "llm_added"),
            (changes.updated, "llm_changed"),
            (changes.deleted, "llm_deleted"),
        ):
            if ids:
                done.append(t(language, key, ids=_ids(ids)))
        parts.append(t(language, "llm_memory_updated", changes="; ".join(done)))
    reminders = sum(1 for p in result.pending if isinstance(p, ReminderProposal))
    if len(result.pending) > reminders:
        count = len(result.pending) - reminders
        parts.append(t(language, "llm_confirm_changes", count=count))
    if reminders:
        parts.append(t(language, "llm_confirm_reminders", count=reminders))
    if result.cut is not None:
        kept, total = f"{result.cut.kept:,}", f"{result.cut.total:,}"
        parts.append(t(language, "llm_message_cut", kept=kept, total=total))
    return "\n\n".join(parts)


class Conversation:
    """Free text through the language model, for the whole application (``Services``)."""

    def __init__(
        self,
        assistant: Assistant,
        store: Store,
        *,
        timeout: float,
        reminders: ReminderJob | None = None,
    ) -> None:
        self.assistant = assistant
        self.store = store
        self.timeout = timeout
        self.reminders = reminders  # the model's scheduleReminder sets them (None: it cannot)

    async def answer(self, message: Message, caller: Caller, text: str, language: str) -> None:
        """Answer ``text`` (a message addressed to the bot) with the model, "typing…" meanwhile.

        The model acts for ``caller`` without administrator rights (``Caller.for_model``): in a
        group's shared namespace it changes only the speaker's own memories.
        """
        group = message.chat.type != ChatType.PRIVATE
        speaker = caller.actor.name if group else None
        namespace = self.store.namespace(caller.namespace)
        zone = await self._zone(message)
        desk = await self._desk(message, caller, language, zone)
        typing = asyncio.create_task(_keep_typing(message))
        try:
            result = await self.assistant.reply(
                namespace,
                text,
                language=language,
                speaker=speaker,
                group=group,
                may_change=caller.for_model().may_change if group else None,
                source=message_source(message),
                reminders=desk,
                zone=zone,
            )
        finally:
            typing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await typing
        markup = turn_markup(result, language, timeout=self.timeout)
        undo = changes_keyboard(None, result.undo_token, language) if result.ok else None
        await reply_html(message, markup, undo)
        if result.ok and result.pending and result.pending_token is not None:
            prompt, keyboard = pending_prompt(result.pending, result.pending_token, language)
            await reply_html(message, prompt, keyboard)
        if result.ok and desk is not None:
            await self._confirm(message, desk, language)
            await self._offer(message, caller, desk, language)

    async def _zone(self, message: Message) -> ZoneInfo | None:
        """The chat's time zone (``/timezone``, else ``[reminders] timezone``), as the doors
        read times and dates in it (None: no reminders, UTC)."""
        job = self.reminders
        if job is None:
            return None
        return (await asyncio.to_thread(chat_zone, self.store, message.chat.id, job.zone)).zone

    async def _desk(
        self, message: Message, caller: Caller, language: str, zone: ZoneInfo | None
    ) -> ReminderDesk | None:
        """What the model's ``scheduleReminder`` sets reminders with, for this message."""
        job = self.reminders
        if job is None or zone is None:
            return None
        return ReminderDesk(
            self.store,
            caller.for_model(),
            message.chat.id,
            zone,
            job.clock,
            language,
            job.config.default_hour,
            source=message_source(message),
            thread_id=_thread(message),
        )

    async def _confirm(self, message: Message, desk: ReminderDesk, language: str) -> None:
        """The confirmation of each reminder the model set: the code's time, with buttons."""
        for number, reminder in enumerate(desk.made, start=1):
            assert self.reminders is not None
            self.reminders.track(reminder)
            source = f"{message_source(message)}:t{number}"
            await asyncio.to_thread(remember_reminder, self.store, desk.caller, reminder, source)
            text, keyboard = reminder_view.confirmation(reminder, language)
            await reply_html(message, text, keyboard)

    async def _offer(
        self, message: Message, caller: Caller, desk: ReminderDesk, language: str
    ) -> None:
        """Each reminder the model offered (``offerReminder``), with its buttons: set on Yes."""
        for number, (text, due) in enumerate(desk.offered, start=1):
            offer = ReminderOffer(
                f"{message.message_id}-{number}",
                message.chat.id,
                text,
                due,
                caller.actor,
                language,
                thread_id=_thread(message),
            )
            await send_offer(self.store, caller, message, offer)


def make_conversation(
    config: LLMConfig, client: AsyncOpenAI, store: Store, reminders: ReminderJob | None = None
) -> Conversation:
    """The model of ``[llm]`` on ``client`` (``bot.assistant.llm.make_client``), ready for free
    text (and with ``reminders``, to set them)."""
    model = ChatModel(
        client, config.model, stream=config.stream, retry=RetryPolicy(retries=config.retries)
    )
    settings = AssistantSettings(
        max_rounds=config.max_rounds,
        history_messages=config.history_messages,
        memory_tokens=config.memory_tokens,
        max_changes=config.max_changes_per_turn,
    )
    return Conversation(
        Assistant(model, settings), store, timeout=config.timeout, reminders=reminders
    )
