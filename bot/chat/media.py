"""Messages that are not typed text: forwards, photos, files, voice notes, places, contacts.

What each kind of message becomes (in a private chat; in a group only when addressed to the
bot, by an @mention in the caption or a reply to one of its messages, as group text is):

- a forward of anything: remembered (never searched), with its ``origin`` (who or which
  channel wrote it, and when), shown on recall;
- a photo, document, video, GIF, audio file, video message: remembered, its caption (parsed
  as /remember parses text: ``#tags``, ``category:``) or a short description as the content,
  the Telegram file reference as the ``attachment``; /recall sends the file back. A photo
  without a caption is described by the model when ``[llm] vision`` is on (said to be the
  model's words), else the reply asks for a caption;
- a ``.json`` document: an import (``bot.chat.imports``), not a file to keep;
- a voice note: with ``[transcription]``, transcribed, the transcription shown first; with a
  model, then answered exactly as the same words typed (``bot.chat.messages.answer_text``);
  without one, a question or a reminder request is answered as typed, anything else is
  remembered as /remember would its words, the voice note as its attachment
  (``bot.chat.noting``). Without transcription, or when it fails (told why), remembered as a
  voice note with its duration;
- a location, venue or contact: remembered with the coordinates, or the name and number; a
  location that answers ``/timezone`` sets the chat's zone instead, and any other gets a
  "🕒 Use for my time zone" button (``bot.chat.timezones``);
- a sticker, poll, dice roll, game ...: a short explanation, nothing stored.

Everything remembered is stored at once, with the message's ``source`` (a redelivered update
adds nothing); the confirmation of an album or a burst of forwards is one reply
(``bot.chat.bursts``).
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import datetime
from typing import Any

from telegram import Message, Update
from telegram.ext import ContextTypes, MessageHandler, TypeHandler, filters

from bot.chat import imports, timezones
from bot.chat.access import caller_of, message_source, without_mention
from bot.chat.attachments import DownloadFailed, FileTooBig, download
from bot.chat.bursts import KEY, Bursts, Item, bursts_of
from bot.chat.incoming import (
    PHOTO,
    VOICE,
    Incoming,
    addressed,
    read_incoming,
    unsupported_kind,
)
from bot.chat.offering import offer_for_memory
from bot.chat.services import services
from bot.core import operations
from bot.core.entry import parse_entry
from bot.core.keywords import keywords
from bot.core.policy import Caller
from bot.view.i18n import invalid_reason, language_of, t
from bot.view.render import escape, memory_block
from bot.view.replies import reply_html
from memory.errors import MemoryInvalid
from memory.timestamps import parse_time

log = logging.getLogger(__name__)

BURST_PREVIEW = 120  # characters of each memory in a burst's reply

MEDIA = (
    filters.PHOTO
    | filters.Document.ALL
    | filters.VIDEO
    | filters.ANIMATION
    | filters.AUDIO
    | filters.VOICE
    | filters.VIDEO_NOTE
    | filters.LOCATION
    | filters.VENUE
    | filters.CONTACT
)
UNSUPPORTED = (
    filters.Sticker.ALL
    | filters.POLL
    | filters.Dice.ALL
    | filters.GAME
    | filters.STORY
    | filters.INVOICE
    | filters.PAID_MEDIA
)
REMEMBERED = filters.UpdateType.MESSAGE & (filters.FORWARDED | MEDIA) & ~UNSUPPORTED


def is_burstable(message: Message | None) -> bool:
    """Whether ``message`` is one ``remember_message`` takes (it continues a burst)."""
    return message is not None and bool(
        REMEMBERED.check_update(Update(0, message=message))
        and not unsupported_kind(message)
        and not imports.is_import(message)
    )


async def flush_bursts(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Before anything else in a chat is handled: send that chat's pending burst reply."""
    chat = update.effective_chat
    if chat is None or is_burstable(update.message):
        return
    await bursts_of(context.application).flush(chat.id)


