"""The Bot API as the fake server speaks it: error answers, recorded calls, Telegram's rules.

``parse_html`` is Telegram's HTML parse mode, strict where Telegram is: only its tags, balanced,
``<``, ``>`` and ``&`` escaped, known entities only; anything else is the 400 "can't parse
entities" a real bot gets. ``read_params`` decodes a request the way python-telegram-bot encodes
it (form fields, JSON-encoded values, files as multipart parts).
"""

from __future__ import annotations

import html
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

MAX_TEXT = 4096
MAX_CALLBACK_DATA = 64
MAX_ALERT = 200

# Form fields that are text even when they look like JSON ("123", "true").
STRING_FIELDS = {
    "text",
    "caption",
    "parse_mode",
    "callback_query_id",
    "url",
    "secret_token",
    "action",
    "language_code",
    "description",
    "short_description",
    "name",
    "emoji",
    "inline_message_id",
    "business_connection_id",
    "message_effect_id",
    "inline_query_id",
    "photo",
    "document",
    "voice",
    "audio",
    "video",
    "animation",
    "video_note",
    "phone_number",
    "first_name",
    "last_name",
    "title",
}
TAGS = {
    "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "span", "tg-spoiler", "a",
    "code", "pre", "blockquote", "tg-emoji",
}  # fmt: skip
NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
HTML_TOKEN = re.compile(
    r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:\s+[^<>]*)?)>|&(#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z]+);|[<>&]"
)


class ApiError(Exception):
    """A Bot API error answer: ``{"ok": false, "error_code": ..., "description": ...}``."""

    def __init__(self, error_code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.error_code = error_code
        self.description = description
        self.retry_after = retry_after

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "ok": False,
            "error_code": self.error_code,
            "description": self.description,
        }
        if self.retry_after is not None:
            body["parameters"] = {"retry_after": self.retry_after}
        return body


def bad_request(detail: str) -> ApiError:
    return ApiError(400, f"Bad Request: {detail}")


@dataclass
class Call:
    """One request the bot made, and how the fake answered it."""

    method: str
    params: dict[str, Any]
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    status: int = 200
    result: Any = None
    error: str = ""
    received: float = field(default_factory=time.monotonic)  # when the fake read it

    @property
    def ok(self) -> bool:
        return self.status == 200

    @property
    def text(self) -> str:
        """What the user sees: the text (or caption) with HTML parsed, if it parses."""
        raw = str(self.params.get("text", self.params.get("caption", "")))
        if self.params.get("parse_mode") == "HTML":
            try:
                return parse_html(raw)
            except ApiError:
                return raw
        return raw

    @property
    def buttons(self) -> list[tuple[str, str]]:
        """(label, callback data) of the inline keyboard, row by row."""
        return buttons_of(self.params.get("reply_markup"))


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def parse_html(text: str) -> str:
    """The plain text of Telegram HTML, or ``ApiError`` 400 "can't parse entities" as Telegram
    words it (only Telegram's tags, balanced, with ``<``, ``>`` and ``&`` escaped)."""
    out: list[str] = []
    stack: list[str] = []
    position = 0

    def fail(detail: str) -> ApiError:
        return bad_request(f"can't parse entities: {detail}")

    for match in HTML_TOKEN.finditer(text):
        out.append(text[position : match.start()])
        position = match.end()
        offset = len(text[: match.start()].encode())
        token = match.group(0)
        if match.group(2) is not None:
            closing, name = match.group(1), match.group(2).lower()
            if name not in TAGS:
                kind = "end" if closing else "start"
                raise fail(f'Unsupported {kind} tag "{name}" at byte offset {offset}')
            if not closing:
                stack.append(name)
            elif not stack or stack[-1] != name:
                expected = f'expected "</{stack[-1]}>", ' if stack else ""
                raise fail(
                    f'Unmatched end tag at byte offset {offset}, {expected}found "</{name}>"'
                )
            else:
                stack.pop()
        elif match.group(4) is not None:
            entity = match.group(4)
            if entity.startswith("#"):
                out.append(html.unescape(token))
            elif entity in NAMED_ENTITIES:
                out.append(NAMED_ENTITIES[entity])
            else:
                raise fail(f'Unsupported HTML entity "&{entity};" at byte offset {offset}')
        elif token == "<":
            raise fail(f"Unsupported start tag at byte offset {offset}")
        else:
            raise fail(
                f'Character "{token}" is reserved and must be escaped at byte offset {offset}'
            )
    if stack:
        raise fail(f'Can\'t find end tag corresponding to start tag "{stack[-1]}"')
    out.append(text[position:])
    return "".join(out)


def buttons_of(markup: Any) -> list[tuple[str, str]]:
    if not isinstance(markup, dict):
        return []
    rows = markup.get("inline_keyboard") or []
    return [(b.get("text", ""), b.get("callback_data", "")) for row in rows for b in row]


def check_markup(markup: Any) -> None:
    for label, data in buttons_of(markup):
        if not label:
            raise bad_request("text buttons are unallowed in the inline keyboard")
        if not data or len(data.encode()) > MAX_CALLBACK_DATA:
            raise bad_request("BUTTON_DATA_INVALID")


async def read_params(request: web.Request) -> tuple[dict[str, Any], dict[str, tuple[str, bytes]]]:
    """The call's parameters (JSON values decoded as python-telegram-bot encodes them) and files."""
    params: dict[str, Any] = {}
    files: dict[str, tuple[str, bytes]] = {}
    if request.content_type == "application/json":
        body = await request.json() if request.can_read_body else {}
        return dict(body), files
    form = await request.post()
    for key, value in form.items():
        if isinstance(value, web.FileField):
            files[key] = (value.filename, value.file.read())
        elif key in STRING_FIELDS:
            params[key] = value
        else:
            try:
                params[key] = json.loads(value)
            except ValueError:
                params[key] = value
    for key, value in list(params.items()):  # "attach://document" -> the file itself
        if isinstance(value, str) and value.startswith("attach://"):
            name = value.removeprefix("attach://")
            if name in files:
                files[key] = files.pop(name)
            del params[key]
    return params, files
