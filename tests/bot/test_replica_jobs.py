"""Several replicas on one store: the scheduled digest and every reminder are sent once.

A replica is an ``Application`` built by ``build_application`` on a store object of its own,
opened on the same location (a data directory, or one PostgreSQL database), as separate
processes have; its jobs run on its own JobQueue with a clock the test moves. Last, two real
``python -m bot`` processes share one PostgreSQL database. The fake Bot API on 127.0.0.1 sees
what reaches Telegram.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_EXECUTED
from telegram.ext import Application

from bench.fakes.telegram_server import TOKEN, Call, FakeBotAPI
from bot.chat.app import build_application
from bot.chat.running import serving
from bot.chat.services import KEY, Services
from bot.config import parse_config
from bot.core import delivery, reminders, when
from bot.core.lease import LEASE  # the digest takes a left claim over as a reminder does
from bot.core.policy import Actor, Caller
from memory import open_store
from memory.timestamps import format_time

REPLICAS = 3
SHANGHAI = "Asia/Shanghai"
START = datetime(2026, 12, 1, 1, 0, tzinfo=UTC)  # Tuesday 09:00 in Shanghai: the digest's time
USERS = [101, 102, 103, 104]  # each with a memory: each gets one digest
ALICE = 42  # sets the reminders, has no memories: gets no digest
ROOT = Path(__file__).resolve().parents[2]


class Clock:
    """Real time plus an offset the test moves (as in test_reminders)."""

    def __init__(self, start: datetime) -> None:
        self.offset = start - datetime.now(UTC)

    def __call__(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, **delta: float) -> None:
        self.offset += timedelta(**delta)


@pytest.fixture(params=["files", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where every replica's store is: a data directory, or a fresh PostgreSQL database."""
    if request.param == "files":
        return str(tmp_path / "data")
    return str(request.getfixturevalue("pg_url"))


def set_up(
    location: str, telegram: FakeBotAPI, now: datetime, reminder_count: int, *, apart: bool = True
) -> None:
    """A memory for each of ``USERS``, and Alice's reminders due 1, 2, ... minutes after now
    (not ``apart``: all one minute after)."""
    with open_store(location) as store:
        for user in [*USERS, ALICE]:
            telegram.private_chat(FakeBotAPI.user(user, f"user{user}"))
        for user in USERS:
            store.namespace(f"users/{user}").add(f"a memory of user {user}")
        caller = Caller(Actor("user", ALICE, "Alice"), f"users/{ALICE}")
        for number in range(reminder_count):
            parsed = when.parse_reminder(
                f"in {number + 1 if apart else 1} minutes task {number}",
                now,
                when.ZoneInfo(SHANGHAI),
            )
            assert parsed is not None
            reminders.create(
                store,
                caller,
                chat_id=ALICE,
                text=parsed.text,
                due=parsed.due,
                language="en",
                now=now,
            )


def services(application: Application[Any, Any, Any, Any, Any, Any]) -> Services:
    found: Services = application.bot_data[KEY]
    return found


@asynccontextmanager
async def replicas(
    location: str, telegram: FakeBotAPI, clocks: list[Callable[[], datetime]], tmp_path: Path
) -> AsyncIterator[list[Application[Any, Any, Any, Any, Any, Any]]]:
    """One running replica per clock, started at the same moment, each with its own store."""
    where = {"storage": location} if location.startswith("postgresql") else {"data_dir": location}
    data = {
        **where,
        "telegram": {"token": TOKEN, "base_url": telegram.base_url, "flood_control": False},
        "digest": {"schedule": "0 9 * * *", "timezone": SHANGHAI, "default": "on"},
        "reminders": {"timezone": SHANGHAI},
    }
    configs = [  # each its own replica (one host and port: they would share an identity)
        parse_config({**data, "replicas": {"identity": f"replica{n}"}}, base_dir=tmp_path)
        for n in range(len(clocks))
    ]
    applications = [
        build_application(config, open_store(config.store_location), None, clock=clock)
        for config, clock in zip(configs, clocks, strict=True)
    ]
    catch_ups = {
        job.job.id
        for application in applications
        for job in application.job_queue.jobs()  # type: ignore[union-attr]
        if job.name == "digest-catch-up"
    }
    finished: set[str] = set()
    for application in applications:
        application.job_queue.scheduler.add_listener(  # type: ignore[union-attr]
            lambda event: finished.add(event.job_id), EVENT_JOB_EXECUTED | EVENT_JOB_ERROR
        )
    async with AsyncExitStack() as stack:
        # Started together: the digest's catch-up of each runs as the others' does; the test
        # goes on once each has run (at the start's time, whatever the test does next).
        await asyncio.gather(*(stack.enter_async_context(serving(a)) for a in applications))
        await eventually(lambda: catch_ups <= finished, timeout=60)
        yield applications


