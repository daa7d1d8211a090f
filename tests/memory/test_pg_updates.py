"""The update queue bot replicas share (``memory.pg.updates``), on the session's real server.

Each "replica" is a store of its own on one database, as separate processes would have.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from functools import partial
from typing import Any

import psycopg
import pytest

from bench.pg_server import Server
from bench.pg_trips import counting
from memory import open_store
from memory.errors import MemoryInvalid, MemoryStoreError, StoreInUse
from memory.pg import PgStore
from memory.pg.database import Database
from memory.pg.updates import PgUpdateQueue
from memory.queue import Advance, Receive, Received, Turn

LEASE = 30.0  # long enough that no lease runs out unless a test wants it to


def update(update_id: int, chat: int, text: str = "hi") -> dict[str, object]:
    return {"update_id": update_id, "message": {"chat": {"id": chat}, "text": text}}


@pytest.fixture
def replicas(pg_url: str) -> Iterator[tuple[PgStore, PgStore]]:
    with open_store(pg_url) as one, open_store(pg_url) as two:
        assert isinstance(one, PgStore) and isinstance(two, PgStore)
        yield one, two


def test_an_update_is_kept_once_whichever_replica_receives_it(
    replicas: tuple[PgStore, PgStore],
) -> None:
    one, two = (store.updates() for store in replicas)
    assert one.receive(update(7, 1), "1") == Received(new=True)
    assert two.receive(update(7, 1, "sent again"), "1", owner="b", lease=LEASE) == Received(
        new=False
    )  # a second delivery claims nothing either
    assert one.waiting_count() == 1
    claimed = two.claim("b", LEASE)
    assert claimed is not None and claimed.delivery is not None
    assert (claimed.delivery.update_id, claimed.delivery.update["message"]["text"]) == (7, "hi")
    assert claimed.delivery.tries == 0  # none before this one


def test_a_lane_is_leased_to_one_replica_and_the_oldest_chat_goes_first(
    replicas: tuple[PgStore, PgStore],
) -> None:
    one, two = (store.updates() for store in replicas)
    for update_id, chat in ((10, 1), (11, 2), (12, 1), (13, 3), (14, 2)):
        one.receive(update(update_id, chat), str(chat))
    first = one.claim("a", LEASE)
    second = two.claim("b", LEASE)
    third = two.claim("b", LEASE)
    assert first is not None and second is not None and third is not None
    assert [(t.lane.key, started(t)) for t in (first, second, third)] == [
        ("1", 10),
        ("2", 11),
        ("3", 13),
    ]
    assert one.claim("a", LEASE) is None  # every lane with waiting updates is leased
    assert one.receive(update(15, 1), "1", owner="b", lease=LEASE).turn is None
    assert two.claim("b", LEASE) is None  # chat 1's new update waits for its lane's holder
    assert started(one.advance(first.lane, 10, LEASE)) == 12
    assert started(one.advance(first.lane, 12, LEASE)) == 15


def started(turn: Turn | None) -> int | None:
    """The update a turn started."""
    assert turn is not None
    return turn.delivery.update_id if turn.delivery is not None else None


def test_a_lane_is_given_back_when_none_waits_and_handled_updates_never_come_back(
    replicas: tuple[PgStore, PgStore],
) -> None:
    one, two = (store.updates() for store in replicas)
    for update_id in (1, 2):
        one.receive(update(update_id, 5), "5")
    claimed = one.claim("a", LEASE)
    assert claimed is not None and started(claimed) == 1
    assert started(one.advance(claimed.lane, 1, LEASE)) == 2
    assert one.advance(claimed.lane, 2, LEASE) == Turn(claimed.lane, released=True)
    assert one.waiting_count() == 0
    assert two.claim("b", LEASE) is None
    one.receive(update(3, 5), "5")
    again = two.claim("b", LEASE)  # the lane is free: anyone claims it
    assert again is not None and started(again) == 3 and again.lane.token != claimed.lane.token


def test_the_replica_that_receives_a_free_chat_s_update_claims_its_lane_at_once(
    replicas: tuple[PgStore, PgStore],
) -> None:
    one, two = (store.updates() for store in replicas)
    received = one.receive(update(80, 5), "5", owner="a", lease=LEASE)
    assert received.new and received.turn is not None
    assert (received.turn.lane.key, started(received.turn)) == ("5", 80)
    busy = two.receive(update(81, 5), "5", owner="b", lease=LEASE)
    assert busy == Received(new=True)  # kept; the lane is one's: it handles 81 next
    assert started(one.advance(received.turn.lane, 80, LEASE)) == 81
    assert one.advance(received.turn.lane, 81, LEASE).released
    # A free chat with an update already waiting: that one is started first, the new one waits.
    two.receive(update(90, 6), "6")
    older = one.receive(update(91, 6), "6", owner="a", lease=LEASE)
    assert older.turn is not None and started(older.turn) == 90
    assert started(one.advance(older.turn.lane, 90, LEASE)) == 91


def test_a_started_update_carries_its_namespace_s_version_as_the_start_read_it(
    replicas: tuple[PgStore, PgStore],
) -> None:
    """However an update is started (kept and started at once, claimed, or next after
    another), the statement also reads the version of the namespace it was kept with: its
    view of the store starts there (``memory.views``). None named: none read."""
    one, two = (store.updates() for store in replicas)
    notes = replicas[0].namespace("users/5")
    kept = one.receive(update(60, 5), "5", owner="a", lease=LEASE, namespace="users/5")
    assert kept.turn is not None and kept.turn.delivery is not None
    assert kept.turn.delivery.versions == {"users/5": 0}  # never written
    notes.add("first")
    two.receive(update(61, 5), "5", owner="b", lease=LEASE, namespace="users/5")
    two.receive(update(62, 5), "5", namespace="users/5")
    after = one.advance(kept.turn.lane, 60, LEASE)
    assert after.delivery is not None and after.delivery.update_id == 61
    assert after.delivery.versions == {"users/5": 1}
    replicas[1].namespace("users/5").add("second, by another replica")
    one.release(after.lane)
    claimed = two.claim("b", LEASE)
    assert claimed is not None and claimed.delivery is not None
    assert (claimed.delivery.update_id, claimed.delivery.versions) == (61, {"users/5": 2})
    assert started(two.advance(claimed.lane, 61, LEASE)) == 62
    one.receive(update(63, 8), "8")
    plain = two.claim("b", LEASE)
    assert plain is not None and plain.delivery is not None and plain.delivery.versions == {}


def at_once(*calls: Any) -> list[Any]:
    """Run ``calls`` in threads released together; what each returned."""
    together = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int) -> None:
        together.wait()
        results[index] = calls[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def finish(queue: PgUpdateQueue, turn: Turn | None, after: int | None) -> list[int]:
    """Go on with a lane as a replica does (each update started is handled, a turn that
    started nothing is advanced again) until it is given back; the updates handled."""
    handled: list[int] = []
    while turn is not None and not turn.released:
        assert not turn.lost
        if turn.delivery is not None:
            after = turn.delivery.update_id
            handled.append(after)
        turn = queue.advance(turn.lane, after, LEASE)
    return handled


def test_an_update_kept_as_its_lane_is_given_back_is_never_left_waiting_for_a_poll(
    replicas: tuple[PgStore, PgStore],
) -> None:
    """The holder's advance finds none waiting in its snapshot while another replica keeps the
    chat's next update and finds the lane leased. The lane was given back all the same, and
    the update waited for a poll (49 such races of 300 on the 2-core VM); now the kept update
    moves the lease (``bot_lanes.kept``), so the advance gives nothing back and looks again,
    or the receiver takes the lane given back: either way it is started at once."""
    one, two = (store.updates() for store in replicas)
    for i in range(100):
        lane, first, second = str(1000 + i), 2 * i + 1000, 2 * i + 1001
        held = one.receive(update(first, 1000 + i), lane, owner="a", lease=LEASE).turn
        assert held is not None and started(held) == first
        after, received = at_once(
            partial(one.advance, held.lane, first, LEASE),
            lambda lane=lane, second=second: (
                two.receive(update(second, 0), lane, owner="b", lease=LEASE).turn
            ),
        )
        handled = finish(one, after, first) + finish(two, received, None)
        assert handled == [second], f"race {i}: {second} left waiting for a poll"
    assert one.waiting_count() == 0


def test_a_dead_replicas_lane_goes_to_another_after_its_lease_with_the_try_counted(
    pg_url: str, replicas: tuple[PgStore, PgStore]
) -> None:
    one, two = (store.updates() for store in replicas)
    one.receive(update(21, 9), "9")
    one.receive(update(22, 9), "9")
    claimed = one.claim("dies", 0.5)  # 21 started, and then the replica is killed
    assert claimed is not None and started(claimed) == 21
    assert two.claim("b", LEASE) is None  # the lease is still live
    deadline = time.monotonic() + 30
    taken = None
    while taken is None and time.monotonic() < deadline:
        time.sleep(0.1)
        taken = two.claim("b", LEASE)
    assert taken is not None, "the lease never ran out"
    assert taken.delivery is not None and (taken.delivery.update_id, taken.delivery.tries) == (
        21,
        1,
    )
    # The replica that lost the lane, waking up, can touch it no more.
    assert one.advance(claimed.lane, None, LEASE) == Turn(claimed.lane, lost=True)
    assert one.renew(claimed.lane, LEASE) is False
    one.release(claimed.lane)  # under its old token: the new holder keeps the lane
    assert two.renew(taken.lane, LEASE) is True
    assert tries(pg_url) == {21: 2, 22: 0}  # 22 counted nothing; 21 kept both tries


def tries(pg_url: str) -> dict[int, int]:
    """Every waiting update's tries."""
    with psycopg.connect(pg_url) as connection:
        rows = connection.execute(
            "SELECT update_id, tries FROM bot_updates WHERE state = 'waiting'"
        ).fetchall()
    return dict(rows)


