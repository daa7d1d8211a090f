"""The inbox: every update Telegram delivered, on disk until the bot has handled it.

Telegram forgets an update once the bot confirms it (``getUpdates`` with a higher ``offset``),
and python-telegram-bot confirms a batch as soon as it has queued it, before handling it. A bot
killed with a batch in its queue would lose those messages: Telegram will not send them again,
and their senders never get an answer. So every update is written here before it is queued, and
fsynced before the next ``getUpdates`` confirms it (``SyncingRequest``); handling it appends
a ``done`` line. On start-up the updates without one are handled again, in update order,
before any new update.

Telegram also sends an update again when the bot handled it but its confirmation never arrived
(the process died between the two). The inbox drops an update whose id it already holds, so its
effect happens once. Two windows remain, and the memory store closes the one that matters: an
update handled but killed before its ``done`` line is handled again on start-up, and
``/remember`` passes its message as the memory's ``source`` (``Namespace.add``), which stores a
given message once. Replies may then be sent twice; memories are not.

Lines of ``inbox.jsonl`` (in ``data_dir/.bot/``)::

    {"update": {...the update as Telegram sent it...}, "tries": 0}
    {"done": 1234}
    {"seen": [1201, ..., 1233]}       ids handled before the last compaction (the newest ones)

An update that was being handled during ``MAX_TRIES`` crashes in a row is dropped with an error
in the log, so that one poisonous message cannot keep the bot from starting. The file is
compacted on start-up and whenever it has grown past ``COMPACT_LINES`` lines.

A disk that refuses the inbox (full, read-only) does not stop the bot: the failure is logged
(once, until a write works again) and updates are handled as they come, as python-telegram-bot
does without an inbox; a failed append is cut back so that it never spoils the next line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

from telegram import Bot, Update
from telegram._utils.types import ODVInput
from telegram.request import BaseRequest, HTTPXRequest, RequestData

from memory.errors import MemorySaveFailed
from memory.files import (
    append_bytes,
    fsync_dir,
    parse_json,
    remove_stale_temporaries,
    write_bytes_atomic,
)

log = logging.getLogger(__name__)

FOLDER = ".bot"
FILE = "inbox.jsonl"
MAX_TRIES = 3
REMEMBERED_IDS = 10_000  # handled ids kept to recognise a second delivery
COMPACT_LINES = 20_000


class Inbox:
    """The updates received and not yet handled, in ``folder/inbox.jsonl``.

    Used from the event loop's thread only (``InboxQueue`` and the update processor).
    """

    def __init__(self, folder: Path) -> None:
        self.path = folder / FILE
        self._pending: dict[int, dict[str, Any]] = {}  # update id -> {"update", "tries"}
        self._seen: OrderedDict[int, None] = OrderedDict()  # handled ids, oldest first
        self._fd: int | None = None
        self._lines = 0
        self._failing = False  # the last write failed (told once in the log)
        self._unsynced = False  # received lines written but not yet fsynced

    def open(self) -> list[dict[str, Any]]:
        """Read the file and compact it; the updates to handle again, in update order."""
        remove_stale_temporaries(self.path.parent)  # compactions a kill interrupted
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            data = b""
        except OSError as e:
            self._failed(f"could not read {self.path}: {e.strerror or e}")
            return []
        for line in data.splitlines():
            try:
                entry = parse_json(line)
            except ValueError:
                continue  # an append cut short by the crash: never acknowledged
            if isinstance(entry, dict):
                self._apply(entry)
        replay: list[dict[str, Any]] = []
        for update_id in sorted(self._pending):
            record = self._pending[update_id]
            if record["tries"] >= MAX_TRIES:
                log.error(
                    "update %s was being handled during %d crashes in a row; dropped: %s",
                    update_id,
                    record["tries"],
                    json.dumps(record["update"], ensure_ascii=False)[:500],
                )
                self._finish(update_id)
                continue
            record["tries"] += 1
            replay.append(record["update"])
        self._compact()
        if replay:
            log.warning("handling %d updates again that a stop interrupted", len(replay))
        return replay

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
        self._write({"update": update, "tries": 0}, durable=False)
        self._unsynced = True

    def sync(self) -> None:
        """Make every received update durable (one fsync for all since the last call)."""
        if not self._unsynced or self._fd is None:
            return
        self._unsynced = False
        try:
            os.fdatasync(self._fd)
        except OSError as e:
            self._failed(f"could not sync {self.path}: {e.strerror or e}")

    def done(self, update_id: int) -> None:
        """The update was handled (not fsynced: losing this line only repeats a reply)."""
        if update_id in self._pending:
            self._finish(update_id)
            self._write({"done": update_id}, durable=False)
            if self._lines > COMPACT_LINES:
                self._compact()

    def close(self) -> None:
        """Close the file (the pending updates stay in it for the next start)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _apply(self, entry: dict[str, Any]) -> None:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            if "update" in entry:
                update = entry["update"]
                update_id = int(update["update_id"])
                if update_id not in self._seen:
                    self._pending[update_id] = {"update": update, "tries": int(entry["tries"])}
            elif "done" in entry:
                self._finish(int(entry["done"]))
            elif "seen" in entry:
                for update_id in entry["seen"]:
                    self._remember(int(update_id))

    def _finish(self, update_id: int) -> None:
        self._pending.pop(update_id, None)
        self._remember(update_id)

    def _remember(self, update_id: int) -> None:
        self._seen[update_id] = None
        self._seen.move_to_end(update_id)
        while len(self._seen) > REMEMBERED_IDS:
            self._seen.popitem(last=False)

    def _compact(self) -> None:
        """Rewrite the file with the pending updates and the handled ids only."""
        self.close()
        entries = [{"seen": list(self._seen)}, *self._pending.values()]
        data = b"".join(_line(entry) for entry in entries)
        try:
            write_bytes_atomic(self.path, data)
        except MemorySaveFailed as e:
            self._failed(e.message)
            return
        self._succeeded()
        self._lines = len(entries)

    def _write(self, entry: dict[str, Any], *, durable: bool) -> None:
        data = _line(entry)
        size: int | None = None
        try:
            if self._fd is None:
                new = not self.path.exists()
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                if new:
                    fsync_dir(self.path.parent)
            size = os.lseek(self._fd, 0, os.SEEK_END)
            append_bytes(self._fd, data, durable=durable)
        except OSError as e:
            if self._fd is not None and size is not None:
                with contextlib.suppress(OSError):  # a full disk can still shrink a file
                    os.ftruncate(self._fd, size)
            self._failed(f"could not write {self.path}: {e.strerror or e}")
            return
        self._succeeded()
        self._lines += 1

    def _failed(self, reason: str) -> None:
        """The disk refused: go on without durability, and say so once."""
        self.close()
        if not self._failing:
            log.warning("%s; updates are handled without the inbox until it works again", reason)
        self._failing = True

    def _succeeded(self) -> None:
        if self._failing:
            log.info("the inbox %s can be written again", self.path)
        self._failing = False


def _line(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


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
        if isinstance(item, Update):
            if self.inbox.knows(item.update_id):
                log.info("update %s delivered again; already received", item.update_id)
                return
            self.inbox.receive(item.to_dict())
        await super().put(item)

    async def replay(self, bot: Bot) -> int:
        """Queue the updates a stop interrupted (``Inbox.open``); how many."""
        updates = self.inbox.open()
        for data in updates:
            await super().put(Update.de_json(data, bot))
        return len(updates)

    def done(self, update: object) -> None:
        """``update`` was handled (called by the update processor)."""
        if isinstance(update, Update):
            self.inbox.done(update.update_id)
