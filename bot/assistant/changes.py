"""What the model changed or wants to change, kept until the user could see it and decide.

Pending changes, beside a namespace's other documents (``history``) in its document
``changes`` (``changes.json`` in the file store), and how to undo what a turn did:

- **pending**: changes to existing memories the model asked for past the turn's cap
  (``bot.assistant.executor.TurnPolicy``): each holds the memory as it was when the model asked, and
  what the model wanted (new content, tags, category; or its deletion); and reminders it asked
  for past the turn's cap (``bot.assistant.reminder_desk``), as ``ReminderProposal``s: the
  text, the time resolved when asked, and who asked. One message with Apply all / Discard
  buttons asks the user about a turn's pending changes, reminders included.
- **revisions**: what a turn did to the memories, as ``Revision``s: each memory as it was
  before and as the change left it, held by the turn (``bot.assistant.executor``) so that a
  failed turn is rolled back (``revert``), except where someone changed a memory since: theirs
  stands. What stands is in the store's history (``memory.history``), which ↩ Undo under the
  "🧠 Memory updated" line and /undo revert.

A record is named by a short random token (``bot.core.tokens``), which is all the button
carries (Telegram allows 64 bytes of callback data); the content stays here. The newest
``MAX_PENDING`` records are kept, so the file stays small however long the bot runs; older
buttons then answer that they are no longer valid. The document is written durably: once the
journal is compacted it holds the only copy of the text a change replaced. One that does not
parse is set aside by the store and a record of the wrong shape (a hand edit) is skipped, so a
damaged document costs its buttons, never a memory.

Every change is a compare-and-set (``memory.update_document``), so two processes or replicas
keeping records, or pressing buttons, in one namespace at once lose none of each other's. A
press takes what it makes out of the record in that same compare-and-set (``take_pending``),
so of two presses of one Apply all at once, each change is made by one of them only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from bot.core.due import Due
from bot.core.policy import Actor
from bot.core.tokens import new_token
from memory import Documents, MemoryNamespace, update_document
from memory.errors import MemoryInvalid, MemoryNotFound, MemoryStoreError
from memory.model import Memory
from memory.timestamps import now_iso

log = logging.getLogger(__name__)

CHANGES = "changes"  # the document's key
CHANGES_FILE = "changes.json"  # its file in the file store
MAX_PENDING = 20

# How to undo a change: delete what was added, restore what was updated, reinstate what was
# deleted.
HOWS = ("delete", "restore", "reinstate")
OPS = ("update", "delete")
REMIND = "remind"  # the op of a waiting reminder (``ReminderProposal``)


def content_of(memory: Memory) -> tuple[str, tuple[str, ...], str]:
    """What a user stored in ``memory`` (not its access bookkeeping)."""
    return memory.content, memory.tags, memory.category


@dataclass(frozen=True)
class Revision:
    """One change made, and how to undo it: ``memory`` as it was (as added, for an add),
    ``left`` as the change left it (None once deleted)."""

    how: str
    memory: Memory
    left: Memory | None

    @property
    def id(self) -> int:
        """The memory's id."""
        return self.memory.id

    def to_dict(self) -> dict[str, Any]:
        """The record's JSON shape."""
        left = self.left.to_dict() if self.left is not None else None
        return {"how": self.how, "memory": self.memory.to_dict(), "left": left}

    @classmethod
    def from_dict(cls, record: Any) -> Revision:
        """Read a record (``MemoryInvalid`` if it is not one)."""
        if not isinstance(record, dict) or record.get("how") not in HOWS:
            raise MemoryInvalid(f"not a revision: {record!r}")
        left = record.get("left")
        return cls(
            record["how"],
            Memory.from_dict(record.get("memory") or {}),
            Memory.from_dict(left) if left is not None else None,
        )


