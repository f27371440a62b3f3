"""One HTTP request's own state, on one object: what hexmcp's uvicorn protocol knows about the request
and what the app learns while serving it.

hexmcp's protocol (`uvicorn_fence`) makes it at the request's first byte and puts it in the scope under
`REQUEST`, the only key hexmcp adds to a scope; a request that comes another way (a WebSocket upgrade,
a test's transport, another server) gets one where it enters the app. There (`request_of`) the request
is given its scope, and from there on it is passed explicitly. One is built for every request: slots,
and the header table only when first read.

A request and its scope must not keep each other alive past the request: a cycle per request leaves
each request's objects to the garbage collector, which then runs every few hundred requests. So the
protocol's request holds no scope until the app takes it, and the app parts the two again when the
request ends (`app.py`).
"""

from __future__ import annotations

import asyncio
from types import MappingProxyType
from typing import Any, Callable

import attrs

from .asgi import Scope
from .request_headers import accepted, header_values

REQUEST = "hexmcp.request"
NOT_TAKEN: Scope = MappingProxyType({})  # type: ignore[assignment]
"""The scope of a request the protocol made, until the app takes the request (`request_of`)."""


@attrs.define(eq=False)  # one request is one object: identity, not field by field
class HttpRequest:
    scope: Scope
    loop: asyncio.AbstractEventLoop | None = None
    """The event loop serving the request, when the protocol names it: finding the request's task then
    costs no `get_running_loop` (a getpid system call per lookup on Python 3.11)."""
    kept_alive: bool = True
    """Not the first request on its connection. A draining server serves a connection's first request
    (sent before the listener closed) and refuses later ones; a request from elsewhere counts as later."""
    watched: bool = False
    """The protocol says when the connection is lost (`client_left`, `on_client_gone`), so noticing a
    client that left needs no watcher task (`disconnects.unless_gone`)."""
    body_arrived: bool = False
    """The whole body is in the server's buffer: reading it cannot stall (`body.BodyBuffer`)."""
    client_left: bool = False
    """Set by the protocol when the connection is lost before the response is complete."""
    on_client_gone: Callable[[], None] | None = None
    """What the protocol calls when the connection is lost, if the request put something here."""
    body: bytes | None = None
    """A POST body read in full (by `body.BodyBuffer`, before the concurrency cap)."""
    slot: Any = None
    """The `limits.ConcurrencyLimit` whose slot the request holds, until `limits.release_slot`."""
    principal: Any = None
    """The `auth.Principal` the app authenticated the request as; None without authentication."""
    proxies: Any = None
    """The app's `forwarded.TrustedProxies` when some are configured: who may name the client's address."""
    # Filled in on first use (`serving_task`, `headers`). Parameters of __init__ nobody passes, rather than
    # init=False: attrs' __init__ then assigns a constant instead of looking the default up every time.
    _task: asyncio.Task[Any] | None = attrs.field(default=None, alias="_task")
    _headers: dict[bytes, bytes] | None = attrs.field(default=None, alias="_headers")

    @property
    def headers(self) -> dict[bytes, bytes]:
        """The headers by lower-case name, built on first use: a request's headers are read about eight times
        on the hot path, and a scan of the list each time cost more than the protocol work they guard. Of a
        header sent twice the first value wins."""
        table = self._headers
        if table is None:
            raw = self.scope["headers"]
            table = dict(raw)
            if len(table) != len(raw):  # some name was sent twice (rare): let its first value win
                table = dict(reversed(raw))
            self._headers = table
        return table

    def header(self, name: bytes) -> bytes | None:
        """The first value of header `name` (lower-case bytes), or None."""
        table = self._headers  # built already, on the hot path: one call, not two
        return (table if table is not None else self.headers).get(name)

    def accepts(self) -> tuple[bool, bool]:
        """(accepts JSON, accepts SSE) from the Accept header; no header at all means anything."""
        table = self.headers
        value = table.get(b"accept")
        if value is None:
            return True, True
        if len(table) != len(self.scope["headers"]):  # some name was sent twice (rare): Accept, maybe
            value = b",".join(header_values(self.scope, b"accept"))
        return accepted(value)

    def serving_task(self) -> asyncio.Task[Any] | None:
        """The task serving the request, looked up once. Only for code that runs in the request's own
        task (not a batch item's `gather` task)."""
        task = self._task
        if task is None:
            loop = self.loop
            task = self._task = asyncio.current_task(loop) if loop is not None else asyncio.current_task()
        return task


def request_of(scope: Scope) -> HttpRequest:
    """The scope's request, holding its scope from now on: the one hexmcp's protocol or app put in the
    scope, else a new one (which this does not put there)."""
    request = scope.get(REQUEST)
    if request is None:
        return HttpRequest(scope)
    request.scope = scope
    return request  # type: ignore[no-any-return]
