"""``python -m memory``: the store's operations from a shell.

    python -m memory (--data-dir DIR | --store URL) --ns users/42 [--json] COMMAND ...

``--store`` is the general form of ``--data-dir``: a data directory, ``file:///path``, or (once
there is that backend) ``postgresql://...``. The command line knows only the store interface
(``memory.interface``), so it works alike on every backend.

Commands: ``add``, ``search``, ``list``, ``get``, ``update``, ``delete``, ``stats``, ``related``,
``import``, ``export``, ``repair``; and ``python -m memory migrate --from SOURCE --to TARGET``
copies a whole store into another (``memory.migrate``). With ``--json`` every command prints
JSON (memories with the article's keys; search and related hits with an added ``score``),
otherwise a readable table.
Errors go to stderr as ``error [CODE]: message`` with exit status 1 (2 for a malformed command
line).

``import`` is all or nothing: a file that does not parse, or holds one invalid record, is refused
whole, and the message points to ``repair``. ``repair [FILE]`` reads every memory that can still
be read out of a damaged file (``memory.salvage``; by default the namespace's newest
``memory.json.corrupt-*``, where an unreadable ``memory.json`` was moved) and adds them as
``import`` does: ids kept, ids already present skipped. It says how many it recovered, how many
were already there and how many parts it could not read (and on which lines).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory.errors import MemoryInvalid, MemoryStoreError
from memory.files import parse_json
from memory.interface import MemoryNamespace, open_store
from memory.model import Hit, Memory, Stats
from memory.namespace import RANKERS
from memory.salvage import salvage

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
    return parser


def run(args: argparse.Namespace, ns: MemoryNamespace) -> Any:
    """Carry out one command; returns what to print."""
    match args.command:
        case "add":
            return ns.add(args.content, args.tags, args.category)
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
            return {"imported": _import(ns, args.file)}
        case "export":
            return ns.export()
        case "repair":
            return _repair(ns, args.file)
    raise AssertionError(args.command)  # argparse allows no other command


def _limit(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise MemoryInvalid(f"limit must be a whole number, not {text!r}", field="limit") from None


def _import(ns: MemoryNamespace, path: Path) -> int:
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
    try:
        return ns.import_memories(records)
    except MemoryInvalid as e:
        raise MemoryInvalid(f"{e.message}; {hint}", field=e.field) from e


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


def to_json(value: Any) -> Any:
    """The JSON form of a command's result."""
    if isinstance(value, Memory | Hit | Stats):
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
    if isinstance(value, tuple):
        return "-".join(map(str, value)) if value[0] != value[-1] else str(value[0])
    return str(value)


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
    try:
        with open_store(args.store or args.data_dir) as store:
            ns = store.namespace(args.ns)
            result = run(args, ns)
            notice = ns.pop_quarantine()
    except MemoryStoreError as e:
        print(f"error [{e.code}]: {e.message}", file=sys.stderr)
        return 1
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