def test_a_clean_stop_gives_its_try_back(pg_url: str, replicas: tuple[PgStore, PgStore]) -> None:
    one, two = (store.updates() for store in replicas)
    for update_id in (31, 32):
        one.receive(update(update_id, 4), "4")
    claimed = one.claim("a", LEASE)
    assert claimed is not None and started(claimed) == 31
    assert started(one.advance(claimed.lane, 31, LEASE)) == 32  # handled, and 32 started
    assert tries(pg_url) == {32: 1}
    one.release(claimed.lane)  # stopped while handling 32
    assert tries(pg_url) == {32: 0}
    again = two.claim("b", LEASE)
    assert again is not None and again.delivery is not None
    assert (again.delivery.update_id, again.delivery.tries) == (32, 0)


def test_an_update_set_aside_is_kept_but_never_handed_out(
    pg_url: str, replicas: tuple[PgStore, PgStore]
) -> None:
    one, _ = (store.updates() for store in replicas)
    one.receive(update(41, 6, "poison"), "6")
    one.receive(update(42, 6, "next"), "6")
    one.set_aside(41, "crashed the bot 3 times")
    claimed = one.claim("a", LEASE)
    assert claimed is not None and started(claimed) == 42
    with psycopg.connect(pg_url) as connection:
        row = connection.execute(
            "SELECT state, reason, body FROM bot_updates WHERE update_id = 41"
        ).fetchone()
    assert row is not None
    assert row[:2] == ("aside", "crashed the bot 3 times") and "poison" in row[2]


