"""Request bodies are read whole, under a deadline, before a request may take a concurrency slot.

A client that sends its headers and then stalls mid-body (`Content-Length: 100`, one byte sent) would
otherwise hold a slot for as long as it liked, and a few hundred such sockets would turn every other
request away with 503. So `BodyBuffer` sits outside `ConcurrencyLimit`: it reads the body of a POST to
the MCP endpoint or the REST dialect within `body_timeout_s` and `max_body_bytes`, leaves it on the
request for the endpoint (`HttpRequest.body`), and only then lets the request on towards a slot. A stalled
upload gets 408 and an oversized one 413, each naming a logged eventId in the error shape of the endpoint it
was sent to (JSON-RPC on `{path}`, REST on `{path}/{method}`). When the server begins to stop, bodies
still arriving get `STOP_GRACE_S` to finish (the bytes of a body a proxy forwards whole are already
in the socket), then are cut short with 503 instead of waiting for uvicorn to cancel them when its
graceful-shutdown timeout runs out. A new POST while stopping is refused (503) unless it is the first
request of its connection (`HttpRequest.kept_alive`): that one was sent before the listener closed.

The deadlines share one timer (`deadlines.py`): a read pays two dict operations, not a timer; and a body
that has arrived whole before the app reads it (`body_arrived`, which hexmcp's uvicorn protocol sets: the
usual case for a JSON-RPC POST) cannot stall, so it is read with no deadline at all.
`BodyBuffer` is a step the app runs (`app.py`), not a middleware layer: `read` says whether the request
goes on.
"""

from __future__ import annotations

import asyncio

from hexmcp.core import ErrorCode
from hexmcp.wire.deadlines import Deadlines

from .asgi import RawHeaders, Receive, Send
from .refusals import refuse, refuse_rest
from .request import HttpRequest


class BodyTooLarge(Exception):
    pass


class ClientGone(Exception):
    """The client disconnected before its request body arrived."""


async def read_body(request: HttpRequest, receive: Receive, limit: int) -> bytes:
    """The request body, refused as soon as it passes `limit` bytes (never buffered past it). A body that
    has arrived whole is measured as it is: its declared length said nothing more before it came."""
    if not request.body_arrived:
        declared = request.header(b"content-length")
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


CLOSE: RawHeaders = [(b"connection", b"close")]  # the rest of a cut-short body is not worth waiting for
STOPPING = "The server is shutting down"
STOPPING_HEADERS: RawHeaders = [(b"retry-after", b"5"), *CLOSE]
STOP_GRACE_S = 0.5
"""At shutdown, how long bodies already arriving may take: bytes in flight arrive in milliseconds, while
a stalled upload must not hold the drain."""


class BodyBuffer:
    def __init__(self, *, mcp_path: str, limit: int, timeout_s: float) -> None:
        self.limit = limit
        self.deadlines = Deadlines(timeout_s)
        self.stopping = False
        self.reading = 0
        """Bodies being read now (the drain waits for them as for requests holding a slot)."""
        self._mcp_path = mcp_path
        self._rest_prefix = mcp_path + "/"

    async def read(self, request: HttpRequest, receive: Receive, send: Send) -> bool:
        """Read the body of a POST to the MCP endpoint or the REST dialect into the request (True), or
        answer it (413, 408, 503) or see it gone (False); any other request goes on untouched (True)."""
        scope = request.scope
        path = scope["path"]
        if scope["method"] != "POST" or not (path == self._mcp_path or path.startswith(self._rest_prefix)):
            return True
        rest = path != self._mcp_path
        if self.stopping and request.kept_alive:
            await _refuse(send, rest, ErrorCode.SERVER_BUSY, STOPPING, headers=STOPPING_HEADERS)
            return False
        self.reading += 1
        try:
            reading = read_body(request, receive, self.limit)
            if not request.body_arrived:  # else it is whole in the server's buffer and cannot stall
                reading = self.deadlines.run(reading, request.serving_task())
            request.body = await reading
        except BodyTooLarge:
            await _refuse(send, rest, ErrorCode.PAYLOAD_TOO_LARGE,
                          f"Payload too large: the limit is {self.limit} bytes")
            return False
        except TimeoutError:
            if self.stopping:
                await _refuse(send, rest, ErrorCode.SERVER_BUSY, STOPPING, headers=STOPPING_HEADERS)
            else:
                await _refuse(send, rest, ErrorCode.REQUEST_TIMEOUT,
                              f"Request Timeout: the body did not arrive within {self.deadlines.timeout_s:g} s",
                              status=408, headers=CLOSE)
            return False
        except ClientGone:
            return False
        finally:
            self.reading -= 1
        return True

    def stop(self) -> None:
        """The server is stopping: refuse new bodies on kept-alive connections, and end those still
        arriving after STOP_GRACE_S (503)."""
        self.stopping = True
        asyncio.get_running_loop().call_later(STOP_GRACE_S, self.deadlines.expire_all)


async def _refuse(send: Send, rest: bool, code: ErrorCode, message: str, *, status: int | None = None,
                  headers: RawHeaders | None = None) -> None:
    if rest:
        await refuse_rest(send, code, message, status=status, headers=headers)
    else:
        await refuse(send, code, message, status=status, headers=headers)
