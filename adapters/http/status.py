"""The one table from the core's semantic error codes to HTTP statuses, and error bodies built from it.

Two columns, because HTTP carries errors two ways:
- `rpc`: the status of a JSON-RPC error response on the 2026-07-28 wire. The spec fixes 400 for the
  envelope/params/header/version/capability errors and 404 for unknown methods; everything else is a
  normal response that happens to carry an error, so 200. (Handshake-era JSON-RPC errors are always
  200: those clients read the error from the body and treat a non-2xx as a broken transport.)
- `http`: the status when HTTP itself is the only envelope — transport refusals (401/403/404/413/503)
  and the REST endpoint, whose clients look at the status first and only ever read 2xx bodies as results.
"""

from __future__ import annotations

from typing import Any

import attrs
import structlog

from hexmcp.core import ErrorCode, Rejection, new_event_id

from .. import jsonrpc
from .asgi import BODY, JSON, RawHeaders, Scope, Send, body_of, header, respond_json

log = structlog.get_logger("hexmcp.adapters.http")


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
    ErrorCode.PAYLOAD_TOO_LARGE: Statuses(413, 413),
    ErrorCode.UNAUTHORIZED: Statuses(401, 401),
    ErrorCode.FORBIDDEN: Statuses(403, 403),
    ErrorCode.SESSION_NOT_FOUND: Statuses(404, 404),
    ErrorCode.INTERNAL_ERROR: Statuses(200, 500),
    # The LLM gateway's failures: an error response, but the fault is upstream (a gateway's statuses for REST).
    ErrorCode.GATEWAY_AUTHENTICATION: Statuses(200, 502),
    ErrorCode.GATEWAY_RATE_LIMITED: Statuses(200, 429),
    ErrorCode.GATEWAY_MODEL_NOT_FOUND: Statuses(200, 404),
    ErrorCode.GATEWAY_UNAVAILABLE: Statuses(200, 502),
    ErrorCode.GATEWAY_NOT_CONFIGURED: Statuses(200, 503),
    ErrorCode.GATEWAY_NETWORK: Statuses(200, 502),
    ErrorCode.GATEWAY_TIMEOUT: Statuses(200, 504),
}

_BY_RPC_CODE: dict[int, ErrorCode] = {}
for _code, _wire in jsonrpc.ERROR_CODES.items():
    _BY_RPC_CODE.setdefault(_wire, _code)


def rpc_status(code: ErrorCode) -> int:
    return STATUS[code].rpc


def http_status(code: ErrorCode) -> int:
    return STATUS[code].http


def semantic(rpc_code: int) -> ErrorCode:
    """The semantic code behind a JSON-RPC code (for errors the adapter itself produced as wire codes)."""
    return _BY_RPC_CODE.get(rpc_code, ErrorCode.INTERNAL_ERROR)


def rejection(code: ErrorCode, message: str, data: dict[str, Any] | None = None) -> Rejection:
    """A rejection minted by the adapter itself (transport refusals), with its own eventId."""
    return Rejection(code=code, message=message, data=data, event_id=new_event_id())


def refusal(code: ErrorCode, message: str, data: dict[str, Any] | None = None) -> Rejection:
    """A rejection minted by the adapter, logged under its eventId so the id a client quotes can be found."""
    rej = rejection(code, message, data)
    log.info("request refused", code=code.value, reason=message, eventId=rej.event_id)
    return rej


def rest_error_body(rej: Rejection) -> dict[str, Any]:
    """The REST endpoint's error body: what went wrong, in a form a human and a program can read."""
    body: dict[str, Any] = {"error": rej.code.value, "code": jsonrpc.ERROR_CODES[rej.code],
                            "message": rej.message, "eventId": rej.event_id}
    if rej.data:
        body["data"] = rej.data
    return body


async def refuse(send: Any, code: ErrorCode, message: str, *, headers: RawHeaders | None = None,
                 request_id: Any = None, data: dict[str, Any] | None = None, status: int | None = None) -> None:
    """Answer at the HTTP level with the table's status and a JSON-RPC error body naming the eventId."""
    rej = refusal(code, message, data)
    await respond_json(send, status or http_status(code), jsonrpc.dumps(jsonrpc.encode_rejection(request_id, rej)),
                       headers)


WEBSOCKET_HTTP_RESPONSE = "websocket.http.response"  # the ASGI extension uvicorn offers


async def refuse_upgrade(scope: Scope, send: Send, code: ErrorCode, message: str, *,
                         headers: RawHeaders | None = None) -> None:
    """`refuse` for a WebSocket upgrade: the table's status and a JSON-RPC body, sent as the HTTP answer
    to the handshake. Without the ASGI extension, close before accepting (the server answers 403)."""
    rej = refusal(code, message)
    if WEBSOCKET_HTTP_RESPONSE not in scope.get("extensions", {}):
        await send({"type": "websocket.close", "code": 1008, "reason": message})
        return
    body = jsonrpc.dumps(jsonrpc.encode_rejection(None, rej))
    await send({"type": "websocket.http.response.start", "status": http_status(code),
                "headers": [(b"content-type", b"application/json"), *(headers or [])]})
    await send({"type": "websocket.http.response.body", "body": body})


async def refuse_rest(send: Send, code: ErrorCode, message: str, *, data: dict[str, Any] | None = None,
                      status: int | None = None, headers: RawHeaders | None = None) -> None:
    """`refuse` for the REST dialect: the table's status and a REST error body naming the (logged) eventId."""
    await send_rest_error(send, refusal(code, message, data), status, headers)


async def send_rest_error(send: Send, rej: Rejection, status: int | None = None,
                          headers: RawHeaders | None = None) -> None:
    await respond_json(send, status or http_status(rej.code), jsonrpc.dumps(rest_error_body(rej)), headers)


def readable_id(scope: Scope) -> Any:
    """The id of the JSON-RPC request in this POST's body, for a refusal made before the body was parsed
    (a busy server, a wrong Accept): an answer names the request it refuses whenever the id can be read."""
    raw = scope.get(BODY)
    if not raw:
        return None
    try:
        message = jsonrpc.classify(jsonrpc.decode(raw))
    except ValueError:
        return None
    return message.id if isinstance(message, (jsonrpc.Request, jsonrpc.Invalid)) else None


NOT_JSON = object()
"""What `json_body` returns after it has refused the request itself."""


async def json_body(scope: Scope, send: Send) -> Any:
    """The decoded JSON body of a POST (already read by `body.BodyBuffer`), or NOT_JSON once the request
    was refused (415 or parse error)."""
    content_type = header(scope, b"content-type")
    if content_type is None or not content_type.lower().startswith(JSON):
        await refuse(send, ErrorCode.INVALID_REQUEST, "Unsupported Media Type: POST bodies must be application/json",
                     status=415)
        return NOT_JSON
    try:
        return jsonrpc.decode(body_of(scope))
    except ValueError as exc:
        await refuse(send, ErrorCode.PARSE_ERROR, f"Parse error: {exc}")
        return NOT_JSON
