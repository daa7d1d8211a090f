"""``/calendar``: a private subscription URL serving a chat's reminders as iCalendar.

A feed is a long random token (``secrets.token_urlsafe``: 256 bits, 43 characters), which is
the whole of its secret: whoever has the URL reads the chat's reminders, as its members do with
``/reminders``, and nobody can guess one. It is kept in two documents of the store:

- ``calendar/feed`` in the namespace's own documents: the token, the language and title the
  calendar is named in, who made it and when. ``/calendar`` shows the same URL again until
  ``/calendar reset`` replaces it (compare-and-set: two resets at once make one new token, and
  a first ``/calendar`` typed twice makes one feed).
- ``calendar-feeds/<SHA-256 of the token>`` among the bot's documents: the namespace it serves,
  so that a request finds its namespace without a scan. Keyed by the digest, so that a listing
  of the bot's documents shows no usable URL.

A request is served only if the namespace's own document still holds that token (compared in
constant time): a reset revokes the old URL at once, even if removing its index entry failed
(an entry left behind is removed when it is next asked for). Nothing else of a request is
trusted: a token of the wrong shape or unknown is ``None``, which the door answers with the
same 404 as any unknown path.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memory import Store
from memory.documents import ABSENT
from memory.errors import DocumentConflict
from memory.timestamps import format_time

log = logging.getLogger(__name__)

FEED_KEY = "calendar/feed"  # in the namespace's documents
INDEX = "calendar-feeds"  # among the bot's documents: INDEX/<sha256 hex of the token>
TOKEN_BYTES = 32
TOKEN = re.compile(r"[A-Za-z0-9_-]{43}")  # what token_urlsafe(32) gives
MAX_TITLE = 128


@dataclass(frozen=True)
class Feed:
    """A chat's calendar feed: its token, and what the calendar is named in."""

    token: str
    namespace: str
    language: str
    title: str | None


def _index_key(token: str) -> str:
    return f"{INDEX}/{hashlib.sha256(token.encode()).hexdigest()}"


def _feed(namespace: str, value: Any) -> Feed | None:
    if not isinstance(value, dict) or not isinstance(value.get("token"), str):
        return None
    title = value.get("title")
    return Feed(
        token=value["token"],
        namespace=namespace,
        language=str(value.get("language") or "en"),
        title=title if isinstance(title, str) and title else None,
    )


def feed_of(
    store: Store,
    namespace: str,
    *,
    language: str,
    title: str | None,
    by: str,
    now: datetime,
    reset: bool = False,
) -> tuple[Feed, bool]:
    """The namespace's feed, made now if it has none (or, with ``reset``, a new one in place
    of the old, which stops working); and whether this call made it."""
    documents = store.documents(namespace)
    title = title[:MAX_TITLE] if title else None
    for _ in range(5):
        current = documents.get(FEED_KEY)
        existing = _feed(namespace, current.value) if current is not None else None
        if existing is not None and not reset:
            return existing, False
        token = secrets.token_urlsafe(TOKEN_BYTES)
        index = store.bot_documents()
        index.put(_index_key(token), {"namespace": namespace})
        value = {"token": token, "language": language, "title": title, "by": by}
        value["at"] = format_time(now)
        try:
            documents.put(FEED_KEY, value, version=current.version if current else ABSENT)
        except DocumentConflict:
            index.delete(_index_key(token))  # another /calendar made or replaced it meanwhile
            if reset:
                reset = False  # that one was a new token too: it is the answer
            continue
        if existing is not None:
            index.delete(_index_key(existing.token))
        return Feed(token, namespace, language, title), True
    raise DocumentConflict(FEED_KEY, expected="(any)", actual="(changing too often)")


def find(store: Store, token: str) -> Feed | None:
    """The feed whose token is ``token``; None if there is none (never a hint why)."""
    if not TOKEN.fullmatch(token):
        return None
    index = store.bot_documents()
    key = _index_key(token)
    entry = index.get(key)
    namespace = entry.value.get("namespace") if entry and isinstance(entry.value, dict) else None
    if not isinstance(namespace, str):
        return None
    current = store.documents(namespace).get(FEED_KEY)
    feed = _feed(namespace, current.value) if current is not None else None
    if feed is None or not hmac.compare_digest(feed.token.encode(), token.encode()):
        index.delete(key)  # revoked: a reset whose clean-up did not happen
        return None
    return feed


__all__ = ["FEED_KEY", "INDEX", "Feed", "feed_of", "find"]
