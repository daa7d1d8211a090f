"""The replica benchmark's kill run, smaller: two ``python -m bot`` replicas in webhook mode
behind the balancer, on the session's PostgreSQL, one SIGKILLed midway and started again.

Nothing lost, nothing stored twice, every chat in order, the digest and each reminder (due
together after the load) sent once. Slow (the digest and the reminders wait for a minute
boundary: about two minutes), and the proof the issue asks for.
"""

from __future__ import annotations

import asyncio

import pytest

from bench.pg_server import Server
from bench.replica_bench import run_once

USERS, MESSAGES = 8, 10


@pytest.mark.slow
def test_two_replicas_one_killed_midway_lose_and_repeat_nothing(pg_server: Server) -> None:
    result = asyncio.run(
        run_once(
            pg_server.new_database(),
            replicas=2,
            users=USERS,
            messages=MESSAGES,
            kill=True,
            lead=25,
        )
    )
    assert result.notes and "SIGKILLed" in result.notes[0]
    assert (result.lost, result.duplicated, result.out_of_order) == (0, 0, 0)
    assert len(result.digests) == USERS and set(result.digests.values()) == {1}
    assert len(result.reminders) == USERS and set(result.reminders.values()) == {1}