@dataclass(frozen=True)
class Proposal:
    """A change the model asked for that waits for the user: ``op`` ("update" or "delete")
    of ``memory`` (as it was when asked), with the new values for an update (None: unchanged)."""

    op: str
    memory: Memory
    content: str | None = None
    tags: tuple[str, ...] | None = None
    category: str | None = None

    @property
    def id(self) -> int:
        """The memory's id."""
        return self.memory.id

    def to_dict(self) -> dict[str, Any]:
        """The record's JSON shape."""
        record: dict[str, Any] = {"op": self.op, "memory": self.memory.to_dict()}
        if self.op == "update":
            tags = list(self.tags) if self.tags is not None else None
            record.update(content=self.content, tags=tags, category=self.category)
        return record

    @classmethod
    def from_dict(cls, record: Any) -> Proposal:
        """Read a record (``MemoryInvalid`` if it is not one)."""
        if not isinstance(record, dict) or record.get("op") not in OPS:
            raise MemoryInvalid(f"not a pending change: {record!r}")
        content, tags, category = record.get("content"), record.get("tags"), record.get("category")
        if not (content is None or isinstance(content, str)) or not (
            category is None or isinstance(category, str)
        ):
            raise MemoryInvalid("content and category must be text")
        if tags is not None and not (
            isinstance(tags, list) and all(isinstance(tag, str) for tag in tags)
        ):
            raise MemoryInvalid("tags must be a list of text")
        return cls(
            record["op"],
            Memory.from_dict(record.get("memory") or {}),
            content,
            tuple(tags) if tags is not None else None,
            category,
        )


@dataclass(frozen=True)
class ReminderProposal:
    """A reminder the model asked for past the turn's cap, set when the user applies it: its
    text, its time (``due``, resolved by the code when asked), who asked, where; ``source``
    names the request, so that it is set once however often it is applied."""

    text: str
    due: Due
    language: str
    chat_id: int
    author: Actor
    source: str
    thread_id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The record's JSON shape."""
        author = {"kind": self.author.kind, "id": self.author.id, "name": self.author.name}
        return {
            "op": REMIND,
            "text": self.text,
            "due": self.due.to_json(),
            "language": self.language,
            "chat_id": self.chat_id,
            "author": author,
            "source": self.source,
            "thread_id": self.thread_id,
        }

    @classmethod
    def from_dict(cls, record: Any) -> ReminderProposal:
        """Read a record (``MemoryInvalid`` if it is not one)."""
        if not isinstance(record, dict) or record.get("op") != REMIND:
            raise MemoryInvalid(f"not a waiting reminder: {record!r}")
        author, thread = record.get("author"), record.get("thread_id")
        text, language, source = record.get("text"), record.get("language"), record.get("source")
        chat_id = record.get("chat_id")
        try:
            due = Due.from_json(record.get("due"))
        except ValueError as e:
            raise MemoryInvalid(f"a waiting reminder's time: {e}") from e
        if not (
            isinstance(text, str)
            and isinstance(language, str)
            and isinstance(source, str)
            and isinstance(chat_id, int)
            and (thread is None or isinstance(thread, int))
            and isinstance(author, dict)
            and author.get("kind") in ("user", "chat")
            and isinstance(author.get("id"), int)
            and isinstance(author.get("name"), str)
        ):
            raise MemoryInvalid("a waiting reminder needs text, chat, author and source")
        who = Actor(author["kind"], author["id"], author["name"])
        return cls(text, due, language, chat_id, who, source, thread)


Waiting = Proposal | ReminderProposal  # what an Apply all / Discard message asks about


def _waiting(record: Any) -> Waiting:
    if isinstance(record, dict) and record.get("op") == REMIND:
        return ReminderProposal.from_dict(record)
    return Proposal.from_dict(record)


@dataclass(frozen=True)
class Reverted:
    """What ``revert`` did: undone, left alone (changed since, or back already) and failed
    (the store refused: still to undo, so keep them)."""

    undone: int = 0
    left_alone: int = 0
    failed: tuple[Revision, ...] = ()


def revert(namespace: MemoryNamespace, revisions: Iterable[Revision]) -> Reverted:
    """Undo ``revisions``, newest first.

    A memory changed since by someone else (another chat, a command, the CLI) keeps their
    version, and so does a deleted one whose id is back already.
    """
    undone = left_alone = 0
    failed: list[Revision] = []
    for revision in reversed(list(revisions)):
        memory, left = revision.memory, revision.left
        try:
            if left is not None and content_of(namespace.get(left.id)) != content_of(left):
                log.warning("not undoing %s of %s: changed since", revision.how, left.id)
                left_alone += 1
                continue
            if revision.how == "delete":
                namespace.delete(memory.id)
            elif revision.how == "restore":
                namespace.update(
                    memory.id, content=memory.content, tags=memory.tags, category=memory.category
                )
            elif namespace.import_memories([memory.to_dict()]) == 0:
                left_alone += 1  # its id is back already (restored or imported): theirs stands
                continue
            undone += 1
        except MemoryNotFound:
            log.warning("not undoing %s of %s: deleted since", revision.how, memory.id)
            left_alone += 1
        except MemoryStoreError as e:
            log.warning(
                "could not undo %s of %s in %s: %s", revision.how, memory.id, namespace.name, e
            )
            failed.append(revision)
    return Reverted(undone, left_alone, tuple(reversed(failed)))


