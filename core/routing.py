"""What a method handler is handed and how the method table is shaped: the vocabulary shared by
`session.py` (which admits and runs requests) and `handlers.py` (which serves each method).

Handlers receive the `Session` serving the request; it is typed `Any` here so that this module, which
both of those import, imports neither.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable, Mapping

import attrs

from .errors import Rejection
from .json_encoder import embedded
from .ports import RequestKey


# Ok and Call are built on every request: attrs.define, because a frozen class's __init__ costs twice as
# much (one object.__setattr__ per field). Neither is ever changed after it is built. Not kw_only, so the hot
# path can build them positionally: a class called with keywords packs them into a dict and unpacks it again.
@attrs.define
class Ok:
    result: dict[str, Any]
    structured_json: bytes | None = attrs.field(default=None, eq=False, repr=False)
    """`result["structuredContent"]` as the core encoded it already, for the tool's text block."""

    def encodable(self) -> dict[str, Any]:
        """`result` for the encoder: structured content encoded once goes in as its bytes, not walked again."""
        if self.structured_json is None:
            return self.result
        return {**self.result, "structuredContent": embedded(self.structured_json)}


Outcome = Ok | Rejection


@attrs.define
class Call:
    """Everything about one request that is not its params."""

    version: str
    request_key: RequestKey | None
    trace_id: str
    client_capabilities: dict[str, Any]
    progress_token: str | int | None
    log_level: str | None


Handler = Callable[[Any, Any, Call], Awaitable[Any]]
"""(session, parsed params, call) -> a result model (or a dict for an extension method)."""


@attrs.frozen(kw_only=True)
class Route:
    handler: Handler
    params: type
    handshake: bool = True  # served on handshake versions
    stateless: bool = True  # served on 2026-07-28


@attrs.frozen
class MethodTable:
    """A server's methods: the route of each, and those that exist only on 2026-07-28 (a request for one
    is admitted as a stateless request). A value: a session keeps the table it was opened with."""

    routes: Mapping[str, Route]
    stateless_only: frozenset[str]

    @classmethod
    def of(cls, routes: Mapping[str, Route]) -> MethodTable:
        return cls(dict(routes), frozenset(method for method, route in routes.items() if not route.handshake))

    def with_method(self, method: str, route: Route) -> MethodTable:
        return MethodTable.of({**self.routes, method: route})
