"""`/mcp/{method}`: the REST dialect of the vLLM semantic-router's Go client (mcp-go request structs).

The client POSTs to `{url}/initialize`, `{url}/tools/list`, `{url}/tools/call`, `{url}/ping`, ... a body
marshalled from an mcp-go request struct — `{"method": "", "params": {...}}`, params possibly absent,
no body at all for ping — as `application/json` (anything else is 415) and reads the bare result object from any 2xx response. We also take a flat
`{"name": ..., "arguments": {...}}` body for `tools/call`, and a full JSON-RPC envelope.

Every call stands alone (no session): it is served on the latest handshake version, or on the version
an `MCP-Protocol-Version` header names. Failures are a 4xx/5xx status (from `status.STATUS`) with a
JSON body naming the code, the message and the eventId to quote.
"""

from __future__ import annotations

import itertools
from typing import Any

from hexmcp.core import ErrorCode, McpServer, NullPeer, Ok, versions
from hexmcp.core.meta import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION
from hexmcp.wire import jsonrpc
from hexmcp.wire.deadlines import Deadlines

from . import dispatch
from .asgi import Receive, Scope, Send
from .client_identity import client_identity
from .config import HttpConfig
from .disconnects import GONE, unless_gone
from .headers import Problem
from .refusals import refuse_rest, send_rest_error
from .request import REQUEST, HttpRequest
from .request_headers import ACCEPT_IDENTITY, coding_refusal, is_json, unsupported_coding
from .responses import respond_json

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
        """A POST's body has been read already (`body.BodyBuffer`: 408/413 are answered there)."""
        method = scope["path"][self._prefix_len:]
        if scope["method"] != "POST":
            await refuse_rest(send, ErrorCode.INVALID_REQUEST, f"Method not allowed: use POST {scope['path']}",
                              status=405, headers=[(b"allow", b"POST")])
            return
        http: HttpRequest = scope[REQUEST]  # the app put it there (`request.request_of`)
        body = http.body
        content_type = http.header(b"content-type")
        if (body.strip() or content_type is not None) and not is_json(content_type):
            # A page on another origin may POST text/plain or a form without a CORS preflight; JSON only
            # (a call with no body, such as mcp-go's ping, needs no type).
            await refuse_rest(send, ErrorCode.INVALID_REQUEST,
                              "Unsupported Media Type: POST bodies must be application/json", status=415)
            return
        coding = unsupported_coding(http.header(b"content-encoding")) if body else None
        if coding is not None:
            await refuse_rest(send, ErrorCode.INVALID_REQUEST, coding_refusal(coding), status=415,
                              headers=ACCEPT_IDENTITY)
            return
        try:
            # The codec /mcp uses: a nesting-depth limit instead of the json module's RecursionError.
            params = _params(method, jsonrpc.decode(body) if body.strip() else None)
        except jsonrpc.NumberOutOfRange as exc:  # valid JSON: the number is refused, not the body (the params)
            await refuse_rest(send, ErrorCode.INVALID_PARAMS, f"Invalid params: {exc.problem} at {exc.path}",
                              data={"path": exc.path})
            return
        except ValueError as exc:
            await refuse_rest(send, ErrorCode.PARSE_ERROR, f"The body is not JSON: {exc}")
            return
        if method.startswith("notifications/"):
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        version = _version(http.header(b"mcp-protocol-version"))
        if version in versions.STATELESS_VERSIONS:
            problem = _envelope_problem(params)
            if problem is not None:
                code, text, data = problem
                await refuse_rest(send, code, text, data=data)
                return
            params = _with_envelope(params, version)
            assume = None
        else:
            assume = None if method == "initialize" else version
        core = self.server.open_session(session_id=f"rest-{next(self._ids):x}", peer=self._peer,
                                        assume_version=assume, client_id=client_identity(http), transport="rest")
        request = jsonrpc.Request(f"rest-{next(self._ids):x}", method, params)
        outcome = await unless_gone(http, receive, lambda task: dispatch.run(core, request, self.deadlines, task))
        if outcome is GONE:
            return  # nobody will read the answer: the work was stopped (a queued classification is dropped)
        if isinstance(outcome, Ok):
            await respond_json(send, 200, jsonrpc.dumps(outcome.encodable()))
        else:
            await send_rest_error(send, outcome)  # the core logged it under its eventId


def _params(method: str, body: Any) -> Any:
    if not isinstance(body, dict):
        return body  # None (no body) or a non-object, which the core rejects as invalid params
    if "params" in body or ENVELOPE_KEYS.issuperset(body):  # no set built per call
        return body.get("params")
    return body  # a flat body is the params themselves: {"name": ..., "arguments": {...}}


def _version(raw: bytes | None) -> str:
    if raw is not None:
        text = raw.decode("latin-1").strip()
        if text in versions.FEATURES:
            return text
    return versions.LATEST_HANDSHAKE_VERSION


def _envelope_problem(params: Any) -> Problem | None:
    """What stops `_with_envelope` from completing the params honestly (None: nothing)."""
    if params is not None and not isinstance(params, dict):
        return ErrorCode.INVALID_PARAMS, "params must be an object", {"path": "$.params"}
    meta = params.get("_meta") if params else None
    if meta is not None and not isinstance(meta, dict):
        return ErrorCode.INVALID_PARAMS, "params._meta must be an object", {"path": "$.params._meta"}
    return None


def _with_envelope(params: dict[str, Any] | None, version: str) -> dict[str, Any]:
    """A REST call pinned to 2026-07-28 by header: supply the `_meta` envelope it cannot express.

    `params` passed `_envelope_problem`: an object or nothing, whose `_meta` is an object or nothing.
    """
    params = dict(params or {})
    meta = dict(params.get("_meta") or {})
    meta.setdefault(META_PROTOCOL_VERSION, version)
    meta.setdefault(META_CLIENT_CAPABILITIES, {})
    params["_meta"] = meta
    return params
