"""The bot's replicas as processes, for the benchmarks that run them (``bench.replica_bench``,
``bench.takeover_bench``): a config file for each, ``Replica`` (started as the Dockerfile
starts it, ready when ``/healthz`` answers, killed or stopped), and the CPU seconds a process
and its children spent (``/proc``), and the database's transactions, to count per update.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import time
from datetime import datetime
from pathlib import Path

from bot.deploy import COMMAND  # + the config file: what the Dockerfile and compose.yaml run

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")
SECRET = "bench-webhook-secret"
LEASE_SECONDS = 3  # how long a killed replica's chats wait for the other replica


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user and system) of process ``pid`` and of its children it has reaped."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / TICK  # utime stime cutime cstime


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds of ``root`` and of every process below it, running or ended (PostgreSQL's
    postmaster: its backends come and go with connections)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    total, stack = 0.0, [root]
    while stack:
        pid = stack.pop()
        with contextlib.suppress(OSError):
            total += cpu_seconds(pid)
        stack += children.get(pid, [])
    return total


def transactions(pg_url: str) -> int:
    """The database's transactions so far (commits and rollbacks, as its statistics say)."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as connection:
        row = connection.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database"
            " WHERE datname = current_database()"
        ).fetchone()
    return int(row[0]) if row else 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(
    folder: Path, name: str, *, pg_url: str | None, telegram_url: str, balancer_url: str,
    port: int, digest_at: datetime | None, short_lease: bool,
) -> Path:  # fmt: skip
    """A replica's config (``pg_url`` None: the bot on the file store in ``folder / name``);
    ``[replicas]`` as deployed, but with ``short_lease`` a killed replica's chats move after
    ``LEASE_SECONDS``, polled for often (the kill run: its heartbeats and polls cost more)."""
    digest = (
        f'[digest]\ndefault = "on"\nschedule = "{digest_at.minute} {digest_at.hour} * * *"\n'
        if digest_at is not None
        else "[digest]\nenabled = false\n"
    )
    path = folder / f"{name}.toml"
    path.write_text(
        (f'storage = "{pg_url}"\n' if pg_url else "")
        + f'data_dir = "{folder / name}"\nlog_level = "warning"\n'
        f'[telegram]\nbase_url = "{telegram_url}"\nflood_control = false\n'
        f'webhook_url = "{balancer_url}/telegram"\nlisten = "127.0.0.1"\nport = {port}\n'
        f'secret_token = "{SECRET}"\n'
        + (
            f"[replicas]\nlease_seconds = {LEASE_SECONDS}\npoll_seconds = 0.1\n"
            if short_lease
            else ""
        )
        + digest,
        encoding="utf-8",
    )
    return path


class Replica:
    """One ``python -m bot`` process in webhook mode."""

    def __init__(
        self, config: Path, port: int, log: Path, checkout: Path = ROOT, cpu: int | None = None
    ) -> None:
        self.config, self.port, self.log, self.checkout = config, port, log, checkout
        self.cpu_pinned = cpu  # the one CPU it may run on (None: any)
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = await asyncio.create_subprocess_exec(
                sys.executable, *COMMAND[1:], str(self.config),
                cwd=self.checkout, env={**os.environ, "TELEGRAM_BOT_TOKEN": _token()},
                stdin=asyncio.subprocess.DEVNULL, stdout=out, stderr=out,
                preexec_fn=self._pin if self.cpu_pinned is not None else None,
            )  # fmt: skip

    def _pin(self) -> None:
        """In the child before it runs the bot: only ``cpu_pinned`` (its threads inherit it)."""
        assert self.cpu_pinned is not None
        os.sched_setaffinity(0, {self.cpu_pinned})

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

    def cpu(self) -> float:
        """Its CPU seconds so far (0 once it has ended)."""
        assert self.process is not None
        with contextlib.suppress(OSError):
            return cpu_seconds(self.process.pid)
        return 0.0

    async def held_to(self, share: float, period: float = 0.1) -> None:
        """Hold the process to ``share`` of one CPU until cancelled, as ``cpulimit`` does: every
        ``period`` its CPU seconds are read, and once it has spent more than its share since
        this began (no more than a period's share saved up while idle) it is stopped
        (SIGSTOP) for as long as brings it back to its share, then continued."""
        assert self.process is not None
        process, loop = self.process, asyncio.get_running_loop()
        credit, spent, at = 0.0, self.cpu(), loop.time()
        try:
            while True:
                await asyncio.sleep(period)
                now_spent, now = self.cpu(), loop.time()
                credit = min(credit + share * (now - at) - (now_spent - spent), share * period)
                spent, at = now_spent, now
                if credit < 0:
                    process.send_signal(signal.SIGSTOP)
                    try:
                        await asyncio.sleep(-credit / share)
                    finally:
                        process.send_signal(signal.SIGCONT)
        except ProcessLookupError:
            return  # it ended

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
