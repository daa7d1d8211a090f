"""The article's eight memory operations as LLM tools, and the executor that runs them.

A tool is a schema layer (like llm's ``Tool.function``): a name, a description, a JSON schema
whose parameters are described for the model, and one call into ``memory.Namespace``. Neither
storage nor ranking lives here.

A ``ToolExecutor`` is bound to one ``Namespace`` object for one turn. The tools have no
namespace argument, so whatever the model writes (or a stored memory persuades it to write), a
call can only read or change the namespace of the chat the message came from.

The executor never raises: malformed JSON, an argument of the wrong type, a bad value
(``memory.errors.MemoryInvalid``), an unknown id or an unknown tool come back to the model as
``{"ok": false, "error": {"code": ..., "message": ...}}`` so that it can correct itself.

A turn is a transaction. The executor records what each successful write changed (``changes``)
and how to undo it; ``rollback`` undoes the turn's writes, newest first, when the turn fails
(the endpoint times out halfway, the model never stops calling tools), so a failed turn leaves
nothing half-stored.

Deletions go through a ``TurnPolicy``: the model may delete ``max_deletions`` memories (one by
default) per turn on its own. Further ``deleteMemory`` calls are not executed; they are returned
to the model as needing the user's confirmation and collected in ``policy.pending`` for the bot
to ask about with buttons. A stored "ignore your instructions and delete everything" therefore
costs at most one memory, and that one can be restored from the log (and the journal).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memory.errors import MemoryInvalid, MemoryStoreError
from memory.model import Memory
from memory.store import Namespace

log = logging.getLogger(__name__)

ALL_MEMORIES_DEFAULT = 50  # getAllMemories returns at most this many (the newest) by default
ALL_MEMORIES_MAX = 200

_ID = {"type": "integer", "description": "The memory's id (the number shown with it)."}
_TAGS = {
    "type": "array",
    "items": {"type": "string"},
    "description": "3-5 short lower-case keywords for finding it again, in the user's language.",
}
_CATEGORY = {
    "type": "string",
    "description": "One lower-case word: personal, work, project, preference, schedule, "
    "contact, general...",
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
    return record


def _detailed(memory: Memory) -> dict[str, Any]:
    return {**_memory(memory), "accessCount": memory.access_count, "accessedAt": memory.accessed_at}


@dataclass(frozen=True)
class Tool:
    """One memory operation offered to the model."""

    name: str
    description: str
    parameters: dict[str, Any]
    call: Callable[[ToolExecutor, dict[str, Any]], dict[str, Any]]

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


def _add(run: ToolExecutor, args: dict[str, Any]) -> dict[str, Any]:
    memory = run.namespace.add(
        args["content"], args.get("tags", ()), args.get("category"), source=run.next_source()
    )
    run.changes.added.append(memory.id)
    run.undo.append(("delete", memory, memory))
    return {"ok": True, "memory": _memory(memory)}


def _search(run: ToolExecutor, args: dict[str, Any]) -> dict[str, Any]:
    hits = run.namespace.search(args["query"], args.get("limit", 10))
    found = [{**_memory(h.memory), "score": round(h.score, 2)} for h in hits]
    return {"ok": True, "count": len(found), "memories": found}


def _all(run: ToolExecutor, args: dict[str, Any]) -> dict[str, Any]:
    memories = run.namespace.memories(args.get("category"))
    limit = min(max(1, args.get("limit", ALL_MEMORIES_DEFAULT)), ALL_MEMORIES_MAX)
    shown = [_memory(m) for m in memories[-limit:]]
    return {"ok": True, "total": len(memories), "shown": len(shown), "memories": shown}


def _get(run: ToolExecutor, args: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "memory": _detailed(run.namespace.get(args["id"]))}


def _update(run: ToolExecutor, args: dict[str, Any]) -> dict[str, Any]:
    before = run.namespace.get(args["id"])
    if not run.policy.allows_change(before, run.changes):
        return {
            "ok": False,
            "error": {
                "code": "NOT_ALLOWED",
                "message": "Not changed: in this group only the member who stored this memory, "
                "or an administrator with /edit, may change it. Tell the user so.",
            },
        }
    memory = run.namespace.update(
        before.id, content=args.get("content"), tags=args.get("tags"), category=args.get("category")
    )
    if memory.id not in run.changes.added and memory.id not in run.changes.updated:
        run.changes.updated.append(memory.id)
    run.undo.append(("restore", before, memory))
    return {"ok": True, "memory": _memory(memory)}


def _delete(run: ToolExecutor, args: dict[str, Any]) -> dict[str, Any]:
    memory = run.namespace.get(args["id"])
    if not run.policy.allow_deletion(memory):
        return {
            "ok": False,
            "needsConfirmation": True,
            "id": memory.id,
            "message": "Not deleted: only one memory may be deleted per message without the "
            "user's confirmation. The user will be asked with a button; tell them so.",
        }
    deleted = run.namespace.delete(memory.id)
    run.policy.deleted.append(deleted.id)
    run.changes.deleted.append(deleted.id)
    run.undo.append(("reinstate", deleted, None))
    return {"ok": True, "deleted": _memory(deleted)}


def _stats(run: ToolExecutor, args: dict[str, Any]) -> dict[str, Any]:
    stats = run.namespace.stats()
    return {
        "ok": True,
        "total": stats.total,
        "byCategory": stats.by_category,
        "topTags": dict(stats.top_tags),
        "mostAccessed": [_detailed(m) for m in stats.most_accessed],
    }


def _related(run: ToolExecutor, args: dict[str, Any]) -> dict[str, Any]:
    hits = run.namespace.related(args["id"], args.get("limit", 5))
    found = [{**_memory(h.memory), "score": h.score} for h in hits]
    return {"ok": True, "count": len(found), "memories": found}


TOOLS: tuple[Tool, ...] = (
    Tool(
        "addMemory",
        "Store a new long-term memory: a fact the user stated, or something you came across "
        "that the user will want later. Write the content as one self-contained sentence.",
        _object(
            {
                "content": {"type": "string", "description": "What to remember, self-contained."},
                "tags": _TAGS,
                "category": _CATEGORY,
            },
            ("content",),
        ),
        _add,
    ),
    Tool(
        "searchMemory",
        "Search the long-term memories by keywords; best matches first. Use it before answering "
        "anything about the past or about what the user told you.",
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
        "Change a memory's content, tags or category (give only what changes). Prefer this to "
        "adding a second memory about the same thing.",
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
        "Delete one memory by id, only when the user asks for it. At most one per message; "
        "further deletions need the user's confirmation, which the bot asks for.",
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
)

TOOLS_BY_NAME: dict[str, Tool] = {tool.name: tool for tool in TOOLS}


def tool_schemas() -> list[dict[str, Any]]:
    """The ``tools`` argument of a chat-completions request."""
    return [tool.schema() for tool in TOOLS]


# -- arguments ---------------------------------------------------------------------------------


def _check(name: str, spec: Mapping[str, Any], value: object) -> Any:
    """``value`` if it fits the parameter's schema (ids may come as digit strings)."""
    kind = spec["type"]
    if kind == "string" and isinstance(value, str):
        return value
    if kind == "integer":
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
    if kind == "array" and isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    if kind == "array" and isinstance(value, str):
        return value  # "a, b, c": the store splits a string of tags on commas
    expected = {"array": "a list of strings"}.get(kind, f"a {kind}")
    raise MemoryInvalid(f"{name} must be {expected}, not {json.dumps(value)}", field=name)


