"""The handler deadline: an update still being handled after it is cut short and set aside.

A handler that hangs (a model that never answers, a request stuck on a dead connection, a bug
awaiting what never comes) would hold its chat for ever: within one process its lane
(``bot.chat.updates``), across replicas its lease, which a heartbeat renews while the handler
runs (``bot.chat.lanes``). So the handling of every update, model turns included, gets
``[telegram] handler_deadline_seconds`` (300 by default): past it, ``within`` cancels it, and
the caller sets the update aside as one that crashed the bot repeatedly would be (kept for a
person, never handled again: the inbox's poison log, or the queue's ``set_aside``), tells the
admins, and goes on with the chat's next update.

Cancelling is asking. A handler that swallows the cancellation runs on: ``within`` waits
``CANCEL_GRACE`` seconds more for it, then leaves it and returns (logged), and the chat goes on
without it; across replicas the heartbeat has stopped renewing the lane's lease by then, so
that, whatever happens to this replica's lane, the lease runs out and the chat moves. Store
calls a handler had started in a thread finish there, as after any cancellation (each is
atomic); a reply it was sending may or may not have reached Telegram.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

log = logging.getLogger(__name__)

CANCEL_GRACE = 5.0  # seconds a cancelled handler gets to end before it is left running


def reason(seconds: float) -> str:
    """Why an update past the deadline was set aside, as its record keeps it."""
    return f"still being handled after {seconds:g} s, the handler deadline"


async def within(handling: Awaitable[Any], seconds: float, what: str) -> bool:
    """Await ``handling`` for at most ``seconds``: True if it ended in time (raising what it
    raised), False if it was cancelled at the deadline (``what`` names it in the log).

    Cancelled from outside (a stop), it cancels ``handling`` and waits for it, as awaiting it
    directly would, up to ``CANCEL_GRACE``.
    """
    task = asyncio.ensure_future(handling)
    try:
        await asyncio.wait({task}, timeout=seconds)
    except asyncio.CancelledError:
        await _cancel(task, what)
        raise
    if task.done():
        task.result()
        return True
    log.error("%s: still being handled after %g s, the deadline; cancelled", what, seconds)
    await _cancel(task, what)
    return False


async def _cancel(task: asyncio.Future[Any], what: str) -> None:
    """Cancel ``task`` and wait for it, at most ``CANCEL_GRACE``; left running after that."""
    task.cancel()
    await asyncio.wait({task}, timeout=CANCEL_GRACE)
    # Whenever it ends, what it raised is read here rather than logged as never retrieved.
    task.add_done_callback(_retrieved)
    if not task.done():
        log.error(
            "%s ignores its cancellation: left running after %g s more; its chat goes on",
            what,
            CANCEL_GRACE,
        )


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("a handler cut short raised as it ended", exc_info=task.exception())
