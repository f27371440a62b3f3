"""WebSocket: one JSON-RPC message per text frame, on one long-lived socket.

Two dialects, chosen when connecting: strict JSON-RPC 2.0 asking for subprotocol `mcp` (what the
official SDK's WebSocket transport speaks), or the ChatGPT dialect: no subprotocol, and messages
without the `jsonrpc` member (hexmcp's default on /ws).
"""

from __future__ import annotations

import asyncio
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from hexmcp.wire import jsonrpc

from ..errors import ClientError, ClientErrorCode, unreachable
from .base import MAX_MESSAGE_BYTES, Inbox

SUBPROTOCOL = "mcp"
OPEN_TIMEOUT_S = 10.0
MESSAGE_TOO_BIG = 1009  # the close code websockets sends when a frame passes max_size


class WsWire:
    require_jsonrpc = True

    def __init__(self, url: str, *, chatgpt: bool = False, headers: dict[str, str] | None = None,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        self.url = url
        self.max_message_bytes = max_message_bytes
        self.chatgpt = chatgpt
        self.with_version = not chatgpt
        self.require_jsonrpc = not chatgpt
        self._headers = headers or {}
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None

    async def open(self, inbox: Inbox) -> None:
        subprotocols = None if self.chatgpt else [SUBPROTOCOL]
        try:
            self._socket = await connect(self.url, subprotocols=subprotocols, additional_headers=self._headers,
                                         open_timeout=OPEN_TIMEOUT_S, max_size=self.max_message_bytes,
                                         compression=None)
        except InvalidStatus as error:
            status = error.response.status_code
            if status in (401, 403):
                raise ClientError(ClientErrorCode.UNAUTHORIZED,
                                  f"the server refused our credentials (HTTP {status})") from None
            raise unreachable(f"the WebSocket handshake with {self.url} was refused (HTTP {status})") from None
        except (OSError, InvalidHandshake, TimeoutError) as error:
            raise unreachable(f"cannot open a WebSocket to {self.url}", error) from None
        self._reader = asyncio.ensure_future(self._read(inbox))

    async def _read(self, inbox: Inbox) -> None:
        assert self._socket is not None
        try:
            async for frame in self._socket:
                try:
                    value = jsonrpc.decode(frame)
                except ValueError:
                    inbox.closed(ClientError(ClientErrorCode.INCOMPATIBLE, "the server sent a frame that is not JSON"))
                    return
                inbox.receive(value)
        except ConnectionClosed:
            pass
        close = self._socket.close_code
        reason = self._socket.close_reason
        sent = self._socket.protocol.close_sent
        if sent is not None and sent.code == MESSAGE_TOO_BIG:  # we failed the connection: a frame passed max_size
            inbox.closed(unreachable(f"the server sent a message over the {self.max_message_bytes}-byte limit "
                                     "(max_message_bytes); the WebSocket was closed (code 1009)"))
            return
        inbox.closed(unreachable(f"the WebSocket closed (code {close}{': ' + reason if reason else ''})"))

    async def send(self, message: dict[str, Any]) -> None:
        if self._socket is None:
            raise unreachable("the WebSocket is not open", delivered=False)
        try:
            await self._socket.send(jsonrpc.dumps(message).decode())
        except ConnectionClosed as error:
            raise unreachable("the WebSocket closed", error) from None

    def negotiated(self, version: str) -> None:
        pass

    async def initialized(self) -> None:
        pass

    async def close(self) -> None:
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
