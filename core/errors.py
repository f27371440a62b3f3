"""The semantic error model: what went wrong, in words every adapter can map to its own wire form.

The core never raises to an adapter for a client's mistake; it returns a `Rejection` value. Each
adapter owns exactly one table from `ErrorCode` to its wire code (JSON-RPC code, HTTP status,
WebSocket close code); a tool pack's own codes (`PackErrorCode`) carry theirs. Every rejection carries the eventId under which it was logged, so a user can
quote it and an operator can find the log line.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs

from .echo import clip_data, clip_text


class ErrorCode(str, enum.Enum):
    """Why a request could not be served."""

    PARSE_ERROR = "parse_error"
    """The bytes were not valid JSON (only adapters detect this; the core never sees bytes)."""
    INVALID_REQUEST = "invalid_request"
    """The message is not a valid request, or is not allowed in the current lifecycle state."""
    METHOD_NOT_FOUND = "method_not_found"
    """No such method, or not in the protocol version in use."""
    INVALID_PARAMS = "invalid_params"
    """The params (or a tool's arguments) do not match the schema; `data.path` says where."""
    RESOURCE_NOT_FOUND = "resource_not_found"
    """`resources/read` named a URI nobody serves."""
    TOOL_EXECUTION_FAILED = "tool_execution_failed"
    """A tool raised while running; reported to the client as a result with `isError: true`."""
    UNSUPPORTED_PROTOCOL_VERSION = "unsupported_protocol_version"
    """A stateless request named a protocol version this server does not speak."""
    MISSING_CLIENT_CAPABILITY = "missing_client_capability"
    """Serving the request needs a capability the client did not declare."""
    HEADER_MISMATCH = "header_mismatch"
    """Transport headers disagree with the message body (HTTP adapter only)."""
    REQUEST_CANCELLED = "request_cancelled"
    """The client cancelled the request; JSON-RPC adapters send no response for it."""
    REQUEST_TIMEOUT = "request_timeout"
    """The request ran past its deadline and was stopped."""
    SERVER_BUSY = "server_busy"
    """A concurrency limit was reached; retry later."""
    RATE_LIMITED = "rate_limited"
    """The client sent more requests than its rate allows; `data.retryAfterSeconds` says when to retry."""
    PAYLOAD_TOO_LARGE = "payload_too_large"
    """A message exceeded the configured size limit."""
    UNAUTHORIZED = "unauthorized"
    """Missing or wrong credentials."""
    FORBIDDEN = "forbidden"
    """The request came from an origin or host that is not allowed."""
    SESSION_NOT_FOUND = "session_not_found"
    """An HTTP session id that is unknown or expired."""
    INTERNAL_ERROR = "internal_error"
    """A bug or an unexpected failure on our side; the details are in the log under the eventId."""


@attrs.frozen(kw_only=True)
class PackErrorCode:
    """An error code a tool pack defines for its own methods (an LLM gateway's "rate limited"), with the wire
    forms its design fixes. The adapters' tables map the protocol's `ErrorCode`s; a pack's code carries its
    own, so no adapter has to know the pack."""

    value: str
    """Its name, as an `ErrorCode`'s value is (logs, the audit trail)."""
    jsonrpc_code: int
    http_status: int
    """The status where HTTP is the only envelope (the REST dialect). A JSON-RPC error response carrying the
    code is a 200, as for every failure that is not the protocol's own."""


SemanticCode = ErrorCode | PackErrorCode
"""What a rejection names as its reason: the protocol's codes, or a tool pack's."""


@attrs.frozen(kw_only=True)
class Rejection:
    """A request the core declined to serve, as a value."""

    code: SemanticCode
    message: str = attrs.field(converter=clip_text)
    """Bounded (`echo.clip_text`): a message may quote the client's input, whose size the client picks."""
    event_id: str
    data: dict[str, Any] | None = attrs.field(default=None, converter=clip_data)

    def wire_data(self) -> dict[str, Any]:
        """The `data` member an adapter sends: the rejection's own data plus the eventId to quote."""
        return {**(self.data or {}), "eventId": self.event_id}


class ToolError(Exception):
    """Raised by a tool to fail with a message meant for the model (becomes `isError: true`)."""


class ProtocolError(Exception):
    """Raised inside the core to abort a request with a semantic code; turned into a `Rejection`."""

    def __init__(self, code: SemanticCode, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
