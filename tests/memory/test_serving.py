"""``Store.claim_serving``: a data directory serves one bot process; a database, every replica.

The file store's inbox is one process's, so a second bot on the same data directory is refused,
naming the first, until the first closes its store or dies (the kernel lets the lock go); the
CLI and the console, which do not claim, share the directory as before.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memory import StoreInUse, open_store
from memory.files import MemoryStore

# A child process that claims the data directory, says so, and waits to be killed.
_HOLDER = """
import sys, time
from memory.files import MemoryStore
store = MemoryStore(sys.argv[1])
store.claim_serving()
print("claimed", flush=True)
time.sleep(120)
"""


def test_a_second_claim_on_a_data_directory_is_refused_naming_the_first(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with MemoryStore(data_dir) as first:
        first.claim_serving()
        first.claim_serving()  # the same store again: still its own
        with MemoryStore(data_dir) as second:
            with pytest.raises(StoreInUse) as refused:
                second.claim_serving()
            assert f"pid {os.getpid()}" in refused.value.message
            assert str(data_dir) in refused.value.message
            # Memories, the CLI's and the console's way in, are still shared.
            second.namespace("users/1").add("written beside the bot")
            assert [m.content for m in first.namespace("users/1").memories()] == [
                "written beside the bot"
            ]
    with MemoryStore(data_dir) as later:
        later.claim_serving()  # the first closed: free again


def test_a_claim_dies_with_its_process(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(data_dir)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "claimed"
        with MemoryStore(data_dir) as store:
            with pytest.raises(StoreInUse, match=f"pid {holder.pid}"):
                store.claim_serving()
            holder.send_signal(signal.SIGKILL)
            holder.wait(30)
            store.claim_serving()  # no clean close: the kernel let the lock go
    finally:
        holder.kill()
        holder.communicate()


def test_a_directory_that_cannot_hold_the_lock_is_served_unclaimed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / ".bot").write_text("a file where the bot's folder goes")
    with MemoryStore(data_dir) as store:
        store.claim_serving()
    assert "cannot claim" in caplog.text and "would not be refused" in caplog.text


def test_replicas_on_a_database_all_serve(pg_url: str) -> None:
    with open_store(pg_url) as first, open_store(pg_url) as second:
        first.claim_serving()
        second.claim_serving()
        assert first.updates() is not None  # they share the queue instead
