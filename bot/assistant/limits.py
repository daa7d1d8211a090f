"""What the model may do on its own in one turn, what the turn changed, and how much it reads.

``TurnPolicy`` caps the model's changes to memories that existed before the turn (see
``bot.assistant.executor``); ``Changes`` lists the ids a turn added, changed and deleted, for
the "Memory updated" line. Both are plain state of one turn, shared by the tools
(``bot.assistant.tools``) and the executor that runs them.

``cut_message`` bounds what one message costs: the model reads (and the turn searches with) at
most ``MAX_MESSAGE_CHARS`` characters of it, told where it was cut, and the user is told too
(``MessageCut``). 8,000 characters hold every message Telegram delivers whole
(4,096 characters of text, 1,024 of a caption) with room for what the bot adds to it, and are
at most about 2,000 tokens of English or 8,000 of Chinese: with the memories (1,500) and the
history (2,000) a turn fits a 16k-token context, where an update of 0.9 MiB went whole into one
request before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from bot.assistant.changes import Proposal
from memory.model import Memory


@dataclass
class TurnPolicy:
    """What the model may do on its own in one turn; changes past the limits wait for the user."""

    max_changes: int = 3
    max_deletions: int = 1
    # Which existing memories the model may change for this speaker (None: all of them). In a
    # group it is the speaker's own: the model must not edit another member's memory for them.
    may_change: Callable[[Memory], bool] | None = None
    changed: list[int] = field(default_factory=list)  # existing memories changed or deleted
    deleted: list[int] = field(default_factory=list)
    pending: list[Proposal] = field(default_factory=list)

    def allows_change(self, memory: Memory, changes: Changes) -> bool:
        """Whether the model may update ``memory`` (always one it added in this turn)."""
        return self.may_change is None or memory.id in changes.added or self.may_change(memory)

    def admit(self, proposal: Proposal, changes: Changes) -> bool:
        """Whether to make ``proposal`` now; if not, it is kept for the user to confirm."""
        memory_id = proposal.id
        if memory_id in changes.added:
            return True  # the turn's own memory: nothing the user had is changed
        within = memory_id in self.changed or len(self.changed) < self.max_changes
        if proposal.op == "delete":
            within = within and len(self.deleted) < self.max_deletions
        if within:
            return True
        earlier = next((p for p in self.pending if p.id == memory_id), None)
        if earlier is not None:
            self.pending.remove(earlier)
            if earlier.op == proposal.op == "update":  # two edits of one memory: both, merged
                proposal = Proposal(
                    "update",
                    earlier.memory,
                    _first(proposal.content, earlier.content),
                    _first(proposal.tags, earlier.tags),
                    _first(proposal.category, earlier.category),
                )
        self.pending.append(proposal)
        return False

    def made(self, proposal: Proposal, changes: Changes) -> None:
        """Count ``proposal`` (admitted and done) against the turn's limits."""
        if proposal.id in changes.added:
            return
        if proposal.id not in self.changed:
            self.changed.append(proposal.id)
        if proposal.op == "delete":
            self.deleted.append(proposal.id)

    def waiting(self, op: str) -> str:
        """The tool result's message for a change that waits for the user."""
        if op == "delete" and self.max_deletions == 0:
            limit = "Here every deletion needs the user's confirmation."
        elif op == "delete" and len(self.deleted) >= self.max_deletions:
            limit = f"At most {self.max_deletions} deletion(s) per message without it."
        else:
            limit = f"At most {self.max_changes} existing memories may change per message."
        return (
            f"Not done yet: it waits for the user's confirmation. {limit} The user gets one "
            "message listing the waiting changes with Apply all / Discard buttons. Do not call "
            "it again; tell the user it waits for their confirmation."
        )


MAX_MESSAGE_CHARS = 8_000


@dataclass(frozen=True)
class MessageCut:
    """A message longer than the model reads: its first ``kept`` of ``total`` characters."""

    kept: int
    total: int

    def note(self) -> str:
        """What the model is told after the part it reads."""
        return (
            f"\n\n[The message was cut here: only its first {self.kept:,} of {self.total:,} "
            "characters are shown. The user is told; if the rest may matter, say so.]"
        )


def cut_message(message: str, limit: int = MAX_MESSAGE_CHARS) -> tuple[str, MessageCut | None]:
    """The part of ``message`` the model reads, and how it was cut (None: whole)."""
    if len(message) <= limit:
        return message, None
    return message[:limit], MessageCut(limit, len(message))


_T = TypeVar("_T")


def _first(value: _T | None, default: _T | None) -> _T | None:
    return value if value is not None else default


@dataclass
class Changes:
    """Ids of the memories a turn added, changed and deleted (for the "Memory updated" line)."""

    added: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    deleted: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.deleted)
