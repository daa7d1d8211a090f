"""What a replica's update queue costs per update (issue 28): one round trip under load, two
alone, counted on the wire (``bench.pg_trips``) between a real replica and the session's
PostgreSQL.

An update is kept, its chat's lane claimed in the same statement when no replica holds it, and
after it is handled one statement marks it done and starts the chat's next one, or gives the
lane back. A replica sends the two together where it can (``bot.chat.steps``): an update's
advance rides on the next update received, so under load an update costs the queue one round
trip; alone (nothing received within ``linger``) two. Polling finds nothing to do here (a
minute apart, and every update is received by this replica), so what is counted is the hot path
alone. A count is behaviour, not a timing: it is asserted exactly where the test controls the
load. The ``/remember`` itself costs one more, its write (sent conditional on the version held:
``memory.pg.change``): the statement that started the update also read its namespace's
version, which the replica holds (it handled the chat's last update), so its reads ask nothing
(one view per update, starting there: ``memory.views``); the chat's time zone is not read for
a note that names no time. Two round trips per ``/remember`` under load, three alone (five
before issue 28's work on them).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg

from bench.fakes.telegram_server import TOKEN, FakeBotAPI
from bench.pg_server import Server
from bench.pg_trips import TripCounter, counting
from bot.chat.app import build_application
from bot.chat.lanes import SharedUpdates
from bot.chat.running import serving
from bot.config import parse_config
from memory import open_store
from memory.pg import PgStore


@asynccontextmanager
async def counted_replica(
    telegram: FakeBotAPI, pg_url: str, tmp_path: Path, counter: TripCounter
) -> AsyncIterator[SharedUpdates]:
    """A replica whose database is reached through ``counter``, polling once a minute."""
    config = parse_config(
        {
            "data_dir": str(tmp_path / "data"),
            "storage": pg_url,
            "telegram": {"token": TOKEN, "base_url": telegram.base_url, "flood_control": False},
            "replicas": {"lease_seconds": 60, "poll_seconds": 60, "identity": "counted"},
        },
        base_dir=tmp_path,
    )
    store = open_store(counter.url(pg_url))
    assert isinstance(store, PgStore)
    application = build_application(config, store, None, jobs=False)
    shared = application.update_queue
    assert isinstance(shared, SharedUpdates)
    async with serving(application, poll_timeout=None):
        yield shared


class Polls:
    """How many times ``shared`` claimed a lane by polling or renewed a lease (each one queue
    round trip): the poll fires once a minute and a lane held 20 s renews its lease, so a slow
    machine may see one inside a test; neither is any update's."""

    def __init__(self, shared: SharedUpdates) -> None:
        self.count = 0
        queue: Any = shared.queue
        for name in ("claim", "renew"):
            setattr(queue, name, self._counted(getattr(queue, name)))

    def _counted(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            self.count += 1
            return call(*args, **kwargs)

        return counted


def taken(telegram: FakeBotAPI) -> list[dict[str, Any]]:
    updates = list(telegram.updates)
    telegram.updates.clear()
    return updates


def mentions(text: str) -> Callable[[Any], bool]:
    return lambda call: text in call.text


async def answered(telegram: FakeBotAPI, count: int) -> None:
    await telegram.wait("sendMessage", count=count, timeout=60, where=lambda c: "note" in c.text)


async def settled(pg_url: str) -> None:
    """Wait until every update is handled and every lane given back (asked directly, not
    through the counter)."""
    with psycopg.connect(pg_url, autocommit=True) as connection:
        for _ in range(600):
            row = connection.execute(
                "SELECT (SELECT count(*) FROM bot_lanes)"
                " + (SELECT count(*) FROM bot_updates WHERE state = 'waiting')"
            ).fetchone()
            if row == (0,):
                return
            await asyncio.sleep(0.05)
    raise AssertionError("lanes still in progress")


async def one_message(
    telegram: FakeBotAPI, replica: SharedUpdates, user: dict[str, Any], note: str
) -> None:
    """``/remember note <note>`` from ``user``, received by ``replica``; back once answered."""
    telegram.send(f"/remember note {note}", user=user)
    (update,) = taken(telegram)
    await replica.accept(update)
    await telegram.wait("sendMessage", timeout=60, where=mentions(note))


async def handled_all(replica: SharedUpdates) -> None:
    """Wait until no update is being handled: every advance is then with ``replica.steps``."""
    for _ in range(600):
        if not replica.handling and replica.steps.pending:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("updates still being handled")


async def test_a_remember_costs_two_round_trips_under_load_and_three_alone(
    telegram: FakeBotAPI, pg_server: Server, pg_url: str, tmp_path: Path
) -> None:
    users = [FakeBotAPI.user(2000 + n, f"U{n}") for n in range(4)]
    with counting(pg_server.folder) as counter:
        async with counted_replica(telegram, pg_url, tmp_path, counter) as replica:
            for user in users:  # a first message each: the namespaces made, connections too
                telegram.send("/remember note warm-up", user=user)
            for update in taken(telegram):
                await replica.accept(update)
            await answered(telegram, len(users))
            await settled(pg_url)

            # One at a time, as a person writes: each advance goes alone after ``linger``,
            # each lane claimed and given back.
            polls = Polls(replica)
            before, all_before = counter.counts()["queue"], counter.counts()
            for i in range(3):
                for user in users:
                    await one_message(telegram, replica, user, f"{i} alone")
                    await settled(pg_url)
            alone = counter.counts()["queue"] - before - polls.count
            assert alone == 2 * 3 * len(users), f"{alone} round trips for {3 * len(users)}"
            # The handling: no catch-up (the view starts at the version held), the write.
            spent = counter.counts()
            spent.subtract(all_before)
            handled = 3 * len(users)
            assert spent["namespace"] == handled, f"{spent['namespace']} for {handled}"
            assert spent["documents"] == 0

            # Under load: the next update comes before an advance has lingered long enough
            # to go alone (made certain here: it lingers a minute), and carries it.
            replica.steps.linger = 60.0
            before, namespace_before = counter.counts()["queue"], counter.counts()["namespace"]
            polls.count = 0
            for i in range(3):
                for user in users:
                    await one_message(telegram, replica, user, f"{i} busy")
            await handled_all(replica)
            await replica.steps.flush()  # the last advance: nothing comes to carry it
            await settled(pg_url)
            busy = counter.counts()["queue"] - before - polls.count
            handled = 3 * len(users)
            assert busy == handled + 1, f"{busy} round trips for {handled}"
            spent = counter.counts()["namespace"] - namespace_before
            assert spent == handled, f"{spent} for {handled}"

            # Many at once, every chat's updates queued behind its first: an advance with
            # updates behind it goes at once, alone or with others (how they fall is timing).
            replica.steps.linger = 0.01
            before, namespace_before = counter.counts()["queue"], counter.counts()["namespace"]
            polls.count = 0
            for i in range(5):
                for user in users:
                    telegram.send(f"/remember note {i} queued", user=user)
            for update in taken(telegram):
                await replica.accept(update)
            await answered(telegram, len(users) * (1 + 3 + 3 + 5))
            await settled(pg_url)
            queued = counter.counts()["queue"] - before - polls.count
            assert queued <= 2 * 5 * len(users), f"{queued} round trips for {5 * len(users)}"
            handled = 5 * len(users)
            spent = counter.counts()["namespace"] - namespace_before
            assert spent == handled, f"{spent} for {handled}"
    with open_store(pg_url) as store:
        for user in users:
            contents = [m.content for m in store.namespace(f"users/{user['id']}").memories()]
            assert contents[-5:] == [f"note {i} queued" for i in range(5)]
