"""The HTTP adapter: MCP Streamable HTTP (every version), a REST dialect, and /health, on uvicorn.

Public surface: `create_app(server, config, ...)` builds the ASGI app, `HttpConfig` holds every knob,
`run_http(server, config, ...)` serves it (blocking; `CannotListen` when its address cannot be bound).

The design and its trade-offs: docs/adr/0201-http-adapter.md.
"""

from .app import HttpApp, create_app
from .config import HttpConfig
from .runner import make_server, run_http, serve_http
from .status import STATUS
from .uvicorn_fence import CannotListen

__all__ = ["STATUS", "CannotListen", "HttpApp", "HttpConfig", "create_app", "make_server", "run_http", "serve_http"]
