"""Errors of the bot package.

The bot maps the memory library's errors (``memory.errors``) and Telegram's (``telegram.error``)
to messages for the user; it raises its own only for what happens before it can talk to anyone::

    BotError                      message: str
    ├── ConfigError               key: str | None, source: str
    ├── NotAllowed                memory: Memory (the group policy refused a change to it)
    │   └── RestoreNotAllowed     deleted_by: str | None (someone else deleted it)
    ├── UpdateRefused             update_id: int (a webhook's update that can never be handled)
    └── ReminderError             reminder_id: str
        ├── ReminderNotFound      none with that id in the caller's namespace (or it ended)
        ├── ReminderNotAllowed    the group policy refused a change to it
        └── ReminderPressedAgain  the same button pressed again: its first press stands
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory.model import Memory


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


class NotAllowed(BotError):
    """The caller may not change this memory (``bot.core.policy.Caller.may_change``)."""

    def __init__(self, memory: Memory) -> None:
        super().__init__(f"not allowed to change memory {memory.id}")
        self.memory = memory


class RestoreNotAllowed(NotAllowed):
    """The caller may not bring back this deleted memory: someone else (an administrator)
    deleted it, or nobody knows who (``bot.core.policy.Caller.may_restore``)."""

    def __init__(self, memory: Memory, deleted_by: str | None) -> None:
        super().__init__(memory)
        self.deleted_by = deleted_by


class UpdateRefused(BotError):
    """An update posted to the webhook that can never be handled (``bot.chat.webhook``):
    answered 400 and kept nowhere, rather than 500, which would have it posted again."""

    def __init__(self, message: str, update_id: int) -> None:
        super().__init__(message)
        self.update_id = update_id


class ReminderError(BotError):
    """A reminder operation refused (``bot.core.reminders``)."""

    def __init__(self, message: str, reminder_id: str) -> None:
        super().__init__(message)
        self.reminder_id = reminder_id


class ReminderNotFound(ReminderError):
    """No reminder with this id in the caller's namespace, or it is over."""

    def __init__(self, reminder_id: str) -> None:
        super().__init__(f"no reminder {reminder_id!r}", reminder_id)


class ReminderNotAllowed(ReminderError):
    """The caller may not cancel or change this reminder (not its author, not an admin)."""

    def __init__(self, reminder_id: str) -> None:
        super().__init__(f"not allowed to change reminder {reminder_id!r}", reminder_id)


class ReminderPressedAgain(ReminderError):
    """The same button of this reminder was pressed again (a double tap, a second replica):
    the first press stands and this one changes nothing."""

    def __init__(self, reminder_id: str) -> None:
        super().__init__(f"reminder {reminder_id!r}: that button was pressed already", reminder_id)
