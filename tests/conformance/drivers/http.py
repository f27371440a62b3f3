"""HTTP: Streamable HTTP (JSON or SSE answers, the session header, 2026-07-28 stateless requests) and REST.

Each POST's answer (a JSON body, or the `data:` of each SSE event) is queued and handed out by
`receive`, so the HTTP wire reads like the streaming ones. A refusal carrying a JSON-RPC error body
(400 parse error, 404 unknown session, ...) is queued like any answer; its status is kept in `statuses`.

`initialize` with a stateless version (2026-07-28) sends no handshake: every later request carries the
`_meta` envelope and the routing headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name) instead.

`RestDriver` is the REST dialect (POST `{url}/{method}`, bare result or error body), dressed as JSON-RPC
so that differential tests compare it with the others modulo envelope.
"""

from __future__ import annotations

import base64
import collections
import json
import time
from typing import Any

import httpx

from hexmcp.adapters.http.headers import NAME_MEMBER
from hexmcp.wire.jsonrpc import JSONRPC_VERSION
from hexmcp.core import versions
from hexmcp.core.meta import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION

from ...adapters.http_wire import ACCEPT_BOTH, parse_sse
from ...support.peer import initialize_params
from .. import deadlines
from ..deadlines import bounded, hung
from .base import Closed, Driver

SESSION_HEADER = "mcp-session-id"


def header_value(value: str) -> str:
    """A routing header value: literal when plain ASCII, else the `=?base64?…?=` sentinel form."""
    if value.isascii() and value.isprintable() and value == value.strip():
        return value
    return f"=?base64?{base64.b64encode(value.encode()).decode()}?="


def post_within_deadline(http: httpx.Client, url: str, body: bytes | str, headers: dict[str, str], name: str,
                         log: Any) -> httpx.Response:
    """POST and read the whole answer within the request deadline, or raise ServerHung: httpx's own timeout
    bounds each read, so a server that sends a byte now and then (an SSE comment) would never time out."""
    deadline = time.monotonic() + deadlines.REQUEST_S
    limit = bounded(deadlines.REQUEST_S, log)
    try:
        with http.stream("POST", url, content=body, headers=headers, timeout=limit) as streamed:
            chunks = []
            for chunk in streamed.iter_bytes():
                chunks.append(chunk)
                if time.monotonic() > deadline:
                    raise hung(f"{name}: the answer to a POST was still arriving after {deadlines.REQUEST_S:g} s", log)
    except httpx.TimeoutException as exc:
        raise hung(f"{name}: no answer to a POST within {limit:g} s ({type(exc).__name__})", log) from None
    # The body as read (decoded already), under the answer's status and headers, for the callers to parse.
    kept = [(k, v) for k, v in streamed.headers.multi_items()
            if k.lower() not in ("content-encoding", "content-length")]
    return httpx.Response(streamed.status_code, headers=kept, content=b"".join(chunks), request=streamed.request)