def digests(telegram: FakeBotAPI) -> list[Call]:
    return [c for c in telegram.find("sendMessage") if c.params["chat_id"] in USERS]


def deliveries(telegram: FakeBotAPI) -> list[str]:
    sent = [c.text for c in telegram.find("sendMessage", chat_id=ALICE)]
    return sorted(re.findall(r"task \d+", "\n".join(sent)))


async def test_replicas_send_each_digest_and_each_reminder_once(
    location: str, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    clock = Clock(START + timedelta(seconds=30))  # 30 s after the digest's time
    set_up(location, telegram, clock(), reminder_count=6)
    async with replicas(location, telegram, [clock] * REPLICAS, tmp_path) as running:
        await telegram.wait("sendMessage", count=len(USERS), where=lambda c: c in digests(telegram))
        clock.advance(minutes=10)  # every reminder is due: each replica's next tick races
        await telegram.wait("sendMessage", count=6, chat_id=ALICE)
        for application in running:  # one more whole run of both jobs on every replica
            await services(application).digest.run(application.bot)
            await services(application).reminders.run(application.bot)
    assert sorted(c.params["chat_id"] for c in digests(telegram)) == USERS
    assert deliveries(telegram) == [f"task {n}" for n in range(6)]
    with open_store(location) as store:
        assert {r.state for r in reminders.every(store)} == {"sent"}
        period = format_time(START)
        for user in USERS:
            found = store.documents(f"users/{user}").get("digest")
            assert found is not None and found.value["last_period"] == period


async def test_a_replica_that_claimed_a_reminder_and_died_leaves_it_to_another_once(
    location: str, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    clock = Clock(START)
    set_up(location, telegram, clock(), reminder_count=1)
    with open_store(location) as store:
        [reminder] = reminders.every(store)
    at = reminder.due.at
    async with replicas(location, telegram, [clock, clock], tmp_path) as (doomed, survivor):
        # The first replica claims the occurrence, then stops before sending it (its store
        # closes with it): what a replica killed between the two leaves behind.
        job = services(doomed).reminders
        claimed = delivery.claim(job.store, reminder.key, at, job.owner, at)
        assert claimed.send
        await doomed.stop()
        await doomed.shutdown()
        await services(doomed).reminders.stop()
        services(doomed).store.close()
        clock.advance(minutes=1, seconds=1)  # due, and claimed: the survivor waits
        await services(survivor).reminders.run(survivor.bot)
        await services(survivor).reminders.run(survivor.bot)
        assert deliveries(telegram) == []
        clock.advance(seconds=LEASE.total_seconds())  # the lease ran out, on its clock
        await telegram.wait("sendMessage", count=1, chat_id=ALICE)
        clock.advance(minutes=10)
        await services(survivor).reminders.run(survivor.bot)
    assert deliveries(telegram) == ["task 0"]


async def digest_jobs(application: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Run every digest job of ``application`` now, as its JobQueue does as time goes by."""
    assert application.job_queue is not None
    for job in application.job_queue.jobs():
        if job.name is not None and job.name.startswith("digest"):
            await job.run(application)


class Doom:
    """Telegram holds the first ``count`` reports to ``user`` unanswered, and the task sending
    each dies (is cancelled) the moment it arrives: a replica killed between claiming a report
    and recording it. ``hang_up`` lets the held requests go, failed: never counted as sent."""

    def __init__(self, telegram: FakeBotAPI, user: int, count: int = 1) -> None:
        self.telegram, self.user, self.left = telegram, user, count
        self.task: asyncio.Task[Any] | None = None
        self.held = telegram.hold("sendMessage", when=self._arrives)

    def _arrives(self, params: dict[str, Any]) -> bool:
        if str(params.get("chat_id")) != str(self.user) or not self.left:
            return False
        self.left -= 1
        if self.task is not None:
            self.task.cancel()
        return True

    async def kill(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` until its report to ``user`` reaches Telegram, and kill it there."""
        self.task = asyncio.create_task(work)
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
        assert self.task.cancelled(), "the report never reached Telegram"

    def hang_up(self) -> None:
        user = str(self.user)
        self.telegram.fail(
            "sendMessage", 500, "gone", times=99, when=lambda p: str(p["chat_id"]) == user
        )
        self.held.set()


async def stop(application: Application[Any, Any, Any, Any, Any, Any]) -> None:
    """Stop a replica whose jobs died: its store closes with it."""
    await application.stop()
    await application.shutdown()
    await services(application).reminders.stop()
    services(application).store.close()


async def test_a_digest_claimed_by_a_replica_that_died_is_sent_once_by_another(
    location: str, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    """The digest is sent once (``bot.jobs.digest``): a period claimed and then never sent
    (the replica died in between) is taken over by another replica once the claim was seen
    unchanged for the lease, and sent once; the other reports are sent by the survivor."""
    clock = Clock(START - timedelta(hours=1))  # before the digest's time: nothing sent at start
    set_up(location, telegram, clock(), reminder_count=0)
    doom = Doom(telegram, USERS[0])
    try:
        async with replicas(location, telegram, [clock, clock], tmp_path) as (doomed, survivor):
            clock.advance(hours=1, seconds=30)
            await doom.kill(services(doomed).digest.run(doomed.bot))
            await stop(doomed)
            for _ in range(2):  # within the lease: the claim may be a live replica's
                await digest_jobs(survivor)
            assert sorted(c.params["chat_id"] for c in digests(telegram)) == USERS[1:]
            clock.advance(seconds=LEASE.total_seconds())  # the lease ran out, on its clock
            await digest_jobs(survivor)
            for _ in range(3):
                clock.advance(seconds=LEASE.total_seconds() + 60)
                await digest_jobs(survivor)
            assert sorted(c.params["chat_id"] for c in digests(telegram)) == USERS
    finally:
        doom.hang_up()
    with open_store(location) as store:
        found = store.documents(f"users/{USERS[0]}").get("digest")
        assert found is not None and found.value["last_period"] == format_time(START)
        assert found.value["claim"] is None and found.value["delivered_at"] is not None
        assert store.bot_documents().list("digest-claims/") == []


async def test_a_digest_sent_and_recorded_is_never_sent_again(
    location: str, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    clock = Clock(START + timedelta(seconds=30))  # the catch-up of each replica sends them
    set_up(location, telegram, clock(), reminder_count=0)
    async with replicas(location, telegram, [clock] * REPLICAS, tmp_path) as running:
        await telegram.wait("sendMessage", count=len(USERS), where=lambda c: c in digests(telegram))
        for _ in range(3):  # leases run out again and again: nothing is left to take over
            clock.advance(seconds=LEASE.total_seconds() + 60)
            for application in running:
                await digest_jobs(application)
    assert sorted(c.params["chat_id"] for c in digests(telegram)) == USERS
    with open_store(location) as store:
        assert store.bot_documents().list("digest-claims/") == []
        for user in USERS:
            found = store.documents(f"users/{user}").get("digest")
            assert found is not None and found.value["claim"] is None


async def test_a_digest_is_not_taken_over_by_a_replica_whose_clock_runs_ahead(
    location: str, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    """A replica whose clock runs minutes ahead of the one sending a report waits a whole
    lease, on its own clock, before it takes over the claim: it never sends it again."""
    behind = Clock(START - timedelta(hours=1))
    ahead = Clock(START - timedelta(hours=1) + 2 * LEASE)
    set_up(location, telegram, behind(), reminder_count=0)
    first = [True]  # the first report to USERS[0] waits: a slow Telegram

    def is_first(params: dict[str, Any]) -> bool:
        return str(params.get("chat_id")) == str(USERS[0]) and bool(first and first.pop())

    slow = telegram.hold("sendMessage", when=is_first)
    async with replicas(location, telegram, [behind, ahead], tmp_path) as (late, early):
        behind.advance(hours=1, seconds=30)
        sending = asyncio.create_task(services(late).digest.run(late.bot))
        await eventually(lambda: not first, timeout=10)  # claimed: Telegram is slow
        ahead.advance(hours=1, seconds=30)  # 09:04:30 by this clock, 4 min after the claim
        for _ in range(3):
            await digest_jobs(early)  # sends the other reports, watches the claim
        assert sorted(c.params["chat_id"] for c in digests(telegram)) == USERS[1:]
        slow.set()
        await sending
        for clock in (behind, ahead):
            clock.advance(seconds=LEASE.total_seconds() + 60)
        for application in (late, early):
            await digest_jobs(application)
    assert sorted(c.params["chat_id"] for c in digests(telegram)) == USERS
    with open_store(location) as store:
        assert store.bot_documents().list("digest-claims/") == []


async def test_a_digest_taken_over_and_left_again_is_not_sent_a_third_time(
    location: str, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    """At most one repeat: the replica that took a left claim over dies too; the third one
    records the report as done instead of sending a third copy."""
    clock = Clock(START - timedelta(hours=1))
    set_up(location, telegram, clock(), reminder_count=0)
    doom = Doom(telegram, USERS[0], count=2)
    try:
        async with replicas(location, telegram, [clock] * 3, tmp_path) as (first, second, third):
            clock.advance(hours=1, seconds=30)
            await doom.kill(services(first).digest.run(first.bot))
            await stop(first)
            await digest_jobs(second)  # sends the others; its first look at the claim
            clock.advance(seconds=LEASE.total_seconds())
            await doom.kill(services(second).digest.sweep(second.bot))  # takes over, dies too
            await stop(second)
            for _ in range(3):
                await digest_jobs(third)
                clock.advance(seconds=LEASE.total_seconds())
        assert sorted(c.params["chat_id"] for c in digests(telegram)) == USERS[1:]
    finally:
        doom.hang_up()
    with open_store(location) as store:
        found = store.documents(f"users/{USERS[0]}").get("digest")
        assert found is not None and found.value["claim"] is None
        assert store.bot_documents().list("digest-claims/") == []


async def test_replicas_whose_clocks_differ_still_send_each_reminder_once(
    location: str, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    """A replica whose clock runs minutes ahead waits a whole lease, on its own clock, before it
    takes over a claim: it never sends again what a slower replica is sending right now."""
    # The other replica's clock sees nothing due until the test sets it ahead: however slowly
    # this machine runs, it first sees task 0's claim when it is already minutes ahead.
    behind, ahead = Clock(START), Clock(START - timedelta(hours=1))
    set_up(location, telegram, behind(), reminder_count=4)
    first = [True]  # the first reminder sent waits (not the digests)

    def is_first(params: dict[str, Any]) -> bool:
        return str(params.get("chat_id")) == str(ALICE) and bool(first and first.pop())

    slow = telegram.hold("sendMessage", when=is_first)
    async with replicas(location, telegram, [behind, ahead], tmp_path) as (late, early):
        behind.advance(minutes=1, seconds=1)  # task 0 due for one replica: it claims, it waits
        with open_store(location) as store:
            await eventually(
                lambda: any(r.claim is not None for r in reminders.every(store)), timeout=10
            )
        ahead.offset = behind.offset + timedelta(minutes=5)  # 5 minutes ahead: all are due
        await telegram.wait("sendMessage", count=3, chat_id=ALICE)  # tasks 1-3, not task 0
        await services(early).reminders.run(early.bot)
        slow.set()
        await telegram.wait("sendMessage", count=4, chat_id=ALICE)
        # Task 0 recorded as sent before the clocks move on: a claim still held 10 minutes
        # later would be a crash's, rightly taken over (and sent again, marked as a repeat).
        with open_store(location) as store:
            await eventually(
                lambda: all(r.claim is None for r in reminders.every(store)), timeout=30
            )
        await services(late).reminders.run(late.bot)  # after the tick that sent task 0
        behind.advance(minutes=10)
        ahead.advance(minutes=10)
        for application in (late, early):
            await services(application).reminders.run(application.bot)
    assert deliveries(telegram) == [f"task {n}" for n in range(4)]


# -- two real processes --------------------------------------------------------------------------


def read(log: Path) -> str:
    return log.read_text("utf-8", "replace") if log.exists() else ""


async def eventually(condition: Callable[[], bool], timeout: float) -> None:
    """Wait until ``condition()`` holds; the timeout only keeps a broken test from hanging."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        assert loop.time() < deadline, "the condition never held"
        await asyncio.sleep(0.1)


def _python_m_bot(config: Path, log: Path) -> subprocess.Popen[bytes]:
    environ = {**os.environ, "PTB_TIMEDELTA": "1", "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as output:
        return subprocess.Popen(
            [sys.executable, "-m", "bot", "--config", str(config)],
            cwd=ROOT,
            env=environ,
            stdout=output,
            stderr=subprocess.STDOUT,
        )


async def test_two_python_m_bot_processes_on_one_database_send_each_once(
    pg_url: str, telegram: FakeBotAPI, tmp_path: Path
) -> None:
    now = datetime.now(UTC)
    # A daily digest whose time was an hour ago (the catch-up of both sends it), reminders due
    # a few seconds from now: both processes come up and race for them.
    earlier = now - timedelta(hours=1)
    set_up(pg_url, telegram, now - timedelta(seconds=57), reminder_count=3, apart=False)
    configs = [tmp_path / f"config{n}.toml" for n in range(2)]
    for n, config in enumerate(configs):  # one host and port: each its own replica identity
        config.write_text(
            textwrap.dedent(
                f"""\
                storage = "{pg_url}"
                [telegram]
                token = "{TOKEN}"
                base_url = "{telegram.base_url}"
                flood_control = false
                [digest]
                schedule = "{earlier.minute} {earlier.hour} * * *"
                timezone = "UTC"
                default = "on"
                grace_hours = 12
                [reminders]
                timezone = "{SHANGHAI}"
                [replicas]
                identity = "bot{n}"
                """
            ),
            encoding="utf-8",
        )
    logs = [tmp_path / f"bot{n}.log" for n in range(2)]
    processes = [_python_m_bot(config, log) for config, log in zip(configs, logs, strict=True)]
    try:
        # Both have run the digest's catch-up (their jobs run) and between them sent it all;
        # a stop lets a tick under way finish, so a second copy would be seen below.
        await eventually(lambda: all("digest for" in read(log) for log in logs), timeout=90)
        await telegram.wait("sendMessage", count=len(USERS) + 3, timeout=90)
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            process.wait(timeout=60)
    said = "\n".join(read(log) for log in logs)
    assert all(p.returncode == 0 for p in processes), said
    assert sorted(c.params["chat_id"] for c in digests(telegram)) == USERS, said
    assert deliveries(telegram) == ["task 0", "task 1", "task 2"], said
    with open_store(pg_url) as store:
        assert {r.state for r in reminders.every(store)} == {"sent"}