class ChangeFile:
    """The pending changes of one namespace (its document ``changes``)."""

    def __init__(self, documents: Documents) -> None:
        self.documents = documents

    def keep_pending(self, proposals: Iterable[Waiting]) -> str:
        """Keep ``proposals`` for an Apply all / Discard message; its token."""
        return self._keep("pending", [p.to_dict() for p in proposals], MAX_PENDING)

    def pending(self, token: str) -> list[Waiting] | None:
        """The proposals kept under ``token`` (None: unknown, dropped or damaged)."""
        records = self._find("pending", token)
        return _parsed(_waiting, records) if records is not None else None

    def take_pending(
        self, token: str, keep: Callable[[list[Waiting]], list[Waiting]]
    ) -> list[Waiting] | None:
        """Take the proposals kept under ``token``, leaving ``keep(proposals)`` of them there
        (none: the record goes), in one compare-and-set; the proposals as taken, None if none
        wait. Another press taking them meanwhile makes ``keep`` run again on what that one
        left (it may raise, and then nothing is taken), so no proposal is taken twice."""
        taken: list[Waiting] | None = None

        def take(value: Any) -> dict[str, list[dict[str, Any]]]:
            nonlocal taken
            data = _records(value)
            record = next((r for r in data["pending"] if r["token"] == token), None)
            taken = _parsed(_waiting, record["changes"]) if record else None
            if taken:
                left = [p.to_dict() for p in keep(taken)]
                data["pending"] = [
                    {**r, "changes": left} if r is record else r
                    for r in data["pending"]
                    if r is not record or left
                ]
            return data

        update_document(self.documents, CHANGES, take)
        return taken or None

    def give_back(self, token: str, proposals: Iterable[Waiting]) -> None:
        """Put ``proposals`` taken from ``token`` back under it (a press that failed)."""
        back = [p.to_dict() for p in proposals]

        def add(value: Any) -> dict[str, list[dict[str, Any]]]:
            data = _records(value)
            if not any(r["token"] == token for r in data["pending"]):
                data["pending"].append({"token": token, "at": now_iso(), "changes": []})
            data["pending"] = [
                {**r, "changes": [*r["changes"], *back]} if r["token"] == token else r
                for r in data["pending"]
            ]
            return data

        update_document(self.documents, CHANGES, add)

    # -- the document ---------------------------------------------------------------------------

    def _find(self, kind: str, token: str) -> list[Any] | None:
        found = self.documents.get(CHANGES)
        records = _records(found.value if found is not None else None)[kind]
        return next((r["changes"] for r in records if r["token"] == token), None)

    def _keep(self, kind: str, changes: list[dict[str, Any]], limit: int) -> str:
        token = new_token()
        record = {"token": token, "at": now_iso(), "changes": changes}

        def keep(value: Any) -> dict[str, list[dict[str, Any]]]:
            data = _records(value)
            data[kind] = [*data[kind], record][-limit:]
            return data

        update_document(self.documents, CHANGES, keep)
        return token


def _records(value: Any) -> dict[str, list[dict[str, Any]]]:
    """The records of a ``changes`` document, without those of the wrong shape."""
    data = value if isinstance(value, dict) else {}
    loaded: dict[str, list[dict[str, Any]]] = {}
    for kind in ("pending",):
        records = data.get(kind)
        loaded[kind] = [
            r
            for r in (records if isinstance(records, list) else [])
            if isinstance(r, dict)
            and isinstance(r.get("token"), str)
            and isinstance(r.get("changes"), list)
        ]
    return loaded


_T = TypeVar("_T")


def _parsed(parse: Callable[[Any], _T], records: list[Any]) -> list[_T] | None:
    try:
        return [parse(r) for r in records]
    except MemoryInvalid as e:
        log.warning("a record of %s is damaged: %s", CHANGES_FILE, e.message)
        return None
