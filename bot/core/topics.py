"""Forum topics: which namespace a topic keeps, and which chat and topic a namespace is of.

With ``telegram.group_scope = "topic"`` every topic of a forum supergroup keeps its own
memories, digest settings and reminders, in the namespace ``chats/<chat id>/topics/<thread id>``
(the topic's ``message_thread_id``). The general topic, whose messages carry no thread id, is
the group's own ``chats/<chat id>``, as is a supergroup without topics: so a group that moves
from ``"chat"`` to ``"topic"`` finds what it had in the general topic, and a group that moves
back finds it there still (each topic's memories stay on disk, unused). A private chat with
topics (Bot API 9.3: topics in the bot's private chats) works the same way:
``users/<user id>/topics/<thread id>``, and ``users/<user id>`` for what is said outside them.

A topic's namespace lies under its chat's in name only: the store keeps every namespace apart
(``memory.files.store``: a document of ``chats/-100`` is ``chats/-100/<key>.json`` and never a
folder), and what is listed per namespace (``bot.core.reminders.every``) is filtered by the
namespace itself, never by prefix.

``where`` reads a name back to the chat and topic it belongs to, for what the bot sends
unasked (the digest); ``chat_namespace`` is the other way round, the name every namespace of a
chat starts with (its topics' included).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

TOPICS = "topics"  # the segment between a chat's namespace and a topic's thread id
_NAME = re.compile(r"(?:users|chats)/(-?\d+)(?:/topics/(\d+))?")


@dataclass(frozen=True)
class Place:
    """Where a namespace's messages go: a chat, and a topic of it (None: none)."""

    chat_id: int
    thread_id: int | None = None


def topic_namespace(base: str, thread_id: int | None) -> str:
    """The namespace of topic ``thread_id`` of the chat whose namespace is ``base``; ``base``
    itself outside topics (``thread_id`` None: the general topic, or no topics)."""
    return base if thread_id is None else f"{base}/{TOPICS}/{thread_id}"


def where(name: str) -> Place | None:
    """The chat (and topic) namespace ``name`` belongs to: ``users/42`` -> 42, ``chats/-100``
    -> -100, ``chats/-100/topics/5`` -> -100 in topic 5; None for other names (a channel's)."""
    match = _NAME.fullmatch(name)
    if match is None:
        return None
    thread = match.group(2)
    return Place(int(match.group(1)), int(thread) if thread is not None else None)


def chat_namespace(chat_id: int) -> str:
    """The namespace of chat ``chat_id`` outside its topics (a group's ``chats/-100``, a private
    chat's ``users/42``): each of its topics' namespaces is this one's ``topic_namespace``."""
    return f"chats/{chat_id}" if chat_id < 0 else f"users/{chat_id}"
