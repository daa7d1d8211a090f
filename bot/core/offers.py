"""A statement kept for a while so that one tap remembers it (💾 Remember this).

Without a language model a plain statement ("my locker is 23") is searched, and the reply
offers to remember it. What the tap needs waits in the namespace's documents under
``offers/<chat>/<message>``: the statement as typed, the ``source`` the memory will have (the
statement's own message, ``bot.core.policy.source_of``) and who said it. The button carries the
message id only; the text stays on the server.

The memory's source is the statement's message, so the store keeps one memory for it however
often the button is pressed (``MemoryNamespace.add_unique``), the same message answered again
(an edit, a redelivered update) rewrites the same offer, and an edit of the statement after it
was remembered edits that memory (``bot.chat.edits``). In a group only who said it, or an
administrator, may press (as with the near-duplicate choice, ``bot.core.adding``). An offer
nobody took is dropped after a week; one taken stays until then, so a second press is told the
statement is already remembered rather than that the button is stale.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from bot.core.policy import Caller
from bot.errors import NotAllowed
from memory.interface import MemoryNamespace
from memory.model import Memory

PREFIX = "offers/"
KEEP_SECONDS = 7 * 24 * 3600
PRUNE_EVERY = 32


@dataclass(frozen=True)
class Offer:
    """A statement waiting for its 💾 tap: its text, the memory's source, who said it."""

    text: str
    source: str
    by: str


def _key(chat_id: int, message_id: int) -> str:
    return f"{PREFIX}{chat_id}/{message_id}"


def offer(
    namespace: MemoryNamespace, chat_id: int, message_id: int, text: str, source: str, by: str
) -> None:
    """Keep ``text`` (said by ``by``, an ``Actor.key``) for a tap on its button. Offers older
    than a week are dropped on one offer in ``PRUNE_EVERY`` (by message id): reading them all
    on every statement would cost more the more a chat says."""
    documents = namespace.documents()
    now = time.time()
    if message_id % PRUNE_EVERY == 0:
        for old in documents.list(PREFIX):
            at = old.value.get("at", 0) if isinstance(old.value, dict) else 0
            if not isinstance(at, int | float) or now - at > KEEP_SECONDS:
                documents.delete(old.key)
    record = {"text": text, "source": source, "by": by, "at": now}
    documents.put(_key(chat_id, message_id), record, durable=False)  # lost: a stale button


def offered(
    namespace: MemoryNamespace, caller: Caller, chat_id: int, message_id: int
) -> Offer | None:
    """The statement offered under the message ``message_id`` of ``chat_id``; None if none
    waits (too old, or never here). ``NotAllowed`` if ``caller`` did not say it and does not
    administer the group."""
    document = namespace.documents().get(_key(chat_id, message_id))
    value = document.value if document is not None else None
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        return None
    found = Offer(value["text"], str(value.get("source", "")), str(value.get("by", "")))
    if found.by != caller.actor.key and not caller.admin:
        raise NotAllowed(Memory(1, found.text))
    return found
