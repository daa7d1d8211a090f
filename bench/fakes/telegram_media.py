"""Telegram's side of files and inline mode, as the fake Bot API serves them.

A test makes a file known with ``upload`` (its bytes, as a user's phone would have sent them)
and puts the returned reference in a message (``photo``, ``document``, ``voice`` ...; see
``FakeBotAPI.post``). The bot gets it as Telegram serves it: ``getFile`` answers the file's
``file_path``, refuses a file over ``MAX_DOWNLOAD`` bytes with Telegram's "file is too big", and
the bytes are downloaded from ``<base_file_url>/<token>/<file_path>`` (``FILE_ROUTE``).
``upload(..., file_path=...)`` makes ``getFile`` answer another path, as a hostile or broken Bot
API server would (``/etc/passwd``, ``../../config.toml``); a download of any other path is 404,
and every path asked for is recorded in ``downloads``.

Sending by reference (``sendPhoto`` with a ``file_id``) works for a file Telegram knows (one
uploaded, or sent by the bot), as on Telegram, and is refused otherwise ("wrong file
identifier"); a new upload gets a fresh ``file_id``. ``answerInlineQuery`` checks what Telegram
checks (at most 50 results, unique ids of at most 64 bytes, a known open query) and records the
answer (``inline_answers``).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from .telegram_protocol import bad_request

MAX_DOWNLOAD = 20 * 1024 * 1024  # getFile's limit for bots on Telegram's own server
MAX_INLINE_RESULTS = 50
FILE_ROUTE = "/file/bot{token}/{path:.+}"

# Method -> the parameter that names its file, and the message field Telegram answers with.
SEND_FILE = {
    "sendPhoto": ("photo", "photo"),
    "sendDocument": ("document", "document"),
    "sendVoice": ("voice", "voice"),
    "sendAudio": ("audio", "audio"),
    "sendVideo": ("video", "video"),
    "sendAnimation": ("animation", "animation"),
    "sendVideoNote": ("video_note", "video_note"),
}


@dataclass
class StoredFile:
    """A file Telegram holds: its reference and its bytes."""

    file_id: str
    file_unique_id: str
    name: str
    content: bytes
    size: int
    file_path: str | None = None  # what getFile answers, instead of Telegram's own kind of path

    def reference(self) -> dict[str, Any]:
        return {
            "file_id": self.file_id,
            "file_unique_id": self.file_unique_id,
            "file_size": self.size,
        }


class TelegramMedia:
    """Files (``upload``, ``getFile``, downloads, the send methods) and inline queries."""

    chats: dict[int, dict[str, Any]]
    token: str

    def _init_media(self) -> None:
        self.files: dict[str, StoredFile] = {}
        self.downloads: list[str] = []  # file paths asked for (served or 404), in order
        self.inline_answers: dict[str, dict[str, Any]] = {}  # query id -> the answer's params
        self._file_ids = itertools.count(1)
        self._open_inline: set[str] = set()

    def upload(
        self,
        content: bytes,
        name: str = "file.bin",
        *,
        size: int | None = None,
        file_path: str | None = None,
    ) -> dict[str, Any]:
        """A file a user sent, as Telegram references it in a message (``file_id``,
        ``file_unique_id``, ``file_size``); ``size`` claims another size (a file over the
        download limit without holding 20 MB in the test); ``file_path`` is what ``getFile``
        answers for it (a hostile server's path)."""
        number = next(self._file_ids)
        stored = StoredFile(
            f"file-{number}-id",
            f"unique-{number}",
            name,
            content,
            len(content) if size is None else size,
            file_path,
        )
        self.files[stored.file_id] = stored
        return stored.reference()

    def open_inline_query(self, query_id: str) -> None:
        self._open_inline.add(query_id)

    # -- Bot API methods ---------------------------------------------------------------------

    async def _api_getFile(self, params: dict[str, Any], files: Any) -> Any:
        stored = self.files.get(str(params.get("file_id")))
        if stored is None:
            raise bad_request("invalid file_id")
        if stored.size > MAX_DOWNLOAD:
            raise bad_request("file is too big")
        path = stored.file_path or f"files/{stored.file_id}/{stored.name}"
        return {**stored.reference(), "file_path": path}

    async def download(self, request: web.Request) -> web.StreamResponse:
        """``GET <base_file_url>/<token>/<file_path>``: the file's bytes."""
        if request.match_info["token"] != self.token:
            return web.Response(status=401, text="Unauthorized")
        path = request.match_info["path"]
        self.downloads.append(path)
        parts = path.split("/")
        stored = self.files.get(parts[1]) if len(parts) >= 3 and parts[0] == "files" else None
        if stored is None:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=stored.content)

    def _sent_file(
        self, method: str, params: dict[str, Any], files: dict[str, Any]
    ) -> dict[str, Any]:
        key, _ = SEND_FILE[method]
        if key in files:
            name, content = files[key]
            return self.upload(content, name or key)
        reference = params.get(key)
        stored = self.files.get(str(reference)) if reference is not None else None
        if stored is None:
            raise bad_request("wrong file identifier/HTTP URL specified")
        return stored.reference()

    async def _send_file(self, method: str, params: dict[str, Any], files: Any) -> Any:
        chat = self._chat(params)  # type: ignore[attr-defined]
        caption = self._check_text(params, "caption")  # type: ignore[attr-defined]
        reference = self._sent_file(method, params, files)
        _, field = SEND_FILE[method]
        value: Any = [reference] if field == "photo" else reference
        return self._bot_message(chat, params, caption=caption, **{field: value})  # type: ignore[attr-defined]

    async def _api_sendPhoto(self, params: dict[str, Any], files: Any) -> Any:
        return await self._send_file("sendPhoto", params, files)

    async def _api_sendDocument(self, params: dict[str, Any], files: Any) -> Any:
        return await self._send_file("sendDocument", params, files)

    async def _api_sendVoice(self, params: dict[str, Any], files: Any) -> Any:
        return await self._send_file("sendVoice", params, files)

    async def _api_sendAudio(self, params: dict[str, Any], files: Any) -> Any:
        return await self._send_file("sendAudio", params, files)

    async def _api_sendVideo(self, params: dict[str, Any], files: Any) -> Any:
        return await self._send_file("sendVideo", params, files)

    async def _api_sendAnimation(self, params: dict[str, Any], files: Any) -> Any:
        return await self._send_file("sendAnimation", params, files)

    async def _api_sendVideoNote(self, params: dict[str, Any], files: Any) -> Any:
        return await self._send_file("sendVideoNote", params, files)

    async def _api_sendLocation(self, params: dict[str, Any], files: Any) -> Any:
        chat = self._chat(params)  # type: ignore[attr-defined]
        try:
            latitude, longitude = float(params["latitude"]), float(params["longitude"])
        except (KeyError, TypeError, ValueError):
            raise bad_request("latitude and longitude are required") from None
        location = {"latitude": latitude, "longitude": longitude}
        return self._bot_message(chat, params, location=location)  # type: ignore[attr-defined]

    async def _api_sendContact(self, params: dict[str, Any], files: Any) -> Any:
        chat = self._chat(params)  # type: ignore[attr-defined]
        if not params.get("phone_number") or not params.get("first_name"):
            raise bad_request("phone_number and first_name are required")
        contact = {
            "phone_number": str(params["phone_number"]),
            "first_name": str(params["first_name"]),
        }
        return self._bot_message(chat, params, contact=contact)  # type: ignore[attr-defined]

    async def _api_answerInlineQuery(self, params: dict[str, Any], files: Any) -> Any:
        query_id = str(params.get("inline_query_id"))
        if query_id not in self._open_inline:
            raise bad_request(
                "query is too old and response timeout expired or query ID is invalid"
            )
        results = params.get("results")
        if not isinstance(results, list) or len(results) > MAX_INLINE_RESULTS:
            raise bad_request("RESULTS_TOO_MUCH")
        ids = [str(result.get("id", "")) for result in results]
        if len(set(ids)) != len(ids) or not all(0 < len(i.encode()) <= 64 for i in ids):
            raise bad_request("RESULT_ID_DUPLICATE")
        for result in results:
            for key in (
                "photo_file_id",
                "document_file_id",
                "voice_file_id",
                "audio_file_id",
                "video_file_id",
            ):
                if key in result and str(result[key]) not in self.files:
                    raise bad_request("wrong file identifier/HTTP URL specified")
            content = result.get("input_message_content") or {}
            if "message_text" in content and not str(content["message_text"]).strip():
                raise bad_request("MESSAGE_EMPTY")
        self._open_inline.discard(query_id)
        self.inline_answers[query_id] = params
        return True
