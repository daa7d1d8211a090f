"""The inbox: every update Telegram delivered, on disk until the bot has handled it.

Telegram forgets an update once the bot confirms it (``getUpdates`` with a higher ``offset``),
and python-telegram-bot confirms a batch as soon as it has queued it, before handling it. A bot
killed with a batch in its queue would lose those messages: Telegram will not send them again,
and their senders never get an answer. So every update is written here before it is queued, and
fsynced before the next ``getUpdates`` confirms it (``SyncingRequest``), or, by webhook, before
the server answers Telegram's request (``InboxQueue.put_durably``); handling it appends
a ``done`` line. On start-up the updates without one are handled again, in update order,
before any new update.

Telegram also sends an update again when the bot handled it but its confirmation never arrived
(the process died between the two). The inbox drops an update whose id it already holds, so its
effect happens once. Two windows remain, and the memory store closes the one that matters: an
update handled but killed before its ``done`` line is handled again on start-up, and
``/remember`` passes its message as the memory's ``source`` (``Namespace.add``), which stores a
given message once. Replies may then be sent twice; memories are not.

Records of the store's bot log ``inbox`` (``memory.interface.RecordLog``; in the file store,
the lines of ``data_dir/.bot/inbox.jsonl``)::

    {"update": {...the update as Telegram sent it...}, "tries": 0}
    {"start": 1234}                   its handler is about to run
    {"done": 1234}
    {"seen": [1201, ..., 1233]}       ids handled before the last compaction (the newest ones)

Poison. A message whose handling kills the process (memory exhausted, a crash in native code)
would kill it again at every start, so the inbox counts, per update, the crashes during which
it was being handled: at start-up, an update with a ``start`` and no ``done`` was in progress
when the process died, and gets a try. Only those: the hundreds waiting behind it in a backlog
were not being handled and get none, however often the bot is restarted. A clean stop (SIGTERM,
Ctrl-C) rewrites the file without its ``start`` lines (``close``), so it counts no try either.
The ``start`` line is not fsynced: a killed process's writes are in the page cache and survive
it; only a power cut can lose one, which then counts one crash fewer, never one more.
Updates of several chats are handled at once, so every update in progress at a crash gets a
try, the innocent ones with the culprit; so an update in progress during ``ALONE_AFTER``
crashes is handled alone at the next start, before anything else, and the crash that follows,
if any, is its own. One with ``MAX_TRIES`` is set aside: appended to the bot log ``poison``
(``poison.jsonl``; kept, never deleted; durable before the inbox forgets it), and ``open``
returns it so that the admins are told. A store that refuses the poison log keeps it in the
inbox, unhandled, until it can be set aside. An update whose handling ran past the handler
deadline (``bot.chat.deadlines``) is set aside the same way at once (``give_up``), with the
reason in its record.

The log is compacted (rewritten) on start-up, on a clean stop and whenever it has grown past
``COMPACT_LINES`` records. The bytes are the store's (``memory.files.records`` for files): this
module is the logic, and its methods ``_read``, ``_append``, ``_rewrite`` and ``_set_aside``
the only ones that call the logs.

A disk that refuses the inbox (full, read-only) does not stop the bot: the failure is logged
(once, until a write works again) and updates are handled as they come, as python-telegram-bot
does without an inbox; a failed append is cut back so that it never spoils the next line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from telegram import Update
from telegram._utils.types import ODVInput
from telegram.request import BaseRequest, HTTPXRequest, RequestData

from memory import RecordLog, Store
from memory.errors import MemoryStoreError

if TYPE_CHECKING:
    from telegram.ext import Application

log = logging.getLogger(__name__)

LOG = "inbox"  # the store's bot logs
POISON_LOG = "poison"
MAX_TRIES = 3  # crashes while it was being handled, after which an update is set aside
ALONE_AFTER = 2  # crashes while it was being handled, after which it is handled alone
REMEMBERED_IDS = 10_000  # handled ids kept to recognise a second delivery
COMPACT_LINES = 20_000


@dataclass(frozen=True)
class Pending:
    """An update received and not handled, with the crashes that happened while handling it."""

    update: dict[str, Any]
    tries: int

    @property
    def update_id(self) -> int:
        return int(self.update["update_id"])


@dataclass(frozen=True)
class Recovered:
    """What ``Inbox.open`` found: updates to handle again, in update order, and those set aside
    as poison (in ``poison.jsonl``) by this start."""

    again: list[Pending] = field(default_factory=list)
    set_aside: list[Pending] = field(default_factory=list)


class Inbox:
    """The updates received and not yet handled, in the record log ``log``; the poison set
    aside in ``poison``.

    Used from the event loop's thread only (``InboxQueue`` and the update processor).
    """

    def __init__(self, log: RecordLog, poison: RecordLog) -> None:
        self.log = log
        self.poison = poison
        self._pending: dict[int, dict[str, Any]] = {}  # update id -> {"update", "tries"}
        self._started: set[int] = set()  # pending ids whose handler runs (or ran, in a file)
        self._seen: OrderedDict[int, None] = OrderedDict()  # handled ids, oldest first
        self._lines = 0
        self._failing = False  # the last write failed (told once in the log)
        self._unsynced = False  # received lines written but not yet fsynced
        self._stopped = False  # closed by a clean stop

    @classmethod
    def of(cls, store: Store) -> Inbox:
        """The inbox of ``store``: its bot logs ``inbox`` and ``poison``."""
        return cls(store.bot_log(LOG), store.bot_log(POISON_LOG))

    def open(self) -> Recovered:
        """Read the log, count the crash's tries, set poison aside and compact."""
        entries = self._read()
        if entries is None:  # unreadable: left as it is, for a person to look at
            return Recovered()
        for entry in entries:  # an append a crash cut short is not among them
            if isinstance(entry, dict):
                self._apply(entry)
        recovered = Recovered()
        for update_id in sorted(self._pending):
            record = self._pending[update_id]
            if update_id in self._started:  # in progress when the process died
                record["tries"] += 1
            pending = Pending(record["update"], record["tries"])
            if pending.tries < MAX_TRIES:
                recovered.again.append(pending)
            elif self._set_aside(pending, f"in progress during {pending.tries} crashes"):
                log.error(
                    "update %s was being handled during %d crashes; set aside in the log %s: %s",
                    update_id,
                    pending.tries,
                    self.poison.name,
                    json.dumps(pending.update, ensure_ascii=False)[:500],
                )
                recovered.set_aside.append(pending)
                self._finish(update_id)
        self._started.clear()  # counted: from here on, starts of this process only
        self._compact()
        if recovered.again:
            log.warning("handling %d updates again that a stop interrupted", len(recovered.again))
        return recovered

    def knows(self, update_id: int) -> bool:
        """Whether this update was received before (pending, or handled recently)."""
        return update_id in self._pending or update_id in self._seen

    def receive(self, update: dict[str, Any]) -> None:
        """Keep ``update`` on disk until ``done``; a refusing disk is logged only.

        The line is written now and made durable by ``sync``, which runs before the next
        ``getUpdates`` (``SyncingRequest``): one fsync per batch, still before Telegram forgets.
        """
        update_id = int(update["update_id"])
        self._pending[update_id] = {"update": update, "tries": 0}
        self._append({"update": update, "tries": 0})
        self._unsynced = True

    def sync(self) -> None:
        """Make every received update durable (one fsync for all since the last call)."""
        if not self._unsynced:
            return
        self._unsynced = False
        try:
            self.log.sync()
        except MemoryStoreError as e:
            self._failed(e.message)

    def start(self, update_id: int) -> None:
        """The update's handler is about to run: a crash from now until ``done`` is a try."""
        if update_id in self._pending and not self._stopped:
            self._started.add(update_id)
            self._append({"start": update_id})

    def done(self, update_id: int) -> None:
        """The update was handled (not fsynced: losing this line only repeats a reply)."""
        if update_id in self._pending:
            self._finish(update_id)
            self._append({"done": update_id})
            if self._lines > COMPACT_LINES:
                self._compact()

    def give_up(self, update_id: int, reason: str) -> Pending | None:
        """Set ``update_id`` aside now, ``reason`` in its record (its handling ran past the
        deadline), and never handle it again; what was set aside, None if nothing was pending.
        A store that refuses the poison log keeps it pending (handled again at the next
        start, its try counted)."""
        record = self._pending.get(update_id)
        if record is None:
            return None
        pending = Pending(record["update"], record["tries"])
        if self._set_aside(pending, reason):
            log.error("update %s set aside in the log %s: %s", update_id, self.poison.name, reason)
            self._finish(update_id)
            self._append({"done": update_id})
        return pending

    def close(self) -> None:
        """A clean stop: the pending updates stay for the next start, and no try is counted
        (an update whose handling the stop cancelled did not crash the bot). A handler the
        stop interrupted may still run on in the event loop: it starts nothing more."""
        self._stopped = True
        self._started.clear()
        self._compact()
        self.log.close()
        self.poison.close()

    def _apply(self, entry: dict[str, Any]) -> None:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            if "update" in entry:
                update = entry["update"]
                update_id = int(update["update_id"])
                if update_id not in self._seen:
                    self._pending[update_id] = {"update": update, "tries": int(entry["tries"])}
            elif "start" in entry:
                if int(entry["start"]) in self._pending:
                    self._started.add(int(entry["start"]))
            elif "done" in entry:
                self._finish(int(entry["done"]))
            elif "seen" in entry:
                for update_id in entry["seen"]:
                    self._remember(int(update_id))

    def _finish(self, update_id: int) -> None:
        self._pending.pop(update_id, None)
        self._started.discard(update_id)
        self._remember(update_id)

    def _remember(self, update_id: int) -> None:
        self._seen[update_id] = None
        self._seen.move_to_end(update_id)
        while len(self._seen) > REMEMBERED_IDS:
            self._seen.popitem(last=False)

    def _compact(self) -> None:
        """Rewrite the file: the handled ids, the pending updates and the starts in progress."""
        entries = [
            {"seen": list(self._seen)},
            *self._pending.values(),
            *({"start": update_id} for update_id in sorted(self._started)),
        ]
        self._rewrite(entries)

    # -- the logs (the only methods that call them) ------------------------------------------

    def _read(self) -> list[Any] | None:
        try:
            return self.log.read()
        except MemoryStoreError as e:
            self._failed(e.message)
            return None

    def _rewrite(self, entries: list[dict[str, Any]]) -> None:
        try:
            self.log.rewrite(entries)
        except MemoryStoreError as e:
            self._failed(e.message)
            return
        self._succeeded()
        self._lines = len(entries)

    def _append(self, entry: dict[str, Any]) -> None:
        try:
            self.log.append(entry)
        except MemoryStoreError as e:
            self._failed(e.message)
            return
        self._succeeded()
        self._lines += 1

    def _set_aside(self, pending: Pending, reason: str) -> bool:
        """Append ``pending`` to the poison log, durably; whether that worked."""
        entry = {
            "update": pending.update,
            "tries": pending.tries,
            "set_aside": datetime.now(UTC).isoformat(timespec="seconds"),
            "reason": reason,
        }
        try:
            self.poison.append(entry, durable=True)
        except MemoryStoreError as e:
            log.error(
                "could not set update %s aside (%s); it stays in the inbox, unhandled",
                pending.update_id,
                e.message,
            )
            return False
        return True

    def _failed(self, reason: str) -> None:
        """The store refused: go on without durability, and say so once."""
        self.log.close()
        if not self._failing:
            log.warning("%s; updates are handled without the inbox until it works again", reason)
        self._failing = True

    def _succeeded(self) -> None:
        if self._failing:
            log.info("the inbox (log %s) can be written again", self.log.name)
        self._failing = False


