"""Files in and out: downloading what a user sent, and sending a memory's file back.

Telegram keeps the files; a memory keeps the reference (``Memory.attachment``, read by
``bot.chat.incoming``). ``send_back`` sends the photo, document, video, audio, voice note,
location or contact again by that reference, the memory's content as a plain-text caption
(never parsed: a caption with ``<b>`` or ``*`` shows literally). A reference Telegram no longer
accepts (another bot token, a file deleted) is logged and skipped: the memory's text was shown
already.

``download`` fetches a file's bytes, for the few things that need them (a voice note to
transcribe, a photo to describe, a file to import): at most ``MAX_DOWNLOAD`` bytes, Telegram's
limit for bots (``getFile`` refuses larger files); ``FileTooBig`` before anything is fetched
when the size is known to be over it, ``DownloadFailed`` when Telegram does not give the file.
Every download goes through it, and always over HTTP from ``telegram.base_file_url``:
python-telegram-bot's ``File.download_*`` read the bot's own disk instead when ``getFile``
answers a path that exists there (an absolute one, ``../..``, or a relative one that happens to
name a file in the working directory), which a hostile or broken Bot API server would use to
have the bot import, transcribe or describe its own files. So the ``file_path`` must be a plain
relative path (``file_url``: segments that are not empty, ``.`` or ``..``, even percent-encoded,
no backslash or control character), else ``DownloadFailed``. The bot does not run in Bot API
local mode (files on a shared disk), where such paths would be meant.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from urllib.parse import quote, unquote

from telegram import Bot, File, Message
from telegram.error import BadRequest, TelegramError

from memory.model import Memory

log = logging.getLogger(__name__)

MAX_DOWNLOAD = 20 * 1024 * 1024  # bytes: Telegram's getFile limit for bots
MAX_CAPTION = 1024  # characters, Telegram's limit for a caption
SENT_BACK = 3  # files sent back with an answer at most (only answers shown carry theirs)


class FileTooBig(Exception):
    """Over ``MAX_DOWNLOAD``: Telegram will not let a bot download it."""

    def __init__(self, size: int | None) -> None:
        super().__init__(f"file of {size} bytes")
        self.size = size


class DownloadFailed(Exception):
    """Telegram did not give the file (``reason`` is its description)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def download(bot: Bot, file_id: str, size: int | None, *, limit: int = MAX_DOWNLOAD) -> bytes:
    """The bytes of the file ``file_id`` (``FileTooBig``, ``DownloadFailed``)."""
    if size is not None and size > limit:
        raise FileTooBig(size)
    try:
        file = await bot.get_file(file_id)
        if file.file_size is not None and file.file_size > limit:
            raise FileTooBig(file.file_size)
        data = bytes(await bot.request.retrieve(file_url(bot, file)))
    except BadRequest as e:
        if "too big" in e.message.lower():
            raise FileTooBig(size) from e
        raise DownloadFailed(e.message) from e
    except TelegramError as e:
        raise DownloadFailed(e.message) from e
    if len(data) > limit:
        raise FileTooBig(len(data))
    return data


def file_url(bot: Bot, file: File) -> str:
    """Where ``file`` is downloaded over HTTP: ``base_file_url`` and its path (``DownloadFailed``
    for a path that is not a plain relative one)."""
    prefix = f"{bot.base_file_url}/"
    given = file.file_path or ""
    # python-telegram-bot prefixes the path unless it names a file on this machine.
    path = given.removeprefix(prefix)
    if not all(_plain(segment) for segment in path.split("/")):
        log.warning("getFile answered a path that is not a plain relative one: %.200r", path)
        raise DownloadFailed("the Bot API gave a file path I do not download from")
    return prefix + quote(path)


def _plain(segment: str) -> bool:
    """A path segment that names something in its folder, as it is and once decoded."""
    decoded = unquote(segment)
    return decoded not in ("", ".", "..") and not any(
        c in "/\\" or c < " " or c == "\x7f" for c in decoded
    )


async def send_back(message: Message, memory: Memory) -> bool:
    """Send ``memory``'s file (or location, contact) in reply to ``message``; whether it went."""
    attachment = memory.attachment
    if not attachment:
        return False
    kind = attachment.get("kind")
    caption = memory.content[:MAX_CAPTION]
    file_id = str(attachment.get("file_id", ""))
    try:
        if kind == "photo" and file_id:
            await message.reply_photo(file_id, caption=caption)
        elif kind == "document" and file_id:
            await message.reply_document(file_id, caption=caption)
        elif kind == "video" and file_id:
            await message.reply_video(file_id, caption=caption)
        elif kind == "animation" and file_id:
            await message.reply_animation(file_id, caption=caption)
        elif kind == "audio" and file_id:
            await message.reply_audio(file_id, caption=caption)
        elif kind == "voice" and file_id:
            await message.reply_voice(file_id, caption=caption)
        elif kind == "video_note" and file_id:
            await message.reply_video_note(file_id)
        elif kind == "location":
            await message.reply_location(
                float(attachment["latitude"]), float(attachment["longitude"])
            )
        elif kind == "contact":
            await message.reply_contact(
                str(attachment["phone"]),
                str(attachment.get("first_name") or attachment["phone"]),
                last_name=str(attachment["last_name"]) if attachment.get("last_name") else None,
            )
        else:
            return False
    except (KeyError, TypeError, ValueError) as e:  # a hand-edited attachment: text only
        log.warning("memory %s has an attachment that cannot be sent: %r", memory.id, e)
        return False
    except BadRequest as e:
        log.warning("Telegram refused to send memory %s's %s again: %s", memory.id, kind, e.message)
        return False
    return True


async def send_all_back(message: Message, memories: Iterable[Memory]) -> None:
    """``send_back`` the first ``SENT_BACK`` of ``memories`` that have a file."""
    sent = 0
    for memory in memories:
        if sent >= SENT_BACK:
            return
        if memory.attachment and await send_back(message, memory):
            sent += 1