def test_forget_drops_old_handled_updates_only(replicas: tuple[PgStore, PgStore]) -> None:
    one, _ = (store.updates() for store in replicas)
    for update_id in (51, 52):
        one.receive(update(update_id, 8), "8")
    claimed = one.claim("a", LEASE)
    assert claimed is not None
    assert started(one.advance(claimed.lane, 51, LEASE)) == 52
    assert one.forget(older_than=3600) == 0  # handled just now: kept, a redelivery is known
    assert one.receive(update(51, 8), "8").new is False
    time.sleep(0.05)
    assert one.forget(older_than=0.01) == 1
    assert one.waiting_count() == 1  # 52 still waits


def test_replicas_racing_handle_every_update_once_in_order_per_chat(
    replicas: tuple[PgStore, PgStore],
) -> None:
    """Four workers on two stores receive and drain 30 chats x 8 updates, claiming as they
    receive and by polling: each update handled once, a chat's updates in id order, and never
    two holders of one chat at the same time. A chat's updates are kept in the order they
    were sent (as the webhook answers each before the next of its chat is counted on); kept
    out of order, an update already handled cannot wait for one that has not arrived."""
    queues = [store.updates() for store in replicas]
    chats, per_chat = 30, 8
    ids = [(turn * chats + chat + 1, chat) for turn in range(per_chat) for chat in range(chats)]
    inbox = list(reversed(ids))
    handled: dict[str, list[int]] = defaultdict(list)
    holders: dict[str, str] = {}
    clash: list[str] = []
    guard = threading.Lock()
    sent = threading.Condition()
    kept: dict[int, int] = defaultdict(int)  # per chat, how many of its updates are kept

    def its_turn(chat: int, update_id: int) -> bool:
        return kept[chat] == (update_id - 1) // chats

    def serve(name: str, queue: PgUpdateQueue, turn: Turn) -> None:
        after = None
        while not turn.released:
            assert not turn.lost
            if turn.delivery is not None:  # handled from here to its advance: ours alone
                key = turn.lane.key
                with guard:
                    if key in holders:
                        clash.append(f"{name} and {holders[key]} both handle {key}")
                    holders[key] = name
                    handled[key].append(turn.delivery.update_id)
                after = turn.delivery.update_id
                time.sleep(0.001)  # a handler takes a moment: another worker could step in
                with guard:
                    del holders[key]
            turn = queue.advance(turn.lane, after, LEASE)

    def work(name: str, queue: PgUpdateQueue) -> None:
        idle = 0
        while idle < 20:
            with guard:
                item = inbox.pop() if inbox else None
            if item is not None:
                update_id, chat = item
                with sent:  # the chat's earlier updates are kept first
                    sent.wait_for(partial(its_turn, chat, update_id))
                received = queue.receive(update(*item), str(chat), owner=name, lease=LEASE)
                with sent:
                    kept[chat] += 1
                    sent.notify_all()
                if received.turn is not None:
                    serve(name, queue, received.turn)
                continue
            turn = queue.claim(name, LEASE)
            if turn is None:
                idle += 1
                time.sleep(0.01)
                continue
            idle = 0
            serve(name, queue, turn)

    workers = [
        threading.Thread(target=work, args=(f"w{i}", queues[i % 2]), daemon=True) for i in range(4)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert not any(worker.is_alive() for worker in workers)
    assert clash == []
    assert sorted(u for done in handled.values() for u in done) == [u for u, _ in ids]
    for chat, done in handled.items():
        assert done == sorted(done), f"chat {chat} out of order: {done}"
    assert queues[0].waiting_count() == 0


def test_each_step_of_the_queue_is_one_round_trip(pg_server: Server, pg_url: str) -> None:
    """An update costs two round trips: kept (and its lane claimed), then done with the next
    one started; a claim, a renewal and a release are one each."""
    with counting(pg_server.folder) as counter, open_store(counter.url(pg_url)) as store:
        queue = store.updates()
        assert isinstance(queue, PgUpdateQueue)
        queue.receive(update(100, 1), "1")  # a connection is made: not counted below

        def trips(step: Any) -> int:
            before = counter.counts()["queue"]
            step()
            return counter.counts()["queue"] - before

        received: list[Received] = []
        assert trips(lambda: received.append(queue.receive(update(101, 2), "2", owner="a"))) == 1
        turn = received[0].turn
        assert turn is not None and started(turn) == 101
        assert trips(lambda: queue.receive(update(102, 2), "2", owner="a")) == 1
        assert trips(lambda: queue.advance(turn.lane, 101, LEASE)) == 1  # 102 started
        assert trips(lambda: queue.renew(turn.lane, LEASE)) == 1
        assert trips(lambda: queue.advance(turn.lane, 102, LEASE)) == 1  # released
        claimed: list[Turn | None] = []
        assert trips(lambda: claimed.append(queue.claim("a", LEASE))) == 1
        assert claimed[0] is not None and started(claimed[0]) == 100
        assert trips(lambda: queue.release(claimed[0].lane)) == 1


def test_steps_sent_together_are_one_round_trip_each_as_if_alone(
    pg_server: Server, pg_url: str
) -> None:
    """A replica under load sends advances with receives (``bot.chat.steps``): one round trip,
    each step as it would be alone; a lane's receives go first, so a chat's next update kept
    with its previous one's advance is started by that advance, under the lease it holds."""
    with counting(pg_server.folder) as counter, open_store(counter.url(pg_url)) as store:
        queue = store.updates()
        assert isinstance(queue, PgUpdateQueue)
        two = queue.receive(update(201, 2), "2", owner="a", lease=LEASE).turn
        three = queue.receive(update(301, 3), "3", owner="a", lease=LEASE).turn
        assert two is not None and three is not None
        assert queue.receive(update(202, 2), "2", owner="a", lease=LEASE).turn is None  # kept
        before = counter.counts()["queue"]
        sent = queue.send(
            [Advance(two.lane, 201), Advance(three.lane, 301)],
            [Receive(update(401, 4), "4", "a"), Receive(update(203, 2), "2", "a")],
            LEASE,
        )
        assert counter.counts()["queue"] - before == 1
        after_two, after_three = sent.turns
        assert started(after_two) == 202 and after_two.more  # 203 behind it
        assert after_three == Turn(three.lane, released=True)
        four, behind = sent.received
        assert four.new and four.turn is not None and started(four.turn) == 401
        assert not four.turn.more
        assert behind == Received(new=True)  # kept: lane 2 is held, its advance starts 202
        assert finish(queue, after_two, 201) == [202, 203]
        assert finish(queue, four.turn, None) == [401]
        assert queue.waiting_count() == 0
    with pytest.raises(ValueError, match="64-bit"):
        Receive({"update_id": 2**64}, "1")
    with pytest.raises(ValueError, match="64-bit"):
        Receive({"message": {}}, "1")


def test_two_replicas_sending_steps_for_each_other_s_lanes_never_wait_in_a_circle(
    replicas: tuple[PgStore, PgStore],
) -> None:
    """Each replica advances its own lane and keeps an update for the other's, at the same
    moment. Sent in the order given, one transaction would lock its lane and wait for the
    other's, the other the reverse, and PostgreSQL would abort one after a second (its steps
    failed: a receive refused, a lane stalled for a lease); lane by lane in key order both
    lock the same lane first."""
    one, two = (store.updates() for store in replicas)

    def step(queue: PgUpdateQueue, held: Turn, lane: str, update_id: int) -> object:
        try:
            advance = [Advance(held.lane, started(held))]
            return queue.send(advance, [Receive(update(update_id, 3), lane, "x")], LEASE)
        except MemoryStoreError as e:
            return e

    for i in range(20):
        a, b = f"a{i}", f"b{i}"
        mine = one.receive(update(4 * i + 1, 1), a, owner="one", lease=LEASE).turn
        theirs = two.receive(update(4 * i + 2, 2), b, owner="two", lease=LEASE).turn
        assert mine is not None and theirs is not None
        results = at_once(
            partial(step, one, mine, b, 4 * i + 3), partial(step, two, theirs, a, 4 * i + 4)
        )
        failed = [r for r in results if isinstance(r, MemoryStoreError)]
        assert not failed, f"round {i}: {failed}"


def _killed(pg_url: str, identity: str) -> int:
    """The sessions of the replica ``identity`` ended by the server, as when its process dies
    (its kernel closes the connection); how many. Each is waited for (up to 30 s) until it has
    exited, and so let go of its locks: a loaded machine took longer than the next statement."""
    with psycopg.connect(pg_url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid, 30000) FROM pg_stat_activity"
            " WHERE application_name LIKE %s AND pid <> pg_backend_pid()",
            (f"cogito {identity}#%",),
        ).fetchall()
    return len(rows)


