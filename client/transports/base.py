"""The one interface every transport implements, as the dispatcher sees it.

A wire sends JSON-RPC messages (dicts) and hands whatever the server sends to its `Inbox`: each decoded
message to `receive`, and the end of the connection to `closed`. Where a transport answers a request
in the response to its own send (HTTP, REST), `send` returns only once that answer is delivered, and
raises `ClientError` when the exchange failed; streaming transports (stdio, WebSocket) return at once.

A wire may also offer `write_now(message) -> bool`: write the message without awaiting anything and say
True, or say False (nothing written) when it would have to wait, e.g. for a full pipe to drain; the
dispatcher then awaits `send`. A request written that way needs no cancellation scope: it only waits
for its answer, whose future the deadline fails directly. Wires without it are always sent.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..errors import ClientError, ClientErrorCode

# The largest message read from a server, on every transport (an HTTP body, one SSE event, one WebSocket
# frame, one stdio line): a server, mounted or called, cannot make us hold more than this for one answer.
MAX_MESSAGE_BYTES = 16 * 1024 * 1024


def too_large(what: str, limit: int) -> ClientError:
    """`what` (the server's answer, an SSE event, ...) was over `limit`: a broken (or hostile) server."""
    return ClientError(ClientErrorCode.INCOMPATIBLE, f"{what} is over the {limit}-byte limit (max_message_bytes)")


class Inbox(Protocol):
    def receive(self, message: Any) -> None: ...

    def closed(self, error: ClientError) -> None: ...


class Wire(Protocol):
    with_version: bool  # False only for the ChatGPT WebSocket dialect: messages carry no `jsonrpc` member
    require_jsonrpc: bool

    async def open(self, inbox: Inbox) -> None: ...

    async def send(self, message: dict[str, Any]) -> None: ...

    def negotiated(self, version: str) -> None:
        """Told once the protocol version is settled (HTTP puts it in a header, stateless routes by it)."""

    async def initialized(self) -> None:
        """Called once the handshake is complete (HTTP then opens its GET stream for server messages)."""

    async def close(self) -> None: ...
