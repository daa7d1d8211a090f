"""A chat's time zone: the one it chose with ``/timezone``, else the configured default.

A chat's settings (its time zone, whether it was told the default one) are the bot-wide
document ``reminder-chats/<chat id>`` (``Store.bot_documents()``, through the store interface
only, so that a PostgreSQL store keeps them as it keeps the rest): the zone belongs to the chat,
whatever namespace its members write to (``group_scope``). Reminders and dates read in the chat
use it, and so does the digest (``zone_of_chat``): it is the chat's, not a part of any reminder
record, so it is a module of its own.

The digest runs at the schedule's local time in every zone a chat chose, so the zones chosen
are also kept together in one bot-wide document, ``chat-zones`` (``zones_in_use``): a replica
learns a zone chosen through another by reading that one document, not every chat's.
``chosen_zones`` is the full list, for a digest run.

``/timezone`` alone in a private chat offers a "📍 Send my location" button: the chat's document
then notes ``location_asked`` (when), and the next location sent there within
``LOCATION_WAIT`` sets the zone (``location_asked``) instead of being remembered; setting a
zone, however, ends the wait.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from memory import Store, update_document
from memory.errors import MemoryInvalid, MemoryStoreError
from memory.timestamps import format_time, parse_time

log = logging.getLogger(__name__)

CHATS = "reminder-chats"
IN_USE = "chat-zones"  # bot-wide: {"zones": [the zones any chat chose]}
LOCATION_WAIT = timedelta(minutes=10)


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


def zone_reader(store: Store, chat_id: int, default: ZoneInfo) -> Callable[[], ZoneInfo]:
    """How to read the zone of ``chat_id`` when it is needed (``chat_zone``), in a worker
    thread; ``default`` if the store cannot say (a setting: the error is logged). On a shared
    store a read is a round trip, and most memories name no time (``bot.core.dating``)."""

    def read() -> ZoneInfo:
        try:
            return chat_zone(store, chat_id, default).zone
        except MemoryStoreError as e:
            log.warning(
                "could not read the time zone of chat %s (%s); using %s", chat_id, e, default
            )
            return default

    return read


def set_chat_zone(store: Store, chat_id: int, zone: ZoneInfo) -> bool:
    """Set the zone of ``chat_id`` (``/timezone``); whether a location was being asked for
    (its button is then to be taken away)."""
    asked: list[bool] = []

    def change(value: Any) -> Any:
        base = value if isinstance(value, dict) else {}
        asked[:] = [base.get("location_asked") is not None]
        return {**base, "timezone": zone.key, "location_asked": None}

    def add(value: Any) -> Any:
        zones = value.get("zones") if isinstance(value, dict) else None
        known = {z for z in zones if isinstance(z, str)} if isinstance(zones, list) else set()
        return value if zone.key in known else {"zones": sorted(known | {zone.key})}

    # In use before it is set: a digest run that sees the chat's zone also knows to wake then.
    update_document(store.bot_documents(), IN_USE, add)
    update_document(store.bot_documents(), _chat_key(chat_id), change)
    return asked[0]


def zones_in_use(store: Store) -> set[str]:
    """The zones any chat chose (``chat-zones``; a zone no longer used may stay listed)."""
    found = store.bot_documents().get(IN_USE)
    zones = found.value.get("zones") if found is not None and isinstance(found.value, dict) else []
    return {zone for zone in zones if isinstance(zone, str)} if isinstance(zones, list) else set()


def chosen_zones(store: Store) -> dict[int, ZoneInfo]:
    """Every chat that chose a zone, and its zone (one listing of the chats' documents)."""
    found: dict[int, ZoneInfo] = {}
    for document in store.bot_documents().list(f"{CHATS}/"):
        name = document.value.get("timezone") if isinstance(document.value, dict) else None
        chat = document.key.removeprefix(f"{CHATS}/")
        if isinstance(name, str) and chat.lstrip("-").isdigit():
            try:
                found[int(chat)] = ZoneInfo(name)
            except (ValueError, KeyError, OSError):
                log.warning("ignored the unknown time zone %r of chat %s", name, chat)
    return found


def ask_location(store: Store, chat_id: int, now: datetime) -> None:
    """Note that ``chat_id`` was offered the "send my location" button (module docstring)."""

    def change(value: Any) -> Any:
        base = value if isinstance(value, dict) else {}
        return {**base, "location_asked": format_time(now)}

    update_document(store.bot_documents(), _chat_key(chat_id), change)


def location_asked(store: Store, chat_id: int, now: datetime) -> bool:
    """Whether a location sent in ``chat_id`` now answers the button (``LOCATION_WAIT``)."""
    found = store.bot_documents().get(_chat_key(chat_id))
    value = found.value if found is not None and isinstance(found.value, dict) else {}
    asked = value.get("location_asked")
    if not isinstance(asked, str):
        return False
    try:
        return now - parse_time(asked) <= LOCATION_WAIT
    except MemoryInvalid:  # a hand edit
        return False


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
