"""The worker threads that run the bot's store calls, off the event loop.

Store calls block (an fsync, a cold namespace's index build: seconds at 100,000 memories), so
no door makes them on the event loop: ``Workers.run`` runs an operation of
``bot.core.operations`` (any function of a namespace) in a small pool of threads, and one
chat's slow call delays no other chat; ``Workers.call`` runs any other store work.

Every change is recorded in the namespace's history with who acts
(``memory.history.current_author``, set once per update by ``bot.chat.access.gatekeeper``):
``Workers`` carries the context of the calling task into its threads, so the author goes along.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Concatenate, ParamSpec, TypeVar

from memory.interface import MemoryNamespace, Store

WORKERS = 4  # threads for store calls: enough for a few slow ones beside quick ones

P = ParamSpec("P")
T = TypeVar("T")


class Workers:
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