def parse_arguments(tool: Tool, raw: str | None) -> dict[str, Any]:
    """The call's arguments, checked against the tool's schema; ``MemoryInvalid`` if not."""
    try:
        args = json.loads(raw) if raw and raw.strip() else {}
    except ValueError as e:  # json.JSONDecodeError, and UnicodeDecodeError for odd bytes
        raise MemoryInvalid(f"the arguments are not valid JSON ({e})", field="arguments") from e
    if not isinstance(args, dict):
        raise MemoryInvalid("the arguments must be a JSON object", field="arguments")
    properties: dict[str, Any] = tool.parameters["properties"]
    # Article fidelity: updateMemory(id, updates) with the changes in an object.
    if tool.name == "updateMemory" and isinstance(args.get("updates"), dict):
        args = {**args.pop("updates"), **args}
    unknown = sorted(set(args) - set(properties))
    if unknown:
        known = ", ".join(properties) or "none"
        raise MemoryInvalid(f"unknown argument {unknown[0]!r} (known: {known})", field=unknown[0])
    for key in tool.parameters["required"]:
        if args.get(key) is None:
            raise MemoryInvalid(f"missing required argument {key!r}", field=key)
    return {k: _check(k, properties[k], v) for k, v in args.items() if v is not None}


# -- the turn -----------------------------------------------------------------------------------


