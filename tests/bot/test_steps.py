"""A replica's receives and advances, sent together (``bot.chat.steps``), on the session's
real PostgreSQL: what waits goes in one round trip, a failure reaches every step it carried,
and a step whose caller stopped waiting is still done."""

from __future__ import annotations

import asyncio

import pytest

from bench.pg_server import Server
from bench.pg_trips import counting
from bot.chat.steps import Steps
from memory import open_store
from memory.errors import MemoryStoreError
from memory.pg.updates import PgUpdateQueue
from memory.queue import Receive, Turn

LEASE = 30.0


def update(update_id: int, chat: int) -> dict[str, object]:
    return {"update_id": update_id, "message": {"chat": {"id": chat}, "text": "hi"}}


async def test_receives_that_come_while_one_is_sent_go_together(
    pg_server: Server, pg_url: str
) -> None:
    taken: list[Turn] = []
    with counting(pg_server.folder) as counter, open_store(counter.url(pg_url)) as store:
        queue = store.updates()
        assert isinstance(queue, PgUpdateQueue)
        queue.receive(update(1, 1), "warm-up")  # a connection is made: not counted below
        steps = Steps(queue, LEASE, lambda turn, asked: taken.append(turn) is None)
        before = counter.counts()["queue"]
        received = await asyncio.gather(
            *(steps.receive(Receive(update(100 + n, n), str(n), "a")) for n in range(10))
        )
        # The first goes at once; the nine that came while it was sent, together after it.
        assert counter.counts()["queue"] - before == 2
        assert all(r.new and r.turn is not None for r in received)
        assert sorted(turn.lane.key for turn in taken) == sorted(str(n) for n in range(10))

        # Advances with nothing behind them linger for a receive, and ride on it.
        steps.linger = 60.0
        before = counter.counts()["queue"]
        advancing = [
            asyncio.ensure_future(steps.advance(turn.lane, started(turn), more=False))
            for turn in taken[:5]
        ]
        await asyncio.sleep(0.05)
        assert counter.counts()["queue"] == before and steps.pending == 5
        await steps.receive(Receive(update(200, 20), "20"))
        assert counter.counts()["queue"] - before == 1
        turns = await asyncio.gather(*advancing)
        assert all(turn.released for turn in turns)

        # One with updates behind it goes at once.
        queue.receive(update(300, 5), "5")
        (behind,) = [turn for turn in taken if turn.lane.key == "5"]
        turn = await steps.advance(behind.lane, 105, more=True)
        assert started(turn) == 300


async def test_a_step_whose_caller_stopped_waiting_is_still_done(pg_url: str) -> None:
    taken: list[Turn] = []
    with open_store(pg_url) as store:
        queue = store.updates()
        assert isinstance(queue, PgUpdateQueue)
        steps = Steps(queue, LEASE, lambda turn, asked: taken.append(turn) is None)
        steps.linger = 60.0
        # A webhook request cut off as its update was kept: the lane is handed on all the same.
        receiving = asyncio.ensure_future(steps.receive(Receive(update(1, 1), "1", "a")))
        await asyncio.sleep(0)
        receiving.cancel()
        await steps.flush()
        (turn,) = taken
        assert started(turn) == 1
        # A lane stopped while its advance lingered: the update handled is marked done.
        advancing = asyncio.ensure_future(steps.advance(turn.lane, 1, more=False))
        await asyncio.sleep(0)
        advancing.cancel()
        await steps.flush()
        assert queue.waiting_count() == 0


async def test_a_send_that_fails_refuses_its_receives_and_tries_its_advances_again(
    pg_url: str,
) -> None:
    """The database gone for good (the store closed): a receive is refused at once (Telegram
    sends it again); an advance, whose update was handled, is tried again until a third of a
    lease has passed, and only then fails."""
    store = open_store(pg_url)
    queue = store.updates()
    assert isinstance(queue, PgUpdateQueue)
    turn = queue.receive(update(1, 1), "1", owner="a", lease=LEASE).turn
    assert turn is not None
    steps = Steps(queue, 3.0, lambda turn, asked: True)  # tried again for a second
    steps.linger = 60.0
    store.close()
    advancing = asyncio.ensure_future(steps.advance(turn.lane, 1, more=False))
    await asyncio.sleep(0)
    with pytest.raises(MemoryStoreError):
        await steps.receive(Receive(update(2, 2), "2", "a"))
    assert not advancing.done() and steps.pending == 1  # to be sent again
    with pytest.raises(MemoryStoreError):
        await asyncio.wait_for(advancing, 30)
    assert steps.pending == 0


async def test_an_advance_refused_while_the_server_restarts_goes_once_it_is_back(
    pg_server: Server, pg_url: str
) -> None:
    """A flaky database: the advance is sent again until it answers, and the chat goes on
    (before, its lane stopped and waited out its lease, and the update was handled twice)."""
    with open_store(pg_url, timeout=1) as store:
        queue = store.updates()
        assert isinstance(queue, PgUpdateQueue)
        turn = queue.receive(update(1, 1), "1", owner="a", lease=LEASE).turn
        queue.receive(update(2, 1), "1")
        assert turn is not None
        steps = Steps(queue, LEASE, lambda turn, asked: True)
        pg_server.stop()
        try:
            advancing = asyncio.ensure_future(steps.advance(turn.lane, 1, more=True))
            for _ in range(100):  # refused once at least: sent again later
                await asyncio.sleep(0.1)
                if steps.pending:
                    break
            assert steps.pending == 1 and not advancing.done()
        finally:
            pg_server.start()
        after = await asyncio.wait_for(advancing, 30)
        assert started(after) == 2 and after.lane == turn.lane
        assert after.delivery is not None and after.delivery.tries == 0


def started(turn: Turn) -> int:
    assert turn.delivery is not None
    return turn.delivery.update_id
