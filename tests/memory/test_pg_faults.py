"""The PostgreSQL store under faults: a killed connection, a stopped server, a racing start.

Run against the real server of the session (``pg_server``); the faults are made the way they
happen: ``pg_terminate_backend`` on the store's connection while its transaction is open, the
server stopped (``pg_ctl stop -m immediate``, as a crash) and started again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from bench.pg_server import Server, binaries, installation
from memory import MemoryLoadFailed, MemorySaveFailed, open_store
from memory.pg.schema import MIGRATIONS

REPO_ROOT = Path(__file__).resolve().parents[2]
NS = "users/42"
GATE = 4242  # an advisory lock the test holds to stop the store's transaction midway


def wait_until_blocked(server: Server, database: str) -> int:
    """The pid of the store's backend once it waits on ``GATE`` inside its transaction."""
    while True:
        rows = server.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND wait_event = 'advisory'"
            " AND state = 'active'",
            database,
        )
        if rows:
            return int(rows[0][0])


def test_a_connection_killed_mid_transaction_leaves_nothing_half_done(
    pg_server: Server, pg_url: str
) -> None:
    database = urlsplit(pg_url).path.lstrip("/")
    with open_store(pg_url) as store:
        ns = store.namespace(NS)
        kept = ns.add("written before the fault")
        # Every inserted memory row now waits for GATE: the import's first row is written,
        # the namespace's version already bumped, when its connection is killed.
        import psycopg

        with psycopg.connect(pg_url, autocommit=True) as gatekeeper:
            gatekeeper.execute(
                "CREATE FUNCTION wait_for_gate() RETURNS trigger LANGUAGE plpgsql AS"
                f" $$ BEGIN PERFORM pg_advisory_xact_lock({GATE}); RETURN NEW; END $$"
            )
            gatekeeper.execute(
                "CREATE TRIGGER gate BEFORE INSERT ON memories FOR EACH ROW"
                " EXECUTE FUNCTION wait_for_gate()"
            )
            gatekeeper.execute("SELECT pg_advisory_lock(%s)", (GATE,))
            failure: list[BaseException] = []

            def importing() -> None:
                records = [{"id": n, "content": f"imported {n}"} for n in range(1, 51)]
                try:
                    ns.import_memories(records)
                except MemorySaveFailed as e:
                    failure.append(e)

            worker = threading.Thread(target=importing)
            worker.start()
            pid = wait_until_blocked(pg_server, database)
            pg_server.execute("SELECT pg_terminate_backend(%s)", pid)
            worker.join()
            gatekeeper.execute("SELECT pg_advisory_unlock(%s)", (GATE,))
            gatekeeper.execute("DROP TRIGGER gate ON memories")

        assert len(failure) == 1
        assert "could not save to the database" in str(failure[0])
        assert ns.memories() == [kept]  # none of the 50, in this process
        after = ns.add("written after the fault")  # a fresh connection, as if nothing happened
    with open_store(pg_url) as fresh:
        assert [m.content for m in fresh.namespace(NS).memories()] == [
            kept.content,
            after.content,
        ]


def test_the_database_stopped_and_started_again_mid_run(pg_server: Server, pg_url: str) -> None:
    with open_store(pg_url, timeout=3.0) as store:
        ns = store.namespace(NS)
        docs = store.documents(NS)
        before = ns.add("before the outage")
        docs.put("history", ["before"])
        pg_server.stop()
        try:
            with pytest.raises(MemorySaveFailed) as saving:
                ns.add("during the outage")
            assert saving.value.code == "MEMORY_SAVE_FAILED"
            with pytest.raises(MemoryLoadFailed):
                ns.search("outage")
            with pytest.raises(MemorySaveFailed):
                docs.put("history", ["during"])
        finally:
            pg_server.start()
        after = ns.add("after the outage")
        assert [m.id for m in ns.memories()] == [before.id, after.id]
        assert [hit.memory.id for hit in ns.search("outage", ranker="seed")] == [
            before.id,
            after.id,
        ]
        got = docs.get("history")
        assert got is not None and got.value == ["before"]


def test_a_store_that_cannot_reach_the_database_says_so(pg_server: Server) -> None:
    url = pg_server.url("no_such_database")
    with pytest.raises(MemoryLoadFailed) as caught:
        open_store(url, timeout=2.0)
    assert "could not open the database" in caught.value.message
    assert "no_such_database" in caught.value.message  # what the server said


def test_the_password_never_appears_in_an_error(pg_server: Server) -> None:
    url = f"postgresql://postgres:hunter2secret@/no_such_database?host={pg_server.folder}"
    with pytest.raises(MemoryLoadFailed) as caught:
        open_store(url, timeout=2.0)
    assert "hunter2secret" not in caught.value.message
    assert "hunter2secret" not in str(caught.value.path)


def test_stores_starting_together_migrate_once(pg_url: str) -> None:
    opened: list[Any] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def opening() -> None:
        start.wait()
        try:
            opened.append(open_store(pg_url))
        except Exception as e:  # noqa: BLE001  (reported by the assertion below)
            errors.append(e)

    threads = [threading.Thread(target=opening) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    import psycopg

    with psycopg.connect(pg_url) as connection:
        versions = [row[0] for row in connection.execute("SELECT version FROM memory_migrations")]
    assert sorted(versions) == list(range(1, len(MIGRATIONS) + 1))
    for store in opened:
        store.close()


def test_without_the_driver_the_error_names_the_extra(pg_url: str) -> None:
    code = (
        "import sys; sys.modules['psycopg'] = None; sys.modules['psycopg_pool'] = None\n"
        "from memory import open_store, MemoryStoreError\n"
        "try:\n    open_store(sys.argv[1])\n"
        "except MemoryStoreError as e:\n    print(e.code, e.message)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, pg_url],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "pip install 'cogito-memory-bot[postgres]'" in done.stdout


def test_a_server_runs_from_binaries_in_a_folder_only_root_may_enter(tmp_path: Path) -> None:
    """``make test`` as root in a checkout of its own (root's home, a ``mktemp -d`` folder):
    the server runs as ``nobody``, which may not enter it to run the binaries in its .venv."""
    if os.geteuid() != 0:
        pytest.skip("the server runs as another account only when the tests run as root")
    private = tmp_path / "checkout"
    private.mkdir(mode=0o700)
    private.chmod(0o700)  # whatever the umask
    base, parts = installation(binaries())  # the wheel's pginstall and the libraries beside it
    for part in parts:
        shutil.copytree(base / part, private / part, symlinks=True)
    server = Server(private / binaries().relative_to(base))
    try:
        server.start()
        assert server.execute("SELECT 40 + 2") == [(42,)]
        with open_store(server.new_database()) as store:
            assert store.namespace(NS).add("runs as nobody").content == "runs as nobody"
    finally:
        server.remove()
