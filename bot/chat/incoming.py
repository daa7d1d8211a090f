"""What a message that is not plain typed text carries, read once into plain values.

``read_incoming(message, language)`` turns a photo, a document, a video, an audio file, a voice
note, a location, a venue, a contact, or any forwarded message into an ``Incoming``: the text
that becomes the memory's content (the caption or text as sent, else a short description in
the user's language: "📷 photo", "📄 report.pdf (1.2 MB)", "📍 48.85837, 2.29448"), the Telegram
file reference kept with the memory (``attachment``: kind, ``file_id``, ``file_unique_id``,
name, size, mime type, duration; coordinates for a location, the number for a contact), and
for a forward where it came from (``origin``: kind ``user`` / ``hidden_user`` / ``chat`` /
``channel``, the name, the chat's @username or id, the original date). ``unsupported_kind``
names the kinds the bot does not remember (stickers, polls, dice, games ...).

Content is the user's text as they sent it: never parsed as Markdown or HTML (captions'
entities are ignored), escaped wherever it is shown. A file is referenced, not downloaded:
Telegram keeps it and sends it again by ``file_id`` (``bot.chat.attachments``), whatever its
size; only transcription, a photo's description and imports download (20 MB at most).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from telegram import (
    Message,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
)
from telegram.constants import ChatType
from telegram.ext import ContextTypes

from bot.chat.access import addressed_to_bot
from bot.view.i18n import t
from memory.model import MAX_EXTRA_CHARS
from memory.timestamps import format_time

PHOTO, DOCUMENT, VIDEO, ANIMATION, VIDEO_NOTE, AUDIO, VOICE = (
    "photo",
    "document",
    "video",
    "animation",
    "video_note",
    "audio",
    "voice",
)
LOCATION, CONTACT, TEXT = "location", "contact", "text"
FILE_KINDS = (PHOTO, DOCUMENT, VIDEO, ANIMATION, VIDEO_NOTE, AUDIO, VOICE)
# Kinds of message that are not remembered, each with its name in the explanation.
UNSUPPORTED = ("sticker", "poll", "dice", "game", "story", "invoice", "paid_media", "checklist")


@dataclass(frozen=True)
class Incoming:
    """A message to remember: its content, its file reference and its forward's origin."""

    kind: str
    content: str
    described: bool  # the content is the bot's description, not the user's words
    attachment: dict[str, Any] | None = None
    origin: dict[str, Any] | None = None
    size: int | None = field(default=None)  # bytes of the file, when Telegram says
    description: str = ""  # what it is, without the caption ("📷 photo")
    description_by_model: str | None = None  # a photo's description by the model, if any

    @property
    def file_id(self) -> str | None:
        return (
            str(self.attachment["file_id"])
            if self.attachment and "file_id" in self.attachment
            else None
        )


def seconds_of(duration: int | float | timedelta | None) -> int:
    """A duration as python-telegram-bot gives it (seconds, or a timedelta with
    ``PTB_TIMEDELTA``) in whole seconds."""
    if isinstance(duration, timedelta):
        return int(duration.total_seconds())
    return int(duration or 0)