def test_a_restarted_replica_takes_back_its_dead_incarnation_s_lanes_at_once(
    pg_url: str, replicas: tuple[PgStore, PgStore]
) -> None:
    """Same identity, new incarnation: the dead one's lease (30 s) is given up when the new
    one enters, the interrupted update first with its try counted; another identity's lease
    stays."""
    one, two = (store.updates() for store in replicas)
    before = one.enter("host-a:8443")
    other = two.enter("host-b:8443")
    assert before.startswith("host-a:8443#") and other.startswith("host-b:8443#")
    for update_id, chat in ((61, 1), (62, 1), (63, 2)):
        one.receive(update(update_id, chat), str(chat))
    claimed = one.claim(before, LEASE)  # 61 started, and killed now: no done, no release
    assert claimed is not None and (claimed.lane.key, started(claimed)) == ("1", 61)
    busy = two.claim(other, LEASE)
    assert busy is not None and busy.lane.key == "2"
    assert _killed(pg_url, "host-a:8443") == 1
    with open_store(pg_url) as restarted:
        queue = restarted.updates()
        assert queue is not None
        after = queue.enter("host-a:8443")
        assert after != before  # a fresh fencing token
        taken = queue.claim(after, LEASE)
        assert taken is not None, "the dead incarnation's lane still waits for its lease"
        assert taken.lane.key == "1" and taken.delivery is not None
        assert (taken.delivery.update_id, taken.delivery.tries) == (61, 1)
        # The old lease is gone for good.
        assert one.advance(claimed.lane, 61, LEASE) == Turn(claimed.lane, lost=True)
        assert two.renew(busy.lane, LEASE) is True  # a live replica's lease is not taken
        assert queue.claim(after, LEASE) is None
        queue.leave()


