"""`/mcp/{method}`: the REST dialect of the vLLM semantic-router's Go client (mcp-go request structs).

The client POSTs to `{url}/initialize`, `{url}/tools/list`, `{url}/tools/call`, `{url}/ping`, ... a body
marshalled from an mcp-go request struct — `{"method": "", "params": {...}}`, params possibly absent,
no body at all for ping — and reads the bare result object from any 2xx response. We also take a flat
`{"name": ..., "arguments": {...}}` body for `tools/call`, and a full JSON-RPC envelope.

Every call stands alone (no session): it is served on the latest handshake version, or on the version
an `MCP-Protocol-Version` header names. Failures are a 4xx/5xx status (from `status.STATUS`) with a
JSON body naming the code, the message and the eventId to quote.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from hexmcp.core import ErrorCode, McpServer, NullPeer, Ok, Rejection, versions
from hexmcp.core.session import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION

from .. import jsonrpc
from . import dispatch
from .asgi import BodyTooLarge, ClientGone, Receive, Scope, Send, header, read_body, respond_json
from .config import HttpConfig
from .deadlines import Deadlines
from .status import http_status, rejection, rest_error_body

ENVELOPE_KEYS = frozenset({"jsonrpc", "id", "method", "params"})


class RestEndpoint:
    def __init__(self, server: McpServer, config: HttpConfig) -> None:
        self.server = server
        self.config = config
        self._prefix_len = len(config.path) + 1
        self._ids = itertools.count(1)
        self.deadlines = Deadlines(config.request_timeout_s)
        self._peer = NullPeer()  # a REST call has no way back to the client

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["path"][self._prefix_len:]
        if scope["method"] != "POST":
            await _fail(send, rejection(ErrorCode.INVALID_REQUEST, f"Method not allowed: use POST {scope['path']}"),
                        405, [(b"allow", b"POST")])
            return
        try:
            body = await read_body(scope, receive, self.config.max_body_bytes)
        except BodyTooLarge:
            await _fail(send, rejection(ErrorCode.PAYLOAD_TOO_LARGE,
                                        f"Payload too large: the limit is {self.config.max_body_bytes} bytes"))
            return
        except ClientGone:
            return
        try:
            params = _params(method, json.loads(body) if body.strip() else None)
        except ValueError as exc:
            await _fail(send, rejection(ErrorCode.PARSE_ERROR, f"The body is not JSON: {exc}"))
            return
        if method.startswith("notifications/"):
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        version = _version(header(scope, b"mcp-protocol-version"))
        if version in versions.STATELESS_VERSIONS:
            params = _with_envelope(params, version)
            assume = None
        else:
            assume = None if method == "initialize" else version
        core = self.server.open_session(session_id=f"rest-{next(self._ids):x}", peer=self._peer,
                                        assume_version=assume)
        request = jsonrpc.Request(f"rest-{next(self._ids):x}", method, params)
        outcome = await dispatch.run(core, request, self.deadlines)
        if isinstance(outcome, Ok):
            await respond_json(send, 200, jsonrpc.dumps(outcome.result))
        else:
            await _fail(send, outcome)


def _params(method: str, body: Any) -> Any:
    if not isinstance(body, dict):
        return body  # None (no body) or a non-object, which the core rejects as invalid params
    if "params" in body or set(body) <= ENVELOPE_KEYS:
        return body.get("params")
    return body  # a flat body is the params themselves: {"name": ..., "arguments": {...}}


def _version(raw: bytes | None) -> str:
    if raw is not None:
        text = raw.decode("latin-1").strip()
        if text in versions.FEATURES:
            return text
    return versions.LATEST_HANDSHAKE_VERSION


def _with_envelope(params: Any, version: str) -> Any:
    """A REST call pinned to 2026-07-28 by header: supply the `_meta` envelope it cannot express."""
    params = dict(params) if isinstance(params, dict) else {}
    meta = dict(params.get("_meta") or {})
    meta.setdefault(META_PROTOCOL_VERSION, version)
    meta.setdefault(META_CLIENT_CAPABILITIES, {})
    params["_meta"] = meta
    return params


async def _fail(send: Send, rej: Rejection, status: int | None = None,
                headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await respond_json(send, status or http_status(rej.code), jsonrpc.dumps(rest_error_body(rej)), headers)
