"""WebSocket: one JSON message per text frame, in the ChatGPT dialect (no `jsonrpc`) or the `mcp` one.

In the ChatGPT dialect outbound messages lose their `jsonrpc` member, as ChatGPT sends them, and
inbound ones get it back before the schema check (the dialect differs from JSON-RPC only there).
`send_raw` sends text frames when the bytes are UTF-8 and binary frames when they are not.
"""

from __future__ import annotations

import json
from typing import Any

from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from hexmcp.wire.jsonrpc import JSONRPC_VERSION

from .. import deadlines
from ..deadlines import hung
from .base import Closed, Driver

MCP_SUBPROTOCOL = "mcp"


class WsDriver(Driver):
    binary_frames_refused = True
    def __init__(self, url: str, *, subprotocol: str | None = None, max_size: int | None = 2**25) -> None:
        super().__init__()
        self.url = url
        self.name = f"ws-{subprotocol or 'chatgpt'}"
        self.requires_jsonrpc = subprotocol is not None
        try:
            # A long-lived connection, closed in close().
            self.ws = connect(url, subprotocols=[subprotocol] if subprotocol else None, max_size=max_size,
                              open_timeout=deadlines.REQUEST_S, close_timeout=2).__enter__()
        except TimeoutError:
            raise hung(f"{self.name}: the WebSocket handshake did not complete within "
                       f"{deadlines.REQUEST_S:g} s") from None
        self.closed_with: int | None = None

    def _write(self, message: Any) -> None:
        if not self.requires_jsonrpc and isinstance(message, dict) and message.get("jsonrpc") == JSONRPC_VERSION:
            message = {k: v for k, v in message.items() if k != "jsonrpc"}
        self._frame(json.dumps(message))

    def send_raw(self, data: bytes) -> None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self._frame(data)
            return
        self._frame(text)

    def _frame(self, frame: str | bytes) -> None:
        try:
            self.ws.send(frame)
        except ConnectionClosed as exc:
            self.closed_with = exc.rcvd.code if exc.rcvd else None
            raise Closed(f"the socket is closed ({self.closed_with})") from None

    def _read(self, timeout: float) -> Any | None:
        try:
            frame = self.ws.recv(timeout=max(timeout, 0.001))
        except TimeoutError:
            return None
        except ConnectionClosed as exc:
            self.closed_with = exc.rcvd.code if exc.rcvd else None
            raise Closed(f"the socket is closed ({self.closed_with})") from None
        message = json.loads(frame)
        if not self.requires_jsonrpc:
            if isinstance(message, dict):
                message = {"jsonrpc": JSONRPC_VERSION, **message}
            elif isinstance(message, list):  # a 2025-03-26 batch's answers
                message = [{"jsonrpc": JSONRPC_VERSION, **m} if isinstance(m, dict) else m for m in message]
        return message

    def alive(self) -> bool:
        from websockets.protocol import State

        return self.ws.protocol.state is State.OPEN

    def close(self) -> None:
        self.ws.close()