class HttpDriver(Driver):
    name = "http"
    answers_come_with_requests = True

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self.http = httpx.Client(timeout=10)
        self.session_id: str | None = None
        self.statuses: list[int] = []
        self._inbox: collections.deque[Any] = collections.deque()
        self._gone = False

    @property
    def stateless(self) -> bool:
        return self.version in versions.STATELESS_VERSIONS

    def initialize(self, version: str = versions.LATEST_HANDSHAKE_VERSION) -> dict[str, Any]:
        if version in versions.STATELESS_VERSIONS:
            self.version = version
            self.transcript.version = version
            return {"result": {"protocolVersion": version}}
        return super().initialize(version)

    def _headers(self, message: Any) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": ACCEPT_BOTH}
        if self.session_id:
            headers[SESSION_HEADER] = self.session_id
        if self.version:
            headers["mcp-protocol-version"] = self.version
        if self.stateless and isinstance(message, dict) and isinstance(message.get("method"), str):
            headers["mcp-method"] = header_value(message["method"])
            params = message.get("params")
            member = NAME_MEMBER.get(message["method"])
            if member and isinstance(params, dict) and isinstance(params.get(member), str):
                headers["mcp-name"] = header_value(params[member])
        return headers

    def send(self, message: Any) -> None:
        if self.stateless and isinstance(message, dict) and "method" in message:
            params = message.get("params") if isinstance(message.get("params"), dict) else {}
            meta = {META_PROTOCOL_VERSION: self.version, META_CLIENT_CAPABILITIES: {}, **(params.get("_meta") or {})}
            message = {**message, "params": {**params, "_meta": meta}}
        super().send(message)

    def _write(self, message: Any) -> None:
        self._post(json.dumps(message).encode(), self._headers(message))

    def send_raw(self, data: bytes) -> None:
        self._post(data, self._headers(None))

    def _post(self, body: bytes, headers: dict[str, str]) -> None:
        try:
            response = post_within_deadline(self.http, self.url, body, headers, self.name, self.log)
        except httpx.TransportError as exc:
            self._gone = True
            raise Closed(f"HTTP transport failed: {exc!r}") from None
        self.statuses.append(response.status_code)
        if SESSION_HEADER in response.headers and self.session_id is None:
            self.session_id = response.headers[SESSION_HEADER]
        kind = response.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            self._inbox.extend(json.loads(e["data"]) for e in parse_sse(response.text) if e.get("data"))
        elif response.content and kind.startswith("application/json"):
            self._inbox.append(response.json())
        elif response.status_code >= 500:
            self._inbox.append({"http-status": response.status_code, "body": response.text[:300]})

    def _read(self, timeout: float) -> Any | None:
        if self._inbox:
            return self._inbox.popleft()
        if self._gone:
            raise Closed("the HTTP server is unreachable")
        return None  # every answer arrives with its POST: nothing queued means nothing more is coming

    def end_session(self) -> int:
        """DELETE the session; returns the status."""
        headers = {SESSION_HEADER: self.session_id} if self.session_id else {}
        return self.http.delete(self.url, headers=headers).status_code

    def alive(self) -> bool:
        return not self._gone

    def close(self) -> None:
        if self.session_id:
            try:
                self.end_session()
            except httpx.HTTPError:
                pass
        self.http.close()


class RestDriver(Driver):
    """POST `{url}/{method}` with `{"method": "", "params": ...}`; the bare result comes back."""

    name = "rest"
    sessionful = False
    answers_come_with_requests = True

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url.rstrip("/")
        self.http = httpx.Client(timeout=10)
        self._inbox: collections.deque[Any] = collections.deque()

    def initialize(self, version: str = versions.LATEST_HANDSHAKE_VERSION) -> dict[str, Any]:
        answer = self.request("initialize", initialize_params(version))
        assert answer is not None and "result" in answer, answer
        self.version = self.transcript.version = answer["result"]["protocolVersion"]
        return answer

    def _write(self, message: Any) -> None:
        method = message.get("method") if isinstance(message, dict) else None
        if not isinstance(method, str):
            raise ValueError("the REST dialect carries requests and notifications only")
        body = {"method": "", "params": message.get("params")} if "params" in message else {"method": ""}
        headers = {"content-type": "application/json"}
        if self.version:  # every call stands alone: the version it is served at travels with it
            headers["mcp-protocol-version"] = self.version
        response = post_within_deadline(self.http, f"{self.url}/{method}", json.dumps(body), headers, self.name,
                                        self.log)
        if "id" not in message:
            return
        if response.status_code == 200:
            self._inbox.append({"jsonrpc": JSONRPC_VERSION, "id": message["id"], "result": response.json()})
        else:
            error = response.json()
            wire = {"code": error["code"], "message": error["message"]}
            if "data" in error:
                wire["data"] = error["data"]
            self._inbox.append({"jsonrpc": JSONRPC_VERSION, "id": message["id"], "error": wire})

    def send_raw(self, data: bytes) -> None:
        raise NotImplementedError("the REST dialect has no raw message stream")

    def _read(self, timeout: float) -> Any | None:
        return self._inbox.popleft() if self._inbox else None

    def alive(self) -> bool:
        return True

    def close(self) -> None:
        self.http.close()
