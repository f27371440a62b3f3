"""Extension methods: JSON-RPC methods outside the MCP specification, added by an application.

Some designs name methods MCP does not have (`models/list`, say). An application registers one with
`McpServer.add_method`; it joins the server's method table (routing.MethodTable), so every transport
serves it exactly like an MCP method, and `initialize` / `server/discover` advertise it under
`capabilities.experimental`, so a client can tell before calling it. The core only routes: what a
method does lives wholly with whoever registered it, which sees the request's params as a JSON object
and the same `ToolContext` a tool gets (progress, cancellation, logging, the client's identity).
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from .context import ToolContext
from .routing import Call, Route

ExtensionHandler = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]
"""Takes the request's params (a dict, `_meta` included) and the context; returns the result (a dict
or an attrs value), or raises `ProtocolError` to reject the request with a semantic code."""


def extension_route(handler: ExtensionHandler, *, handshake: bool, stateless: bool) -> Route:
    """The route that serves `handler`: run under the session's cancellation, with a tool's context."""

    async def route_handler(session: Any, params: dict[str, Any], call: Call) -> Any:
        return await session.run_cancellable(call, handler(params, session.context(call)))

    return Route(handler=route_handler, params=dict, handshake=handshake, stateless=stateless)