def duration_text(seconds: int | float | timedelta | None) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour)."""
    total = seconds_of(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def size_text(size: int | None) -> str:
    """``812 B``, ``34 KB``, ``1.2 MB``."""
    if size is None:
        return "?"
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _short(value: object) -> str | None:
    text = str(value) if value is not None else ""
    return text[:MAX_EXTRA_CHARS] or None


def _file(kind: str, media: Any, **extra: Any) -> dict[str, Any]:
    record = {
        "kind": kind,
        "file_id": _short(media.file_id),
        "file_unique_id": _short(media.file_unique_id),
        "size": media.file_size,
        **{key: _short(value) if isinstance(value, str) else value for key, value in extra.items()},
    }
    return {key: value for key, value in record.items() if value is not None}


def origin_of(message: Message) -> dict[str, Any] | None:
    """Where a forwarded message first came from (None: not a forward)."""
    origin = message.forward_origin
    if origin is None:
        return None
    record: dict[str, Any] = {"date": format_time(origin.date)}
    if isinstance(origin, MessageOriginUser):
        user = origin.sender_user
        record.update(kind="user", name=user.full_name, chat=user.username or user.id)
    elif isinstance(origin, MessageOriginHiddenUser):
        record.update(kind="hidden_user", name=origin.sender_user_name)
    elif isinstance(origin, MessageOriginChannel):
        chat = origin.chat
        record.update(kind="channel", name=chat.title or chat.username or str(chat.id))
        record.update(chat=chat.username or chat.id, message=origin.message_id)
    elif isinstance(origin, MessageOriginChat):
        chat = origin.sender_chat
        record.update(kind="chat", name=chat.title or chat.username or str(chat.id))
        record.update(chat=chat.username or chat.id)
    else:  # a kind of origin newer than this code: keep what every origin has
        record.update(kind=str(origin.type))
    if isinstance(record.get("chat"), str):
        record["chat"] = "@" + str(record["chat"])
    return {
        key: _short(v) if isinstance(v, str) else v for key, v in record.items() if v is not None
    }


def unsupported_kind(message: Message) -> str | None:
    """The kind of ``message`` if it is one the bot does not remember (``sticker``, ``poll``)."""
    for kind in UNSUPPORTED:
        if getattr(message, kind, None):
            return kind
    return None


def read_incoming(message: Message, language: str) -> Incoming | None:
    """What ``message`` would be remembered as (None: nothing the bot remembers)."""
    caption = (message.caption or message.text or "").strip()
    origin = origin_of(message)
    kind, attachment, description, size = TEXT, None, "", None
    if message.photo:
        biggest = max(message.photo, key=lambda p: (p.width * p.height, p.file_size or 0))
        kind, size = PHOTO, biggest.file_size
        attachment = _file(PHOTO, biggest, width=biggest.width, height=biggest.height)
        description = t(language, "content_photo_plain")
    elif message.animation:
        gif = message.animation
        kind, size = ANIMATION, gif.file_size
        attachment = _file(ANIMATION, gif, name=gif.file_name, mime=gif.mime_type)
        attachment["duration"] = seconds_of(gif.duration)
        description = t(language, "content_animation_plain")
    elif message.document:
        document = message.document
        kind, size = DOCUMENT, document.file_size
        name = document.file_name or "file"
        attachment = _file(DOCUMENT, document, name=name, mime=document.mime_type)
        description = t(language, "content_document_plain", name=name, size=size_text(size))
    elif message.video:
        video = message.video
        kind, size = VIDEO, video.file_size
        attachment = _file(VIDEO, video, name=video.file_name, mime=video.mime_type)
        attachment["duration"] = seconds_of(video.duration)
        description = t(language, "content_video_plain", duration=duration_text(video.duration))
    elif message.video_note:
        note = message.video_note
        kind, size = VIDEO_NOTE, note.file_size
        attachment = _file(VIDEO_NOTE, note)
        attachment["duration"] = seconds_of(note.duration)
        description = t(language, "content_video_note_plain", duration=duration_text(note.duration))
    elif message.audio:
        audio = message.audio
        kind, size = AUDIO, audio.file_size
        title = " – ".join(x for x in (audio.performer, audio.title) if x) or audio.file_name
        attachment = _file(
            AUDIO, audio, name=audio.file_name, mime=audio.mime_type, title=title or None
        )
        attachment["duration"] = seconds_of(audio.duration)
        description = t(
            language,
            "content_audio_plain",
            title=title or t(language, "content_audio_untitled_plain"),
            duration=duration_text(audio.duration),
        )
    elif message.voice:
        voice = message.voice
        kind, size = VOICE, voice.file_size
        attachment = _file(VOICE, voice, mime=voice.mime_type)
        attachment["duration"] = seconds_of(voice.duration)
        description = t(language, "content_voice_plain", duration=duration_text(voice.duration))
    elif message.venue:
        venue = message.venue
        kind = LOCATION
        lat, lon = venue.location.latitude, venue.location.longitude
        attachment = {
            "kind": LOCATION,
            "latitude": lat,
            "longitude": lon,
            "title": _short(venue.title),
            "address": _short(venue.address),
        }
        description = t(
            language,
            "content_venue_plain",
            title=venue.title,
            address=venue.address,
            latitude=f"{lat:.5f}",
            longitude=f"{lon:.5f}",
        )
    elif message.location:
        location = message.location
        kind = LOCATION
        lat, lon = location.latitude, location.longitude
        attachment = {"kind": LOCATION, "latitude": lat, "longitude": lon}
        description = t(
            language, "content_location_plain", latitude=f"{lat:.5f}", longitude=f"{lon:.5f}"
        )
    elif message.contact:
        contact = message.contact
        kind = CONTACT
        name = " ".join(x for x in (contact.first_name, contact.last_name) if x)
        attachment = {
            "kind": CONTACT,
            "phone": _short(contact.phone_number),
            "first_name": _short(contact.first_name),
            "last_name": _short(contact.last_name),
            "user_id": contact.user_id,
        }
        attachment = {key: value for key, value in attachment.items() if value is not None}
        description = t(language, "content_contact_plain", name=name, phone=contact.phone_number)
    elif not caption:
        return None
    if kind == LOCATION and caption:  # a venue or location has no caption; keep both anyway
        caption = f"{caption}\n{description}"
    if kind == CONTACT:  # the name and number are the point of a contact: always findable
        caption = f"{caption}\n{description}".strip()
    content = caption or description  # over the store's limit: refused, as typed text is
    return Incoming(kind, content, not caption, attachment, origin, size, description or content)


def addressed(message: Message, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """Whether ``message`` is for the bot: always in private; in a group an @mention of the
    bot in its caption (or text), a command for it, or a reply to one of its messages."""
    if message.chat.type == ChatType.PRIVATE or addressed_to_bot(message, context.bot):
        return True
    username = (context.bot.username or "").lower()
    return any(
        text[1:].lower() == username
        for entity, text in message.parse_caption_entities().items()
        if entity.type == "mention"
    )
