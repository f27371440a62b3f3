"""Small raw-ASGI helpers: read a bounded body, write whole responses, read headers.

The /mcp endpoint is raw ASGI on purpose: it is the hot path, and a framework request object per call
costs more than the protocol work for a trivial tool.
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Awaitable, Callable, Iterable, MutableMapping

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
RawHeaders = list[tuple[bytes, bytes]]

JSON = b"application/json"
SSE = b"text/event-stream"
_JSON_HEADERS: RawHeaders = [(b"content-type", JSON)]
BODY = "hexmcp.body"
"""Scope key of a POST body already read in full (by `body.BodyBuffer`, before the concurrency cap)."""


class BodyTooLarge(Exception):
    pass


class ClientGone(Exception):
    """The client disconnected before its request body arrived."""


def header(scope: Scope, name: bytes) -> bytes | None:
    """The first value of header `name` (lower-case bytes), or None."""
    for key, value in scope["headers"]:
        if key == name:
            return value
    return None


def header_values(scope: Scope, name: bytes) -> list[bytes]:
    return [value for key, value in scope["headers"] if key == name]


async def read_body(scope: Scope, receive: Receive, limit: int) -> bytes:
    """The request body, refused as soon as it passes `limit` bytes (never buffered past it)."""
    declared = header(scope, b"content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    first = await receive()
    if first["type"] == "http.disconnect":
        raise ClientGone
    body = first.get("body", b"")
    if not first.get("more_body", False):
        if len(body) > limit:
            raise BodyTooLarge
        return body
    chunks = [body]
    size = len(body)
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def body_of(scope: Scope) -> bytes:
    """The request body `body.BodyBuffer` read for this request."""
    return scope[BODY]


async def respond(send: Send, status: int, body: bytes = b"", *, content_type: bytes | None = JSON,
                  headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    raw: RawHeaders = [(b"content-type", content_type)] if (body and content_type) else []
    raw.extend(headers)
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def respond_json(send: Send, status: int, body: bytes, headers: RawHeaders | None = None) -> None:
    """The hot path's writer: one JSON body, no copying of header lists when there are none to add."""
    length = (b"content-length", str(len(body)).encode())
    await send({"type": "http.response.start", "status": status,
                "headers": [*_JSON_HEADERS, length] if headers is None else [*_JSON_HEADERS, length, *headers]})
    await send({"type": "http.response.body", "body": body})


def accepts(scope: Scope) -> tuple[bool, bool]:
    """(accepts JSON, accepts SSE) from the Accept header; no header at all means anything."""
    values = header_values(scope, b"accept")
    if not values:
        return True, True
    return _accepted(values[0] if len(values) == 1 else b",".join(values))


@functools.lru_cache(maxsize=256)  # a client sends the same Accept on every request
def _accepted(value: bytes) -> tuple[bool, bool]:
    text = value.lower()
    wildcard = b"*/*" in text
    return (JSON in text or b"application/*" in text or wildcard), (SSE in text or b"text/*" in text or wildcard)


async def wait_disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def until_done_or_gone(work: asyncio.Future[Any], receive: Receive, *, keepalive_s: float | None = None,
                             keepalive: Callable[[], Awaitable[None]] | None = None) -> bool:
    """Wait for `work` unless the client disconnects first (True: the work finished).

    With `keepalive`, it is awaited every `keepalive_s` of silence, so long-lived streams stay open
    through proxies.
    """
    gone = asyncio.ensure_future(wait_disconnect(receive))
    try:
        while True:
            done, _ = await asyncio.wait({work, gone}, timeout=keepalive_s if keepalive else None,
                                         return_when=asyncio.FIRST_COMPLETED)
            if work in done:
                return True
            if gone in done:
                return False
            await keepalive()  # type: ignore[misc]
    finally:
        gone.cancel()
