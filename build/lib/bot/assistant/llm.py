"""One chat-completions request to an OpenAI-compatible endpoint, with our retry policy.

The real openai SDK (3.x) does the HTTP: ``AsyncOpenAI(base_url, api_key, timeout)`` over its
own httpx2 client, which honours the usual proxy variables. ``timeout`` is httpx's: the longest
wait for a connection or for the next bytes of the answer (a streamed answer may take longer in
total, as long as it keeps coming).

Retries are ours, so the SDK's are off (``max_retries=0``); its policy would also retry a
timeout, making a user wait three times ``timeout`` for an apology. Ours:

- 429 (rate limited): retried after the server's ``retry-after`` if that is at most
  ``max_wait`` seconds, else the user is told how long to wait; ``insufficient_quota`` is not
  retried (waiting will not help);
- 5xx (and 408, 409), an error event in a stream, connection errors: retried with exponential
  backoff (``backoff`` x 1, 2, 4 ... with
  jitter);
- timeouts, 401/403, other 4xx and unreadable answers: not retried;
- a streamed answer is retried only if it failed before any text reached the user.

At most ``retries`` retries per request. Whatever still fails becomes one ``LLMFailure`` with a
``kind`` the bot maps to a message in the user's language.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

log = logging.getLogger(__name__)

TextSink = Callable[[str], Awaitable[None]]

# LLMFailure.kind values.
TIMEOUT = "timeout"
CONNECTION = "connection"
AUTH = "auth"
RATE_LIMIT = "rate_limit"
QUOTA = "quota"
SERVER = "server"
REQUEST = "request"
BAD_RESPONSE = "bad_response"


class LLMFailure(Exception):
    """The endpoint did not give a usable answer.

    ``kind`` is one of the constants above; ``status`` the HTTP status if there was one;
    ``retry_after`` the seconds the server asked to wait (429).
    """

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry a failed request (see the module docstring)."""

    retries: int = 2
    backoff: float = 0.5
    max_wait: float = 20.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (0-based)."""
        if retry_after is not None:
            return retry_after
        return self.backoff * 2.0**attempt * (1 - 0.25 * random.random())


@dataclass(frozen=True)
class ToolCall:
    """One function call the model asked for; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass
class Meter:
    """What requests cost: how many, the tokens the endpoint reported, the time in the SDK."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0  # waiting for the SDK (the model, the network, retries' sleeps)


@dataclass
class Completion:
    """What one request produced: text and/or tool calls."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    shown: bool = False  # streamed text already reached the user (so no retry)

    def message(self) -> dict[str, Any]:
        """The assistant message to send back with the tool results."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                }
                for call in self.tool_calls
            ]
        return message


def make_client(base_url: str, api_key: str, timeout: float) -> openai.AsyncOpenAI:
    """The SDK client for an endpoint; retries are ``ChatModel``'s (see the module docstring)."""
    return openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key,
        timeout=openai.Timeout(timeout, connect=min(timeout, 10.0)),
        max_retries=0,
    )


def _retry_after(error: openai.APIStatusError) -> float | None:
    headers = error.response.headers
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is not None:
            try:
                return max(0.0, float(value) / divisor)
            except ValueError:
                return None
    return None


def _failure(error: Exception) -> LLMFailure:
    """Map an SDK error (or an unreadable answer) to an ``LLMFailure``."""
    if isinstance(error, openai.APITimeoutError):
        return LLMFailure(TIMEOUT, "the endpoint did not answer in time")
    if isinstance(error, openai.APIConnectionError):
        return LLMFailure(CONNECTION, "could not connect to the endpoint")
    if isinstance(error, openai.APIStatusError):
        status = error.status_code
        message = f"HTTP {status}: {error.message}"
        if status in (401, 403):
            return LLMFailure(AUTH, message, status=status)
        if status == 429:
            code = getattr(error, "code", None)
            kind = QUOTA if code == "insufficient_quota" else RATE_LIMIT
            return LLMFailure(kind, message, status=status, retry_after=_retry_after(error))
        # 408 and 409 are the server's timeouts and lock conflicts: worth another try.
        kind = SERVER if status >= 500 or status in (408, 409) else REQUEST
        return LLMFailure(kind, message, status=status)
    if isinstance(error, openai.APIError):  # an error event in the middle of a stream
        return LLMFailure(SERVER, f"the endpoint reported an error: {error.message}")
    return LLMFailure(BAD_RESPONSE, f"unreadable answer: {type(error).__name__}: {error}")


def _retryable(failure: LLMFailure, policy: RetryPolicy) -> bool:
    if failure.kind == RATE_LIMIT:
        return failure.retry_after is None or failure.retry_after <= policy.max_wait
    return failure.kind in (SERVER, CONNECTION)


