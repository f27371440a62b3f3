"""The router's REST dialect: `POST {url}/{method}` with `{"method": "", "params": {...}}`, bare result back.

Every call stands alone: there is no session, no stream and no way for the server to reach us, so
notifications (ours and the server's) have nowhere to go and are dropped. A failure is an HTTP status
with a JSON body `{"error", "code", "message", "eventId", "data"?}`; it is handed to the dispatcher as
the JSON-RPC error it stands for, so callers see the same `ClientError` on every transport.
"""

from __future__ import annotations

from typing import Any

import aiohttp

from hexmcp.wire import jsonrpc

from ..errors import ClientError, ClientErrorCode
from . import aio
from .base import MAX_MESSAGE_BYTES, Inbox


class RestWire:
    with_version = True
    require_jsonrpc = True

    def __init__(self, url: str, *, headers: dict[str, str] | None = None,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self.url = url.rstrip("/")
        self.max_message_bytes = max_message_bytes
        self._headers = {"content-type": "application/json", **(headers or {})}
        self._http: aiohttp.ClientSession | None = None
        self._inbox: Inbox | None = None

    async def open(self, inbox: Inbox) -> None:
        self._inbox = inbox
        self._http = aio.new_session(self.url)

    def negotiated(self, version: str) -> None:
        self._headers["mcp-protocol-version"] = version

    async def send(self, message: dict[str, Any]) -> None:
        if "id" not in message or "method" not in message:
            return  # a notification or an answer: the dialect has no channel for either
        body: dict[str, Any] = {"method": "", "params": message.get("params") or {}}
        assert self._http is not None and self._inbox is not None, "open() first"
        try:
            async with self._http.post(f"{self.url}/{message['method']}", data=jsonrpc.dumps(body),
                                       headers=self._headers) as response:
                status, content = response.status, await aio.read_limited(response, self.max_message_bytes)
        except aiohttp.ClientError as error:
            raise aio.failed(f"POST {self.url}/{message['method']} failed", error) from None
        if status in (401, 403):
            raise ClientError(ClientErrorCode.UNAUTHORIZED, f"the server refused our credentials (HTTP {status})")
        try:
            value = jsonrpc.decode(content)
        except ValueError:
            raise ClientError(ClientErrorCode.SERVER_ERROR if status >= 400 else ClientErrorCode.INCOMPATIBLE,
                              f"HTTP {status}: a body that is not JSON") from None
        if 200 <= status < 300:
            self._inbox.receive(jsonrpc.encode_result(message["id"], value))
        elif isinstance(value, dict) and "code" in value:
            self._inbox.receive(jsonrpc.encode_error(message["id"], value["code"], str(value.get("message", "")),
                                                     value.get("data")))
        else:
            raise ClientError(ClientErrorCode.SERVER_ERROR, f"HTTP {status}")

    async def initialized(self) -> None:
        pass

    async def close(self) -> None:
        if self._http is not None:
            await self._http.close()