async def unsupported(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Explain, briefly, that stickers, polls, dice and the like are not remembered."""
    message = update.effective_message
    if message is None or not addressed(message, context):
        return
    kind = unsupported_kind(message) or "sticker"
    language = language_of(update.effective_user)
    await reply_html(message, t(language, "media_unsupported", kind=t(language, f"kind_{kind}")))


async def remember_message(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Remember a forward, a photo, a file, a voice note, a place or a contact."""
    message, caller = update.effective_message, caller_of(update, context)
    if message is None or caller is None or not addressed(message, context):
        return
    language = language_of(update.effective_user)
    if imports.is_import(message):
        await imports.preview(update, context, message, caller, language)
        return
    if await timezones.take_location(update, context, message, caller):
        return
    incoming = read_incoming(message, language)
    if incoming is None:
        return
    notes: list[str] = []
    if incoming.kind == VOICE and incoming.origin is None:
        heard = await _transcribe(context, message, incoming, language, notes)
        if heard is not None:
            from bot.chat import noting
            from bot.chat.messages import answer_text  # free text: the same path as typed

            await bursts_of(context.application).flush(message.chat_id)
            await reply_html(message, t(language, "voice_transcribed", text=escape(heard)))
            if services(context).conversation is None and noting.keeps_voice(heard):
                # Without a model nothing else would keep it: stored, the voice note with it.
                attachment = incoming.attachment
                await noting.remember_voice(context, message, caller, heard, attachment, language)
                return
            await answer_text(update, context, message, caller, heard, language)
            return
    elif incoming.kind == VOICE:  # a forwarded voice note: remembered, its words as content
        heard = await _transcribe(context, message, incoming, language, notes)
        if heard is not None:
            incoming = dataclasses.replace(
                incoming, content=t(language, "content_transcribed_plain", text=heard)
            )
    elif incoming.kind == PHOTO and incoming.described:
        incoming = await _described(context, incoming, language)
    await _remember(context, message, caller, incoming, language, notes)


async def _remember(
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    caller: Caller,
    incoming: Incoming,
    language: str,
    notes: list[str],
) -> None:
    text = without_mention(incoming.content, context.bot) or incoming.content
    if incoming.origin is not None:  # someone else's words: kept as they are
        content, tags, category = text, tuple(keywords(text)), None
    else:
        entry = parse_entry(text)
        content, tags, category = entry.content, entry.tags, entry.category
        if not content:  # only hashtags in the caption: describe what it is
            content = incoming.description
    try:
        memory = await services(context).workers.run(
            caller.namespace,
            operations.add,
            content,
            tags,
            category,
            source=message_source(message),
            attachment=incoming.attachment,
            origin=incoming.origin,
        )
    except MemoryInvalid as e:
        await bursts_of(context.application).flush(message.chat_id)
        await reply_html(message, invalid_reason(language, e, content))
        return
    if incoming.kind == PHOTO and incoming.described and incoming.description_by_model:
        line = escape(incoming.description_by_model)
        notes.append(t(language, "media_described", description=line, id=memory.id))
    elif incoming.kind == PHOTO and incoming.described:
        notes.append(t(language, "media_ask_caption", id=memory.id))
    elif memory.attachment and memory.attachment.get("file_id"):
        notes.append(t(language, "media_sent_back"))
    # A forward (or a caption) that says what someone will do at a time: a reminder offered,
    # its time read as of when the words were first said.
    said_at = _said_at(incoming.origin)
    offer = await offer_for_memory(context, message, caller, memory, language, said_at)
    bursts_of(context.application).add(message, Item(memory, notes, offer))


def _said_at(origin: dict[str, Any] | None) -> datetime | None:
    """When a forward was first said (its origin's date), None if not known."""
    try:
        return parse_time(str(origin["date"])) if origin and origin.get("date") else None
    except ValueError:
        return None


async def _transcribe(
    context: ContextTypes.DEFAULT_TYPE,
    message: Message,
    incoming: Incoming,
    language: str,
    notes: list[str],
) -> str | None:
    """The words of a voice note, or None (with the reason in ``notes``) without them."""
    from bot.assistant.senses import NotHeard

    transcriber = services(context).transcriber
    if transcriber is None or incoming.file_id is None:
        return None
    try:
        audio = await download(context.bot, incoming.file_id, incoming.size)
        return await transcriber.transcribe(audio, "voice.ogg")
    except FileTooBig:
        reason = t(language, "voice_reason_too_big_plain")
    except DownloadFailed:
        reason = t(language, "voice_reason_download_plain")
    except NotHeard as e:
        log.warning("a voice note was not transcribed: %s", e)
        if e.kind == "timeout":
            seconds = round(transcriber.config.timeout)
            reason = t(language, "voice_reason_timeout_plain", seconds=seconds)
        elif e.kind == "empty":
            reason = t(language, "voice_reason_empty_plain")
        else:
            reason = t(language, "voice_reason_failed_plain", detail=e.detail or "?")
    notes.append(t(language, "voice_not_transcribed", reason=escape(reason)))
    return None


async def _described(
    context: ContextTypes.DEFAULT_TYPE, incoming: Incoming, language: str
) -> Incoming:
    """A caption-less photo with the model's one-line description as content, if it can."""
    found = services(context)
    if found.llm is None or not found.config.llm.vision or incoming.file_id is None:
        return incoming
    from bot.assistant.senses import describe_photo

    try:
        image = await download(context.bot, incoming.file_id, incoming.size)
    except (FileTooBig, DownloadFailed) as e:
        log.info("photo not described: %s", e)
        return incoming
    config = found.config.llm
    line = await describe_photo(found.llm, config.model, image, language, timeout=config.timeout)
    if line is None:
        return incoming
    content = t(language, "content_described_plain", description=line)
    return dataclasses.replace(incoming, content=content, description_by_model=line)


async def reply_burst(first: Message, items: list[Item]) -> None:
    """The one reply to a burst: the memory and its notes (and a reminder offered), or the
    list of them all (each offer in a message of its own after it)."""
    language = language_of(first.from_user)
    keyboard = None
    offers = [item.offer for item in items if item.offer is not None]
    if len(items) == 1:
        [item] = items
        text = t(language, "media_remembered", memory=memory_block(item.memory, language=language))
        text = "\n\n".join([text, *item.notes, *(offer[0] for offer in offers)])
        keyboard = timezones.location_button(first, language)  # a place: also a time zone
        if offers:
            keyboard, offers = offers[0][1], []
    else:
        blocks = [
            memory_block(item.memory, number, limit=BURST_PREVIEW, language=language)
            for number, item in enumerate(items, start=1)
        ]
        text = t(language, "media_remembered_many", count=len(items), memories="\n\n".join(blocks))
    await reply_html(first, text, keyboard)
    for offer in offers:
        await reply_html(first, *offer)


def register(application: object) -> None:
    """Add the handlers of this module (and of edits, inline mode) to ``application``;
    called by ``bot.chat.app.register_handlers`` before the text handlers, so that a forwarded
    text is remembered rather than answered."""
    from telegram.ext import Application

    from bot.chat import edits, inline

    assert isinstance(application, Application)
    application.bot_data[KEY] = Bursts(application, reply_burst)
    application.add_handler(TypeHandler(Update, flush_bursts), group=-2)
    application.add_handler(MessageHandler(filters.UpdateType.MESSAGE & UNSUPPORTED, unsupported))
    application.add_handler(MessageHandler(REMEMBERED, remember_message))
    application.add_handler(MessageHandler(filters.UpdateType.EDITED_MESSAGE, edits.edited_message))
    inline.register(application)
