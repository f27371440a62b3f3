"""The router's REST dialect: `POST {url}/{method}` with `{"method": "", "params": {...}}`, bare result back.

Every call stands alone: there is no session, no stream and no way for the server to reach us, so
notifications (ours and the server's) have nowhere to go and are dropped. A failure is an HTTP status
with a JSON body `{"error", "code", "message", "eventId", "data"?}`; it is handed to the dispatcher as
the JSON-RPC error it stands for, so callers see the same `ClientError` on every transport.
"""

from __future__ import annotations

from typing import Any

import httpx

from hexmcp.adapters import jsonrpc

from ..errors import ClientError, ClientErrorCode, unreachable
from .base import Inbox
from .http import CONNECT_TIMEOUT_S


class RestWire:
    with_version = True
    require_jsonrpc = True

    def __init__(self, url: str, *, headers: dict[str, str] | None = None) -> None:
        self.url = url.rstrip("/")
        self._headers = {"content-type": "application/json", **(headers or {})}
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=CONNECT_TIMEOUT_S),
                                       limits=httpx.Limits(max_connections=256))
        self._inbox: Inbox | None = None

    async def open(self, inbox: Inbox) -> None:
        self._inbox = inbox

    def negotiated(self, version: str) -> None:
        self._headers["mcp-protocol-version"] = version

    async def send(self, message: dict[str, Any]) -> None:
        if "id" not in message or "method" not in message:
            return  # a notification or an answer: the dialect has no channel for either
        body: dict[str, Any] = {"method": "", "params": message.get("params") or {}}
        try:
            response = await self._http.post(f"{self.url}/{message['method']}", content=jsonrpc.dumps(body),
                                              headers=self._headers)
        except httpx.TransportError as error:
            raise unreachable(f"POST {self.url}/{message['method']} failed", error,
                              delivered=False if isinstance(error, httpx.ConnectError) else None) from None
        if response.status_code in (401, 403):
            raise ClientError(ClientErrorCode.UNAUTHORIZED,
                              f"the server refused our credentials (HTTP {response.status_code})")
        try:
            value = jsonrpc.decode(response.content)
        except ValueError:
            raise ClientError(ClientErrorCode.SERVER_ERROR if response.is_error else ClientErrorCode.INCOMPATIBLE,
                              f"HTTP {response.status_code}: a body that is not JSON") from None
        assert self._inbox is not None, "open() first"
        if response.is_success:
            self._inbox.receive(jsonrpc.encode_result(message["id"], value))
        elif isinstance(value, dict) and "code" in value:
            self._inbox.receive(jsonrpc.encode_error(message["id"], value["code"], str(value.get("message", "")),
                                                     value.get("data")))
        else:
            raise ClientError(ClientErrorCode.SERVER_ERROR, f"HTTP {response.status_code}")

    async def initialized(self) -> None:
        pass

    async def close(self) -> None:
        await self._http.aclose()
