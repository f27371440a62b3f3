"""The ASGI types, alone: what the raw-ASGI modules of the HTTP and WebSocket adapters are written against.

The /mcp endpoint is raw ASGI on purpose: it is the hot path, and a framework request object per call
costs more than the protocol work for a trivial tool.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, MutableMapping

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
RawHeaders = list[tuple[bytes, bytes]]

KEPT_ALIVE = "hexmcp.kept_alive"
"""Scope key set by `uvicorn_fence`: True when the request is not the first on its connection. A draining
server serves a connection's first request (sent before the listener closed) and refuses later ones."""
