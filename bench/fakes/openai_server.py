"""A fake OpenAI-compatible chat-completions endpoint on 127.0.0.1, scripted by tests.

The real openai SDK talks to it through ``base_url``, over real HTTP, so the tests exercise the
SDK's request building, response parsing, streaming and error mapping as in production. A test
queues what the "model" does next, one item per request, and reads back every request received::

    async with FakeOpenAI() as llm:
        llm.script(
            ToolCalls(("addMemory", {"content": "...", "tags": ["a"]})),
            Answer("Done."),
        )
        ... drive the bot ...
        assert llm.requests[1].tool_results()[0]["ok"]

A scripted item may also be a function of the request (``lambda request: Answer(...)``), to
answer from what the bot sent back. Requests with ``"stream": true`` are answered as server-sent
events (chunks, tool-call deltas, the usage chunk, ``[DONE]``), others as one JSON document.
An empty script answers 500 with a message saying so, so a missing script item fails loudly.

``POST /v1/embeddings`` reads the same script: ``Embeddings(rows)`` answers those vectors (or,
with ``rows=None``, a vector of ``dimensions`` per input), and ``Status``, ``Slow``,
``Garbage`` and ``Disconnect`` fail as they do for chat completions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

API_KEY = "sk-test-key"


@dataclass(frozen=True)
class Answer:
    """The model answers with text."""

    text: str
    prompt_tokens: int = 100
    completion_tokens: int = 20


@dataclass(frozen=True, init=False)
class ToolCalls:
    """The model calls tools: ``(name, arguments)`` pairs; a ``str`` argument is sent raw."""

    calls: tuple[tuple[str, dict[str, Any] | str], ...]
    text: str = ""
    prompt_tokens: int = 100
    completion_tokens: int = 10

    def __init__(self, *calls: tuple[str, dict[str, Any] | str], text: str = "") -> None:
        object.__setattr__(self, "calls", calls)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "prompt_tokens", 100)
        object.__setattr__(self, "completion_tokens", 10)


@dataclass(frozen=True)
class Embeddings:
    """An embeddings answer: these rows, or one row of ``dimensions`` per input."""

    rows: list[list[float]] | None = None
    dimensions: int = 4


@dataclass(frozen=True)
class Status:
    """An HTTP error, with the OpenAI error body and optional headers (``retry-after``)."""

    status: int
    message: str = "scripted error"
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Slow:
    """Wait ``seconds`` (longer than the client's timeout) before answering ``then``."""

    seconds: float
    then: Answer | ToolCalls | Embeddings = Answer("too late")


@dataclass(frozen=True)
class Held:
    """Answer ``then`` only once the test sets ``release`` (to order events across chats)."""

    release: asyncio.Event
    then: Answer | ToolCalls


@dataclass(frozen=True)
class Garbage:
    """A 200 response whose body is not what the API returns (``stream``: as SSE)."""

    body: str = "<html>Bad gateway, probably a proxy</html>"


@dataclass(frozen=True)
class Disconnect:
    """Close the connection without answering."""


Reply = Answer | ToolCalls | Embeddings | Status | Slow | Held | Garbage | Disconnect
Scripted = Reply | Callable[["Request"], Reply]


@dataclass(frozen=True)
class Request:
    """One request received: its headers and JSON body."""

    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages sent."""
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str:
        """The system prompt (the first message's content)."""
        first = self.messages[0] if self.messages else {}
        return str(first.get("content", "")) if first.get("role") == "system" else ""

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered."""
        return [t["function"]["name"] for t in self.body.get("tools", [])]

    def tool_results(self) -> list[dict[str, Any]]:
        """The tool results sent back in this request, parsed, in order."""
        return [json.loads(m["content"]) for m in self.messages if m.get("role") == "tool"]

    @property
    def last_user(self) -> str:
        """The content of the last user message."""
        users = [m for m in self.messages if m.get("role") == "user"]
        return str(users[-1]["content"]) if users else ""


class FakeOpenAI:
    """The fake endpoint; ``base_url`` is what the SDK's ``base_url`` should be."""

    def __init__(self, api_key: str = API_KEY) -> None:
        self.api_key = api_key
        self.requests: list[Request] = []
        self._script: deque[Scripted] = deque()
        self._runner: web.AppRunner | None = None
        self._closing = asyncio.Event()
        self._calls = 0
        self.port = 0
        # /v1/audio/transcriptions: what it hears next (text, or a Status/Slow to fail)
        self.transcripts: deque[str | Status | Slow] = deque()
        self.audio: list[tuple[str, bytes, str]] = []  # (file name, bytes, model) received

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Scripted) -> None:
        """Queue what the model does for the next requests, in order."""
        self._script.extend(replies)

    @property
    def unused(self) -> int:
        """How many scripted replies were not asked for."""
        return len(self._script)

    async def start(self) -> None:
        """Listen on a free port of 127.0.0.1."""
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_post("/v1/audio/transcriptions", self._transcriptions)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None and server.sockets
        self.port = server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening; slow responses still pending give up."""
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAI:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- serving --------------------------------------------------------------------------------

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        received = Request(dict(request.headers), body)
        self.requests.append(received)
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        if not self._script:
            return _error(500, "fake OpenAI: no scripted reply for this request", None)
        item = self._script.popleft()
        reply = item(received) if callable(item) else item
        if isinstance(reply, Slow):
            with contextlib.suppress(TimeoutError):  # the wait is the point
                await asyncio.wait_for(self._closing.wait(), reply.seconds)
            reply = reply.then
        if isinstance(reply, Held):
            waits = [asyncio.create_task(e.wait()) for e in (reply.release, self._closing)]
            _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            for task in pending:
                task.cancel()
            reply = reply.then
        if isinstance(reply, Status):
            return _error(reply.status, reply.message, reply.code, reply.headers)
        if isinstance(reply, Disconnect):
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        stream = bool(body.get("stream"))
        if isinstance(reply, Garbage):
            if stream:
                return await self._sse(request, [reply.body])
            return web.Response(text=reply.body, content_type="application/json")
        self._calls += 1
        if stream:
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            return await self._sse(request, self._chunks(reply, body["model"], usage))
        return web.json_response(self._completion(reply, body["model"]))

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        received = Request(dict(request.headers), body)
        self.requests.append(received)
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        if not self._script:
            return _error(500, "fake OpenAI: no scripted reply for this request", None)
        item = self._script.popleft()
        reply = item(received) if callable(item) else item
        if isinstance(reply, Slow):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), reply.seconds)
            reply = reply.then
        if isinstance(reply, Status):
            return _error(reply.status, reply.message, reply.code, reply.headers)
        if isinstance(reply, Disconnect):
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        if isinstance(reply, Garbage):
            return web.Response(text=reply.body, content_type="application/json")
        if not isinstance(reply, Embeddings):
            return _error(500, f"fake OpenAI: {type(reply).__name__} is no embeddings answer", None)
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        rows = reply.rows
        if rows is None:
            rows = [[float(i + 1)] + [0.5] * (reply.dimensions - 1) for i in range(len(inputs))]
        data = [{"object": "embedding", "index": i, "embedding": row} for i, row in enumerate(rows)]
        usage = {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}
        return web.json_response(
            {"object": "list", "data": data, "model": body["model"], "usage": usage}
        )

    async def _transcriptions(self, request: web.Request) -> web.StreamResponse:
        """OpenAI's speech to text: a multipart ``file`` and ``model``; ``{"text": ...}``."""
        form = await request.post()
        upload, model = form.get("file"), str(form.get("model", ""))
        if not isinstance(upload, web.FileField) or not model:
            return _error(400, "file and model are required", None)
        self.audio.append((upload.filename, upload.file.read(), model))
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_api_key")
        if not self.transcripts:
            return _error(500, "fake OpenAI: no scripted transcript for this request", None)
        reply = self.transcripts.popleft()
        if isinstance(reply, Slow):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), reply.seconds)
            reply = reply.then.text
        if isinstance(reply, Status):
            return _error(reply.status, reply.message, reply.code, reply.headers)
        return web.json_response({"text": reply})

    def _completion(self, reply: Answer | ToolCalls, model: str) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        finish = "stop"
        if isinstance(reply, ToolCalls):
            message["tool_calls"] = [
                {
                    "id": self._call_id(i),
                    "type": "function",
                    "function": {"name": name, "arguments": _raw(args)},
                }
                for i, (name, args) in enumerate(reply.calls)
            ]
            finish = "tool_calls"
        return {
            "id": f"chatcmpl-{self._calls}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": _usage(reply),
        }

    def _chunks(self, reply: Answer | ToolCalls, model: str, usage: bool) -> list[str]:
        head = {
            "id": f"chatcmpl-{self._calls}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return json.dumps({**head, "choices": [choice]}, ensure_ascii=False)

        out = [chunk({"role": "assistant", "content": ""})]
        text = reply.text
        for start in range(0, len(text), 7):  # several small deltas, as real endpoints send
            out.append(chunk({"content": text[start : start + 7]}))
        finish = "stop"
        if isinstance(reply, ToolCalls):
            finish = "tool_calls"
            for i, (name, args) in enumerate(reply.calls):
                raw = _raw(args)
                half = len(raw) // 2
                first = {"id": self._call_id(i), "type": "function"}
                out.append(
                    chunk(
                        {
                            "tool_calls": [
                                {**first, "index": i, "function": {"name": name, "arguments": ""}}
                            ]
                        }
                    )
                )
                for piece in (raw[:half], raw[half:]):
                    delta = {"index": i, "function": {"arguments": piece}}
                    out.append(chunk({"tool_calls": [delta]}))
        out.append(chunk({}, finish))
        if usage:
            out.append(json.dumps({**head, "choices": [], "usage": _usage(reply)}))
        out.append("[DONE]")
        return out

    def _call_id(self, index: int) -> str:
        return f"call_{self._calls}_{index}"

    async def _sse(self, request: web.Request, events: list[str]) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        for data in events:
            await response.write(f"data: {data}\n\n".encode())
        await response.write_eof()
        return response


def _raw(args: dict[str, Any] | str) -> str:
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def _usage(reply: Answer | ToolCalls) -> dict[str, int]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }


def _error(
    status: int, message: str, code: str | None, headers: dict[str, str] | None = None
) -> web.Response:
    body = {"error": {"message": message, "type": "fake_error", "param": None, "code": code}}
    return web.json_response(body, status=status, headers=headers)
