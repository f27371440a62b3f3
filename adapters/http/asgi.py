"""The ASGI types, alone: what the raw-ASGI modules of the HTTP and WebSocket adapters are written against.

The /mcp endpoint is raw ASGI on purpose: it is the hot path, and a framework's request object per call
costs more than the protocol work for a trivial tool. Its own per-request state is one slotted record,
`request.HttpRequest`.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, MutableMapping

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
RawHeaders = list[tuple[bytes, bytes]]
