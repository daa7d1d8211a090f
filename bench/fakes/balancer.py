"""A small HTTP load balancer on 127.0.0.1, standing in for the reverse proxy of a deployment.

Requests go to the backends in turn (round robin). A backend that refuses the connection or
drops it is skipped for ``down_seconds`` and the request is tried on the next one, as nginx's
``proxy_next_upstream error`` and Caddy's ``lb_try_duration`` do; a request no backend takes is
answered 502, and Telegram (here the fake Bot API) delivers it again later. Responses, errors
included, are passed back as the backend gave them.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter

import aiohttp
from aiohttp import web

HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "host", "content-length"}
)


class Balancer:
    """Round robin over ``backends`` (``http://127.0.0.1:8001``, ...), skipping dead ones."""

    def __init__(self, backends: list[str], *, down_seconds: float = 1.0, timeout: float = 30.0):
        if not backends:
            raise ValueError("a balancer needs at least one backend")
        self.backends = list(backends)
        self.down_seconds = down_seconds
        self.timeout = timeout
        self.forwarded: Counter[str] = Counter()  # requests each backend answered
        self.refused: Counter[str] = Counter()  # connections each backend refused or dropped
        self._turn = itertools.cycle(range(len(self.backends)))
        self._down_until = [0.0] * len(self.backends)
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self, port: int = 0) -> Balancer:
        self._session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=self.timeout), auto_decompress=False
        )
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def __aenter__(self) -> Balancer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _order(self) -> list[int]:
        """Every backend once, starting with the next in turn; those marked down last."""
        first = next(self._turn)
        order = [(first + i) % len(self.backends) for i in range(len(self.backends))]
        now = time.monotonic()
        return sorted(order, key=lambda i: self._down_until[i] > now)  # stable: turn kept

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        body = await request.read()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        for index in self._order():
            backend = self.backends[index]
            try:
                async with self._session.request(
                    request.method, backend + request.path_qs, data=body, headers=headers
                ) as answer:
                    payload = await answer.read()
                    self.forwarded[backend] += 1
                    kept = {k: v for k, v in answer.headers.items() if k.lower() not in HOP_BY_HOP}
                    return web.Response(status=answer.status, body=payload, headers=kept)
            except (TimeoutError, aiohttp.ClientConnectionError):
                self.refused[backend] += 1
                self._down_until[index] = time.monotonic() + self.down_seconds
        return web.Response(status=502, text="no backend answered")
