"""The memory operations of the bot: one set for commands, buttons, the model's tools and jobs.

Each operation is a plain function of a namespace (``memory.interface.MemoryNamespace``) and,
when it changes a memory that exists, of the ``Caller`` (``bot.core.policy``). It reads what
people type with the library's own parsers (``memory.model.parse_id``, ``parse_limit``),
applies the one permission rule (``Caller.may_change``; ``bot.errors.NotAllowed`` when it
refuses), and returns memory values; what a reply looks like is the door's business. The one
outside view of a memory, without the bot's bookkeeping (``source``), is ``public_record``.

Store calls block (an fsync, a cold namespace's index build: seconds at 100,000 memories), so
the doors never make them on the event loop: ``Operations.run`` runs an operation in a small
pool of worker threads, and one chat's slow call delays no other chat. The model's tools call
the same functions from the turn's own worker thread.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate, ParamSpec, TypeVar

from bot.core.policy import Caller
from bot.errors import NotAllowed
from memory.interface import MemoryNamespace, Store
from memory.model import Hit, Memory, Stats, parse_id, parse_limit

RECALL_LIMIT = 5
RELATED_LIMIT = 5
BOT_FIELDS = ("source", "attachment", "origin")  # the bot's own keys of a memory's record
WORKERS = 4  # threads for store calls: enough for a few slow ones beside quick ones

P = ParamSpec("P")
T = TypeVar("T")


def find(namespace: MemoryNamespace, value: object) -> Memory:
    """The memory whose id is ``value`` as typed (``MemoryInvalid``, ``MemoryNotFound``)."""
    return namespace.get(parse_id(value))


def find_changeable(namespace: MemoryNamespace, caller: Caller, value: object) -> Memory:
    """Like ``find``, for a memory about to change: ``NotAllowed`` if the caller may not."""
    memory = find(namespace, value)
    if not caller.may_change(memory):
        raise NotAllowed(memory)
    return memory


def remember(
    namespace: MemoryNamespace,
    content: str,
    tags: Iterable[str] | str = (),
    category: str | None = None,
    *,
    source: str | None = None,
    attachment: Mapping[str, Any] | None = None,
    origin: Mapping[str, Any] | None = None,
) -> Memory:
    """Store a new memory (a ``source`` already stored returns that memory instead), with the
    file it was made from (``attachment``) and a forward's ``origin`` when given."""
    return namespace.add(
        content, tags, category, source=source, attachment=attachment, origin=origin
    )


def from_source(namespace: MemoryNamespace, source: str) -> Memory | None:
    """The memory stored from the message ``source`` names (``remember``'s), if any."""
    return next((m for m in namespace.memories() if m.source == source), None)


def browse(namespace: MemoryNamespace, query: str, limit: object = RECALL_LIMIT) -> list[Memory]:
    """Like ``recall``, without counting as an access (inline queries run on every keystroke)."""
    count = parse_limit(limit)
    if query.strip():
        return [hit.memory for hit in namespace.search(query, count, touch=False)]
    return namespace.memories()[-count:][::-1]


def recall(namespace: MemoryNamespace, query: str, limit: object = RECALL_LIMIT) -> list[Memory]:
    """The best matches for ``query``, best first; a blank query: the newest memories."""
    count = parse_limit(limit)
    if query.strip():
        return [hit.memory for hit in namespace.search(query, count)]
    return namespace.memories()[-count:][::-1]


def search(namespace: MemoryNamespace, query: str, limit: object = 10) -> list[Hit]:
    """The best matches for ``query`` with their scores (the model's ``searchMemory``)."""
    return namespace.search(query, parse_limit(limit))


def forget(namespace: MemoryNamespace, caller: Caller, value: object) -> Memory:
    """Delete the memory whose id is ``value``, if the caller may; the deleted memory."""
    return namespace.delete(find_changeable(namespace, caller, value).id)


def edit(
    namespace: MemoryNamespace,
    caller: Caller,
    value: object,
    *,
    content: str | None = None,
    tags: Iterable[str] | str | None = None,
    category: str | None = None,
) -> Memory:
    """Change the memory whose id is ``value``, if the caller may; the changed memory."""
    memory = find_changeable(namespace, caller, value)
    return namespace.update(memory.id, content=content, tags=tags, category=category)


def related(
    namespace: MemoryNamespace, value: object, limit: object = RELATED_LIMIT
) -> tuple[Memory, list[Memory]]:
    """The memory whose id is ``value`` and the memories related to it, best first."""
    memory = find(namespace, value)
    return memory, [hit.memory for hit in namespace.related(memory.id, parse_limit(limit))]


def listing(namespace: MemoryNamespace, category: str | None = None) -> list[Memory]:
    """Every memory (or one category's), newest first."""
    return namespace.memories(category)[::-1]


def stats(namespace: MemoryNamespace) -> Stats:
    """Totals by category, the most used tags and the most accessed memories."""
    return namespace.stats()


def public_record(memory: Memory) -> dict[str, Any]:
    """A memory as the outside sees it: the article's record, without the bot's ``source``
    (where it came from: chat, message and author ids, which are bookkeeping), ``attachment``
    (a Telegram file reference, valid for this bot only) and ``origin``."""
    record = memory.to_dict()
    for key in BOT_FIELDS:
        record.pop(key, None)
    return record


def export(namespace: MemoryNamespace) -> list[dict[str, Any]]:
    """Every memory as an article-format record (``public_record``), in stored order."""
    return [public_record(memory) for memory in namespace.memories()]


class Operations:
    """Runs operations for the doors, off the event loop, on the bot's store."""

    def __init__(self, store: Store, *, workers: int = WORKERS) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="store")

    async def run(
        self,
        namespace: str,
        operation: Callable[Concatenate[MemoryNamespace, P], T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """``operation(<namespace>, *args, **kwargs)`` in a worker thread."""
        call = functools.partial(operation, self.store.namespace(namespace), *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    async def call(self, work: Callable[[], T]) -> T:
        """Any other store work (documents, several namespaces) in a worker thread."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, work)

    def close(self) -> None:
        """Wait for the calls in progress and let the threads go."""
        self._pool.shutdown(wait=True)
