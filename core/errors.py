"""The semantic error model: what went wrong, in words every adapter can map to its own wire form.

The core never raises to an adapter for a client's mistake; it returns a `Rejection` value. Each
adapter owns exactly one table from `ErrorCode` to its wire code (JSON-RPC code, HTTP status,
WebSocket close code). Every rejection carries the eventId under which it was logged, so a user can
quote it and an operator can find the log line.
"""

from __future__ import annotations

import enum
from typing import Any

import attrs


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
    # An outbound LLM gateway's failures (gateway_port.py's GatewayErrorKind names the design's codes).
    GATEWAY_AUTHENTICATION = "gateway_authentication"
    """The LLM gateway refused the server's credentials."""
    GATEWAY_RATE_LIMITED = "gateway_rate_limited"
    """The LLM gateway kept answering 429 until the retries ran out."""
    GATEWAY_MODEL_NOT_FOUND = "gateway_model_not_found"
    """The LLM gateway does not serve the model asked for."""
    GATEWAY_UNAVAILABLE = "gateway_unavailable"
    """The LLM gateway failed (5xx), refused, or answered something unusable."""
    GATEWAY_NOT_CONFIGURED = "gateway_not_configured"
    """No LLM gateway is configured."""
    GATEWAY_NETWORK = "gateway_network"
    """The connection to the LLM gateway could not be made or broke."""
    GATEWAY_TIMEOUT = "gateway_timeout"
    """The LLM gateway did not answer in time."""


@attrs.frozen(kw_only=True)
class Rejection:
    """A request the core declined to serve, as a value."""

    code: ErrorCode
    message: str
    event_id: str
    data: dict[str, Any] | None = None

    def wire_data(self) -> dict[str, Any]:
        """The `data` member an adapter sends: the rejection's own data plus the eventId to quote."""
        return {**(self.data or {}), "eventId": self.event_id}


class ToolError(Exception):
    """Raised by a tool to fail with a message meant for the model (becomes `isError: true`)."""


class ProtocolError(Exception):
    """Raised inside the core to abort a request with a semantic code; turned into a `Rejection`."""

    def __init__(self, code: ErrorCode, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
