"""Reminders offered, not set: "⏰ Remind you 2026-12-02 (Wed) 09:00?" waits for a Yes.

When a person says what they will do at a time (``bot.core.plans``), or the model proposes a
reminder (its ``offerReminder`` tool), the bot offers it with Yes / another time / No; nothing
is scheduled until a Yes. The offer waits in the namespace's documents under
``reminder-offers/<chat>/<offer id>`` (as ``bot.core.offers`` keeps the 💾 statements): what
to remind of, when, who said it, the memory it came from, and its state: open, then taken or
declined. The buttons carry the offer's id only.

- The id names where the offer came from: the message (``<message id>``), a memory just stored
  (``m<memory id>``), or the model's n-th offer of a message (``<message id>-<n>``). The same
  message offered again (an edit, a redelivered update) rewrites the same offer.
- A press twice acts once: a Yes (or a time picked instead) first takes the offer, a No
  declines it, each a compare-and-set from open, so of a Yes and a No pressed at once one
  wins; the reminder's ``source`` is ``offer:<chat>:<id>``, so ``bot.core.reminders.
  create_once`` sets one reminder however often, or wherever, Yes is pressed (and a Yes after
  a crash between taking the offer and setting the reminder sets it then).
- In a group only who said it, or an administrator, may answer (``NotAllowed`` otherwise), as
  with 💾 Remember this; the reminder is set for who said it.
- "Another time" leaves a pointer, ``reminder-offers/<chat>/asking/<actor>``: the person's next
  time (a reply to the bot, or in a private chat their next message that is a time and nothing
  else) sets the reminder then. It lapses after ``ASK_SECONDS``.

An offer nobody answered is dropped after a week (``KEEP_SECONDS``); one answered stays until
then, so that a late press is told what happened rather than that the button is stale.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from bot.core.due import Due
from bot.core.policy import Actor, Caller
from bot.errors import NotAllowed
from memory.errors import DocumentConflict
from memory.interface import MemoryNamespace
from memory.model import Memory

PREFIX = "reminder-offers/"
KEEP_SECONDS = 7 * 24 * 3600
ASK_SECONDS = 15 * 60
PRUNE_EVERY = 32
OPEN, TAKEN, DECLINED = "open", "taken", "declined"
ID_PATTERN = r"m?\d{1,19}(?:-\d{1,2})?"


@dataclass(frozen=True)
class ReminderOffer:
    """A reminder offered in ``chat_id``: what, when, said by whom, and whether answered."""

    id: str
    chat_id: int
    text: str
    due: Due
    by: Actor
    language: str
    state: str = OPEN
    memory_id: int | None = None
    thread_id: int | None = None

    @property
    def source(self) -> str:
        """The ``source`` of the reminder a Yes sets: one reminder per offer."""
        return f"offer:{self.chat_id}:{self.id}"

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "due": self.due.to_json(),
            "by": {"kind": self.by.kind, "id": self.by.id, "name": self.by.name},
            "language": self.language,
            "state": self.state,
            "memory_id": self.memory_id,
            "thread_id": self.thread_id,
            "at": time.time(),
        }

    @classmethod
    def from_json(cls, offer_id: str, chat_id: int, value: object) -> ReminderOffer | None:
        """The offer as ``to_json`` wrote it; None if it is not one (a stale or odd document)."""
        if not isinstance(value, dict) or not isinstance(value.get("text"), str):
            return None
        by = value.get("by")
        try:
            due = Due.from_json(value.get("due"))
            actor = Actor(str(by["kind"]), int(by["id"]), str(by["name"]))  # type: ignore[index]
        except (ValueError, TypeError, KeyError):
            return None
        memory_id, thread_id = value.get("memory_id"), value.get("thread_id")
        return cls(
            offer_id,
            chat_id,
            value["text"],
            due,
            actor,
            str(value.get("language", "en")),
            str(value.get("state", OPEN)),
            memory_id if isinstance(memory_id, int) else None,
            thread_id if isinstance(thread_id, int) else None,
        )


def _key(chat_id: int, offer_id: str) -> str:
    return f"{PREFIX}{chat_id}/{offer_id}"


def _asking_key(chat_id: int, actor_key: str) -> str:
    return f"{PREFIX}{chat_id}/asking/{actor_key.replace(':', '-')}"  # keys take no ':'


def offer(namespace: MemoryNamespace, offered: ReminderOffer) -> ReminderOffer:
    """Keep ``offered`` for its buttons (open). Offers older than a week are dropped on one
    offer in ``PRUNE_EVERY``: reading them all each time would cost more the more a chat says."""
    documents = namespace.documents()
    now = time.time()
    if sum(map(ord, offered.id)) % PRUNE_EVERY == 0:
        for old in documents.list(PREFIX):
            at = old.value.get("at", 0) if isinstance(old.value, dict) else 0
            if not isinstance(at, int | float) or now - at > KEEP_SECONDS:
                documents.delete(old.key)
    documents.put(_key(offered.chat_id, offered.id), offered.to_json(), durable=False)
    return offered  # lost in a crash: a stale button, answered as such


def offered(
    namespace: MemoryNamespace, caller: Caller, chat_id: int, offer_id: str
) -> ReminderOffer | None:
    """The offer ``offer_id`` of ``chat_id``; None if none waits (too old, or never here).
    ``NotAllowed`` if ``caller`` did not say it and does not administer the group."""
    document = namespace.documents().get(_key(chat_id, offer_id))
    if document is None:
        return None
    found = ReminderOffer.from_json(offer_id, chat_id, document.value)
    if found is None:
        return None
    if found.by.key != caller.actor.key and not caller.admin:
        raise NotAllowed(Memory(1, found.text))
    return found


def answer(
    namespace: MemoryNamespace, chat_id: int, offer_id: str, state: str
) -> ReminderOffer | None:
    """Mark the offer ``state`` (``TAKEN``, ``DECLINED``, or ``OPEN`` again) if it is open (or,
    to open it again, taken); the offer as it is now, None if gone. A compare-and-set: of two
    answers at once, one changes it, and the other sees the state it left."""
    documents = namespace.documents()
    key = _key(chat_id, offer_id)
    for _ in range(5):
        document = documents.get(key)
        if document is None:
            return None
        found = ReminderOffer.from_json(offer_id, chat_id, document.value)
        if found is None or found.state != (TAKEN if state == OPEN else OPEN):
            return found
        value = {**document.value, "state": state}
        try:
            documents.put(key, value, version=document.version, durable=False)
        except DocumentConflict:
            continue
        return ReminderOffer.from_json(offer_id, chat_id, value)
    return None


def ask(
    namespace: MemoryNamespace, chat_id: int, actor_key: str, offer_id: str, prompt_id: int
) -> None:
    """Wait for ``actor_key``'s time for the offer (after "another time", in message
    ``prompt_id``)."""
    record = {"offer": offer_id, "prompt": prompt_id, "at": time.time()}
    namespace.documents().put(_asking_key(chat_id, actor_key), record, durable=False)


def asked(namespace: MemoryNamespace, chat_id: int, actor_key: str) -> str | None:
    """The offer whose time ``actor_key`` was last asked for in ``chat_id`` (🕒 Another time),
    within ``ASK_SECONDS``; else None."""
    document = namespace.documents().get(_asking_key(chat_id, actor_key))
    value = document.value if document is not None else None
    if not isinstance(value, dict) or not isinstance(value.get("offer"), str):
        return None
    at = value.get("at", 0)
    if not isinstance(at, int | float) or time.time() - at > ASK_SECONDS:
        return None
    return str(value["offer"])


def done_asking(namespace: MemoryNamespace, chat_id: int, actor_key: str) -> None:
    """No longer wait for ``actor_key``'s time."""
    namespace.documents().delete(_asking_key(chat_id, actor_key))
