"""Writing whole responses: one start message, one body."""

from __future__ import annotations

from typing import Iterable

from .asgi import RawHeaders, Send
from .request_headers import JSON

_JSON_HEADERS: RawHeaders = [(b"content-type", JSON)]


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
