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
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any, Concatenate, ParamSpec, TypeVar
from zoneinfo import ZoneInfo

from bot.core.dating import day_asked, on_day
from bot.core.policy import Caller
from bot.errors import NotAllowed
from memory.interface import MemoryNamespace, Store
from memory.model import Hit, Memory, Stats, parse_id, parse_limit

RECALL_LIMIT = 5
RELATED_LIMIT = 5
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
) -> Memory:
    """Store a new memory (a ``source`` already stored returns that memory instead)."""
    return namespace.add(content, tags, category, source=source)


def recall(
    namespace: MemoryNamespace,
    query: str,
    limit: object = RECALL_LIMIT,
    *,
    zone: ZoneInfo | None = None,
) -> list[Memory]:
    """The best matches for ``query``, best first; a blank query: the newest memories.

    A question about a relative day ("what did I save today", "昨天记了什么") has the memories
    stored that day (in ``zone``, UTC by default) or speaking of it first (``bot.core.dating``).
    """
    count = parse_limit(limit)
    if query.strip():
        found = [hit.memory for hit in namespace.search(query, count)]
        zone = zone or ZoneInfo("UTC")
        day = day_asked(query, datetime.now(UTC), zone)
        if day is None:
            return found
        that_day = on_day(namespace.memories(), day, zone)
        ids = {m.id for m in that_day}
        return [*that_day, *(m for m in found if m.id not in ids)][:count]
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
    (where it came from: chat, message and author ids, which are bookkeeping)."""
    record = memory.to_dict()
    record.pop("source", None)
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