class ChatModel:
    """A model behind an OpenAI-compatible endpoint, asked one request at a time."""

    def __init__(
        self,
        client: openai.AsyncOpenAI,
        model: str,
        *,
        stream: bool = False,
        retry: RetryPolicy | None = None,
        temperature: float | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.stream = stream
        self.retry = retry if retry is not None else RetryPolicy()
        self.temperature = temperature

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections."""
        await self.client.close()

    async def complete(
        self,
        messages: Sequence[dict[str, Any]],
        tools: Sequence[dict[str, Any]],
        *,
        on_text: TextSink | None = None,
        meter: Meter | None = None,
    ) -> Completion:
        """Ask the model once (retrying as the policy says); ``LLMFailure`` if it cannot.

        ``meter`` adds up requests, tokens and time, failed attempts included. With streaming,
        ``on_text`` gets the answer's text as it arrives.
        """
        meter = meter if meter is not None else Meter()
        options: dict[str, Any] = {"model": self.model, "messages": list(messages)}
        if tools:
            options["tools"] = list(tools)
        if self.temperature is not None:
            options["temperature"] = self.temperature
        attempt = 0
        while True:
            result = Completion()
            started = time.perf_counter()
            meter.requests += 1
            try:
                if self.stream:
                    await self._streamed(options, result, meter, on_text)
                else:
                    await self._whole(options, result, meter)
                return result
            except (openai.APIError, ValueError) as e:  # ValueError: an unreadable answer
                failure = _failure(e)
                if (
                    result.shown
                    or attempt >= self.retry.retries
                    or not _retryable(failure, self.retry)
                ):
                    raise failure from e
                wait = self.retry.delay(attempt, failure.retry_after)
                log.warning("LLM request failed (%s); retry in %.2f s", failure.message, wait)
                attempt += 1
                await asyncio.sleep(wait)
            finally:
                meter.seconds += time.perf_counter() - started

    async def _whole(self, options: dict[str, Any], result: Completion, meter: Meter) -> None:
        response: ChatCompletion = await self.client.chat.completions.create(**options)
        with _shape_checked():
            if response.usage is not None:
                meter.prompt_tokens += response.usage.prompt_tokens
                meter.completion_tokens += response.usage.completion_tokens
            message = response.choices[0].message
            result.text = message.content or ""
            for call in message.tool_calls or ():
                if call.type == "function":  # custom (free-form) tools are not ours
                    function = call.function
                    result.tool_calls.append(ToolCall(call.id, function.name, function.arguments))

    async def _streamed(
        self, options: dict[str, Any], result: Completion, meter: Meter, on_text: TextSink | None
    ) -> None:
        stream = await self.client.chat.completions.create(
            **options, stream=True, stream_options={"include_usage": True}
        )
        text: list[str] = []
        calls: dict[int, list[str]] = {}  # index -> [id, name, arguments so far]
        finished = False
        chunk: ChatCompletionChunk
        async for chunk in stream:
            with _shape_checked():
                if chunk.usage is not None:
                    meter.prompt_tokens += chunk.usage.prompt_tokens
                    meter.completion_tokens += chunk.usage.completion_tokens
                if not chunk.choices:
                    continue
                finished = finished or chunk.choices[0].finish_reason is not None
                delta = chunk.choices[0].delta
                for part in delta.tool_calls or ():
                    call = calls.setdefault(part.index, ["", "", ""])
                    call[0] = part.id or call[0]
                    if part.function is not None:
                        call[1] = part.function.name or call[1]
                        call[2] += part.function.arguments or ""
                content = delta.content
            if content:
                text.append(content)
                if on_text is not None:
                    # Time spent in on_text (a Telegram edit) counts as the model's: it is
                    # the stream's pace, not the bot's work per turn.
                    result.shown = True
                    await on_text(content)
        if not finished:
            raise ValueError("the stream ended without a finish reason")
        result.text = "".join(text)
        result.tool_calls = [
            ToolCall(cid or f"call_{i}", name, arguments)
            for i, (cid, name, arguments) in sorted(calls.items())
        ]


@contextlib.contextmanager
def _shape_checked() -> Iterator[None]:
    """Turn an answer of the wrong shape into ``ValueError``.

    The SDK builds its response objects without validating them, so a proxy's JSON that is not
    a chat completion surfaces as a missing attribute or a ``None`` where a list should be.
    """
    try:
        yield
    except (AttributeError, IndexError, KeyError, TypeError) as e:
        raise ValueError(f"not a chat completion: {type(e).__name__}: {e}") from e
