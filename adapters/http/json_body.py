"""The JSON in a POST body: decoded, or the refusal with the right error; and the request id, when readable."""

from __future__ import annotations

from typing import Any

from hexmcp.core import ErrorCode
from hexmcp.wire import jsonrpc

from .asgi import Send
from .refusals import Refused, refuse
from .request import HttpRequest
from .request_headers import ACCEPT_IDENTITY, coding_refusal, is_json, unsupported_coding


def readable_id(request: HttpRequest) -> Any:
    """The id of the JSON-RPC request in this POST's body, for a refusal made before the body was parsed
    (a busy server, a wrong Accept): an answer names the request it refuses whenever the id can be read."""
    raw = request.body
    if not raw:
        return None
    try:
        message = jsonrpc.classify(jsonrpc.decode(raw))
    except ValueError:
        return None
    return message.id if isinstance(message, (jsonrpc.Request, jsonrpc.Invalid)) else None


def json_body(request: HttpRequest, send: Send) -> Any:
    """The decoded JSON body of a POST (already read by `body.BodyBuffer`), or `Refused` (415, or a parse
    error) when it is not JSON, or not sent as plain bytes."""
    if not is_json(request.header(b"content-type")):
        return Refused(refuse(send, ErrorCode.INVALID_REQUEST,
                              "Unsupported Media Type: POST bodies must be application/json", status=415))
    coding = unsupported_coding(request.header(b"content-encoding"))
    if coding is not None:
        return Refused(refuse(send, ErrorCode.INVALID_REQUEST, coding_refusal(coding), status=415,
                              headers=ACCEPT_IDENTITY))
    try:
        return jsonrpc.decode(request.body)  # type: ignore[arg-type]
    except ValueError as exc:  # not JSON (-32700), or a number out of range (-32600/-32602)
        request_id, code, message, data = jsonrpc.decode_refusal(exc)
        return Refused(refuse(send, code, message, request_id=request_id, data=data))
