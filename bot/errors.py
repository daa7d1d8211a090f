"""Errors of the bot package.

The bot maps the memory library's errors (``memory.errors``) and Telegram's (``telegram.error``)
to messages for the user; it raises its own only for what happens before it can talk to anyone::

    BotError                      message: str
    └── ConfigError               key: str | None, source: str
"""

from __future__ import annotations


class BotError(Exception):
    """Base class of the bot's own errors."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ConfigError(BotError):
    """The configuration cannot be used: a missing file, an unknown key, a wrong type.

    ``key`` is the dotted name of the offending key (``telegram.group_scope``) when there is one,
    ``source`` the file (or environment variable) it came from.
    """

    def __init__(self, message: str, *, key: str | None = None, source: str = "") -> None:
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{message}")
        self.key = key
        self.source = source
