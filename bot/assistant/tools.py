"""The article's eight memory operations as LLM tools, and ``scheduleReminder``.

A tool is a schema layer (like llm's ``Tool.function``): a name, a description, a JSON schema
whose parameters are described for the model, and one call into the operation the command
calls: ``bot.core.operations`` (``searchMemory`` as free text, ``getAllMemories`` as /list,
``getMemory``, ``updateMemory`` as /edit, ``deleteMemory`` as /forget, ``getMemoryStats`` as
/stats, ``getRelatedMemories`` as /related), ``bot.core.adding`` (``addMemory`` as /remember)
and ``bot.core.reminders`` through the turn's desk (``scheduleReminder``). So the model answers
what a command would: the same memories, the same weights, the same "most used". Neither
storage nor ranking lives here; what a change may touch is the turn's (``Turn.may_change``).

How calls are run and undone for one turn is ``bot.assistant.executor``; their arguments are
checked against these schemas by ``bot.assistant.arguments``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol
from zoneinfo import ZoneInfo

from bot.assistant.changes import Proposal, Revision
from bot.assistant.limits import Changes, TurnPolicy
from bot.assistant.reminder_desk import ReminderDesk
from bot.categories import canonical
from bot.core import adding, operations
from memory.errors import MemoryInvalid
from memory.interface import MemoryNamespace
from memory.model import Memory, clean_category, clean_content, clean_tags
from memory.updates import newest_first


class Turn(Protocol):
    """What a tool works on: one turn's namespace, limits and record of changes
    (``bot.assistant.executor.ToolExecutor``)."""

    namespace: MemoryNamespace
    policy: TurnPolicy
    changes: Changes
    undo: list[Revision]
    reminders: ReminderDesk | None
    zone: ZoneInfo | None  # the chat's: the dates a memory names are read in it (None: UTC)

    def next_source(self) -> str | None:
        """The ``source`` of the next memory the turn adds."""
        ...

    def may_change(self, memory: Memory) -> bool:
        """Whether the model may change ``memory`` for its speaker (``bot.core.policy``)."""
        ...


ALL_MEMORIES_DEFAULT = 50  # getAllMemories returns at most this many (the newest) by default
ALL_MEMORIES_MAX = 200

_ID = {"type": "integer", "description": "The memory's id."}
_TAGS = {
    "type": "array",
    "items": {"type": "string"},
    "description": "3-5 lower-case keywords, in the user's language.",
}
_CATEGORY = {
    "type": "string",
    "description": "One lower-case word: personal, work, schedule, contact, general...",
}


def _memory(memory: Memory) -> dict[str, Any]:
    """A memory as the model sees it: what it needs, without bookkeeping."""
    record: dict[str, Any] = {
        "id": memory.id,
        "content": memory.content,
        "tags": list(memory.tags),
        "category": memory.category,
        "createdAt": memory.created_at,
    }
    if memory.updated_at:
        record["updatedAt"] = memory.updated_at
    if memory.date:
        record["date"] = memory.date  # the day the content speaks of, resolved when stored
    return record


def _detailed(memory: Memory) -> dict[str, Any]:
    return {**_memory(memory), "accessCount": memory.access_count, "accessedAt": memory.accessed_at}


@dataclass(frozen=True)
class Tool:
    """One memory operation offered to the model."""

    name: str
    description: str
    parameters: dict[str, Any]
    call: Callable[[Turn, dict[str, Any]], dict[str, Any]]

    def schema(self) -> dict[str, Any]:
        """The chat-completions ``tools`` entry."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required),
            "additionalProperties": False}  # fmt: skip


# -- the calls: one memory operation each -------------------------------------------------------


def _add(run: Turn, args: dict[str, Any]) -> dict[str, Any]:
    done = adding.remember(
        run.namespace,
        args["content"],
        args.get("tags", ()),
        args.get("category"),
        source=run.next_source(),
        keep_both=bool(args.get("keepBoth")),
        zone=run.zone,  # as /remember reads them: in the chat's zone
    )
    if done.near:
        result: dict[str, Any] = {
            "ok": False,
            "stored": False,
            "nearDuplicates": [{**_memory(n.memory), "why": n.reason} for n in done.near],
            "message": "Not stored: these memories already say much the same. If the user "
            "gives a new value for one of them, change it with updateMemory (its id) instead; "
            "if the user said it is a different thing, call addMemory again with "
            "keepBoth=true; if unsure, ask the user.",
        }
        update = next((n for n in done.near if n.reason == "update"), None)
        if update is not None:  # a new value for what one memory says (memory.updates)
            old = update.memory
            result["wouldReplace"] = {**_memory(old), "sure": update.sure}
            result["message"] = (
                f'Not stored: this gives a new value for memory {old.id} ("{old.content}")'
                + (", and says it changed" if update.sure else "")
                + f". If it is the same thing, replace it: updateMemory with id {old.id} and "
                "the new content (the old version stays in its history). If the user means a "
                "different thing (another person, place or item), call addMemory again with "
                "keepBoth=true. If unsure, ask the user."
            )
        return result
    memory = done.memory
    assert memory is not None
    if done.duplicate:
        return {
            "ok": True,
            "duplicate": True,
            "memory": _memory(memory),
            "message": f"Already remembered (id {memory.id}): nothing was stored twice.",
        }
    run.changes.added.append(memory.id)
    run.undo.append(Revision("delete", memory, memory))
    return {"ok": True, "memory": _memory(memory)}


