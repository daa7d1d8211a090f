"""The update queue bot replicas share (``memory.pg.updates``), on the session's real server.

Each "replica" is a store of its own on one database, as separate processes would have.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from memory import open_store
from memory.errors import MemoryInvalid, StoreInUse
from memory.pg import PgStore
from memory.pg.database import Database
from memory.pg.updates import PgUpdateQueue

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
    assert one.receive(update(7, 1), "1") is True
    assert two.receive(update(7, 1, "sent again"), "1") is False
    assert one.waiting_count() == 1
    claimed = two.claim("b", LEASE)
    assert claimed is not None
    _lane, deliveries = claimed
    assert [(d.update_id, d.update["message"]["text"], d.tries) for d in deliveries] == [
        (7, "hi", 0)
    ]


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
    assert (first[0].key, [d.update_id for d in first[1]]) == ("1", [10, 12])
    assert (second[0].key, [d.update_id for d in second[1]]) == ("2", [11, 14])
    assert (third[0].key, [d.update_id for d in third[1]]) == ("3", [13])
    assert one.claim("a", LEASE) is None  # every lane with waiting updates is leased
    one.receive(update(15, 1), "1")
    assert two.claim("b", LEASE) is None  # chat 1's new update waits for its lane's holder
    assert [d.update_id for d in one.waiting(first[0], after=12)] == [15]


def test_handled_updates_are_not_handed_out_again_and_a_released_lane_is_free(
    replicas: tuple[PgStore, PgStore],
) -> None:
    one, two = (store.updates() for store in replicas)
    for update_id in (1, 2, 3):
        one.receive(update(update_id, 5), "5")
    claimed = one.claim("a", LEASE)
    assert claimed is not None
    lane, deliveries = claimed
    for delivery in deliveries[:2]:
        assert one.start(lane, delivery.update_id, LEASE)
        one.done(lane, delivery.update_id)
    one.release(lane)
    again = two.claim("b", LEASE)
    assert again is not None
    assert [d.update_id for d in again[1]] == [3]
    assert again[0].token != lane.token
    assert one.waiting_count() == 1


def test_a_dead_replicas_lane_goes_to_another_after_its_lease_with_the_try_counted(
    replicas: tuple[PgStore, PgStore],
) -> None:
    one, two = (store.updates() for store in replicas)
    one.receive(update(21, 9), "9")
    one.receive(update(22, 9), "9")
    claimed = one.claim("dies", 0.5)
    assert claimed is not None
    lane, _ = claimed
    assert one.start(lane, 21, 0.5)  # and then the replica is killed: no done, no release
    assert two.claim("b", LEASE) is None  # the lease is still live
    deadline = time.monotonic() + 30
    taken = None
    while taken is None and time.monotonic() < deadline:
        time.sleep(0.1)
        taken = two.claim("b", LEASE)
    assert taken is not None, "the lease never ran out"
    new_lane, deliveries = taken
    assert [(d.update_id, d.tries) for d in deliveries] == [(21, 1), (22, 0)]
    # The replica that lost the lane, waking up, can touch it no more.
    assert one.start(lane, 22, LEASE) is False
    assert one.renew(lane, LEASE) is False
    one.release(lane)  # under its old token: the new holder keeps the lane
    assert two.renew(new_lane, LEASE) is True
    assert [d.tries for d in two.waiting(new_lane, after=0)] == [1, 0]  # 22 counted nothing


def test_a_clean_stop_gives_its_try_back(replicas: tuple[PgStore, PgStore]) -> None:
    one, two = (store.updates() for store in replicas)
    one.receive(update(31, 4), "4")
    claimed = one.claim("a", LEASE)
    assert claimed is not None
    assert one.start(claimed[0], 31, LEASE)
    one.release(claimed[0], unstarted=31)
    again = two.claim("b", LEASE)
    assert again is not None
    assert [(d.update_id, d.tries) for d in again[1]] == [(31, 0)]


def test_an_update_set_aside_is_kept_but_never_handed_out(
    pg_url: str, replicas: tuple[PgStore, PgStore]
) -> None:
    one, _ = (store.updates() for store in replicas)
    one.receive(update(41, 6, "poison"), "6")
    one.receive(update(42, 6, "next"), "6")
    one.set_aside(41, "crashed the bot 3 times")
    claimed = one.claim("a", LEASE)
    assert claimed is not None
    assert [d.update_id for d in claimed[1]] == [42]
    import psycopg

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
    one.start(claimed[0], 51, LEASE)
    one.done(claimed[0], 51)
    assert one.forget(older_than=3600) == 0  # handled just now: kept, a redelivery is known
    assert one.receive(update(51, 8), "8") is False
    time.sleep(0.05)
    assert one.forget(older_than=0.01) == 1
    assert one.waiting_count() == 1  # 52 still waits


def test_replicas_racing_handle_every_update_once_in_order_per_chat(
    replicas: tuple[PgStore, PgStore],
) -> None:
    """Four workers on two stores drain 30 chats x 8 updates: each update handled once, a
    chat's updates in id order, and never two holders of one chat at the same time."""
    queues = [store.updates() for store in replicas]
    chats, per_chat = 30, 8
    update_id = 0
    for turn in range(per_chat):
        for chat in range(chats):
            update_id += 1
            queues[turn % 2].receive(update(update_id, chat), str(chat))
    handled: dict[str, list[int]] = defaultdict(list)
    holders: dict[str, str] = {}
    clash: list[str] = []
    guard = threading.Lock()

    def work(name: str, queue_index: int) -> None:
        queue = queues[queue_index]
        idle = 0
        while idle < 20:
            claimed = queue.claim(name, LEASE, limit=3)
            if claimed is None:
                idle += 1
                time.sleep(0.01)
                continue
            idle = 0
            lane, deliveries = claimed
            with guard:
                if lane.key in holders:
                    clash.append(f"{name} and {holders[lane.key]} both hold {lane.key}")
                holders[lane.key] = name
            last = -1
            while deliveries:
                for delivery in deliveries:
                    assert queue.start(lane, delivery.update_id, LEASE)
                    with guard:
                        handled[lane.key].append(delivery.update_id)
                    queue.done(lane, delivery.update_id)
                    last = delivery.update_id
                deliveries = queue.waiting(lane, after=last, limit=3)
            with guard:
                del holders[lane.key]
            queue.release(lane)

    workers = [threading.Thread(target=work, args=(f"w{i}", i % 2), daemon=True) for i in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert not any(worker.is_alive() for worker in workers)
    assert clash == []
    assert sorted(u for ids in handled.values() for u in ids) == list(range(1, update_id + 1))
    for chat, ids in handled.items():
        assert ids == sorted(ids), f"chat {chat} out of order: {ids}"
    assert queues[0].waiting_count() == 0


def _killed(pg_url: str, identity: str) -> int:
    """The sessions of the replica ``identity`` ended by the server, as when its process dies
    (its kernel closes the connection); how many."""
    with psycopg.connect(pg_url, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
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
    lane, _ = one.claim(before, LEASE) or (None, [])
    assert lane is not None and lane.key == "1"
    assert one.start(lane, 61, LEASE)  # killed now: no done, no release
    busy, _ = two.claim(other, LEASE) or (None, [])
    assert busy is not None and busy.key == "2"
    assert _killed(pg_url, "host-a:8443") == 1
    with open_store(pg_url) as restarted:
        queue = restarted.updates()
        assert queue is not None
        after = queue.enter("host-a:8443")
        assert after != before  # a fresh fencing token
        taken = queue.claim(after, LEASE)
        assert taken is not None, "the dead incarnation's lane still waits for its lease"
        assert taken[0].key == "1"
        assert [(d.update_id, d.tries) for d in taken[1]] == [(61, 1), (62, 0)]
        assert one.start(lane, 62, LEASE) is False  # the old lease is gone for good
        assert two.renew(busy, LEASE) is True  # a live replica's lease is not taken
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
    lane = one.claim(owner, LEASE)
    assert lane is not None
    assert _killed(pg_url, "flaky") == 1
    two.enter("flaky")  # a second process with the same identity got in meanwhile
    assert one.present() is False  # so this one must stop claiming
    assert one.start(lane[0], 71, LEASE) is False  # and its lanes are no longer its own


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
        busy = queue.claim("a", LEASE, 16)
        assert busy is not None and busy[0].key == "1"
        # One connection, so that its statistics can be flushed when asked (a backend
        # reports them when idle, at most once a second otherwise).
        database = Database(pg_url, max_size=1)
        database.open()
        try:
            other = PgUpdateQueue(database)
            for expected in ("2", None):  # the free chat behind the backlog, then none free
                before = _rows_read(watcher)
                claimed = other.claim("b", LEASE, 16)
                with database.transaction(write=False) as connection:
                    connection.execute("SELECT pg_stat_force_next_flush()")
                read = _rows_read(watcher) - before
                assert (claimed[0].key if claimed else None) == expected
                assert read < backlog // 20, f"a claim read {read} rows for a {backlog} backlog"
        finally:
            database.close()
