"""``python -m memory --store URL --ns NAMESPACE mcp``: one namespace served over MCP (stdio).

Other AI tools (a desktop assistant, an IDE's agent) reach a namespace's memories through the
Model Context Protocol: the client starts this process and speaks JSON-RPC on its standard
input and output, with the official ``mcp`` package's low-level server. The tools are the
library's operations, with the bot's limits and rules where the library has them:

- ``search``: what answers the query (``memory.relevance.decide``, as the bot decides what a
  reply shows), the answers counted as used, and the weaker matches after them;
- ``remember``: stores a memory unless the same content is stored (then it says so, with that
  memory, and stores nothing) or much the same is (``memory.duplicates``: the near-duplicates
  come back and nothing is stored, unless ``keepBoth``);
- ``list``, ``get``, ``update``, ``forget``, ``related``, ``stats``.

Every argument is checked against the tool's JSON schema here, and content, tags, categories,
ids and limits by the library's own rules (``memory.model``: 4,000 characters of content, ids
that are whole numbers, ...). Whatever a call gets wrong, or a store refuses, comes back as a
tool result with ``isError`` and the message (``error [CODE]: message``), never a crash. Every
change is recorded in the namespace's history as made by ``mcp`` through the door ``mcp``, one
change per call, so the bot's ``/history`` and ``/undo`` (and the command line's) see it.
``read_only`` offers only the tools that change nothing.

The store is opened once, before the first message, and closed when the client closes the
connection (or the process is interrupted). Standard output carries the protocol alone: what
the library has to say (a quarantined file) goes to standard error, as does the log.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from memory.embedding import Embedder, OfflineEmbedder, offline_available
from memory.errors import MemoryInvalid, MemoryStoreError
from memory.history import Author, acting
from memory.interface import MemoryNamespace
from memory.model import Memory, clean_content, parse_id, parse_limit
from memory.open import open_store
from memory.relevance import decide

log = logging.getLogger(__name__)

SEARCH_DEFAULT, SEARCH_MAX = 10, 50
LIST_DEFAULT, LIST_MAX = 50, 200
RELATED_DEFAULT, RELATED_MAX = 5, 50
AUTHOR = "mcp"  # ``by`` and ``door`` of the changes this server makes (``memory.history``)

_ID = {
    "type": ["integer", "string"],
    "description": "The memory's id: a whole number (as returned by search, list or remember).",
}
_TAGS = {
    "type": "array",
    "items": {"type": "string"},
    "maxItems": 20,
    "description": "Short keywords to find it again (at most 20), in the memory's language.",
}
_CATEGORY = {
    "type": "string",
    "description": "One word: personal, work, project, preference, schedule, contact, general...",
}


def _limit(default: int, maximum: int) -> dict[str, Any]:
    return {
        "type": "integer",
        "minimum": 1,
        "maximum": maximum,
        "description": f"At most this many (default {default}, at most {maximum}).",
    }


def _object(properties: dict[str, Any], *required: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def _record(memory: Memory) -> dict[str, Any]:
    """A memory as a client sees it: the article's record, without the bot's bookkeeping
    (``source``: chat and message ids; a file reference valid for the bot only)."""
    record: dict[str, Any] = {
        "id": memory.id,
        "content": memory.content,
        "tags": list(memory.tags),
        "category": memory.category,
        "createdAt": memory.created_at,
        "accessedAt": memory.accessed_at,
        "accessCount": memory.access_count,
    }
    if memory.updated_at:
        record["updatedAt"] = memory.updated_at
    if memory.date:
        record["date"] = memory.date  # the day the content speaks of, resolved when stored
    return record


# -- the calls: one operation each, on the namespace, in a worker thread ----------------------


def _search(ns: MemoryNamespace, args: dict[str, Any]) -> dict[str, Any]:
    count = parse_limit(args.get("limit", SEARCH_DEFAULT), maximum=SEARCH_MAX)
    hits = ns.search(args["query"], max(count, 5), ranker="hybrid", touch=False)
    answer = decide(args["query"], hits)
    used = {m.id: m for m in ns.touch([hit.memory.id for hit in answer.shown])}
    shown = [_record(used.get(hit.memory.id, hit.memory)) for hit in answer.shown][:count]
    weaker = [_record(hit.memory) for hit in answer.weaker][: max(count - len(shown), 0)]
    result: dict[str, Any] = {"count": len(shown), "memories": shown}
    if weaker:
        result["weakerMatches"] = weaker
    if not shown:
        result["note"] = "no stored memory answers this query"
    return result


def _remember(ns: MemoryNamespace, args: dict[str, Any]) -> dict[str, Any]:
    content, tags, category = (
        clean_content(args["content"]),
        args.get("tags", ()),
        args.get("category"),
    )
    if not args.get("keepBoth"):
        similar = ns.similar(content)
        near = [n for n in similar if n.reason != "same"]
        if near and len(near) == len(similar):  # with the same content there, it is that one
            return {
                "stored": False,
                "nearDuplicates": [{**_record(n.memory), "why": n.reason} for n in near],
                "message": "Not stored: these memories already say much the same. Change one "
                "of them with update (its id), or call remember again with keepBoth=true if it "
                "is a different thing.",
            }
    added = ns.add_unique(content, tags, category)
    if added.duplicate:
        return {
            "stored": False,
            "duplicate": True,
            "memory": _record(added.memory),
            "message": f"Already stored (id {added.memory.id}): nothing was stored twice.",
        }
    return {"stored": True, "memory": _record(added.memory)}


def _list(ns: MemoryNamespace, args: dict[str, Any]) -> dict[str, Any]:
    limit = parse_limit(args.get("limit", LIST_DEFAULT), maximum=LIST_MAX)
    memories = ns.memories(args.get("category"))
    shown = [_record(m) for m in memories[-limit:]]
    return {"total": len(memories), "shown": len(shown), "memories": shown}


def _get(ns: MemoryNamespace, args: dict[str, Any]) -> dict[str, Any]:
    return {"memory": _record(ns.get(parse_id(args["id"])))}


def _update(ns: MemoryNamespace, args: dict[str, Any]) -> dict[str, Any]:
    content, tags, category = args.get("content"), args.get("tags"), args.get("category")
    if content is None and tags is None and category is None:
        raise MemoryInvalid("nothing to update: give content, tags or category", field="content")
    memory = ns.update(parse_id(args["id"]), content=content, tags=tags, category=category)
    return {"memory": _record(memory)}


def _forget(ns: MemoryNamespace, args: dict[str, Any]) -> dict[str, Any]:
    return {"deleted": _record(ns.delete(parse_id(args["id"])))}


def _related(ns: MemoryNamespace, args: dict[str, Any]) -> dict[str, Any]:
    limit = parse_limit(args.get("limit", RELATED_DEFAULT), maximum=RELATED_MAX)
    hits = ns.related(parse_id(args["id"]), limit)
    return {"count": len(hits), "memories": [{**_record(h.memory), "score": h.score} for h in hits]}


def _stats(ns: MemoryNamespace, args: dict[str, Any]) -> dict[str, Any]:
    stats = ns.stats()
    return {
        "total": stats.total,
        "byCategory": dict(stats.by_category),
        "topTags": dict(stats.top_tags),
        "mostAccessed": [_record(m) for m in stats.most_accessed],
    }


@dataclass(frozen=True)
class Operation:
    """One tool: its name, what it does (for the client's model), its JSON schema, and the
    call; ``changes``: whether it writes (left out when serving read-only)."""

    name: str
    description: str
    schema: dict[str, Any]
    call: Callable[[MemoryNamespace, dict[str, Any]], dict[str, Any]]
    changes: bool = False

    def tool(self) -> types.Tool:
        """The tool as ``tools/list`` describes it."""
        hints = types.ToolAnnotations(
            read_only_hint=not self.changes, destructive_hint=self.name == "forget"
        )
        return types.Tool(
            name=self.name,
            description=self.description,
            input_schema=self.schema,
            annotations=hints,
        )


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "search",
        "Search the long-term memories. `memories` are those that answer the query, best "
        "first (none: nothing stored answers it); `weakerMatches` merely resemble it.",
        _object(
            {
                "query": {"type": "string", "description": "A question or keywords."},
                "limit": _limit(SEARCH_DEFAULT, SEARCH_MAX),
            },
            "query",
        ),
        _search,
    ),
    Operation(
        "remember",
        "Store a new long-term memory: one self-contained sentence. Content already stored is "
        "not stored twice; when similar memories exist, nothing is stored and they are returned "
        "(nearDuplicates): update one of them instead, or repeat with keepBoth=true.",
        _object(
            {
                "content": {
                    "type": "string",
                    "maxLength": 4000,
                    "description": "What to remember, self-contained (at most 4000 characters).",
                },
                "tags": _TAGS,
                "category": _CATEGORY,
                "keepBoth": {
                    "type": "boolean",
                    "description": "Store it even beside near-duplicates (a different thing).",
                },
            },
            "content",
        ),
        _remember,
        changes=True,
    ),
    Operation(
        "list",
        "List the stored memories, the newest last (the newest `limit` of them), or those of "
        "one category.",
        _object(
            {"category": {"type": "string"}, "limit": _limit(LIST_DEFAULT, LIST_MAX)},
        ),
        _list,
    ),
    Operation("get", "Read one memory by id.", _object({"id": _ID}, "id"), _get),
    Operation(
        "update",
        "Change a memory's content, tags or category (give only what changes).",
        _object(
            {"id": _ID, "content": {"type": "string"}, "tags": _TAGS, "category": _CATEGORY}, "id"
        ),
        _update,
        changes=True,
    ),
    Operation(
        "forget", "Delete one memory by id.", _object({"id": _ID}, "id"), _forget, changes=True
    ),
    Operation(
        "related",
        "Memories sharing tags or the category with a given memory.",
        _object({"id": _ID, "limit": _limit(RELATED_DEFAULT, RELATED_MAX)}, "id"),
        _related,
    ),
    Operation(
        "stats",
        "Totals: how many memories, per category, the most used tags, the most accessed.",
        _object({}),
        _stats,
    ),
)


# -- arguments ----------------------------------------------------------------------------------

_KINDS: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,), "boolean": (bool,)}
_SAID = {
    "string": "a string",
    "integer": "a whole number",
    "boolean": "true or false",
    "array": "a list of strings",
}


def _fits(spec: Mapping[str, Any], value: object) -> bool:
    kinds = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
    for kind in kinds:
        if kind == "array" and isinstance(value, list):
            return all(isinstance(item, str) for item in value)
        if kind == "integer" and isinstance(value, bool):
            continue  # JSON's true is no number, though Python's bool is an int
        if kind in _KINDS and isinstance(value, _KINDS[kind]):
            return True
    return False


def check_arguments(operation: Operation, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """The call's arguments, checked against the tool's schema (``MemoryInvalid`` if they do
    not fit: an unknown or missing argument, a value of the wrong type); ``null`` is absent."""
    properties: dict[str, Any] = operation.schema["properties"]
    given = {key: value for key, value in (arguments or {}).items() if value is not None}
    unknown = sorted(set(given) - set(properties))
    if unknown:
        known = ", ".join(properties) or "none"
        raise MemoryInvalid(f"unknown argument {unknown[0]!r} (known: {known})", field=unknown[0])
    for key in operation.schema["required"]:
        if key not in given:
            raise MemoryInvalid(f"missing required argument {key!r}", field=key)
    for key, value in given.items():
        spec = properties[key]
        if not _fits(spec, value):
            kinds = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
            expected = " or ".join(_SAID[kind] for kind in kinds)
            shown = json.dumps(value, ensure_ascii=False)[:80]
            raise MemoryInvalid(f"{key} must be {expected}, not {shown}", field=key)
    return given


# -- the server ----------------------------------------------------------------------------------


def _result(value: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps(value, ensure_ascii=False)
    return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=value)


def _error(message: str, code: str) -> types.CallToolResult:
    """A call that failed: ``error [CODE]: message`` for the model, and the two as data."""
    return types.CallToolResult(
        content=[types.TextContent(text=f"error [{code}]: {message}")],
        structured_content={"error": {"code": code, "message": message}},
        is_error=True,
    )


def build_server(ns: MemoryNamespace, *, read_only: bool = False) -> Server[Any]:
    """The MCP server of namespace ``ns``: its tools, each call run in a worker thread."""
    offered = {op.name: op for op in OPERATIONS if not (read_only and op.changes)}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[op.tool() for op in offered.values()])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        operation = offered.get(params.name)
        if operation is None:
            known = ", ".join(offered)
            return _error(f"unknown tool {params.name!r} (known: {known})", "UNKNOWN_TOOL")

        def run() -> dict[str, Any]:
            with acting(Author(AUTHOR, AUTHOR)):  # one change per call (memory.history)
                return operation.call(ns, check_arguments(operation, params.arguments))

        try:
            value = await anyio.to_thread.run_sync(run)
        except MemoryStoreError as e:
            return _error(e.message, e.code)
        except Exception:
            # The tool executor: whatever a call hits goes back as an error result, and the
            # server goes on serving (the traceback to the log, on standard error).
            log.exception("the tool %s failed", params.name)
            return _error("the call failed; see the server's log", "INTERNAL")
        notice = ns.pop_quarantine()
        if notice is not None:
            print(f"warning: an unreadable file was moved aside to {notice}", file=sys.stderr)
        return _result(value)

    return Server(
        "cogito-memory",
        instructions=f"Long-term memories of the namespace {ns.name}: search before answering "
        "about the past, remember what the user wants kept.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def _serve(ns: MemoryNamespace, read_only: bool) -> None:
    server = build_server(ns, read_only=read_only)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def serve(location: str, namespace: str, *, keywords: bool = False, read_only: bool = False) -> int:
    """Serve ``namespace`` of the store at ``location`` on standard input and output until the
    client closes them; the exit status (1: the store or namespace cannot be opened)."""
    embedder: Embedder | None = None
    if not keywords and offline_available():
        embedder = OfflineEmbedder()  # search by meaning, as the bot does by default
    try:
        with open_store(location, embedder=embedder) as store:
            ns = store.namespace(namespace)
            ns.memories()  # opened now: a store that cannot be read fails before serving
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C: a clean close all the same
                anyio.run(_serve, ns, read_only)
    except MemoryStoreError as e:
        print(f"error [{e.code}]: {e.message}", file=sys.stderr)
        return 1
    return 0
