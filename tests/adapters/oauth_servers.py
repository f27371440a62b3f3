"""hexmcp HTTP servers configured as OAuth resource servers, and an observer that records who called."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

from hexmcp.adapters.http import HttpConfig, make_server
from hexmcp.core import McpServer

from ..support.net import uvicorn_in_thread


class Callers:
    """A request observer that keeps each request's client identity (what rate limits and the audit read)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None, str]] = []

    def request_started(self, request: Any) -> None:
        self.seen.append((request.method, request.target, request.client_id))

    def session_ended(self, session: Any) -> None:
        return None


def tool_server() -> tuple[McpServer, Callers, list[str]]:
    """A server with an `echo` tool and an `admin_reset` tool; the list records the tools that ran."""
    server = McpServer("oauth-test", "1.0.0")
    ran: list[str] = []

    @server.tool()
    async def echo(text: str) -> str:
        """Echo the text."""
        ran.append("echo")
        return text

    @server.tool()
    async def admin_reset() -> str:
        """An operator-only tool."""
        ran.append("admin_reset")
        return "reset"

    callers = Callers()
    server.add_observer(callers)
    return server, callers, ran


@contextlib.contextmanager
def serving(server: McpServer, port: int, **config: Any) -> Iterator[Any]:
    """`server` over HTTP on `port` with `config`; yields the app."""
    app_options = {key: config.pop(key) for key in ("health", "extra_routes") if key in config}
    uvicorn_server, app = make_server(server, HttpConfig(port=port, **config), log_level="error", **app_options)
    with uvicorn_in_thread(uvicorn_server, what="HTTP server"):
        yield app
