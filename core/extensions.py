"""Extension methods: JSON-RPC methods outside the MCP specification, added by an application.

Some designs name methods MCP does not have (`models/list`, say). An application registers one with
`McpServer.add_method`; sessions look a method up here when the protocol's own route table has no
entry, on every transport alike, and `initialize` / `server/discover` advertise each method under
`capabilities.experimental`, so a client can tell before calling it. The core only routes: what a
method does lives wholly with whoever registered it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from .context import ToolContext

if TYPE_CHECKING:
    from .session import Call, Route, Session

ExtensionHandler = Callable[[dict[str, Any], ToolContext], Awaitable[Any]]
"""Takes the request's params (a dict, `_meta` included) and the context; returns the result (a dict
or an attrs value), or raises `ProtocolError` to reject the request with a semantic code."""


class ExtensionMethods:
    def __init__(self) -> None:
        self._routes: dict[str, Route] = {}
        self._advertised: dict[str, dict[str, Any]] = {}

    def add(self, name: str, handler: ExtensionHandler, *, capability: dict[str, Any] | None = None,
            handshake: bool = True, stateless: bool = True) -> None:
        """Serve `name` with `handler`; `capability` is what `capabilities.experimental[name]` says
        about it (default `{}`). A name the protocol already routes is refused."""
        from .session import ROUTES, Route

        if name in ROUTES:
            raise ValueError(f"'{name}' is an MCP method; an extension cannot replace it")

        async def route_handler(session: Session, params: dict[str, Any], call: Call) -> Any:
            return await session.run_cancellable(call, handler(params, session.context(call)))

        self._routes[name] = Route(handler=route_handler, params=dict, handshake=handshake, stateless=stateless)
        self._advertised[name] = dict(capability or {})

    def route(self, name: str) -> Route | None:
        return self._routes.get(name)

    def experimental(self) -> dict[str, Any]:
        """What `capabilities.experimental` carries: one entry per extension method."""
        return {name: dict(capability) for name, capability in self._advertised.items()}
