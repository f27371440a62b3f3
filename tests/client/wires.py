"""httpx network layers that misbehave on purpose, wrapped around the real one, for the HTTP tests.

They sit under the client's `HttpWire` (its `http_transport` hook) and in front of a real server, so
what is tested is the client's reaction to a real failure mode: a refused connection, a stream cut
halfway.
"""

from __future__ import annotations

import collections
import json
from typing import Any, AsyncIterator

import httpx


def rpc_method(request: httpx.Request) -> str | None:
    if request.method != "POST":
        return None
    try:
        body = json.loads(request.content)
    except ValueError:
        return None
    return body.get("method") if isinstance(body, dict) else None


class RefusingTransport(httpx.AsyncBaseTransport):
    """Refuses the first `refusals[method]` POSTs of each JSON-RPC method, as a restarting server would."""

    def __init__(self, refusals: dict[str, int]) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.refusals = dict(refusals)
        self.attempts: collections.Counter[str] = collections.Counter()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        method = rpc_method(request)
        if method is not None:
            self.attempts[method] += 1
            if self.refusals.get(method, 0) > 0:
                self.refusals[method] -= 1
                raise httpx.ConnectError("connection refused (injected)", request=request)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


class _CutAfterFirstEvent(httpx.AsyncByteStream):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self.inner:
            yield chunk
            if b"\n\n" in chunk:
                raise httpx.ReadError("the stream broke (injected)")

    async def aclose(self) -> None:
        await self.inner.aclose()


class CuttingTransport(httpx.AsyncBaseTransport):
    """Breaks the SSE answer of the first POST of `method` right after its first event; records GETs."""

    def __init__(self, method: str) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.method = method
        self.cut = False
        self.resumed_from: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and "last-event-id" in request.headers:
            self.resumed_from.append(request.headers["last-event-id"])
        response = await self.inner.handle_async_request(request)
        if not self.cut and rpc_method(request) == self.method and \
                response.headers.get("content-type", "").startswith("text/event-stream"):
            self.cut = True
            return httpx.Response(response.status_code, headers=response.headers,
                                  stream=_CutAfterFirstEvent(response.stream), request=request)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()
