"""Real servers for the client tests: hexmcp's demo server on every transport, and one written with
the official SDK, each reachable through a `Target`.

`client_demo_server()` adds `hang` to the WebSocket tests' demo server: a tool that waits until it is cancelled and
records the cancellation, so a test can see that a timed-out call was really stopped on the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from pathlib import Path
from typing import Iterator

import attrs

from hexmcp.adapters.ws import WsConfig
from hexmcp.client import Target
from hexmcp.core import McpServer, ServerOptions

from ..adapters.http_live import live_server
from ..fixtures.ws_live import live_ws, ws_demo_server

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO_STDIO = f"{sys.executable} {REPO_ROOT / 'tests' / 'fixtures' / 'demo_server.py'}"
SDK_SERVER = REPO_ROOT / "tests" / "client" / "sdk_server.py"
TRANSPORTS = ("stdio", "http", "http-stateless", "rest", "ws", "ws-chatgpt")
STREAMING = ("stdio", "http", "http-stateless", "ws", "ws-chatgpt")  # every transport but REST carries progress


@attrs.define
class Cancellations:
    """What the `hang` tool saw: set when a call was cancelled on the server."""

    cancelled: threading.Event = attrs.field(factory=threading.Event)


def client_demo_server(cancellations: Cancellations, options: ServerOptions | None = None) -> McpServer:
    server = ws_demo_server(options)  # the demo server plus `grow`, which changes the tool list

    @server.tool()
    async def hang() -> str:
        """Waits until cancelled."""
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancellations.cancelled.set()
            raise
        return "never"

    return server


@attrs.frozen
class LiveTargets:
    http_url: str
    ws_url: str

    def target(self, transport: str) -> Target:
        return {
            "stdio": lambda: Target.stdio(DEMO_STDIO),
            "http": lambda: Target.parse(self.http_url),
            "http-stateless": lambda: Target.parse(self.http_url),
            "rest": lambda: Target.rest(self.http_url),
            "ws": lambda: Target.parse(self.ws_url),
            "ws-chatgpt": lambda: Target.parse(self.ws_url.replace("ws://", "ws+chatgpt://")),
        }[transport]()


@contextlib.contextmanager
def live_targets(cancellations: Cancellations, *, auth_token: str | None = None) -> Iterator[LiveTargets]:
    """The demo server over HTTP (Streamable HTTP and REST on one port) and over WebSocket."""
    with live_server(client_demo_server(cancellations), auth_token=auth_token) as http, \
            live_ws(client_demo_server(cancellations), WsConfig(auth_token=auth_token)) as ws:
        yield LiveTargets(http.url, ws.url)
