"""``Store.ping``: the health check of both backends (the bot's ``/healthz`` in webhook mode).

It succeeds on a store that can be written (on every backend: ``contract/``), and raises
``MemoryStoreError`` saying why when the data directory is gone or read-only, or the database is
down; and succeeds again once it is back.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.pg_server import Server
from memory import MemoryLoadFailed, MemorySaveFailed, MemoryStoreError, open_store
from memory.files import MemoryStore


def test_a_data_dir_gone_is_unreachable_until_it_is_back(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with MemoryStore(data_dir) as store:
        store.namespace("users/42").add("here")
        store.ping()
        shutil.rmtree(data_dir)
        with pytest.raises(MemoryLoadFailed) as gone:
            store.ping()
        assert "does not exist" in gone.value.message
        data_dir.write_text("a file where the folder was")
        with pytest.raises(MemoryLoadFailed):
            store.ping()
        data_dir.unlink()
        data_dir.mkdir()
        store.ping()
    assert list(data_dir.iterdir()) == [data_dir / "users"]  # the probe left nothing behind


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, check=False)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Path]:
    """A small tmpfs of its own (root ignores permissions: only a read-only mount refuses)."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = _run("mount", "-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", str(folder))
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs (needs root): {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        if _run("umount", str(folder)).returncode != 0:
            _run("umount", "-l", str(folder))


def test_a_read_only_data_dir_is_unreachable_until_writable_again(disk: Path) -> None:
    with MemoryStore(disk) as store:
        store.ping()
        assert _run("mount", "-o", "remount,ro", str(disk)).returncode == 0
        try:
            with pytest.raises(MemorySaveFailed) as refused:
                store.ping()
            assert "cannot write" in refused.value.message
        finally:
            assert _run("mount", "-o", "remount,rw", str(disk)).returncode == 0
        store.ping()


def test_a_stopped_database_is_unreachable_until_it_is_back(pg_server: Server, pg_url: str) -> None:
    with open_store(pg_url, timeout=3.0) as store:
        store.ping()
        pg_server.stop()
        try:
            with pytest.raises(MemoryStoreError) as down:
                store.ping()
            assert "could not read from the database" in down.value.message
        finally:
            pg_server.start()
        store.ping()
