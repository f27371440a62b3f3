"""Refusing a request at the HTTP level, in each of the three shapes a client can read.

JSON-RPC clients get a JSON-RPC error body, REST clients a REST error body, a WebSocket handshake an
HTTP answer before any upgrade; each with the status from `status.STATUS` and an eventId that is logged
(`rpc_layer.refusal`).
"""

from __future__ import annotations

from typing import Any, Awaitable

from hexmcp.core import ErrorCode, Rejection
from hexmcp.wire import jsonrpc

from ..retry_hint import retry_after_header
from ..rpc_layer import refusal
from .asgi import RawHeaders, Scope, Send
from .responses import respond_json
from .status import http_status
from .uvicorn_fence import UPGRADE_ANSWERED


class Refused:
    """What a check written as a plain function returns instead of its value when the request must be
    refused: `answer`, the refusal, for the caller to await. The hot path's checks then cost no coroutine
    frame when they pass, as they nearly always do. No JSON value is one, so `type(x) is Refused` tells."""

    __slots__ = ("answer",)

    def __init__(self, answer: Awaitable[None]) -> None:
        self.answer = answer


def rest_error_body(rej: Rejection) -> dict[str, Any]:
    """The REST endpoint's error body: what went wrong, in a form a human and a program can read."""
    body: dict[str, Any] = {"error": rej.code.value, "code": jsonrpc.code_for(rej.code),
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
    UPGRADE_ANSWERED.set(rej.event_id)  # uvicorn's "without completing handshake" error is about this: dropped
    await send({"type": "websocket.http.response.start", "status": http_status(code),
                "headers": [(b"content-type", b"application/json"), *(headers or [])]})
    await send({"type": "websocket.http.response.body", "body": body})


async def refuse_rest(send: Send, code: ErrorCode, message: str, *, data: dict[str, Any] | None = None,
                      status: int | None = None, headers: RawHeaders | None = None) -> None:
    """`refuse` for the REST dialect: the table's status and a REST error body naming the (logged) eventId."""
    await send_rest_error(send, refusal(code, message, data), status, headers)


async def send_rest_error(send: Send, rej: Rejection, status: int | None = None,
                          headers: RawHeaders | None = None) -> None:
    hint = retry_after_header(rej.data)  # a rate limit's wait, as the header HTTP clients back off by
    await respond_json(send, status or http_status(rej.code), jsonrpc.dumps(rest_error_body(rej)),
                       [*(headers or ()), *hint] if hint else headers)