class SyncingRequest(HTTPXRequest):
    """The ``getUpdates`` connection: syncs the inbox before each call.

    A ``getUpdates`` with a higher offset is how Telegram learns that the previous batch
    arrived; after that it never sends those updates again. Syncing here, rather than once per
    update, costs one fsync per batch and keeps the promise: on disk before Telegram forgets.
    """

    def __init__(self, inbox: Inbox) -> None:
        super().__init__(connection_pool_size=1)  # python-telegram-bot's own for getUpdates
        self._inbox = inbox

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """Sync the inbox, then make the request."""
        self._inbox.sync()
        return await super().do_request(
            url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
        )


class InboxQueue(asyncio.Queue[object]):
    """The Application's update queue: an update is in the inbox before it is queued.

    python-telegram-bot's ``Updater`` puts each update of a batch here, then confirms the batch
    with its next ``getUpdates``; so a queued update is on disk before Telegram forgets it. An
    update the inbox already knows (Telegram sending it again) is not queued.
    """

    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox

    async def put(self, item: object) -> None:
        """Keep ``item`` in the inbox (if it is an update) and queue it, unless known."""
        if isinstance(item, Update) and not self._receive(item.update_id, item.to_dict()):
            return
        await super().put(item)

    async def put_durably(self, update: Update, raw: dict[str, Any]) -> None:
        """Keep ``update`` (``raw``: as Telegram sent it) in the inbox, fsynced, then queue
        it, unless known: a webhook answers Telegram after this (``bot.chat.webhook``)."""
        if self._receive(update.update_id, raw):
            self.inbox.sync()
            await super().put(update)

    def _receive(self, update_id: int, raw: dict[str, Any]) -> bool:
        """Keep the update in the inbox; False if it was received before (a second delivery)."""
        if self.inbox.knows(update_id):
            log.info("update %s delivered again; already received", update_id)
            return False
        self.inbox.receive(raw)
        return True

    def recover(self) -> Recovered:
        """Open the inbox (``Inbox.open``): what a stop interrupted, and what it set aside."""
        return self.inbox.open()

    async def replay(
        self, application: Application[Any, Any, Any, Any, Any, Any], again: list[Pending]
    ) -> None:
        """Handle ``again`` (``recover``): first, one at a time, the updates in progress during
        ``ALONE_AFTER`` crashes, so that a crash in one is its own; then queue the others."""
        for pending in again:
            if pending.tries >= ALONE_AFTER:
                log.warning(
                    "update %s was being handled during %d crashes; handling it alone",
                    pending.update_id,
                    pending.tries,
                )
                update = Update.de_json(pending.update, application.bot)
                await application.update_processor.process_update(
                    update, application.process_update(update)
                )
        for pending in again:
            if pending.tries < ALONE_AFTER:
                await super().put(Update.de_json(pending.update, application.bot))

    def give_up(self, update: object, reason: str) -> Pending | None:
        """``update`` ran past the handler deadline: set aside (``Inbox.give_up``)."""
        if isinstance(update, Update):
            return self.inbox.give_up(update.update_id, reason)
        return None

    def start(self, update: object) -> None:
        """``update``'s handler is about to run (called by the update processor)."""
        if isinstance(update, Update):
            self.inbox.start(update.update_id)

    def done(self, update: object) -> None:
        """``update`` was handled (called by the update processor)."""
        if isinstance(update, Update):
            self.inbox.done(update.update_id)
