"""The one table from the core's semantic error codes to HTTP statuses (a tool pack's codes carry theirs).

Two columns, because HTTP carries errors two ways:
- `rpc`: the status of a JSON-RPC error response on the 2026-07-28 wire. The spec fixes 400 for the
  envelope/params/header/version/capability errors and 404 for unknown methods; everything else is a
  normal response that happens to carry an error, so 200. (Handshake-era JSON-RPC errors are 200:
  those clients read the error from the body and treat a non-2xx as a broken transport; except a rate
  limit, 429 with Retry-After there too, which the official SDK client reads from the body all the same.)
- `http`: the status when HTTP itself is the only envelope — transport refusals (401/403/404/413/503)
  and the REST endpoint, whose clients look at the status first and only ever read 2xx bodies as results.
"""

from __future__ import annotations

import attrs

from hexmcp.core import ErrorCode, SemanticCode


@attrs.frozen
class Statuses:
    rpc: int
    http: int


STATUS: dict[ErrorCode, Statuses] = {
    ErrorCode.PARSE_ERROR: Statuses(400, 400),
    ErrorCode.INVALID_REQUEST: Statuses(400, 400),
    ErrorCode.METHOD_NOT_FOUND: Statuses(404, 404),
    ErrorCode.INVALID_PARAMS: Statuses(400, 400),
    ErrorCode.RESOURCE_NOT_FOUND: Statuses(400, 404),  # -32602 on the wire (SEP-2164), a plain 404 for REST
    ErrorCode.TOOL_EXECUTION_FAILED: Statuses(200, 500),
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: Statuses(400, 400),
    ErrorCode.MISSING_CLIENT_CAPABILITY: Statuses(400, 400),
    ErrorCode.HEADER_MISMATCH: Statuses(400, 400),
    ErrorCode.REQUEST_CANCELLED: Statuses(200, 499),  # never sent: the client is gone
    ErrorCode.REQUEST_TIMEOUT: Statuses(200, 504),
    ErrorCode.SERVER_BUSY: Statuses(503, 503),
    ErrorCode.RATE_LIMITED: Statuses(429, 429),  # with Retry-After, on every era: HTTP clients back off on 429
    ErrorCode.PAYLOAD_TOO_LARGE: Statuses(413, 413),
    ErrorCode.UNAUTHORIZED: Statuses(401, 401),
    ErrorCode.FORBIDDEN: Statuses(403, 403),
    ErrorCode.SESSION_NOT_FOUND: Statuses(404, 404),
    ErrorCode.INTERNAL_ERROR: Statuses(200, 500),
}


def rpc_status(code: SemanticCode) -> int:
    """A tool pack's failure is a normal response that carries an error: 200."""
    return STATUS[code].rpc if isinstance(code, ErrorCode) else 200


def http_status(code: SemanticCode) -> int:
    return STATUS[code].http if isinstance(code, ErrorCode) else code.http_status
