"""Raw HTTP helpers for the adapter tests: post JSON-RPC, read JSON or SSE, schema-check every message."""

from __future__ import annotations

import json
from typing import Any

import httpx

from hexmcp.core import versions
from hexmcp.core.meta import META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION
from tests.support.schemas import Transcript

ACCEPT_BOTH = "application/json, text/event-stream"
MODERN = versions.V2026_07_28


def parse_sse(text: str) -> list[dict[str, str]]:
    """SSE text → events as dicts of field → value (data lines joined)."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        if not block.strip():
            continue
        event: dict[str, str] = {}
        for line in block.split("\n"):
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            event[field] = event[field] + "\n" + value if field in event else value
        if event:
            events.append(event)
    return events


def modern_params(params: dict[str, Any] | None = None, capabilities: dict[str, Any] | None = None,
                  version: str = MODERN) -> dict[str, Any]:
    meta = {META_PROTOCOL_VERSION: version, META_CLIENT_CAPABILITIES: capabilities or {}}
    return {**(params or {}), "_meta": meta}


class Wire:
    """One client's view: a session id once initialized, and a transcript checking all the server says."""

    def __init__(self, base: str, path: str = "/mcp") -> None:
        self.http = httpx.Client(base_url=base, timeout=10)
        self.path = path
        self.session_id: str | None = None
        self.transcript = Transcript()
        self._ids = iter(range(1, 1_000_000))

    def close(self) -> None:
        self.http.close()

    def next_id(self) -> int:
        return next(self._ids)

    def headers(self, extra: dict[str, str] | None = None, *, version: str | None = None) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": ACCEPT_BOTH}
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
        if version:
            headers["mcp-protocol-version"] = version
        headers.update(extra or {})
        return headers

    def post(self, message: Any, extra: dict[str, str] | None = None, *, version: str | None = None) -> httpx.Response:
        self.transcript.sent(message)
        return self.http.post(self.path, content=json.dumps(message), headers=self.headers(extra, version=version))

    def messages(self, response: httpx.Response) -> list[Any]:
        """Every JSON-RPC message in a response (JSON body or SSE data), each checked against the schema."""
        kind = response.headers.get("content-type", "")
        if kind.startswith("text/event-stream"):
            found = [json.loads(e["data"]) for e in parse_sse(response.text) if e.get("data")]
        elif response.content:
            found = [json.loads(response.content)]
        else:
            found = []
        for message in found:
            self.transcript.received(message)
        return found

    def request(self, method: str, params: dict[str, Any] | None = None, extra: dict[str, str] | None = None, *,
                version: str | None = None) -> tuple[httpx.Response, list[Any]]:
        message = {"jsonrpc": "2.0", "id": self.next_id(), "method": method}
        if params is not None:
            message["params"] = params
        response = self.post(message, extra, version=version)
        return response, self.messages(response)

    def initialize(self, version: str = versions.LATEST_HANDSHAKE_VERSION,
                   capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        response, messages = self.request("initialize", {"protocolVersion": version,
                                                         "capabilities": capabilities or {},
                                                         "clientInfo": {"name": "wire", "version": "1"}})
        assert response.status_code == 200, response.text
        self.session_id = response.headers["mcp-session-id"]
        notified = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, version=version)
        assert notified.status_code == 202
        return messages[0]["result"]

    def modern(self, method: str, params: dict[str, Any] | None = None, *, name: str | None = None,
               capabilities: dict[str, Any] | None = None, extra: dict[str, str] | None = None
               ) -> tuple[httpx.Response, list[Any]]:
        headers = {"mcp-method": method, **({"mcp-name": name} if name is not None else {}), **(extra or {})}
        return self.request(method, modern_params(params, capabilities), headers, version=MODERN)