def _search(run: Turn, args: dict[str, Any]) -> dict[str, Any]:
    found = operations.search(run.namespace, args["query"], args.get("limit", 10))
    # Of two memories giving one thing different values, the newer comes first (search).
    _, _, older = newest_first([h.memory for h in found.shown])
    answers = [
        {**_memory(h.memory), "older": True} if h.memory.id in older else _memory(h.memory)
        for h in found.shown
    ]
    weaker = [_memory(h.memory) for h in found.weaker]
    result: dict[str, Any] = {"ok": True, "count": len(answers), "memories": answers}
    if weaker:  # not answers: the model may still judge them, knowing they are weak
        result["weakerMatches"] = weaker
    if not answers:
        result["note"] = "no stored memory answers this query"
    return result


def _all(run: Turn, args: dict[str, Any]) -> dict[str, Any]:
    # Either language's word for a known category (bot.categories), as /list reads it.
    newest = operations.listing(run.namespace, args.get("category"))
    limit = min(max(1, args.get("limit", ALL_MEMORIES_DEFAULT)), ALL_MEMORIES_MAX)
    shown = [_memory(m) for m in reversed(newest[:limit])]  # the newest, in stored order
    return {"ok": True, "total": len(newest), "shown": len(shown), "memories": shown}


def _get(run: Turn, args: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "memory": _detailed(operations.find(run.namespace, args["id"]))}


def _waiting(run: Turn, proposal: Proposal) -> dict[str, Any]:
    """The result of a change kept for the user's confirmation (``TurnPolicy.admit``)."""
    message = run.policy.waiting(proposal.op)
    return {"ok": False, "needsConfirmation": True, "id": proposal.id, "message": message}


def _update(run: Turn, args: dict[str, Any]) -> dict[str, Any]:
    before = operations.find(run.namespace, args["id"])
    if not run.may_change(before):
        return {
            "ok": False,
            "error": {
                "code": "NOT_ALLOWED",
                "message": "Not changed: in this group only the member who stored this memory, "
                "or an administrator with /edit, may change it. Tell the user so.",
            },
        }
    content, tags, category = args.get("content"), args.get("tags"), args.get("category")
    if content is None and tags is None and category is None:
        raise MemoryInvalid("nothing to update: give content, tags or category")
    # Checked now, as the store would: a change that waits for the user must be one it takes.
    proposal = Proposal(
        "update",
        before,
        clean_content(content) if content is not None else None,
        clean_tags(tags) if tags is not None else None,
        canonical(clean_category(category)) if category is not None else None,
    )
    if not run.policy.admit(proposal, run.changes):
        return _waiting(run, proposal)
    memory = operations.edit(
        run.namespace,
        run,
        before.id,
        content=proposal.content,
        tags=proposal.tags,
        category=proposal.category,
    )
    run.policy.made(proposal, run.changes)
    if memory.id not in run.changes.added and memory.id not in run.changes.updated:
        run.changes.updated.append(memory.id)
    run.undo.append(Revision("restore", before, memory))
    return {"ok": True, "memory": _memory(memory)}


def _delete(run: Turn, args: dict[str, Any]) -> dict[str, Any]:
    proposal = Proposal("delete", operations.find(run.namespace, args["id"]))
    if not run.policy.admit(proposal, run.changes):
        return _waiting(run, proposal)
    deleted = operations.forget(run.namespace, run, proposal.id)
    run.policy.made(proposal, run.changes)
    run.changes.deleted.append(deleted.id)
    run.undo.append(Revision("reinstate", deleted, None))
    return {"ok": True, "deleted": _memory(deleted)}


def _stats(run: Turn, args: dict[str, Any]) -> dict[str, Any]:
    stats = operations.stats(run.namespace)  # /stats's: no unused memory is "most used"
    return {
        "ok": True,
        "total": stats.total,
        "byCategory": stats.by_category,
        "topTags": dict(stats.top_tags),
        "mostAccessed": [_detailed(m) for m in stats.most_accessed],
    }


def _related(run: Turn, args: dict[str, Any]) -> dict[str, Any]:
    # /related's weights: a shared tag over a shared category, the default category nothing.
    _, memories = operations.related(run.namespace, args["id"], args.get("limit", 5))
    return {"ok": True, "count": len(memories), "memories": [_memory(m) for m in memories]}


