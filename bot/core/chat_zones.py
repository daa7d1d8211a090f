"""A chat's time zone: the one it chose with ``/timezone``, else the configured default.

A chat's settings (its time zone, whether it was told the default one) are the bot-wide
document ``reminder-chats/<chat id>`` (``Store.bot_documents()``, through the store interface
only, so that a PostgreSQL store keeps them as it keeps the rest): the zone belongs to the chat,
whatever namespace its members write to (``group_scope``). Reminders and dates read in the chat
use it, and so does the digest (``zone_of_chat``): it is the chat's, not a part of any reminder
record, so it is a module of its own.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from memory import Store, update_document

log = logging.getLogger(__name__)

CHATS = "reminder-chats"


@dataclass(frozen=True)
class ChatZone:
    """The time zone reminders use in one chat, and whether it is the configured default."""

    zone: ZoneInfo
    chosen: bool  # set with /timezone
    told: bool  # the chat was told which default zone it uses


def _chat_key(chat_id: int) -> str:
    return f"{CHATS}/{chat_id}"


def chat_zone(store: Store, chat_id: int, default: ZoneInfo) -> ChatZone:
    """The zone of ``chat_id``: the one it set with /timezone, else ``default``."""
    found = store.bot_documents().get(_chat_key(chat_id))
    value = found.value if found is not None and isinstance(found.value, dict) else {}
    name = value.get("timezone")
    if isinstance(name, str):
        try:
            return ChatZone(ZoneInfo(name), True, True)
        except (ValueError, KeyError, OSError):
            log.warning("ignored the unknown time zone %r of chat %s", name, chat_id)
    return ChatZone(default, False, bool(value.get("told")))


def set_chat_zone(store: Store, chat_id: int, zone: ZoneInfo) -> None:
    """Set the zone of ``chat_id`` (``/timezone``)."""

    def change(value: Any) -> Any:
        base = value if isinstance(value, dict) else {}
        return {**base, "timezone": zone.key}

    update_document(store.bot_documents(), _chat_key(chat_id), change)


def tell_default_once(store: Store, chat_id: int) -> bool:
    """Record that ``chat_id`` was told its default zone; whether this is the first time."""
    first: list[bool] = []

    def change(value: Any) -> Any:
        base = value if isinstance(value, dict) else {}
        first[:] = [not base.get("told")]
        return {**base, "told": True}

    update_document(store.bot_documents(), _chat_key(chat_id), change)
    return first[0]


def zone_of_chat(store: Store, chat_id: int) -> ZoneInfo | None:
    """The zone ``chat_id`` chose with /timezone, if any (for the digest)."""
    found = chat_zone(store, chat_id, ZoneInfo("UTC"))
    return found.zone if found.chosen else None