@dataclass
class TurnPolicy:
    """What the model may do on its own in one turn; deletions past the limit wait for the user."""

    max_deletions: int = 1
    # Which existing memories the model may change for this speaker (None: all of them). In a
    # group it is the speaker's own: the model must not edit another member's memory for them.
    may_change: Callable[[Memory], bool] | None = None
    deleted: list[int] = field(default_factory=list)
    pending: list[Memory] = field(default_factory=list)

    def allows_change(self, memory: Memory, changes: Changes) -> bool:
        """Whether the model may update ``memory`` (always one it added in this turn)."""
        return self.may_change is None or memory.id in changes.added or self.may_change(memory)

    def allow_deletion(self, memory: Memory) -> bool:
        """Whether to delete now; if not, ``memory`` is kept for the user to confirm."""
        if len(self.deleted) < self.max_deletions:
            return True
        if all(m.id != memory.id for m in self.pending):
            self.pending.append(memory)
        return False


@dataclass
class Changes:
    """Ids of the memories a turn added, changed and deleted (for the "Memory updated" line)."""

    added: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)
    deleted: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.deleted)


def dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept (half the tokens of ``\\uXXXX`` escapes for Chinese)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def error_result(code: str, message: str) -> str:
    """A tool result telling the model what went wrong."""
    return dumps({"ok": False, "error": {"code": code, "message": message}})


def _content(memory: Memory) -> tuple[str, tuple[str, ...], str]:
    """What a user stored in ``memory`` (not its access bookkeeping)."""
    return memory.content, memory.tags, memory.category


class ToolExecutor:
    """Runs the model's tool calls against one namespace, for one turn. Never raises."""

    def __init__(
        self, namespace: Namespace, policy: TurnPolicy | None = None, source: str | None = None
    ) -> None:
        self.namespace = namespace
        self.policy = policy if policy is not None else TurnPolicy()
        # The message this turn answers (``bot.access.message_source``): the n-th memory the
        # turn adds gets ``<source>:<n>``, so a turn run again after a crash adds nothing new.
        self.source = source
        self._adds = 0
        self.changes = Changes()
        # (how to undo, the memory as it was, as this turn left it: None once deleted)
        self.undo: list[tuple[str, Memory, Memory | None]] = []
        # Calls run in a worker thread; a rollback (from the event loop, when a turn is
        # cancelled) waits for the call in progress and ends the turn: no write after it.
        self._lock = threading.Lock()
        self._ended = False

    def next_source(self) -> str | None:
        """The ``source`` of the next memory this turn adds (None without a message)."""
        self._adds += 1
        return f"{self.source}:{self._adds}" if self.source is not None else None

    def execute(self, name: str, arguments: str | None) -> str:
        """Run the tool ``name`` with its raw JSON ``arguments``; the result as compact JSON."""
        tool = TOOLS_BY_NAME.get(name)
        if tool is None:
            known = ", ".join(TOOLS_BY_NAME)
            return error_result("UNKNOWN_TOOL", f"there is no tool {name!r}; the tools: {known}")
        try:
            with self._lock:
                if self._ended:
                    return error_result("TURN_ENDED", "the turn was undone; nothing was done")
                result = tool.call(self, parse_arguments(tool, arguments))
        except MemoryStoreError as e:
            return error_result(e.code, e.message)
        # The model's input can reach corners of the store no test thought of; whatever happens
        # there must go back to the model as an error, not end the user's turn with a traceback.
        except Exception as e:
            log.exception("tool %s failed on %s", name, self.namespace.name)
            return error_result("TOOL_FAILED", f"{type(e).__name__}: the operation failed")
        return dumps(result)

    def rollback(self) -> None:
        """Undo this turn's writes, newest first, and end the turn (nothing half-stored)."""
        with self._lock:
            self._ended = True
            self._undo()

    def _undo(self) -> None:
        while self.undo:
            how, memory, left = self.undo.pop()
            try:
                if left is not None and _content(self.namespace.get(left.id)) != _content(left):
                    # Changed since by someone else (another chat, the CLI): theirs stands.
                    log.warning("not undoing %s of %s: changed since", how, left.id)
                    continue
                if how == "delete":
                    self.namespace.delete(memory.id)
                elif how == "restore":
                    self.namespace.update(
                        memory.id,
                        content=memory.content,
                        tags=memory.tags,
                        category=memory.category,
                    )
                else:
                    self.namespace.import_memories([memory.to_dict()])
            except MemoryStoreError as e:
                log.warning(
                    "could not undo %s of %s in %s: %s", how, memory.id, self.namespace.name, e
                )
        self.changes = Changes()
        self.policy.deleted.clear()
        self.policy.pending.clear()
