"""The WebSocket adapter: MCP on one long-lived socket, in the ChatGPT dialect or strict JSON-RPC (`mcp`).

Public surface: `websocket_route(server, config)` (a Starlette route) or `WsEndpoint(server, config)`
(a pure ASGI app, e.g. for the HTTP app's `extra_routes`), `WsConfig`, and `make_server` for running
it under uvicorn with the right shutdown order.

The design and its trade-offs: docs/adr/0301-websocket-chatgpt-dialect.md.
"""

from .config import WsConfig
from .dialect import CHATGPT, CLOSE_CODES, MCP, MCP_SUBPROTOCOL, CloseCode, Dialect, choose_dialect
from .endpoint import WsEndpoint, websocket_route
from .runner import WsUvicornServer, make_server

__all__ = ["CHATGPT", "CLOSE_CODES", "MCP", "MCP_SUBPROTOCOL", "CloseCode", "Dialect", "WsConfig", "WsEndpoint",
           "WsUvicornServer", "choose_dialect", "make_server", "websocket_route"]
