"""The ASGI types, what the raw-ASGI modules of the HTTP and WebSocket adapters are written against, and the
scope keys hexmcp's uvicorn protocol sets.

The /mcp endpoint is raw ASGI on purpose: it is the hot path, and a framework request object per call
costs more than the protocol work for a trivial tool.
"""

from __future__ import annotations

import asyncio
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
"""Scope key set by `uvicorn_fence`: the event loop the request runs on (`request_task`)."""

TASK = "hexmcp.task"
"""Scope key of the task serving the request, once `request_task` has looked it up."""


def request_task(scope: Scope) -> asyncio.Task[Any] | None:
    """The task serving this HTTP request, looked up once per request and kept in the scope.

    Under hexmcp's uvicorn protocol the scope names the event loop (`LOOP`), which spares
    `asyncio.current_task` its `get_running_loop` (a getpid system call per lookup on Python 3.11).
    Only for code that runs in the request's own task (not a batch item's `gather` task)."""
    task = scope.get(TASK)
    if task is None:
        loop = scope.get(LOOP)
        task = scope[TASK] = asyncio.current_task(loop) if loop is not None else asyncio.current_task()
    return task
