"""The two wire dialects a socket can speak, chosen at the handshake, and the close-code table.

- `CHATGPT` (the default): JSON-RPC 2.0 shapes without the `jsonrpc` member, in either direction; a
  frame that does carry `"jsonrpc": "2.0"` is still understood.
- `MCP` (subprotocol `mcp`, what the official SDK 1.x `websocket_client` asks for): strict JSON-RPC
  2.0, `jsonrpc` required in and always sent out.

Both carry one JSON object per text frame. Everything that differs between them is a field here; the
connection code never tests which dialect it speaks.
"""

from __future__ import annotations

import enum
from typing import Iterable

import attrs

from hexmcp.core import ErrorCode

MCP_SUBPROTOCOL = "mcp"


@attrs.frozen(kw_only=True)
class Dialect:
    name: str
    subprotocol: str | None
    """Echoed in the handshake response's Sec-WebSocket-Protocol (None: header not sent)."""
    with_version: bool
    """Outbound frames carry `"jsonrpc": "2.0"`."""
    require_jsonrpc: bool
    """Inbound frames without `"jsonrpc": "2.0"` are invalid."""


CHATGPT = Dialect(name="chatgpt", subprotocol=None, with_version=False, require_jsonrpc=False)
MCP = Dialect(name="mcp", subprotocol=MCP_SUBPROTOCOL, with_version=True, require_jsonrpc=True)

_BY_SUBPROTOCOL = {MCP_SUBPROTOCOL: MCP}


def choose_dialect(offered: Iterable[str]) -> Dialect:
    """The first subprotocol we know among those the client offered, else the ChatGPT dialect.

    A client offering only subprotocols we do not know gets no Sec-WebSocket-Protocol in the answer
    (RFC 6455 §4.2.2 lets the server pick none); it may then give up, which is its call to make.
    """
    for name in offered:
        dialect = _BY_SUBPROTOCOL.get(name.strip().lower())
        if dialect is not None:
            return dialect
    return CHATGPT


class CloseCode(enum.IntEnum):
    """The close codes this adapter sends (RFC 6455 §7.4.1)."""

    NORMAL = 1000
    """A socket idle for `WsConfig.idle_timeout_s`, with nothing in flight; a client may close with it too."""
    GOING_AWAY = 1001
    """The server is shutting down; requests received before were answered first."""
    MESSAGE_TOO_BIG = 1009
    """An inbound message was larger than `max_frame_bytes` (uvicorn sends it too, at its own limit)."""
    INTERNAL_ERROR = 1011
    """A bug on our side, or (sent by uvicorn) a client that did not answer a keepalive ping."""
    TRY_AGAIN_LATER = 1013
    """The client did not read its messages and the bounded send queue overflowed; or the server was full and
    this idle socket's client held more than its fair share (`held_open.py`)."""


# The one table from the core's semantic codes to close codes, for the refusals that end a socket.
# Everything else a client can get wrong is answered with an error frame on a socket that stays open.
CLOSE_CODES: dict[ErrorCode, CloseCode] = {
    ErrorCode.PAYLOAD_TOO_LARGE: CloseCode.MESSAGE_TOO_BIG,
    ErrorCode.SERVER_BUSY: CloseCode.TRY_AGAIN_LATER,
    ErrorCode.INTERNAL_ERROR: CloseCode.INTERNAL_ERROR,
}
