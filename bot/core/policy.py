"""Who acts, in which namespace, and what they may change: the one permission rule.

An ``Actor`` is who acts: a person (``user:<id>``) or a chat writing as itself (``chat:<id>``:
a channel, or a group's anonymous administrator). How a Telegram update maps to an actor and a
namespace is ``bot.chat.access``; everything after that works on a ``Caller``: the actor, the
namespace it reads and changes, whether that namespace is a group's shared one, and whether
the actor administers that group.

The rule, as Telegram has it for messages: in their own namespace (a private chat, or a group
with ``group_scope = "user"``) an actor may change everything; in a group's shared namespace,
only what they stored themselves, unless they are one of its administrators. Who stored a
memory is recorded in its ``source`` (``source_of``, read back by ``stored_by``); a memory with
no recorded author (imported, or stored before authors were recorded) is the administrators'.
Bringing back a deleted memory (``/history``'s ♻ Restore) is its author's only when they
deleted it themselves: what an administrator removed from a group (moderation, say), or a
deletion nobody recorded, stays removed unless an administrator restores it
(``Caller.may_restore``). What one chat keeps in several namespaces (its forum topics': a
reminder whose topic is gone rings in the general topic; the zone of a chat is every topic's)
is acted on as the group's (``Caller.in_chat``): under the group rule in a group, as one's own
in one's private chat; another member's own namespace (``group_scope = "user"``) and another
chat's are never reached that way. The language model acts for its speaker without their
administrator rights (``Caller.for_model``): in a group it changes only the speaker's own
memories.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Protocol

from bot.core.topics import where
from memory.model import Memory

# The users Telegram puts in ``from`` when the sender is a chat (``sender_chat``): shared by
# everyone writing that way, so never anyone's identity.
CHANNEL_BOT = 136817688  # "Channel_Bot": a message posted as a channel
ANONYMOUS_ADMIN = 1087968824  # "GroupAnonymousBot": an anonymous administrator's message
SERVICE_USER = 777000  # "Telegram": a linked channel's automatic forward
PLACEHOLDER_USERS = frozenset({CHANNEL_BOT, ANONYMOUS_ADMIN, SERVICE_USER})

_AUTHOR = re.compile(r"(?:(?P<user>[0-9]+)|chat(?P<chat>-?[0-9]+))")


@dataclass(frozen=True)
class Actor:
    """Who acts: a person (``user``) or a chat writing as itself (``chat``).

    ``key`` is stable and unique across both kinds (``user:42``, ``chat:-100123``);
    ``is_group_itself`` marks an anonymous administrator, who writes as the group ``id`` and
    has its administrators' rights there.
    """

    kind: str  # "user" or "chat"
    id: int
    name: str
    is_group_itself: bool = False

    @property
    def key(self) -> str:
        """``user:<id>`` or ``chat:<id>``."""
        return f"{self.kind}:{self.id}"

    @property
    def is_user(self) -> bool:
        """Whether a person acts (not a chat)."""
        return self.kind == "user"


class Permission(Protocol):
    """What an operation that changes a memory asks (``bot.core.operations.edit``, ``forget``):
    a ``Caller`` for the doors, the turn (``bot.assistant.executor.ToolExecutor``, by its
    ``TurnPolicy``) for the model's tools."""

    def may_change(self, memory: Memory) -> bool:
        """Whether ``memory`` may be edited or deleted."""
        ...


@dataclass(frozen=True)
class Caller:
    """An actor in a namespace, with what the group policy needs to know."""

    actor: Actor
    namespace: str
    shared: bool = False  # a group's shared namespace: the group policy applies
    admin: bool = False  # the actor administers that group (or is the group itself)

    def may_change(self, memory: Memory) -> bool:
        """Whether this caller may edit or delete ``memory`` (the rule of the module doc)."""
        return not self.shared or self.admin or stored_by(memory) == self.actor.key

    def may_restore(self, memory: Memory, deleted_by: str | None) -> bool:
        """Whether this caller may bring back ``memory``, deleted by ``deleted_by`` (an
        ``Actor.key``; None: not recorded): as ``may_change``, and in a group's shared
        namespace a member only what they deleted themselves (the rule of the module doc)."""
        own_deletion = deleted_by == self.actor.key
        return self.may_change(memory) and (not self.shared or self.admin or own_deletion)

    def may_undo(self, by: str) -> bool:
        """Whether this caller may undo a change made by ``by`` (an ``Actor.key``, or ``cli``):
        in a group's shared namespace a member undoes their own changes (the model's on their
        behalf included), an administrator anyone's; everyone everything in their own."""
        return not self.shared or self.admin or by == self.actor.key

    @property
    def may_change_settings(self) -> bool:
        """Whether this caller may change the namespace's settings (``/digest on``)."""
        return not self.shared or self.admin

    def in_chat(self, namespace: str, chat_id: int) -> Caller | None:
        """This caller acting on what ``namespace``, another namespace of chat ``chat_id`` (the
        chat it acts in), keeps: its own namespace as it is; a group's (another forum topic,
        the general one) as a member under the group rule (``shared``); a topic of its own
        private chat as itself. None for a namespace of no chat it acts in (another member's
        own, another chat's): the module docstring."""
        if namespace == self.namespace:
            return self
        place, own = where(namespace), where(self.namespace)
        if place is None or place.chat_id != chat_id:
            return None
        if namespace.startswith("chats/"):
            return replace(self, namespace=namespace, shared=True)
        if own is not None and own.chat_id == chat_id and self.namespace.startswith("users/"):
            return replace(self, namespace=namespace)  # a topic of one's own private chat
        return None

    def for_model(self) -> Caller:
        """The same caller as the language model acts for it: without administrator rights."""
        return replace(self, admin=False)


def source_of(chat_id: int, message_id: int, actor: Actor | None) -> str:
    """The ``source`` of a memory stored from a message: ``telegram:<chat>:<message>:<who>``.

    ``<who>`` is the actor: a user's numeric id (as memories stored before chats were told
    apart have it), ``chat<id>`` for a chat writing as itself (``chat-100123``), ``0`` for
    nobody known. The store keeps one memory per source (``Namespace.add``), so a message that
    Telegram delivers twice is remembered once; ``stored_by`` reads the author back.
    """
    who = "0" if actor is None else str(actor.id) if actor.is_user else f"chat{actor.id}"
    return f"telegram:{chat_id}:{message_id}:{who}"


def stored_by(memory: Memory) -> str | None:
    """The key (``Actor.key``) of whoever's message stored ``memory``, if its source says so.

    ``telegram:<chat>:<message>:<who>`` from a command, with ``:<n>`` after it when the
    assistant stored it while answering that message. A placeholder user (the ``from`` of a
    channel's message stored before chats were told apart) is nobody.
    """
    parts = (memory.source or "").split(":")
    if len(parts) not in (4, 5) or parts[0] != "telegram":
        return None
    match = _AUTHOR.fullmatch(parts[3])
    if match is None:
        return None
    if match["chat"] is not None:
        return f"chat:{int(match['chat'])}"
    user = int(match["user"])
    return f"user:{user}" if user and user not in PLACEHOLDER_USERS else None
