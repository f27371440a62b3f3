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

CLIENT_GONE = "hexmcp.client_gone"
"""Scope key set by `uvicorn_fence` (to None) on every request it parses: the request may put a callback
there, which the fence calls when the connection is lost before the response is complete. Noticing a
client that left needs no watcher task then (`disconnects.unless_gone`). A connection lost before the
request put a callback there leaves `CLIENT_LEFT` instead, so the request finds out when it looks."""
CLIENT_LEFT = "left"

BODY_ARRIVED = "hexmcp.body_arrived"
"""Scope key set by `uvicorn_fence` (to True) when the request's whole body is in uvicorn's buffer: reading it
cannot stall, so `body.BodyBuffer` reads it without a deadline. Absent: the body may still be arriving."""

LOOP = "hexmcp.loop"
"""Scope key set by `uvicorn_fence`: the event loop the request runs on (`deadlines.request_task`)."""

TASK = "hexmcp.task"
"""Scope key of the task serving the request, once `deadlines.request_task` has looked it up."""