def test_two_live_processes_never_share_an_identity(
    pg_url: str, replicas: tuple[PgStore, PgStore]
) -> None:
    one, two = (store.updates() for store in replicas)
    owner = one.enter("twin")
    with pytest.raises(StoreInUse) as refused:
        two.enter("twin")
    assert "'twin'" in refused.value.message and f"cogito {owner}" in refused.value.message
    assert one.present() and not two.present()
    one.leave()  # a clean stop: the identity is free at once
    assert two.enter("twin") != owner
    assert two.present()
    with pytest.raises(MemoryInvalid):
        one.enter("no#hash")


def test_a_replica_whose_session_was_lost_takes_its_identity_again_unless_taken(
    pg_url: str, replicas: tuple[PgStore, PgStore]
) -> None:
    one, two = (store.updates() for store in replicas)
    owner = one.enter("flaky")
    assert _killed(pg_url, "flaky") == 1  # the server dropped the session (a restart)
    assert one.present() is True  # taken again, under the same owner
    one.receive(update(71, 3), "3")
    claimed = one.claim(owner, LEASE)
    assert claimed is not None
    assert _killed(pg_url, "flaky") == 1
    two.enter("flaky")  # a second process with the same identity got in meanwhile
    assert one.present() is False  # so this one must stop claiming
    assert one.advance(claimed.lane, None, LEASE).lost  # and its lanes are no longer its own


