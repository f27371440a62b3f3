"""What can go wrong when hexmcp talks to an MCP server, as one exception with a semantic code.

A client library raises (callers expect `await client.call_tool(...)` to either return or raise), but
what it raises carries a code from one documented enum, so the command line maps codes to exit codes
in one table and tests compare codes, never message text.
"""

from __future__ import annotations

import enum
from typing import Any


class ClientErrorCode(enum.Enum):
    USAGE = "usage"
    """The caller asked for something this client cannot do (a bad target, a version it does not speak)."""
    UNREACHABLE = "unreachable"
    """No connection: refused, reset, DNS failure, the server process exited, the socket closed."""
    UNAUTHORIZED = "unauthorized"
    """The server refused our credentials (HTTP 401/403, or a WebSocket handshake refused for them)."""
    TIMEOUT = "timeout"
    """No answer within the request's timeout; `notifications/cancelled` was sent for it."""
    SERVER_ERROR = "server_error"
    """The server answered with a JSON-RPC error; `rpc_code` and `data` hold what it said."""
    INCOMPATIBLE = "incompatible"
    """The server speaks no protocol version we do, or broke the protocol (an answer we cannot read)."""
    CLOSED = "closed"
    """The client was closed while the request was waiting."""


class ClientError(Exception):
    def __init__(self, code: ClientErrorCode, message: str, *, rpc_code: int | None = None, data: Any = None,
                 delivered: bool | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.rpc_code = rpc_code
        self.data = data
        self.delivered = delivered
        """False when the request certainly never reached the server (no connection could be made), so
        even a call with effects may be sent again; None when that is not known."""

    def __repr__(self) -> str:
        extra = f", rpc_code={self.rpc_code}" if self.rpc_code is not None else ""
        return f"ClientError({self.code.name}, {self.message!r}{extra})"

    @classmethod
    def from_rpc_error(cls, error: Any) -> ClientError:
        """The exception for a JSON-RPC `error` member as a server sent it (tolerating malformed ones)."""
        if not isinstance(error, dict):
            return cls(ClientErrorCode.INCOMPATIBLE, f"the server sent an unreadable error: {error!r}")
        code = error.get("code")
        return cls(ClientErrorCode.SERVER_ERROR, str(error.get("message", "error")),
                   rpc_code=code if isinstance(code, int) else None, data=error.get("data"))


def unreachable(what: str, cause: BaseException | None = None, *, delivered: bool | None = None) -> ClientError:
    reason = f": {type(cause).__name__}: {cause}" if cause is not None and str(cause) else ""
    return ClientError(ClientErrorCode.UNREACHABLE, f"{what}{reason}", delivered=delivered)
