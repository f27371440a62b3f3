"""aiohttp client middlewares that misbehave on purpose, around real requests, for the HTTP tests.

They sit in the client's `HttpWire` (its `middlewares` hook) in front of a real server, so what is
tested is the client's reaction to a real failure mode: a refused connection, a stream cut halfway.
"""

from __future__ import annotations

import collections
import errno
import json
from typing import Any, AsyncIterator

import aiohttp
from aiohttp import ClientHandlerType, ClientRequest, ClientResponse


async def rpc_method(request: ClientRequest) -> str | None:
    if request.method != "POST":
        return None
    try:
        body = json.loads(await request.body.as_bytes())
    except ValueError:
        return None
    return body.get("method") if isinstance(body, dict) else None


class Refusing:
    """Refuses the first `refusals[method]` POSTs of each JSON-RPC method, as a restarting server would."""

    def __init__(self, refusals: dict[str, int]) -> None:
        self.refusals = dict(refusals)
        self.attempts: collections.Counter[str] = collections.Counter()

    async def __call__(self, request: ClientRequest, handler: ClientHandlerType) -> ClientResponse:
        method = await rpc_method(request)
        if method is not None:
            self.attempts[method] += 1
            if self.refusals.get(method, 0) > 0:
                self.refusals[method] -= 1
                raise aiohttp.ClientConnectorError(
                    request.connection_key, ConnectionRefusedError(errno.ECONNREFUSED, "connection refused (injected)"))
        return await handler(request)


class _CutAfterFirstEvent:
    """A response body whose connection is aborted once the first complete event has been read: what
    follows is aiohttp's own reaction to a lost connection."""

    def __init__(self, response: ClientResponse) -> None:
        self.inner = response.content
        self.connection = response.connection

    async def iter_any(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner.iter_any():
            yield chunk
            if b"\n\n" in chunk and self.connection is not None and self.connection.transport is not None:
                self.connection.transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # everything else (release, exception) is the real stream's


class Cutting:
    """Breaks the SSE answer of the first POST of `method` right after its first event; records resumptions."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.cut = False
        self.resumed_from: list[str] = []

    async def __call__(self, request: ClientRequest, handler: ClientHandlerType) -> ClientResponse:
        if request.method == "GET" and "last-event-id" in request.headers:
            self.resumed_from.append(request.headers["last-event-id"])
        cut_this = not self.cut and await rpc_method(request) == self.method
        response = await handler(request)
        if cut_this and response.content_type == "text/event-stream":
            self.cut = True
            response.content = _CutAfterFirstEvent(response)  # type: ignore[assignment]
        return response