def _remind(run: Turn, args: dict[str, Any]) -> dict[str, Any]:
    if run.reminders is None:
        raise MemoryInvalid("reminders cannot be set here", field="reminders")
    local, minutes, repeat = args.get("local"), args.get("minutes"), args.get("repeat")
    return run.reminders.schedule(args["text"], local=local, minutes=minutes, repeat=repeat)


def _offer(run: Turn, args: dict[str, Any]) -> dict[str, Any]:
    if run.reminders is None:
        raise MemoryInvalid("reminders cannot be offered here", field="reminders")
    return run.reminders.offer(args["text"], local=args["local"], repeat=args.get("repeat"))


_WHEN = {
    "text": {"type": "string", "description": "What to remind of."},
    "local": {
        "type": "string",
        "description": "User's local time: YYYY-MM-DD HH:MM, YYYY-MM-DD or HH:MM.",
    },
    "minutes": {"type": "integer", "description": "Or: minutes from now."},
    "repeat": {"type": "string", "description": "daily, weekdays, weekly, monthly or yearly."},
}

TOOLS: tuple[Tool, ...] = (
    Tool(
        "addMemory",
        "Store a long-term memory: a fact the user stated or will want later, as one "
        "self-contained sentence. Nothing is stored twice; similar memories come back instead "
        "(nearDuplicates), and one it gives a new value is named (wouldReplace): update that "
        "one, unless it is another thing.",
        _object(
            {
                "content": {"type": "string", "description": "What to remember, self-contained."},
                "tags": _TAGS,
                "category": _CATEGORY,
                "keepBoth": {
                    "type": "boolean",
                    "description": "Store beside near-duplicates: only if the user said it "
                    "differs.",
                },
            },
            ("content",),
        ),
        _add,
    ),
    Tool(
        "searchMemory",
        "Search the memories: `memories` answer the query, best first (none: nothing does); "
        "`weakerMatches` only resemble it; `older` marks an outdated value: answer with the "
        "newer. Use it before answering about the past or what the user said.",
        _object(
            {
                "query": {
                    "type": "string",
                    "description": "Keywords separated by spaces, in the user's language.",
                },
                "limit": {"type": "integer", "description": "At most this many (default 10)."},
            },
            ("query",),
        ),
        _search,
    ),
    Tool(
        "getAllMemories",
        "List the stored memories (the newest ones if there are many), or those of one category.",
        _object(
            {
                "category": {"type": "string", "description": "Only this category."},
                "limit": {
                    "type": "integer",
                    "description": f"At most this many, newest (default {ALL_MEMORIES_DEFAULT}).",
                },
            }
        ),
        _all,
    ),
    Tool(
        "getMemory",
        "Read one memory by id, with how often it was used.",
        _object({"id": _ID}, ("id",)),
        _get,
    ),
    Tool(
        "updateMemory",
        "Change a memory's content, tags or category (only what changes) when the user asks "
        "or states a new fact about it; better than a second memory of one thing. Beyond a "
        "few per message the bot asks the user to confirm.",
        _object(
            {
                "id": _ID,
                "content": {"type": "string", "description": "The new content."},
                "tags": _TAGS,
                "category": _CATEGORY,
            },
            ("id",),
        ),
        _update,
    ),
    Tool(
        "deleteMemory",
        "Delete one memory, only when the user asks. One per message (none in groups); the bot "
        "asks the user to confirm the rest.",
        _object({"id": _ID}, ("id",)),
        _delete,
    ),
    Tool(
        "getMemoryStats",
        "Totals: how many memories, per category, the most used tags, the most accessed.",
        _object({}),
        _stats,
    ),
    Tool(
        "getRelatedMemories",
        "Memories sharing tags or the category with a given memory.",
        _object(
            {"id": _ID, "limit": {"type": "integer", "description": "At most this many (5)."}},
            ("id",),
        ),
        _related,
    ),
    Tool(
        "scheduleReminder",
        "Set a reminder when the user asks for one. Give local, or minutes, or repeat (with "
        "local for its time); the bot computes and shows the time.",
        _object(_WHEN, ("text",)),
        _remind,
    ),
    Tool(
        "offerReminder",
        "The user says they will do something at a time, unasked: offer a reminder (set only "
        "on their Yes).",
        _object(
            {
                "text": _WHEN["text"],
                "local": _WHEN["local"],
                "repeat": {"type": "string", "description": "yearly for a birthday."},
            },
            ("text", "local"),
        ),
        _offer,
    ),
)

TOOLS_BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}


def tool_schemas() -> list[dict[str, Any]]:
    """The ``tools`` argument of a chat-completions request."""
    return [tool.schema() for tool in TOOLS]