def _rows_read(watcher: Any) -> int:
    """Entries of ``bot_updates``'s indexes and rows of its table the server has read."""
    watcher.execute("SELECT pg_stat_clear_snapshot()")
    row = watcher.execute(
        "SELECT (SELECT sum(idx_tup_read) FROM pg_stat_user_indexes WHERE relname = 'bot_updates')"
        " + (SELECT seq_tup_read FROM pg_stat_user_tables WHERE relname = 'bot_updates')"
    ).fetchone()
    return int(row[0])


def test_a_claim_does_not_read_a_leased_chats_whole_backlog(pg_url: str) -> None:
    """One chat flooded while a replica handles it: another replica's claim (at each poll)
    must not walk that backlog to find a free chat behind it, nor to find that none is."""
    backlog = 20_000
    with open_store(pg_url) as store, psycopg.connect(pg_url, autocommit=True) as watcher:
        queue = store.updates()
        assert queue is not None
        watcher.execute(
            "INSERT INTO bot_updates (update_id, lane, body)"
            " SELECT g, '1', '{}' FROM generate_series(1, %s) g",
            (backlog,),
        )
        queue.receive(update(backlog + 1, 2), "2")
        watcher.execute("ANALYZE bot_updates")
        busy = queue.claim("a", LEASE)
        assert busy is not None and busy.lane.key == "1"
        # One connection, so that its statistics can be flushed when asked (a backend
        # reports them when idle, at most once a second otherwise).
        database = Database(pg_url, max_size=1)
        database.open()
        try:
            other = PgUpdateQueue(database)
            for expected in ("2", None):  # the free chat behind the backlog, then none free
                before = _rows_read(watcher)
                claimed = other.claim("b", LEASE)
                with database.transaction(write=False) as connection:
                    connection.execute("SELECT pg_stat_force_next_flush()")
                read = _rows_read(watcher) - before
                assert (claimed.lane.key if claimed else None) == expected
                assert read < backlog // 20, f"a claim read {read} rows for a {backlog} backlog"
        finally:
            database.close()
