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

Every change is recorded in the namespace's history by the store itself, with who acts
(``memory.history.current_author``, set once per update by ``bot.chat.access.gatekeeper``), so
no door needs to remember to; ``undo``, ``memory_history`` and ``restore_version`` work on it.
``Operations`` carries the context of the calling task into its worker threads, so the author
goes along.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Concatenate, ParamSpec, TypeVar

from bot.core.policy import Caller
from bot.errors import NotAllowed
from memory import history
from memory.errors import MemoryNotFound
from memory.history import ChangeRecord, History, Undone
from memory.interface import MemoryNamespace, SearchStatus, Store
from memory.model import Hit, Memory, Stats, parse_id, parse_limit

RECALL_LIMIT = 5
# Every search of the bot fuses keywords with meaning when the store has an embedder; without
# one (or while it fails) "hybrid" is exactly the keyword ranking (``memory.hybrid``).
SEARCH_RANKER = "hybrid"
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


def recall(namespace: MemoryNamespace, query: str, limit: object = RECALL_LIMIT) -> list[Memory]:
    """The best matches for ``query``, best first; a blank query: the newest memories."""
    count = parse_limit(limit)
    if query.strip():
        return [hit.memory for hit in namespace.search(query, count, ranker=SEARCH_RANKER)]
    return namespace.memories()[-count:][::-1]


def search(namespace: MemoryNamespace, query: str, limit: object = 10) -> list[Hit]:
    """The best matches for ``query`` with their scores (the model's ``searchMemory``)."""
    return namespace.search(query, parse_limit(limit), ranker=SEARCH_RANKER)


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


def search_status(namespace: MemoryNamespace) -> SearchStatus:
    """How searches work now: keywords only, or keywords and meaning (and how far embedded)."""
    return namespace.search_status()


def public_record(memory: Memory) -> dict[str, Any]:
    """A memory as the outside sees it: the article's record, without the bot's ``source``
    (where it came from: chat, message and author ids, which are bookkeeping)."""
    record = memory.to_dict()
    record.pop("source", None)
    return record


def export(namespace: MemoryNamespace) -> list[dict[str, Any]]:
    """Every memory as an article-format record (``public_record``), in stored order."""
    return [public_record(memory) for memory in namespace.memories()]


# -- history and undo (memory.history) ----------------------------------------------------------


def _refuse(records: list[ChangeRecord]) -> NotAllowed:
    memory = next(m for r in records for m in (r.after, r.before) if m is not None)
    return NotAllowed(memory)


def undo(
    namespace: MemoryNamespace, caller: Caller, *, chat: int | None, change: str | None = None
) -> tuple[Undone | None, History]:
    """Revert ``change``, or without it the caller's newest change in ``chat`` not undone yet
    (``Caller.may_undo``: in a group a member's own, an administrator's anyone's); None when
    there is nothing to undo (or ``change`` is unknown, too old or undone already), with the
    history it was read from. ``NotAllowed`` if ``change`` is not the caller's to undo."""
    found = namespace.history()
    if change is None:
        change = found.last_change(chat=chat, may_undo=caller.may_undo)
        if change is None:
            return None, found
    records = found.change(change)
    if not records or change in found.undone():
        return None, found
    if not all(caller.may_undo(r.author.by) for r in records):
        raise _refuse(records)
    return history.undo(namespace, found, change), found


def memory_history(
    namespace: MemoryNamespace, value: object | None
) -> tuple[History, Memory | None]:
    """The history of the memory whose id is ``value`` (all of it without one), and the memory
    as it is now (None: deleted, or no id)."""
    if value is None:
        return namespace.history(), None
    memory_id = parse_id(value)
    found = namespace.history(memory_id)
    try:
        current: Memory | None = namespace.get(memory_id)
    except MemoryNotFound:
        if not found.records:
            raise
        current = None
    return found, current


def restore_version(namespace: MemoryNamespace, caller: Caller, ref: str) -> Memory | None:
    """Put back the version of a memory that the record ``ref`` left (for a deletion: the
    memory as it was), if the caller may change it; None if there is no such record."""
    record = namespace.history().find(ref)
    if record is None:
        return None
    version = record.after if record.after is not None else record.before
    if version is None:
        return None
    try:
        current: Memory | None = namespace.get(record.memory_id)
    except MemoryNotFound:
        current = None
    if not caller.may_change(current if current is not None else version):
        raise NotAllowed(version)
    return namespace.restore(version)


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
        # The context goes along: who acts (``memory.history.current_author``) is in it.
        context = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(self._pool, context.run, call)

    async def call(self, work: Callable[[], T]) -> T:
        """Any other store work (documents, several namespaces) in a worker thread."""
        context = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(self._pool, context.run, work)

    def close(self) -> None:
        """Wait for the calls in progress and let the threads go."""
        self._pool.shutdown(wait=True)
